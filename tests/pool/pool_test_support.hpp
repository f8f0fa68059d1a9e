// Helpers for the pool tests: an upstream resource that records every block it hands out.
#ifndef LOWALLOC_TESTS_POOL_TEST_SUPPORT_HPP
#define LOWALLOC_TESTS_POOL_TEST_SUPPORT_HPP

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <mutex>
#include <utility>

#include <gtest/gtest.h>

namespace pool_test {

// Forwards to new_delete_resource and records the live blocks (thread-safe). A deallocation of
// a block it did not hand out, or with another size or alignment, is a test failure.
class counting_resource : public std::pmr::memory_resource {
 public:
  struct block {
    std::size_t bytes;
    std::size_t align;
  };

  ~counting_resource() override {
    std::lock_guard<std::mutex> lock(mutex_);
    EXPECT_TRUE(live_.empty()) << live_.size() << " blocks leaked";
    for (const auto& [p, b] : live_)
      std::pmr::new_delete_resource()->deallocate(p, b.bytes, b.align);
  }

  std::size_t allocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocations_;
  }
  std::size_t deallocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return deallocations_;
  }
  std::size_t live_blocks() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }
  std::size_t live_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t n = 0;
    for (const auto& kv : live_) n += kv.second.bytes;
    return n;
  }
  // The live block that contains [p, p + n), or {nullptr, {}}.
  std::pair<void*, block> block_of(const void* p, std::size_t n) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    auto it = live_.upper_bound(const_cast<void*>(p));
    if (it == live_.begin()) return {nullptr, {}};
    --it;
    const auto b = reinterpret_cast<std::uintptr_t>(it->first);
    if (a >= b && a + n <= b + it->second.bytes) return *it;
    return {nullptr, {}};
  }

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    void* p = std::pmr::new_delete_resource()->allocate(bytes, align);
    std::lock_guard<std::mutex> lock(mutex_);
    ++allocations_;
    live_[p] = block{bytes, align};
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(p);
      if (it == live_.end()) {
        ADD_FAILURE() << "deallocate of a block not from this resource: " << p;
        return;
      }
      EXPECT_EQ(it->second.bytes, bytes);
      EXPECT_EQ(it->second.align, align);
      live_.erase(it);
      ++deallocations_;
    }
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  mutable std::mutex mutex_;
  std::map<void*, block> live_;
  std::size_t allocations_ = 0;
  std::size_t deallocations_ = 0;
};

}  // namespace pool_test

#endif  // LOWALLOC_TESTS_POOL_TEST_SUPPORT_HPP
