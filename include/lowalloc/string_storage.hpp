// lowalloc/string_storage.hpp — the storage concept of lowalloc::basic_string, and the two
// storages shipped with it: small_storage (inline, then heap) and fixed_storage (inline only).
//
// basic_string<CharT, Storage, Traits> (<lowalloc/string.hpp>) writes the whole std::basic_string
// interface once over a Storage; small_string and fixed_string are basic_strings over the two
// storages here. A storage of your own only has to model the concept below.
//
// The storage concept. A Storage for CharT is a class with
//
//   using value_type = CharT;
//   using size_type = std::size_t;
//   Storage() noexcept;                       // empty; data()[0] == CharT()
//   Storage(const Storage&); Storage(Storage&&) noexcept;      // the moved-from one is empty
//   Storage& operator=(const Storage&); Storage& operator=(Storage&&);
//   void swap(Storage&) noexcept;
//   CharT* data() noexcept; const CharT* data() const noexcept;   // size() + 1 characters
//   size_type size() const noexcept;
//   size_type capacity() const noexcept;      // data()[0 .. capacity()] is writable
//   size_type max_size() const noexcept;
//   void set_size(size_type n) noexcept;      // n <= capacity(); stores data()[n] = CharT()
//   void reserve(size_type n);                // capacity() >= n after, text kept; strong
//                                             // guarantee; std::length_error if n > max_size()
//   void shrink_to_fit();                     // a non-binding request
//
// and, if it allocates, `using allocator_type`, `allocator_type get_allocator() const`,
// `explicit Storage(const allocator_type&)`, `Storage(const Storage&, const allocator_type&)` and
// `Storage(Storage&&, const allocator_type&)`. Storage owns no policy: basic_string checks
// positions and lengths, grows geometrically, handles aliasing and keeps the strong guarantee.
// Write an arena-backed or a shared storage and the whole interface comes with it.
#ifndef LOWALLOC_STRING_STORAGE_HPP
#define LOWALLOC_STRING_STORAGE_HPP

#include <lowalloc/detail/allocator_holder.hpp>
#include <lowalloc/detail/config.hpp>
#include <lowalloc/detail/string_bytes.hpp>
#include <lowalloc/detail/throw.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

namespace lowalloc {

LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_BEGIN

/// Storage for lowalloc::basic_string: up to N-1 characters inside the object, more on the heap
/// through Allocator. With an empty allocator, sizeof == max(24, N * sizeof(CharT)) rounded up to
/// a multiple of 8: small_storage<char, 32> is 32 bytes and holds 31 characters inline.
///
/// Layout: a union of the inline characters and {pointer, size, capacity}. The last inline
/// character slot holds the remaining inline capacity (so it is the terminator when the buffer is
/// full); its top bit is the is-on-heap flag. On the heap that slot is the top of the capacity
/// word (24-byte objects) or a slot of its own.
template <class CharT, std::size_t N, class Allocator = std::allocator<CharT>>
class small_storage : private detail::allocator_holder<Allocator> {
  using holder = detail::allocator_holder<Allocator>;
  using traits = std::allocator_traits<Allocator>;
  using tail = detail::tail_t<CharT>;

  static_assert(N >= 1, "small_storage<CharT, N>: N counts the terminator and must be >= 1");
  static_assert(std::is_same_v<typename Allocator::value_type, CharT>,
                "small_storage: Allocator::value_type must be CharT");
  static_assert(std::is_same_v<typename traits::pointer, CharT*>,
                "small_storage: the allocator's pointer type must be CharT*");
  static_assert(std::is_trivial_v<CharT> && sizeof(CharT) <= 4, "CharT must be a character type");

  static constexpr std::size_t bytes_ =
      (N * sizeof(CharT) + 7) / 8 * 8 < 24 ? 24 : (N * sizeof(CharT) + 7) / 8 * 8;
  static constexpr std::size_t units_ = bytes_ / sizeof(CharT);

 public:
  using value_type = CharT;
  using size_type = std::size_t;
  using allocator_type = Allocator;

  /// Characters held without allocating.
  static constexpr size_type inline_capacity = (N < units_ ? N : units_) - 1;

