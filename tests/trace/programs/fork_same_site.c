/* fork_same_site: K x (malloc 24, free) from one call site, then fork, then the same K again from
   the same site with the same stack in both processes; the parent waits and returns the child's
   exit status. The child's stream starts its stack ids again while its unwinder still remembers
   the parent's walks from that site. */
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

__attribute__((noinline)) static void same_site_loop(long n) {
  for (long i = 0; i < n; ++i) {
    void* p = malloc(24);
    escape(p);
    free(p);
  }
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  pid_t pid = 0;
  /* volatile: one call site for both rounds, not one per round (the compiler peels the loop). */
  for (volatile int round = 0; round < 2; ++round) {
    same_site_loop(k);
    if (round == 0) {
      pid = fork();
      if (pid < 0) return 1;
    }
  }
  if (pid == 0) return 0;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
