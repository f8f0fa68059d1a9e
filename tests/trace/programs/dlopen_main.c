/* dlopen(argv[2]), call its lowalloc_test_allocate(K), dlclose. */
#include <dlfcn.h>

#include "common.h"

typedef void allocate_function(long);

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  if (argc < 3) return 2;
  void* lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) return 3;
  allocate_function* allocate;
  *(void**)&allocate = dlsym(lib, "lowalloc_test_allocate");
  if (allocate == NULL) return 4;
  allocate(k);
  return dlclose(lib) == 0 ? 0 : 5;
}