 private:
  static constexpr tail heap_flag = tail(tail(1) << (8 * sizeof(tail) - 1));
  // The size's largest slot value stays below heap_flag, which shares the slot.
  using inline_size =
      detail::inline_size_encoding<CharT, inline_capacity, units_ - 1, tail(heap_flag - 1)>;
  // In a 24-byte object the flag slot is part of the capacity word.
  static constexpr bool cap_has_flag = bytes_ == 3 * sizeof(void*);
  static constexpr unsigned flag_shift = 8 * sizeof(tail);
  static constexpr size_type cap_limit =
      cap_has_flag ? (size_type(1) << (8 * sizeof(size_type) - flag_shift)) - 2
                   : size_type(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(CharT) - 1;

  struct heap_rep {
    CharT* ptr;
    size_type size;
    size_type cap_word;
  };
  union rep {
    CharT buf[units_];
    heap_rep heap;
  };
  static_assert(sizeof(rep) == bytes_, "small_storage layout");

 public:
  small_storage() noexcept(std::is_nothrow_default_constructible_v<Allocator>) { init(); }
  explicit small_storage(const Allocator& a) noexcept : holder(a) { init(); }

  small_storage(const small_storage& o)
      : holder(traits::select_on_container_copy_construction(o.alloc())) {
    copy_init(o);
  }
  small_storage(const small_storage& o, const Allocator& a) : holder(a) { copy_init(o); }

  small_storage(small_storage&& o) noexcept : holder(std::move(o.alloc())) { steal(o); }
  small_storage(small_storage&& o, const Allocator& a) : holder(a) {
    if (o.alloc() == a) {
      steal(o);
    } else {
      copy_init(o);
    }
  }

  ~small_storage() {
    if (is_heap()) deallocate(r_.heap.ptr, heap_capacity());
  }

  small_storage& operator=(const small_storage& o) {
    if (this == &o) return *this;
    if constexpr (traits::propagate_on_container_copy_assignment::value) {
      if (!traits::is_always_equal::value && alloc() != o.alloc()) {
        // Our block goes back to our allocator; the new one comes from o's, allocated first so
        // that a failure changes nothing.
        const size_type n = o.size();
        if (n > inline_capacity) {
          Allocator a(o.alloc());
          CharT* p = allocate_chars(a, n);
          std::memcpy(p, o.data(), (n + 1) * sizeof(CharT));
          release();
          alloc() = std::move(a);
          set_heap(p, n, n);
          return *this;
        }
        release();
      }
      alloc() = o.alloc();
    }
    assign_chars(o.data(), o.size());
    return *this;
  }

  small_storage& operator=(small_storage&& o) noexcept(
      traits::propagate_on_container_move_assignment::value || traits::is_always_equal::value) {
    if (this == &o) return *this;
    if constexpr (traits::propagate_on_container_move_assignment::value) {
      if (o.is_heap() || (!traits::is_always_equal::value && alloc() != o.alloc())) release();
      alloc() = std::move(o.alloc());
    } else if (!traits::is_always_equal::value && alloc() != o.alloc()) {
      assign_chars(o.data(), o.size());  // may allocate, from our allocator
      return *this;
    } else if (o.is_heap()) {
      release();
    }
    if (o.is_heap()) {
      std::memcpy(static_cast<void*>(&r_), &o.r_, sizeof r_);
      o.init();
    } else {
      assign_chars(o.data(), o.size());  // fits: never allocates
      o.set_size(0);
    }
    return *this;
  }

  /// Swaps the texts (and the allocators when they propagate on swap). O(1), never allocates.
  void swap(small_storage& o) noexcept {
    if constexpr (traits::propagate_on_container_swap::value) {
      using std::swap;
      swap(alloc(), o.alloc());
    }
    rep t;
    std::memcpy(static_cast<void*>(&t), &r_, sizeof r_);
    std::memcpy(static_cast<void*>(&r_), &o.r_, sizeof r_);
    std::memcpy(static_cast<void*>(&o.r_), &t, sizeof r_);
  }

  allocator_type get_allocator() const noexcept { return alloc(); }

  bool is_inline() const noexcept { return !is_heap(); }

  CharT* data() noexcept { return is_heap() ? r_.heap.ptr : r_.buf; }
  const CharT* data() const noexcept { return is_heap() ? r_.heap.ptr : r_.buf; }

  size_type size() const noexcept {
    const tail t = last();
    if (t & heap_flag) return r_.heap.size;
    // The slot is read once, for the heap flag and the size both (inline_size::load would read
    // it again).
    if constexpr (inline_size::uses_size_word) {
      if (t == inline_size::big) return inline_size::size_word(r_.buf);
    }
    return inline_capacity - t;
  }

  size_type capacity() const noexcept { return is_heap() ? heap_capacity() : inline_capacity; }

  size_type max_size() const noexcept {
    const size_type a = size_type(traits::max_size(alloc())) - 1;
    return a < cap_limit ? a : cap_limit;
  }

  /// n <= capacity(); writes the terminator at data()[n].
  void set_size(size_type n) noexcept {
    if (is_heap()) {
      LOWALLOC_ASSERT(n <= heap_capacity());
      r_.heap.size = n;
      r_.heap.ptr[n] = CharT();
    } else {
      set_inline_size(n);
    }
  }

  /// Makes capacity() >= n, keeping the text. Allocates exactly n + 1 characters when it grows.
  /// Strong guarantee; std::length_error past max_size().
  void reserve(size_type n) {
    if (n <= capacity()) return;
    if (n > max_size())
      detail::throw_length_error("lowalloc::small_string: reserve past max_size()");
    CharT* p = allocate_chars(alloc(), n);
    const size_type sz = size();
    const size_type bytes = (sz + 1) * sizeof(CharT);
    if (bytes <= 32) {
      detail::move_short_bytes(reinterpret_cast<unsigned char*>(p),
                               reinterpret_cast<const unsigned char*>(data()), bytes);
    } else {
      std::memcpy(p, data(), bytes);
    }
    if (is_heap()) deallocate(r_.heap.ptr, heap_capacity());
    set_heap(p, sz, n);
  }

  /// Returns the text to the inline buffer when it fits, else to an exactly sized block. Like
  /// libstdc++, a failed allocation leaves the string as it was and is not reported.
  void shrink_to_fit() noexcept {
    if (!is_heap()) return;
    const size_type sz = r_.heap.size;
    const size_type cap = heap_capacity();
    CharT* const p = r_.heap.ptr;
    if (sz <= inline_capacity) {
      std::memcpy(r_.buf, p, sz * sizeof(CharT));
      set_inline_size(sz);
      deallocate(p, cap);
      return;
    }
    if (sz == cap) return;
    LOWALLOC_TRY {
      CharT* q = allocate_chars(alloc(), sz);
      std::memcpy(q, p, (sz + 1) * sizeof(CharT));
      deallocate(p, cap);
      set_heap(q, sz, sz);
    }
    LOWALLOC_CATCH_ALL {}
  }

 private:
  using holder::alloc;

  tail last() const noexcept { return inline_size::slot(r_.buf); }
  bool is_heap() const noexcept { return (last() & heap_flag) != 0; }

  size_type heap_capacity() const noexcept {
    const size_type w = r_.heap.cap_word;
    if constexpr (!cap_has_flag) {
      return w;
    } else if constexpr (detail::little_endian) {
      return w & ((size_type(1) << (8 * sizeof(size_type) - flag_shift)) - 1);
    } else {
      return w >> flag_shift;
    }
  }

  void set_heap(CharT* p, size_type sz, size_type cap) noexcept {
    r_.heap.ptr = p;
    r_.heap.size = sz;
    if constexpr (!cap_has_flag) {
      r_.heap.cap_word = cap;
      detail::store_unit(r_.buf + (units_ - 1), heap_flag);
    } else if constexpr (detail::little_endian) {
      r_.heap.cap_word = cap | (size_type(heap_flag) << (8 * sizeof(size_type) - flag_shift));
    } else {
      r_.heap.cap_word = (cap << flag_shift) | heap_flag;
    }
  }

  void set_inline_size(size_type n) noexcept { inline_size::store(r_.buf, n); }

  void init() noexcept { set_inline_size(0); }

  // A block for `cap` characters and the terminator. cap <= max_size(), which the allocator's
  // size_type holds (it may be narrower than std::size_t).
  static CharT* allocate_chars(Allocator& a, size_type cap) {
    return traits::allocate(a, static_cast<typename traits::size_type>(cap + 1));
  }
  void deallocate(CharT* p, size_type cap) noexcept {
    traits::deallocate(alloc(), p, static_cast<typename traits::size_type>(cap + 1));
  }

  // Frees a heap buffer and leaves the string empty and inline.
  void release() noexcept {
    if (is_heap()) {
      deallocate(r_.heap.ptr, heap_capacity());
      init();
    }
  }

  void copy_init(const small_storage& o) {
    const size_type n = o.size();
    if (n <= inline_capacity) {
      if constexpr (bytes_ <= 64) {
        if (!o.is_heap()) {
          std::memcpy(static_cast<void*>(&r_), &o.r_, sizeof r_);
          return;
        }
      }
      std::memcpy(r_.buf, o.data(), n * sizeof(CharT));
      set_inline_size(n);
      return;
    }
    CharT* p = allocate_chars(alloc(), n);
    std::memcpy(p, o.data(), (n + 1) * sizeof(CharT));
    set_heap(p, n, n);
  }

  void steal(small_storage& o) noexcept {
    if (o.is_heap() || bytes_ <= 64) {
      std::memcpy(static_cast<void*>(&r_), &o.r_, sizeof r_);
      if (o.is_heap()) {
        o.init();
      } else {
        o.set_inline_size(0);
      }
    } else {
      const size_type n = o.size();
      std::memcpy(r_.buf, o.r_.buf, n * sizeof(CharT));
      set_inline_size(n);
      o.set_inline_size(0);
    }
  }

  // Replaces the text with [s, s + n), which may lie inside it. Strong guarantee.
  void assign_chars(const CharT* s, size_type n) {
    if (n <= capacity()) {
      std::memmove(data(), s, n * sizeof(CharT));
      set_size(n);
      return;
    }
    if (n > max_size())
      detail::throw_length_error("lowalloc::small_string: assign past max_size()");
    const size_type cap = capacity();
    size_type new_cap = cap < max_size() / 2 ? 2 * cap : max_size();
    if (new_cap < n) new_cap = n;
    CharT* p = allocate_chars(alloc(), new_cap);
    std::memcpy(p, s, n * sizeof(CharT));
    p[n] = CharT();
    if (is_heap()) deallocate(r_.heap.ptr, heap_capacity());
    set_heap(p, n, new_cap);
  }

  rep r_;
};

/// Storage for lowalloc::basic_string that never allocates: up to N characters in the object.
/// sizeof(fixed_storage<char, N>) == N + 1. The slot after the last character holds the remaining
/// capacity (so it is the terminator when the string is full); when that count does not fit in
/// the slot, the size is kept in the 8 bytes just before it.
template <class CharT, std::size_t N>
class fixed_storage {
  using tail = detail::tail_t<CharT>;
  static_assert(std::is_trivial_v<CharT> && sizeof(CharT) <= 4, "CharT must be a character type");

