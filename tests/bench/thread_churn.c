/* What a short-lived thread costs a traced program: N times (argv[1], 2,000 if absent) starts 4
   threads at once, each of which makes and frees M blocks (argv[2], 10 if absent), and joins
   them. A traced thread sets up its recorder state at its first event and writes and releases it
   as it ends: a program that starts a thread per task pays that for each. Run untraced and under
   `lowalloc run`: docs/benchmarks.md, "short-lived threads". */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int blocks = 10;

static void* work(void* arg) {
  (void)arg;
  void* made[64];
  for (int i = 0; i < blocks; ++i) {
    made[i % 64] = malloc(64 + i);
    if (made[i % 64] == NULL) abort();
    memset(made[i % 64], 1, 16);
    if (i % 64 == 63 || i == blocks - 1)
      for (int j = 0; j <= i % 64; ++j) free(made[j]);
  }
  return NULL;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2000;
  blocks = argc > 2 ? atoi(argv[2]) : 10;
  for (int i = 0; i < n; ++i) {
    pthread_t threads[4];
    for (int j = 0; j < 4; ++j)
      if (pthread_create(&threads[j], NULL, work, NULL) != 0) return 1;
    for (int j = 0; j < 4; ++j) pthread_join(threads[j], NULL);
  }
  return 0;
}
