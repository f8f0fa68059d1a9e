/* A shared library whose static initialiser allocates: it runs before the recorder's own
   constructor (the loader starts a program's libraries before the preloaded one). It makes K
   blocks of 24 bytes (K, at most 100,000, from the program's argv[1], which glibc passes to
   initialisers), frees the first K - 3K/10 of them and keeps the last 3K/10. */
#include <stdlib.h>

#include "common.h"

enum { max_blocks = 100000 };
static void* blocks[max_blocks];

__attribute__((constructor)) static void make_blocks(int argc, char** argv) {
  long k = iterations(argc, argv);
  if (k > max_blocks) k = max_blocks;
  for (long i = 0; i < k; ++i) {
    blocks[i] = malloc(24);
    escape(blocks[i]);
  }
  for (long i = 0; i < k - 3 * k / 10; ++i) free(blocks[i]);
}

long init_lib_loaded(void) { return 1; }
