// An open-addressing hash map from 64-bit keys to small values, for the analyzer's hot paths
// (live blocks by address, stack ids, per-site size buckets). Not part of lowalloc's API.
//
// Linear probing over a power-of-two table, Fibonacci hashing (addresses are 16-byte aligned, so
// the low bits alone would collide), backward-shift deletion (no tombstones: a table that sees
// millions of alloc/free pairs does not degrade). One key value marks empty slots; an entry with
// that key lives on the side. Keys that come in runs, like a stream's allocation ordinals, can
// keep each run in consecutive slots instead (runs_of): entries made and found in key order then
// share cache lines.
//
// A large table doubles in place (table_memory, rehash_in_place): the live blocks of a trace can
// fill 10^8 bytes of slots, and copying them to a table twice the size had both resident at
// once, the peak of the whole report.
#ifndef LOWALLOC_SRC_ANALYZE_FLAT_MAP_HPP
#define LOWALLOC_SRC_ANALYZE_FLAT_MAP_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace lowalloc::analyze::detail {

/// About to write `bytes` at `data` for the first time (a large array just allocated): its
/// whole pages are faulted in by one system call instead of a page fault each. False where the
/// kernel cannot (before Linux 5.14): the pages are then faulted in as they are written.
bool prefault(void* data, std::size_t bytes) noexcept;

/// The bytes of a hash table: small ones from the heap, large ones a mapping of their own,
/// which grows without being copied (mremap moves its pages).
class table_memory {
 public:
  table_memory() noexcept = default;
  ~table_memory() { release(); }
  table_memory(table_memory&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        length_(std::exchange(o.length_, 0)),
        ready_(std::exchange(o.ready_, 0)),
        mapped_(std::exchange(o.mapped_, false)) {}
  table_memory& operator=(table_memory&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      length_ = std::exchange(o.length_, 0);
      ready_ = std::exchange(o.ready_, 0);
      mapped_ = std::exchange(o.mapped_, false);
    }
    return *this;
  }

  void* data() const noexcept { return data_; }
  /// `bytes` of new memory, uninitialized, in place of the old. Throws std::bad_alloc.
  void allocate(std::size_t bytes);
  /// Grows to `bytes`, keeping the contents (the rest is uninitialized). False if only a copy
  /// could grow it (heap memory, or no address space): the contents are then as they were.
  bool extend(std::size_t bytes) noexcept;
  /// About to write the first `bytes`: a mapping's pages up to there, and up to 1 MiB further
  /// within it, are faulted in by one system call instead of a page fault each (a 10^6-stack
  /// report faults in 400 MB). Nothing for heap memory, or where the kernel cannot (before
  /// Linux 5.14): the pages are then faulted in as they are written.
  void prepare(std::size_t bytes) noexcept {
    if (bytes > ready_) prepare_pages(bytes);
  }

 private:
  void release() noexcept;
  void prepare_pages(std::size_t bytes) noexcept;

  void* data_ = nullptr;
  std::size_t length_ = 0;  // of the mapping
  std::size_t ready_ = 0;   // bytes from the start already faulted in (or not to be)
  bool mapped_ = false;
};

