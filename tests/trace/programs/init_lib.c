/* A shared library whose static initialiser allocates: it runs before the recorder's own
   constructor (the loader starts a program's libraries before the preloaded one). It makes K
   blocks of 24 bytes (K, at most 100,000, from the program's argv[1], which glibc passes to
   initialisers), frees the first K - 3K/10 of them and keeps the last 3K/10. Its destructor
   frees those too if the program asked for it (init_lib_free_at_exit): the destructors of the
   program's libraries run after the preloaded recorder's. */
#include <stdlib.h>

#include "common.h"

enum { max_blocks = 100000 };
static void* blocks[max_blocks];
static long count;

__attribute__((constructor)) static void make_blocks(int argc, char** argv) {
  long k = iterations(argc, argv);
  if (k > max_blocks) k = max_blocks;
  count = k;
  for (long i = 0; i < k; ++i) {
    blocks[i] = malloc(24);
    escape(blocks[i]);
  }
  for (long i = 0; i < k - 3 * k / 10; ++i) free(blocks[i]);
}

static int free_at_exit;

__attribute__((destructor)) static void free_blocks(void) {
  if (!free_at_exit) return;
  for (long i = count - 3 * count / 10; i < count; ++i) free(blocks[i]);
}

long init_lib_loaded(void) { return 1; }

void init_lib_free_at_exit(void) { free_at_exit = 1; }
