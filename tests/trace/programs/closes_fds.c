/* K x (malloc 48, free), then every descriptor above stderr closed, as ssh, sudo or a daemon
   does at start (close_range, a system call the recorder cannot see), then K x (malloc 48, free)
   again: 2K allocations of 48 bytes, all temporary. With a second argument FILE, the program
   opens FILE after the close and makes every descriptor from 4 to 1023 (fewer under a low limit)
   a copy of it, so that the number the recorder wrote its trace to names the program's own file;
   it allocates again, and writes one line of its own into FILE, which must hold that line
   alone. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static void churn(long k) {
  for (long i = 0; i < k; ++i) {
    void* p = malloc(48);
    escape(p);
    free(p);
  }
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  const char* file = argc > 2 ? argv[2] : NULL;
  churn(k);
  if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) return 2;
  int out = -1;
  if (file != NULL) {
    out = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out != 3) return 3;
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 4;
    /* A few left free under a low limit, for the recorder to open its file again. */
    const int end = limit.rlim_cur < 1024 + 8 ? (int)limit.rlim_cur - 8 : 1024;
    for (int fd = 4; fd < end; ++fd)
      if (dup2(out, fd) != fd) return 4;
  }
  churn(k);
  if (file != NULL) {
    static const char line[] = "the program's own line\n";
    if (write(out, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) return 5;
  }
  return 0;
}
