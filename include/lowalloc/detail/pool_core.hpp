// lowalloc/detail/pool_core.hpp — the single-threaded engine behind lowalloc::pool and the central
// part of lowalloc::synchronized_pool. Internal: not part of the API.
//
// Slab layout (one upstream block of slab_bytes, aligned to slab_bytes, a power of two):
//
//   [pool_slab header][free bitmap: nwords x u64][debug bitmap: nwords x u64, assertions only]
//   [pad to slot_align][slot 0][slot 1]...[slot n-1][unused tail]
//
// A set bit in the free bitmap is a free slot. `summary` has bit w set when word w has a free
// slot (at most 64 x 64 = 4096 slots per slab). A slot's slab is `p & ~(slab_bytes - 1)`; its
// index is (offset >> shift) * inverse, the exact division by slot_size of an exact multiple
// (slot_size = odd << shift, inverse = odd^-1 mod 2^64).
//
// The current group: the pool takes one bitmap word (64 slots) out of a slab and holds it in
// `cur_bits_`. allocate is then a find-first-set and a clear of that register-sized field, and
// freeing a slot of the group (checked with one subtraction and compare) sets its bit there: no
// slab header is touched and no counter updated on either fast path. Frees of other slots set
// their bit in their slab's bitmap (O(1)). When the group runs out, the word goes back to its
// slab and the next one is taken from the head of the available list.
//
// Accounting: a slab's `used` counts the slots handed out from its bitmap words, not those of the
// current group (the group's are popcount(valid) - popcount(cur_bits_)). `empty_` counts the
// slabs that are not current and have used == 0. The current slab is empty when its used is 0 and
// its group is all free; the free fast path compares cur_bits_ with `cur_full_`, which is "armed"
// (the group's full mask, else 0: never equal) only when that event would exceed
// keep_empty_slabs, so that the common case costs no call.
//
// Slabs with a free word form the doubly linked "available" list, whose head gives the next
// group. A full slab that gets a slot back goes to its head (nearly full: fill it first); a slab
// that becomes empty goes to its tail if kept, else back upstream. Every slab is also on the
// "all" list, for release(), stats() and the debug ownership check.
#ifndef LOWALLOC_DETAIL_POOL_CORE_HPP
#define LOWALLOC_DETAIL_POOL_CORE_HPP

#include <lowalloc/detail/config.hpp>
#include <lowalloc/detail/throw.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory_resource>
#include <new>
#include <stdexcept>

#if LOWALLOC_HAS_CXX20 && defined(__cpp_lib_bitops)
#include <bit>
#elif defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

// Under AddressSanitizer the pool poisons every slot it has not handed out, so a use after
// deallocate() (or of bytes past the request inside a slot) is reported where it happens.
#ifndef LOWALLOC_POOL_POISON
#if defined(__SANITIZE_ADDRESS__)
#define LOWALLOC_POOL_POISON 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOWALLOC_POOL_POISON 1
#endif
#endif
#ifndef LOWALLOC_POOL_POISON
#define LOWALLOC_POOL_POISON 0
#endif
#endif

#if LOWALLOC_POOL_POISON
#include <sanitizer/asan_interface.h>
#endif

