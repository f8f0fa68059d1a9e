// The memory of the hash tables: a large table is a mapping of its own, and grows by moving its
// pages to a larger mapping (mremap) rather than by copying them.
//
// Large arrays are faulted in ahead of their first write, many pages in one system call. They do
// not ask for transparent huge pages (MADV_HUGEPAGE): where the kernel compacts or the
// hypervisor backs memory on first touch, a huge page fault stalls, and the report of 10^6
// stacks spent 0.11 to 0.89 s in the kernel with the advice against 0.15 to 0.21 s without it (on
// a KVM guest; 4 KiB pages cost more page faults, a fixed part). A kernel that gives huge pages
// to every mapping (transparent_hugepage=always) still does, where it has them free.
#include "analyze/flat_map.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace lowalloc::analyze::detail {

namespace {

// Smaller tables come from the heap: a mapping of their own would cost a system call each.
constexpr std::size_t mapped_from = std::size_t{1} << 20;
constexpr std::size_t page = 4096;

std::size_t whole_pages(std::size_t bytes) noexcept { return (bytes + page - 1) / page * page; }

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14
#endif

}  // namespace

void table_memory::allocate(std::size_t bytes) {
  release();
  if (bytes < mapped_from) {
    data_ = std::malloc(bytes);
    if (data_ == nullptr) throw std::bad_alloc();
    return;
  }
  const std::size_t length = whole_pages(bytes);
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = p;
  length_ = length;
  mapped_ = true;
}

bool table_memory::extend(std::size_t bytes) noexcept {
  if (!mapped_) return false;
  const std::size_t length = whole_pages(bytes);
  if (length <= length_) return true;
  void* p = mremap(data_, length_, length, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) return false;
  data_ = p;
  length_ = length;
  return true;
}

bool prefault(void* data, std::size_t bytes) noexcept {
  const auto first = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
  const auto last = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
  if (last < first + mapped_from) return true;  // (a small block: no gain)
  return madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE) == 0;
}

void table_memory::prepare_pages(std::size_t bytes) noexcept {
  if (!mapped_) {
    ready_ = ~std::size_t{0};
    return;
  }
  const std::size_t from = ready_ / page * page;
  const std::size_t to = std::min(length_, whole_pages(std::max(bytes, ready_ + mapped_from)));
  if (to <= from) return;
  // Failing (an old kernel, or no memory yet: the write will fault as it would have) changes
  // nothing but the cost: not asked again.
  if (!prefault(static_cast<char*>(data_) + from, to - from)) {
    ready_ = ~std::size_t{0};
    return;
  }
  ready_ = to;
}

void table_memory::release() noexcept {
  if (mapped_)
    munmap(data_, length_);
  else
    std::free(data_);
  data_ = nullptr;
  length_ = 0;
  ready_ = 0;
  mapped_ = false;
}

}  // namespace lowalloc::analyze::detail
