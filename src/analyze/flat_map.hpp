// An open-addressing hash map from 64-bit keys to small values, for the analyzer's hot paths
// (live blocks by address, stack ids, per-site size buckets). Not part of lowalloc's API.
//
// Linear probing over a power-of-two table, Fibonacci hashing (addresses are 16-byte aligned, so
// the low bits alone would collide), backward-shift deletion (no tombstones: a table that sees
// millions of alloc/free pairs does not degrade). One key value marks empty slots; an entry with
// that key lives on the side.
#ifndef LOWALLOC_SRC_ANALYZE_FLAT_MAP_HPP
#define LOWALLOC_SRC_ANALYZE_FLAT_MAP_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace lowalloc::analyze::detail {

template <class V>
class u64_map {
 public:
  u64_map() = default;
  u64_map(const u64_map&) = delete;
  u64_map& operator=(const u64_map&) = delete;
  u64_map(u64_map&&) noexcept = default;
  u64_map& operator=(u64_map&&) noexcept = default;

  std::size_t size() const noexcept { return size_ + (has_marker_ ? 1 : 0); }

  V* find(std::uint64_t key) noexcept {
    if (key == marker) return has_marker_ ? &marker_value_ : nullptr;
    if (slots_ == nullptr) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == marker) return nullptr;
    }
  }

  /// The value of `key`, value-initialized and inserted if absent (`inserted` says which).
  V& get(std::uint64_t key, bool& inserted) {
    if (key == marker) {
      inserted = !has_marker_;
      if (inserted) marker_value_ = V{};
      has_marker_ = true;
      return marker_value_;
    }
    if ((size_ + 1) * 8 > capacity() * 7 || slots_ == nullptr) grow();
    std::size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      slot& s = slots_[i];
      if (s.key == key) {
        inserted = false;
        return s.value;
      }
      if (s.key == marker) break;
    }
    ++size_;
    inserted = true;
    slots_[i].key = key;
    slots_[i].value = V{};
    return slots_[i].value;
  }

  /// Removes `key`; returns whether it was present and if so moves its value to `out`.
  bool erase(std::uint64_t key, V& out) noexcept {
    if (key == marker) {
      if (!has_marker_) return false;
      out = marker_value_;
      has_marker_ = false;
      return true;
    }
    if (slots_ == nullptr) return false;
    std::size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].key == key) break;
      if (slots_[i].key == marker) return false;
    }
    out = slots_[i].value;
    // Backward shift: move later entries of the probe run into the hole when their home
    // position allows it.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; slots_[j].key != marker; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].key);
      const bool movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].key = marker;
    --size_;
    return true;
  }

  void clear() noexcept {
    for (std::size_t i = 0; slots_ != nullptr && i < capacity(); ++i) slots_[i].key = marker;
    size_ = 0;
    has_marker_ = false;
  }

  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; slots_ != nullptr && i < capacity(); ++i)
      if (slots_[i].key != marker) f(slots_[i].key, slots_[i].value);
    if (has_marker_) f(marker, marker_value_);
  }

 private:
  static constexpr std::uint64_t marker = ~std::uint64_t{0};
  struct slot {
    std::uint64_t key;
    V value;
  };

  std::size_t capacity() const noexcept { return slots_ == nullptr ? 0 : mask_ + 1; }
  std::size_t home(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void grow() {
    const std::size_t old_cap = capacity();
    const std::size_t new_cap = old_cap == 0 ? 64 : old_cap * 2;
    std::unique_ptr<slot[]> old = std::move(slots_);
    slots_.reset(new slot[new_cap]);
    for (std::size_t i = 0; i < new_cap; ++i) slots_[i].key = marker;
    mask_ = new_cap - 1;
    shift_ = 64;
    for (std::size_t c = new_cap; c > 1; c >>= 1) --shift_;
    for (std::size_t i = 0; i < old_cap; ++i) {
      if (old[i].key == marker) continue;
      std::size_t j = home(old[i].key);
      while (slots_[j].key != marker) j = (j + 1) & mask_;
      slots_[j] = old[i];
    }
  }

  std::unique_ptr<slot[]> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
  bool has_marker_ = false;
  V marker_value_{};
};

}  // namespace lowalloc::analyze::detail

#endif
