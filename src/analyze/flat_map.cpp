// The memory of the hash tables: a large table is a mapping of its own, and grows by moving its
// pages to a larger mapping (mremap) rather than by copying them.
#include "analyze/flat_map.hpp"

#include <sys/mman.h>

#include <cstdlib>

namespace lowalloc::analyze::detail {

namespace {

// Smaller tables come from the heap: a mapping of their own would cost a system call each.
constexpr std::size_t mapped_from = std::size_t{1} << 20;
constexpr std::size_t page = 4096;

std::size_t whole_pages(std::size_t bytes) noexcept { return (bytes + page - 1) / page * page; }

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

void table_memory::release() noexcept {
  if (mapped_)
    munmap(data_, length_);
  else
    std::free(data_);
  data_ = nullptr;
  length_ = 0;
  mapped_ = false;
}

}  // namespace lowalloc::analyze::detail
