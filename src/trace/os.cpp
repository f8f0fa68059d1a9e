// Small helpers over system calls (os.hpp).
#include "trace/os.hpp"

#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
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

namespace {

bool expedited = false;

long membarrier(int command) { return syscall(SYS_membarrier, command, 0, 0); }

}  // namespace

void prepare_process_barrier() {
  expedited = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

void process_barrier() {
  if (expedited && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  if (membarrier(MEMBARRIER_CMD_GLOBAL) == 0) return;
  // No membarrier (an old kernel, a seccomp filter): taking write access away from a page this
  // process has written shoots its TLB entry down on every CPU that runs the process, and the
  // interrupt orders each of them.
  // (The process's exit and the writer thread's idle writes may both be here at once.)
  static std::atomic<unsigned char*> shared_page{nullptr};
  unsigned char* page = shared_page.load(std::memory_order_acquire);
  if (page == nullptr) {
    page = static_cast<unsigned char*>(map_memory(4096));
    if (page == nullptr) return;
    unsigned char* first = nullptr;
    if (!shared_page.compare_exchange_strong(first, page, std::memory_order_acq_rel)) {
      munmap(page, 4096);
      page = first;
    }
  }
  page[0] = 1;
  mprotect(page, 4096, PROT_READ);
  mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

}  // namespace lowalloc::trace
