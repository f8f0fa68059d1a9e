/* fork_kept: the parent keeps argv[2] blocks of 24 bytes alive (one site), so that its recorder
   holds a table of kept blocks megabytes large, then prints on stdout the kilobytes of its memory
   that a fork child gets no copy of (mappings whose VmFlags in /proc/self/smaps have "wf") and
   forks. The child does 2K x (malloc 20, free) and exits; the parent frees its kept blocks, does
   K x (malloc 30, free), waits, and returns the child's exit status. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static long wiped_on_fork_kb(void) {
  FILE* f = fopen("/proc/self/smaps", "r");
  if (f == NULL) return -1;
  char line[512];
  long size_kb = 0, total = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    long kb;
    if (sscanf(line, "Size: %ld kB", &kb) == 1) size_kb = kb;
    if (strncmp(line, "VmFlags:", 8) == 0 && strstr(line, " wf") != NULL) total += size_kb;
  }
  fclose(f);
  return total;
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  long kept = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
  void** blocks = malloc((size_t)(kept > 0 ? kept : 1) * sizeof *blocks);
  if (blocks == NULL) return 1;
  for (long i = 0; i < kept; ++i) {
    blocks[i] = malloc(24);
    escape(blocks[i]);
  }
  /* Ends the recorder's block, so that the blocks kept so far are in its table. */
  malloc_free_pairs(200000, 40);
  printf("%ld\n", wiped_on_fork_kb());
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    malloc_free_pairs(2 * k, 20);
    exit(0);
  }
  for (long i = 0; i < kept; ++i) free(blocks[i]);
  free(blocks);
  malloc_free_pairs(k, 30);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