  using inline_size = detail::inline_size_encoding<CharT, N, N, std::numeric_limits<tail>::max()>;

 public:
  using value_type = CharT;
  using size_type = std::size_t;

  fixed_storage() noexcept { set_size(0); }
  fixed_storage(const fixed_storage& o) noexcept { copy_from(o); }
  /// Copies the characters; the source is left empty, as a moved-from small_string is.
  fixed_storage(fixed_storage&& o) noexcept {
    copy_from(o);
    o.set_size(0);
  }
  fixed_storage& operator=(const fixed_storage& o) noexcept {
    if (this != &o) copy_from(o);
    return *this;
  }
  fixed_storage& operator=(fixed_storage&& o) noexcept {
    if (this != &o) {
      copy_from(o);
      o.set_size(0);
    }
    return *this;
  }
  ~fixed_storage() = default;

  void swap(fixed_storage& o) noexcept {
    if (this == &o) return;
    fixed_storage t(o);
    o.copy_from(*this);
    copy_from(t);
  }

  CharT* data() noexcept { return buf_; }
  const CharT* data() const noexcept { return buf_; }

  size_type size() const noexcept { return inline_size::load(buf_); }

  static constexpr size_type capacity() noexcept { return N; }
  static constexpr size_type max_size() noexcept { return N; }

  void set_size(size_type n) noexcept { inline_size::store(buf_, n); }

  /// std::length_error when n > N; never allocates.
  void reserve(size_type n) const {
    if (n > N) detail::throw_length_error("lowalloc::fixed_string: capacity exceeded");
  }

  void shrink_to_fit() noexcept {}

 private:
  void copy_from(const fixed_storage& o) noexcept {
    if constexpr ((N + 1) * sizeof(CharT) <= 64) {
      std::memcpy(buf_, o.buf_, sizeof buf_);
    } else {
      const size_type n = o.size();
      std::memcpy(buf_, o.buf_, detail::opaque(n * sizeof(CharT)));
      set_size(n);
    }
  }

  CharT buf_[N + 1];
};

LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_END

}  // namespace lowalloc

#endif  // LOWALLOC_STRING_STORAGE_HPP
