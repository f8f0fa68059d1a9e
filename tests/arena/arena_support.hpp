// Test support for the arena: an upstream resource that records every block and can fail on
// demand. Not part of lowalloc's API.
#ifndef LOWALLOC_TESTS_ARENA_SUPPORT_HPP
#define LOWALLOC_TESTS_ARENA_SUPPORT_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <new>
#include <vector>

namespace lowalloc_test {

// Forwards to new_delete_resource, records what it hands out, and throws std::bad_alloc on the
// k-th next allocation when told to (`fail_after(k)`, k = 0: the very next one).
class recording_resource : public std::pmr::memory_resource {
 public:
  struct block {
    void* p;
    std::size_t bytes;
    std::size_t align;
  };

  recording_resource() { live_.reserve(256); }
  ~recording_resource() override {
    for (const block& b : live_) std::pmr::new_delete_resource()->deallocate(b.p, b.bytes, b.align);
  }
  recording_resource(const recording_resource&) = delete;
  recording_resource& operator=(const recording_resource&) = delete;

  void fail_after(long k) noexcept { countdown_ = k; }

  std::size_t allocations() const noexcept { return sizes_.size(); }
  std::size_t deallocations() const noexcept { return deallocations_; }
  std::size_t failures() const noexcept { return failures_; }
  // Sizes of every allocation ever made, in order.
  const std::vector<std::size_t>& sizes() const noexcept { return sizes_; }
  const std::vector<block>& live() const noexcept { return live_; }
  std::size_t live_bytes() const noexcept {
    std::size_t n = 0;
    for (const block& b : live_) n += b.bytes;
    return n;
  }
  // True when [p, p + n) lies inside one live block.
  bool contains(const void* p, std::size_t n) const noexcept {
    const auto x = reinterpret_cast<std::uintptr_t>(p);
    return std::any_of(live_.begin(), live_.end(), [&](const block& b) {
      const auto lo = reinterpret_cast<std::uintptr_t>(b.p);
      return x >= lo && x <= lo + b.bytes && n <= lo + b.bytes - x;
    });
  }

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    if (countdown_ >= 0 && countdown_-- == 0) {
      ++failures_;
      throw std::bad_alloc();
    }
    void* p = std::pmr::new_delete_resource()->allocate(bytes, align);
    live_.push_back({p, bytes, align});
    sizes_.push_back(bytes);
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    auto it = std::find_if(live_.begin(), live_.end(), [&](const block& b) { return b.p == p; });
    if (it == live_.end() || it->bytes != bytes || it->align != align) {
      ++bad_deallocations;
      return;
    }
    live_.erase(it);
    ++deallocations_;
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

 public:
  std::size_t bad_deallocations = 0;  // deallocations of unknown blocks or with wrong size/align

 private:
  std::vector<block> live_;
  std::vector<std::size_t> sizes_;
  std::size_t deallocations_ = 0;
  std::size_t failures_ = 0;
  long countdown_ = -1;
};

}  // namespace lowalloc_test

#endif  // LOWALLOC_TESTS_ARENA_SUPPORT_HPP
