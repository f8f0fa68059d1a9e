/* A C program, linked to no C++ runtime, that loads a library written in C++ (argv[2]) with
   dlopen, RTLD_LOCAL, as python3 loads an extension module, and calls it: K x (new char[40],
   delete[]) and a caught bad_alloc. The library's libstdc++ is outside the global scope, where
   the recorder's operators are: they must pass the calls on to it all the same. Exit status 0
   when the bad_alloc was caught. */
#include <dlfcn.h>
#include <stdio.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  void* lib = dlopen(argc > 2 ? argv[2] : "", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  int (*run_cxx)(long) = (int (*)(long))dlsym(lib, "run_cxx");
  if (run_cxx == NULL) return 2;
  return run_cxx(k);
}
