// The clock's state and its choice at start (clock.hpp).
#include "trace/clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace lowalloc::trace {

bool use_tsc = false;
shared_stamps stamps;

bool cpu_has_invariant_tsc() {
#if defined(__x86_64__)
  int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[8192];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  return std::strstr(buf, " constant_tsc") != nullptr &&
         std::strstr(buf, " nonstop_tsc") != nullptr;
#else
  return false;
#endif
}

}  // namespace lowalloc::trace
