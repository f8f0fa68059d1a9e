// A program for the tests of changed, deleted and stripped binaries and of traces read while
// their program runs (modules_test.cpp): `module_program N [wait]` makes N allocations of 16
// bytes through module_alloc() and keeps them; with `wait`, it then writes "ready" to stdout and
// waits until stdin ends; then it frees them. The tests build it a second time with module_alloc
// renamed and lines added above it (the EDIT marker): a rebuilt binary with other functions at
// the traced addresses.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// EDIT ABOVE
__attribute__((noinline)) void* module_alloc(size_t n) {
  return malloc(n);  // MODULE_ALLOC_LINE
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 100;
  void** kept = malloc(sizeof(void*) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; ++i) kept[i] = module_alloc(16);
  if (argc > 2 && strcmp(argv[2], "wait") == 0) {
    printf("ready\n");
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0) {
    }
  }
  for (int i = 0; i < n; ++i) free(kept[i]);
  free(kept);
  return 0;
}
