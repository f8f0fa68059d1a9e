/* fork: the child does 2K x (malloc 20, free) then ends with exit(0), or with _exit(0) if
   argv[2] is "_exit"; the parent does K x (malloc 30, free), waits, and returns the child's
   exit status. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  int use_underscore_exit = argc > 2 && strcmp(argv[2], "_exit") == 0;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    malloc_free_pairs(2 * k, 20);
    if (use_underscore_exit) _exit(0);
    exit(0);
  }
  malloc_free_pairs(k, 30);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
