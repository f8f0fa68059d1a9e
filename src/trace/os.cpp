// Small helpers over system calls (os.hpp).
#include "trace/os.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace lowalloc::trace {

void write_all(int fd, const char* s, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

void say(const char* a, const char* b, const char* c, const char* d) {
  char line[1024];
  int n = std::snprintf(line, sizeof line, "lowalloc: %s%s%s%s\n", a, b, c, d);
  if (n > 0)
    write_all(
        2, line,
        static_cast<std::size_t>(n) < sizeof line ? static_cast<std::size_t>(n) : sizeof line - 1);
}

}  // namespace lowalloc::trace