/// A growable array of trivially copyable T in table_memory: past 1 MiB it grows by moving its
/// pages, so the old and the new array are never both resident, and the part beyond the size is
/// not touched. (A vector of a million stacks' counters doubled to 150 MB with the old 75 MB
/// still there.)
template <class T>
class grow_array {
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                "elements are moved as bytes and never destroyed");

 public:
  grow_array() = default;
  grow_array(const grow_array& o) { *this = o; }
  grow_array& operator=(const grow_array& o) {
    if (this == &o) return *this;
    grow_array copy;
    if (o.size_ != 0) {
      copy.reserve(o.size_);
      std::memcpy(static_cast<void*>(copy.data_), o.data_, o.size_ * sizeof(T));
      copy.size_ = o.size_;
    }
    return *this = std::move(copy);
  }
  grow_array(grow_array&& o) noexcept { *this = std::move(o); }
  grow_array& operator=(grow_array&& o) noexcept {
    memory_ = std::move(o.memory_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    return *this;
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& at(std::size_t i) const {
    if (i >= size_) throw std::out_of_range("grow_array::at");
    return data_[i];
  }

  /// Grows to `n` elements (never shrinks), the new ones value-initialized.
  void grow_to(std::size_t n) {
    if (n <= size_) return;
    if (n > capacity_) reserve(std::max(n, capacity_ < 32 ? 64 : capacity_ * 2));
    memory_.prepare(n * sizeof(T));
    for (std::size_t i = size_; i < n; ++i) new (&data_[i]) T{};
    size_ = n;
  }

 private:
  void reserve(std::size_t capacity) {
    if (!memory_.extend(capacity * sizeof(T))) {
      table_memory fresh;
      fresh.allocate(capacity * sizeof(T));
      if (size_ != 0) std::memcpy(fresh.data(), data_, size_ * sizeof(T));
      memory_ = std::move(fresh);
    }
    data_ = static_cast<T*>(memory_.data());
    capacity_ = capacity;
  }

  table_memory memory_;
  T* data_ = nullptr;  // in memory_
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

/// Where a key's probe starts: Fibonacci hashing of the whole key.
struct spread_keys {
  static std::size_t home(std::uint64_t key, unsigned shift, std::size_t) noexcept {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift);
  }
};

/// Each run of 2^Bits consecutive keys in consecutive slots, the runs placed by Fibonacci
/// hashing. Short runs: a run is a cluster of up to 2^Bits entries wherever it lands.
template <unsigned Bits>
struct runs_of {
  static_assert(Bits < 16, "a run longer than a few cache lines brings only clustering");
  static std::size_t home(std::uint64_t key, unsigned shift, std::size_t mask) noexcept {
    const auto run = static_cast<std::size_t>(((key >> Bits) * 0x9E3779B97F4A7C15ull) >> shift);
    return (run + static_cast<std::size_t>(key & ((1u << Bits) - 1))) & mask;
  }
};

template <class V, class Hash = spread_keys>
class u64_map {
  static_assert(std::is_trivially_copyable<V>::value && std::is_trivially_destructible<V>::value,
                "slots are moved as bytes and never destroyed");

 public:
  u64_map() = default;
  u64_map(const u64_map&) = delete;
  u64_map& operator=(const u64_map&) = delete;
  u64_map(u64_map&& o) noexcept { *this = std::move(o); }
  u64_map& operator=(u64_map&& o) noexcept {
    memory_ = std::move(o.memory_);
    slots_ = std::exchange(o.slots_, nullptr);
    mask_ = std::exchange(o.mask_, 0);
    shift_ = std::exchange(o.shift_, 64u);
    size_ = std::exchange(o.size_, 0);
    has_marker_ = std::exchange(o.has_marker_, false);
    marker_value_ = o.marker_value_;
    return *this;
  }

  std::size_t size() const noexcept { return size_ + (has_marker_ ? 1 : 0); }

  /// Starts fetching the slot where `key`'s probe begins, for a get() or find() soon after.
  void prefetch(std::uint64_t key) const noexcept {
    if (slots_ != nullptr) __builtin_prefetch(&slots_[home(key)]);
  }

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
  std::size_t home(std::uint64_t key) const noexcept { return Hash::home(key, shift_, mask_); }

  void grow() {
    const std::size_t old_cap = capacity();
    const std::size_t new_cap = old_cap == 0 ? 64 : old_cap * 2;
    if (old_cap != 0 && memory_.extend(new_cap * sizeof(slot))) {
      use(new_cap, old_cap);
      rehash_in_place(old_cap);
      return;
    }
    table_memory old = std::move(memory_);
    const slot* from = slots_;
    memory_.allocate(new_cap * sizeof(slot));
    use(new_cap, 0);
    for (std::size_t i = 0; i < old_cap; ++i) {
      if (from[i].key == marker) continue;
      std::size_t j = home(from[i].key);
      while (slots_[j].key != marker) j = (j + 1) & mask_;
      slots_[j] = from[i];
    }
  }

  // The table is memory_ at `cap` slots, of which [0, kept) are slots already.
  void use(std::size_t cap, std::size_t kept) noexcept {
    memory_.prepare(cap * sizeof(slot));
    slots_ = static_cast<slot*>(memory_.data());
    for (std::size_t i = kept; i < cap; ++i) new (&slots_[i]) slot{marker, V{}};
    mask_ = cap - 1;
    shift_ = 64;
    for (std::size_t c = cap; c > 1; c >>= 1) --shift_;
  }

  // After the table doubled in place, its entries (all in the first `old_cap` slots) move where
  // the new size wants them, from the last slot down: an entry whose new home is at or above
  // the slot it leaves probes only over entries already moved, which stay where they are, so
  // every slot between it and its home stays full, as linear probing requires. Both hashes send
  // an old home h to about 2h, so both sweeps are sequential; the few entries whose new home lies
  // below (long runs at the start, runs that wrapped) go in last.
  void rehash_in_place(std::size_t old_cap) {
    const std::size_t cap = capacity();
    std::vector<slot> later;
    for (std::size_t i = old_cap; i-- > 0;) {
      if (slots_[i].key == marker) continue;
      const slot e = slots_[i];
      slots_[i].key = marker;
      std::size_t j = home(e.key);
      if (j >= i)
        while (j < cap && slots_[j].key != marker) ++j;
      if (j < i || j == cap)
        later.push_back(e);
      else
        slots_[j] = e;
    }
    for (const slot& e : later) {
      std::size_t j = home(e.key);
      while (slots_[j].key != marker) j = (j + 1) & mask_;
      slots_[j] = e;
    }
  }

  table_memory memory_;
  slot* slots_ = nullptr;  // in memory_
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
  bool has_marker_ = false;
  V marker_value_{};
};

}  // namespace lowalloc::analyze::detail

#endif