namespace lowalloc {

namespace detail {

inline unsigned pool_ctz(unsigned long long x) noexcept {
#if LOWALLOC_HAS_CXX20 && defined(__cpp_lib_bitops)
  return static_cast<unsigned>(std::countr_zero(x));
#elif defined(__GNUC__) || defined(__clang__)
  return static_cast<unsigned>(__builtin_ctzll(x));
#else
  unsigned long i;
  _BitScanForward64(&i, x);
  return static_cast<unsigned>(i);
#endif
}

inline void pool_poison([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) noexcept {
#if LOWALLOC_POOL_POISON
  __asan_poison_memory_region(p, n);
#endif
}

inline void pool_unpoison([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) noexcept {
#if LOWALLOC_POOL_POISON
  __asan_unpoison_memory_region(p, n);
#endif
}

// The debug checks' messages. Out of line and cold: they only run when a check fails.
[[noreturn]] LOWALLOC_NOINLINE inline void pool_fail_double_free(const char* who,
                                                                 const void* p) noexcept {
  std::fprintf(stderr, "%s: double free of %p\n", who, p);
  std::fflush(stderr);
  std::abort();
}

[[noreturn]] LOWALLOC_NOINLINE inline void pool_fail_foreign(const char* who,
                                                             const void* p) noexcept {
  std::fprintf(stderr, "%s: pointer %p was not allocated by this pool\n", who, p);
  std::fflush(stderr);
  std::abort();
}

// The first oversize request of a pool (LOWALLOC_POOL_WARN_OVERSIZE).
LOWALLOC_NOINLINE inline void pool_warn_oversize(std::size_t bytes, std::size_t align,
                                                 std::size_t slot_size,
                                                 std::size_t slot_align) noexcept {
  std::fprintf(stderr,
               "lowalloc::pool: warning: a request of %zu bytes (alignment %zu) does not fit the "
               "pool's slots of %zu bytes (alignment %zu) and goes to upstream, as every such "
               "request of this pool will (stats().oversize_allocations counts the live ones); "
               "size the pool with lowalloc::node_size_v<Container> (<lowalloc/node_size.hpp>)\n",
               bytes, align, slot_size, slot_align);
  std::fflush(stderr);
}

[[noreturn]] LOWALLOC_NOINLINE inline void pool_throw_invalid([[maybe_unused]] const char* what) {
  LOWALLOC_THROW(std::invalid_argument(what));
}

using pool_word = unsigned long long;  // not std::size_t: stores to it never alias the sizes

inline unsigned pool_popcount(pool_word x) noexcept {
#if LOWALLOC_HAS_CXX20 && defined(__cpp_lib_bitops)
  return static_cast<unsigned>(std::popcount(x));
#elif defined(__GNUC__) || defined(__clang__)
  return static_cast<unsigned>(__builtin_popcountll(x));
#else
  return static_cast<unsigned>(__popcnt64(x));
#endif
}

struct pool_slab {
  const void* owner;
  pool_slab* prev;  // available list
  pool_slab* next;
  pool_slab* all_prev;  // all slabs
  pool_slab* all_next;
  pool_word summary;   // bit w: words()[w] != 0
  std::uint32_t used;  // slots handed out from the bitmap (not counting the current group)
  std::uint32_t reserved;

  pool_word* words() noexcept { return reinterpret_cast<pool_word*>(this + 1); }
  const pool_word* words() const noexcept { return reinterpret_cast<const pool_word*>(this + 1); }
};

// An oversize block: this header, padded to the block's alignment, precedes the user's bytes.
struct pool_big_block {
  pool_big_block* prev;
  pool_big_block* next;
  std::size_t total;  // bytes taken from upstream
  std::size_t align;  // alignment asked of upstream
};

class pool_core {
 public:
  static constexpr std::size_t max_slots_per_slab = 64 * 64;
  static constexpr std::size_t default_slab_bytes = 16 * 1024;
  static constexpr std::size_t max_slab_bytes = std::size_t{1} << 31;
  static constexpr bool debug_bitmap = LOWALLOC_ASSERTIONS != 0;

  // slots_per_slab 0: as many as fit 16 KiB (at least 64).
  pool_core(std::size_t slot_size, std::size_t slot_align, std::size_t slots_per_slab,
            std::size_t keep_empty_slabs, std::pmr::memory_resource* upstream)
      : upstream_(upstream), keep_empty_(keep_empty_slabs) {
    if (slot_align == 0 || (slot_align & (slot_align - 1)) != 0) {
      pool_throw_invalid("lowalloc::pool: slot alignment must be a power of two");
    }
    if (upstream == nullptr) pool_throw_invalid("lowalloc::pool: upstream resource is null");
    if (slot_size == 0) slot_size = 1;
    if (slot_size > max_slab_bytes / 64 || slot_align > max_slab_bytes / 64) {
      throw_length_error("lowalloc::pool: slot size too large");
    }
    slot_size = (slot_size + slot_align - 1) & ~(slot_align - 1);
    slot_size_ = slot_size;
    slot_align_ = slot_align;
    shift_ = pool_ctz(slot_size);
    const std::uint64_t odd = slot_size >> shift_;
    std::uint64_t inv = odd;  // Newton's iteration: each step doubles the correct low bits
    for (int i = 0; i < 5; ++i) inv *= 2 - odd * inv;
    inverse_ = inv;

    std::size_t n = slots_per_slab;
    if (n > max_slots_per_slab) n = max_slots_per_slab;
    if (n == 0) {
      const std::size_t fit = default_slab_bytes / slot_size;
      n = fit < 64 ? 64 : (fit > max_slots_per_slab ? max_slots_per_slab : fit);
      while (n > 64 && bytes_needed(n) > default_slab_bytes) --n;  // a few steps: the header
    }
    const std::size_t bytes = round_up_pow2(bytes_needed(n));
    if (slots_per_slab == 0) {  // as many as fit the slab
      while (n < max_slots_per_slab && bytes_needed(n + 1) <= bytes) ++n;
    }
    nslots_ = static_cast<std::uint32_t>(n);
    nwords_ = static_cast<std::uint32_t>((n + 63) / 64);
    slots_offset_ = header_bytes(n);
    slab_bytes_ = bytes;
  }

  pool_core(const pool_core&) = delete;
  pool_core& operator=(const pool_core&) = delete;
  ~pool_core() { release(); }

  bool fits(std::size_t bytes, std::size_t align) const noexcept {
    return bytes <= slot_size_ && align <= slot_align_;
  }

  // One slot; throws what upstream throws when a new slab is needed.
  void* alloc_slot() {
    const pool_word bits = cur_bits_;
    if (LOWALLOC_LIKELY(bits != 0)) {
      const pool_word low = bits & (~bits + 1);
      cur_bits_ = bits ^ low;
      const std::uintptr_t p = cur_base_ + pool_ctz(bits) * slot_size_;
      last_ = p;
      last_bit_ = low;
      return reinterpret_cast<void*>(p);
    }
    return alloc_next_group();
  }

  // Gives back a slot from alloc_slot (checked by check_allocated under LOWALLOC_ASSERTIONS).
  void free_slot(void* p) noexcept {
    // The slot allocated last (allocate-use-free churn): its bit is known, so the bitmap update
    // does not wait for the index computation.
    if (reinterpret_cast<std::uintptr_t>(p) == last_) {
      const pool_word bits = cur_bits_ | last_bit_;
      cur_bits_ = bits;
      if (LOWALLOC_UNLIKELY(bits == cur_full_)) current_became_empty();
      return;
    }
    const std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) - cur_base_;
    if (LOWALLOC_LIKELY(off < cur_span_)) {
      const pool_word bits = cur_bits_ | (pool_word{1} << (((off >> shift_) * inverse_) & 63));
      cur_bits_ = bits;
      if (LOWALLOC_UNLIKELY(bits == cur_full_)) current_became_empty();
      return;
    }
    pool_slab* s = slab_of(p);
    const std::size_t idx = index_of(s, p);
    const unsigned w = static_cast<unsigned>(idx >> 6);
    s->words()[w] |= pool_word{1} << (idx & 63);
    const pool_word old_summary = s->summary;
    s->summary = old_summary | (pool_word{1} << w);
    --in_use_;
    if (LOWALLOC_UNLIKELY(--s->used == 0 || old_summary == 0)) freed_slow(s, old_summary);
  }

  // n slots into out; on an exception from upstream, the ones already taken stay in out and
  // their number is in `done`.
  void alloc_batch(void** out, std::size_t n, std::size_t& done) {
    for (done = 0; done < n; ++done) out[done] = alloc_slot();
  }

  // The debug checks of a deallocation: p must be a slot of this pool that is handed out.
  void check_allocated(const void* p, const char* who) const noexcept {
    const pool_slab* s = find_slab(p);
    if (s == nullptr || !is_slot_start(s, p)) pool_fail_foreign(who, p);
    const std::size_t idx = (reinterpret_cast<std::uintptr_t>(p) -
                             reinterpret_cast<std::uintptr_t>(s) - slots_offset_) /
                            slot_size_;
    const pool_word word =
        s == cur_slab_ && (idx >> 6) == cur_w_ ? cur_bits_ : s->words()[idx >> 6];
    if ((word >> (idx & 63)) & 1u) pool_fail_double_free(who, p);
  }

  // The debug bitmap (assertions only): synchronized_pool marks the slots in thread caches.
  // Returns the bit's previous value.
  bool set_debug_mark(const void* p, bool value) noexcept {
    if constexpr (!debug_bitmap) {
      static_cast<void>(p);
      static_cast<void>(value);
      return false;
    } else {
      pool_slab* s = slab_of(p);
      const std::size_t idx = index_of(s, p);
      pool_word* marks = s->words() + nwords_;
      const pool_word bit = pool_word{1} << (idx & 63);
      const bool old = (marks[idx >> 6] & bit) != 0;
      if (value) {
        marks[idx >> 6] |= bit;
      } else {
        marks[idx >> 6] &= ~bit;
      }
      return old;
    }
  }

  LOWALLOC_NOINLINE void* alloc_oversize(std::size_t bytes, std::size_t align) {
#if LOWALLOC_POOL_WARN_OVERSIZE
    if (!oversize_warned_) {
      oversize_warned_ = true;
      pool_warn_oversize(bytes, align, slot_size_, slot_align_);
    }
#endif
    if (align < alignof(pool_big_block)) align = alignof(pool_big_block);
    const std::size_t header = (sizeof(pool_big_block) + align - 1) & ~(align - 1);
    if (bytes > SIZE_MAX - header) throw_bad_alloc();
    const std::size_t total = bytes + header;
    void* raw = upstream_->allocate(total, align);
    auto* b = static_cast<pool_big_block*>(raw);
    b->prev = nullptr;
    b->next = big_;
    b->total = total;
    b->align = align;
    if (big_ != nullptr) big_->prev = b;
    big_ = b;
    ++big_count_;
    big_bytes_ += total;
    return static_cast<char*>(raw) + header;
  }

  LOWALLOC_NOINLINE void free_oversize(void* p, std::size_t align,
                                       [[maybe_unused]] const char* who) noexcept {
    if (align < alignof(pool_big_block)) align = alignof(pool_big_block);
    const std::size_t header = (sizeof(pool_big_block) + align - 1) & ~(align - 1);
    auto* b = static_cast<pool_big_block*>(static_cast<void*>(static_cast<char*>(p) - header));
#if LOWALLOC_ASSERTIONS
    const pool_big_block* x = big_;
    while (x != nullptr && x != b) x = x->next;
    if (x == nullptr) pool_fail_foreign(who, p);
#endif
    if (b->prev != nullptr) {
      b->prev->next = b->next;
    } else {
      big_ = b->next;
    }
    if (b->next != nullptr) b->next->prev = b->prev;
    --big_count_;
    big_bytes_ -= b->total;
    upstream_->deallocate(b, b->total, b->align);
  }

  // Every slab and oversize block back upstream.
  void release() noexcept {
    clear_group();
    while (all_ != nullptr) {
      pool_slab* s = all_;
      all_ = s->all_next;
      give_back(s);
    }
    head_ = tail_ = nullptr;
    slabs_ = empty_ = in_use_ = 0;
    while (big_ != nullptr) {
      pool_big_block* b = big_;
      big_ = b->next;
      upstream_->deallocate(b, b->total, b->align);
    }
    big_count_ = big_bytes_ = 0;
  }

  std::size_t slots_in_use() const noexcept {
    std::size_t n = in_use_;
    if (cur_slab_ != nullptr) n += pool_popcount(cur_valid_) - pool_popcount(cur_bits_);
    return n;
  }
  std::size_t slabs() const noexcept { return slabs_; }
  std::size_t bytes_upstream() const noexcept { return slabs_ * slab_bytes_ + big_bytes_; }
  std::size_t oversize_allocations() const noexcept { return big_count_; }

  std::size_t slot_size() const noexcept { return slot_size_; }
  std::size_t slot_align() const noexcept { return slot_align_; }
  std::size_t slots_per_slab() const noexcept { return nslots_; }
  std::size_t slab_bytes() const noexcept { return slab_bytes_; }
  std::size_t keep_empty_slabs() const noexcept { return keep_empty_; }
  std::pmr::memory_resource* upstream() const noexcept { return upstream_; }

 private:
  std::size_t header_bytes(std::size_t n) const noexcept {
    const std::size_t words = (n + 63) / 64 * (debug_bitmap ? 2 : 1);
    const std::size_t h = sizeof(pool_slab) + words * sizeof(pool_word);
    return (h + slot_align_ - 1) & ~(slot_align_ - 1);
  }
  std::size_t bytes_needed(std::size_t n) const noexcept {
    return header_bytes(n) + n * slot_size_;
  }
  static std::size_t round_up_pow2(std::size_t n) {
    std::size_t p = 64;
    while (p < n) p <<= 1;
    if (p > max_slab_bytes) throw_length_error("lowalloc::pool: slab too large");
    return p;
  }
  pool_word valid_mask(unsigned w) const noexcept {
    const unsigned rest = nslots_ - w * 64;
    return rest >= 64 ? ~pool_word{0} : (pool_word{1} << rest) - 1;
  }

  pool_slab* slab_of(const void* p) const noexcept {
    return reinterpret_cast<pool_slab*>(reinterpret_cast<std::uintptr_t>(p) & ~(slab_bytes_ - 1));
  }
  std::size_t index_of(const pool_slab* s, const void* p) const noexcept {
    const std::uint64_t off = static_cast<std::uint64_t>(
        reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(s) - slots_offset_);
    return static_cast<std::size_t>((off >> shift_) * inverse_);
  }
  bool is_slot_start(const pool_slab* s, const void* p) const noexcept {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(s) + slots_offset_;
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
    return a >= first && (a - first) % slot_size_ == 0 && (a - first) / slot_size_ < nslots_;
  }
  // The slab holding p if it is one of ours (walks the slabs: debug checks only).
  const pool_slab* find_slab(const void* p) const noexcept {
    const pool_slab* want = slab_of(p);
    for (const pool_slab* s = all_; s != nullptr; s = s->all_next) {
      if (s == want) return s;
    }
    return nullptr;
  }

  void unlink_available(pool_slab* s) noexcept {
    if (s->prev != nullptr) {
      s->prev->next = s->next;
    } else {
      head_ = s->next;
    }
    if (s->next != nullptr) {
      s->next->prev = s->prev;
    } else {
      tail_ = s->prev;
    }
    s->prev = s->next = nullptr;
  }
  void push_available_front(pool_slab* s) noexcept {
    s->prev = nullptr;
    s->next = head_;
    if (head_ != nullptr) {
      head_->prev = s;
    } else {
      tail_ = s;
    }
    head_ = s;
  }
  void push_available_back(pool_slab* s) noexcept {
    s->next = nullptr;
    s->prev = tail_;
    if (tail_ != nullptr) {
      tail_->next = s;
    } else {
      head_ = s;
    }
    tail_ = s;
  }

  void clear_group() noexcept {
    cur_slab_ = nullptr;
    cur_bits_ = cur_full_ = cur_valid_ = 0;
    cur_base_ = cur_span_ = 0;
    cur_w_ = 0;
    last_ = last_bit_ = 0;
  }
  bool current_is_empty() const noexcept {
    return cur_slab_ != nullptr && cur_slab_->used == 0 && cur_bits_ == cur_valid_;
  }
  // Arms the free fast path's check when the current slab becoming empty would exceed the policy.
  void rearm() noexcept {
    cur_full_ =
        cur_slab_ != nullptr && cur_slab_->used == 0 && empty_ >= keep_empty_ ? cur_valid_ : 0;
  }

  // The current group is used up (or there is none): put it back, take the next one.
  LOWALLOC_NOINLINE void* alloc_next_group() {
    if (cur_slab_ != nullptr) {  // every slot of the group is handed out
      const unsigned n = pool_popcount(cur_valid_);
      cur_slab_->used += n;
      in_use_ += n;
      clear_group();
    }
    pool_slab* s = head_;
    if (s == nullptr) s = new_slab();
    if (s->used == 0) --empty_;  // it becomes the current slab
    const unsigned w = pool_ctz(s->summary);
    pool_word* words = s->words();
    const pool_word bits = words[w];
    words[w] = 0;
    s->summary &= ~(pool_word{1} << w);
    if (s->summary == 0) unlink_available(s);
    const pool_word valid = valid_mask(w);
    const unsigned out = pool_popcount(valid) - pool_popcount(bits);  // now counted in the group
    s->used -= out;
    in_use_ -= out;
    cur_slab_ = s;
    cur_w_ = w;
    cur_valid_ = valid;
    cur_base_ =
        reinterpret_cast<std::uintptr_t>(s) + slots_offset_ + std::size_t{w} * 64 * slot_size_;
    cur_span_ = pool_popcount(valid) * slot_size_;
    cur_bits_ = bits;
    last_ = last_bit_ = 0;
    rearm();
    return alloc_slot();
  }

  LOWALLOC_NOINLINE pool_slab* new_slab() {
    void* raw = upstream_->allocate(slab_bytes_, slab_bytes_);
    LOWALLOC_ASSERT((reinterpret_cast<std::uintptr_t>(raw) & (slab_bytes_ - 1)) == 0);
    auto* s = static_cast<pool_slab*>(raw);
    s->owner = this;
    s->used = 0;
    s->reserved = 0;
    pool_word* words = s->words();
    for (std::uint32_t i = 0; i < nwords_; ++i) words[i] = valid_mask(i);
    if constexpr (debug_bitmap) {
      for (std::uint32_t i = 0; i < nwords_; ++i) words[nwords_ + i] = 0;
    }
    s->summary = nwords_ == 64 ? ~pool_word{0} : (pool_word{1} << nwords_) - 1;
    pool_poison(reinterpret_cast<char*>(s) + slots_offset_, slab_bytes_ - slots_offset_);
    s->all_prev = nullptr;
    s->all_next = all_;
    if (all_ != nullptr) all_->all_prev = s;
    all_ = s;
    push_available_front(s);
    ++slabs_;
    ++empty_;
    return s;
  }

  // A slot outside the current group was freed and its slab's used reached 0, or the slab was
  // full (summary 0).
  LOWALLOC_NOINLINE void freed_slow(pool_slab* s, pool_word old_summary) noexcept {
    if (old_summary == 0) push_available_front(s);
    if (s->used != 0) return;
    if (s == cur_slab_) {  // the rest of the current slab is free: arm the group's check
      rearm();
      if (cur_full_ != 0 && cur_bits_ == cur_full_) current_became_empty();
      return;
    }
    const std::size_t empties = empty_ + 1 + (current_is_empty() ? 1 : 0);
    if (empties <= keep_empty_) {
      ++empty_;
      if (s != tail_) {  // used last, after the partly used slabs
        unlink_available(s);
        push_available_back(s);
      }
      rearm();
      return;
    }
    drop_slab(s);
  }

  // The current slab became empty and one empty slab too many is held: give back another empty
  // one (the current one is hot), or the current one when it is the only one.
  LOWALLOC_NOINLINE void current_became_empty() noexcept {
    if (empty_ > 0) {
      for (pool_slab* s = tail_; s != nullptr; s = s->prev) {
        if (s->used == 0 && s != cur_slab_) {
          --empty_;
          drop_slab(s);
          rearm();
          return;
        }
      }
    }
    pool_slab* s = cur_slab_;
    pool_word* words = s->words();
    words[cur_w_] = cur_bits_;
    clear_group();
    if (s->prev != nullptr || head_ == s) unlink_available(s);
    drop_slab_unlinked(s);
  }

  void drop_slab(pool_slab* s) noexcept {
    unlink_available(s);
    drop_slab_unlinked(s);
  }
  void drop_slab_unlinked(pool_slab* s) noexcept {
    if (s->all_prev != nullptr) {
      s->all_prev->all_next = s->all_next;
    } else {
      all_ = s->all_next;
    }
    if (s->all_next != nullptr) s->all_next->all_prev = s->all_prev;
    --slabs_;
    give_back(s);
  }

  void give_back(pool_slab* s) noexcept {
    pool_unpoison(s, slab_bytes_);
    upstream_->deallocate(s, slab_bytes_, slab_bytes_);
  }

  // Hot fields first: what the fast paths read.
  pool_word cur_bits_ = 0;       // free slots of the current group
  std::uintptr_t cur_base_ = 0;  // address of the group's first slot
  std::uintptr_t cur_span_ = 0;  // bytes of the group's slots; 0: no group
  std::size_t slot_size_ = 0;
  std::uint64_t inverse_ = 1;
  unsigned shift_ = 0;
  unsigned cur_w_ = 0;
  std::uintptr_t last_ = 0;  // the slot allocate returned last, in the current group (or 0)
  pool_word last_bit_ = 0;   // its bit in cur_bits_
  pool_word cur_full_ = 0;   // the group's valid mask when its emptying needs the policy, else 0
  pool_word cur_valid_ = 0;
  pool_slab* cur_slab_ = nullptr;
  std::size_t slots_offset_ = 0;
  std::size_t slab_bytes_ = 0;
  std::size_t in_use_ = 0;  // sum of the slabs' used
  std::size_t empty_ = 0;   // slabs other than the current one with used == 0
  std::uint32_t nslots_ = 0;
  std::uint32_t nwords_ = 0;
  std::size_t slot_align_ = 0;
  pool_slab* head_ = nullptr;
  pool_slab* tail_ = nullptr;
  pool_slab* all_ = nullptr;
  std::size_t slabs_ = 0;
  pool_big_block* big_ = nullptr;
  std::size_t big_count_ = 0;
  std::size_t big_bytes_ = 0;
  std::pmr::memory_resource* upstream_;
  std::size_t keep_empty_;
  bool oversize_warned_ = false;  // LOWALLOC_POOL_WARN_OVERSIZE: the warning was given
};

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_POOL_CORE_HPP
