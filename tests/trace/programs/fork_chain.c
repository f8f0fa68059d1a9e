#define _GNU_SOURCE
/* fork_chain: the parent forks a child and waits for it. The child, before any allocation of its
   own, forks a grandchild and a third process that only execs argv[2] (with the arguments after
   it), then does 2K x (malloc 20, free) and ends with _exit(0) without waiting for them. The
   grandchild waits until the child has ended (its parent is then another process), does 3K x
   (malloc 40, free) and returns. The parent returns once the grandchild has ended too (the end of
   a pipe that only the child and the grandchild hold open). */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  if (argc < 3) return 2;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    close(fds[0]);
    pid_t self = getpid();
    pid_t grandchild = fork();
    if (grandchild < 0) _exit(1);
    if (grandchild == 0) {
      while (getppid() == self) usleep(1000);
      malloc_free_pairs(3 * k, 40);
      return 0;
    }
    pid_t execs = fork();
    if (execs < 0) _exit(1);
    if (execs == 0) {
      execv(argv[2], argv + 2);
      _exit(3);
    }
    malloc_free_pairs(2 * k, 20);
    _exit(0);
  }
  close(fds[1]);
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 1;
  char c;
  while (read(fds[0], &c, 1) > 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
