/* What a fork costs a traced program: keeps 4,096 blocks alive, then N times (argv[1], 2,000 if
   absent) makes and frees 200 blocks, replaces one kept block, forks, and waits for the child,
   which exits at once. Run untraced, under `lowalloc run` (each child writes its own FILE.PID) and
   under `lowalloc run --no-fork` (children untraced): docs/benchmarks.md, "forks". */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2000;
  enum { kept = 4096 };
  static void* keep[kept];
  for (int i = 0; i < kept; ++i) {
    keep[i] = malloc(64 + i % 256);
    if (keep[i] == NULL) return 1;
    memset(keep[i], 1, 64);
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < 200; ++j) {
      void* p = malloc(32 + j);
      if (p == NULL) return 1;
      memset(p, 2, 32);
      free(p);
    }
    free(keep[i % kept]);
    keep[i % kept] = malloc(100);
    const pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) _exit(0);
    if (waitpid(pid, NULL, 0) != pid) return 1;
  }
  for (int i = 0; i < kept; ++i) free(keep[i]);
  return 0;
}
