// lowalloc/small_vector.hpp — a std::vector that keeps its first N elements inline.
//
// `lowalloc::small_vector<T, N, Allocator>` has the complete interface of C++20's std::vector and
// stores up to N elements inside the object itself: it never allocates while size() <= N, and
// switches to a heap buffer from its allocator when it grows past N. It replaces std::vector
// where most vectors are small (the arguments of a call, the children of a node, the tokens of a
// line), and LLVM's SmallVector, absl::InlinedVector or boost::container::small_vector where you
// have them.
//
//   lowalloc::small_vector<int, 8> v = {1, 2, 3};   // inline: no allocation
//   v.push_back(4);                                   // still inline
//   sum(v);                                           // takes small_vector_base<int>&: any N
//
// Layout: one 8-byte word holds the size, N and an is-on-heap bit; it is followed by a union of
// the inline elements and the heap pointer and capacity, so sizeof(small_vector<int, 8>) == 40
// (absl and folly: 40, LLVM: 48, boost: 56). The allocator takes no space when it is empty.
//
// Every algorithm that does not depend on N lives in `small_vector_base<T, Allocator>`, which
// functions take by reference to accept vectors of any N, and whose growth paths are out of line,
// so code size does not multiply with N.
//
// Differences from std::vector, all documented on the members below:
//  - Moving an inline vector moves its elements one by one (a heap vector hands over its buffer);
//    a moved-from small_vector is empty. swap of inline vectors swaps elements.
//  - Iterators, pointers and references are also invalidated by a move or swap of an inline
//    vector, and by shrink_to_fit returning the elements to the inline storage.
//  - size() is limited to 2^39 - 1 elements and N to 2^24 - 1 (see max_size()).
//  - Types marked `lowalloc::is_trivially_relocatable` (<lowalloc/relocate.hpp>; all trivially
//    copyable types are) are grown and moved with memcpy; with std::allocator, trivially copyable
//    ones grow with realloc (their heap blocks then come from malloc, not operator new).
//  - Aliasing is allowed everywhere std::vector allows it and also in insert(pos, first, last)
//    and assign(first, last) with iterators into the vector itself.
//  - The allocator's pointer type must be a raw pointer.
#ifndef LOWALLOC_SMALL_VECTOR_HPP
#define LOWALLOC_SMALL_VECTOR_HPP

#include <lowalloc/detail/allocator_holder.hpp>
#include <lowalloc/detail/compare.hpp>
#include <lowalloc/detail/config.hpp>
#include <lowalloc/detail/gdb_scripts.hpp>
#include <lowalloc/detail/iterator.hpp>
#include <lowalloc/detail/relocate.hpp>
#include <lowalloc/detail/throw.hpp>
#include <lowalloc/relocate.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

// Grow trivially relocatable elements with realloc when the allocator is std::allocator. Off under
// sanitizers that own malloc, so that they (and lowalloc::alloc_count) see operator new.
#ifndef LOWALLOC_SMALL_VECTOR_REALLOC
#if LOWALLOC_SANITIZER_OWNS_MALLOC
#define LOWALLOC_SMALL_VECTOR_REALLOC 0
#else
#define LOWALLOC_SMALL_VECTOR_REALLOC 1
#endif
#endif

namespace lowalloc {

template <class T, class Allocator = std::allocator<T>>
class small_vector_base;
template <class T, std::size_t N, class Allocator = std::allocator<T>>
class small_vector;

namespace detail {

// Reads `v` from memory, never from a copy the compiler kept in a register: a relaxed atomic load
// of a plain object (GCC and Clang; a plain read elsewhere). See emplace_without_growth.
inline std::uint64_t load_fresh(const std::uint64_t& v) noexcept {
#if defined(__GNUC__)
  return __atomic_load_n(&v, __ATOMIC_RELAXED);
#else
  return v;
#endif
}

// Extra inline bytes that do not fit in the base's union; nothing when the union suffices.
template <std::size_t Bytes>
struct small_vector_tail {
  unsigned char bytes_[Bytes];
};
template <>
struct small_vector_tail<0> {};

}  // namespace detail

LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_BEGIN

/// The part of every small_vector<T, N, Allocator> that does not depend on N: the whole vector
/// interface. Take it by reference to accept small vectors of any inline capacity:
///
///   void collect(lowalloc::small_vector_base<int>& out);
///
/// It cannot be constructed or destroyed on its own; assignment and swap through it work.
template <class T, class Allocator>
class small_vector_base : private detail::allocator_holder<Allocator> {
  using holder = detail::allocator_holder<Allocator>;
  using traits = std::allocator_traits<Allocator>;

 public:
  using value_type = T;
  using allocator_type = Allocator;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  static_assert(std::is_same_v<typename traits::value_type, T>,
                "small_vector: Allocator::value_type must be T");
  static_assert(std::is_same_v<typename traits::pointer, T*>,
                "small_vector: the allocator's pointer type must be T* (no fancy pointers)");
  static_assert(!std::is_const_v<T> && !std::is_reference_v<T> && std::is_object_v<T>,
                "small_vector: T must be a non-const object type");

  // ---- assignment ------------------------------------------------------------------------------

  /// Copy assignment; propagates the allocator when propagate_on_container_copy_assignment.
  small_vector_base& operator=(const small_vector_base& other) {
    if (this == &other) return *this;
    if constexpr (traits::propagate_on_container_copy_assignment::value) {
      if (!traits::is_always_equal::value && this->alloc() != other.alloc()) {
        release_storage();
      }
      this->alloc() = other.alloc();
    }
    assign(other.begin(), other.end());
    return *this;
  }

  /// Move assignment. A heap `other` hands over its buffer when the allocators allow it; an inline
  /// one moves its elements. `other` is left empty.
  /// Not noexcept: moving inline elements into a vector with a smaller N may allocate.
  small_vector_base& operator=(small_vector_base&& other) {
    if (this == &other) return *this;
    move_assign_from(other);
    return *this;
  }

  /// Replaces the contents with `il`.
  small_vector_base& operator=(std::initializer_list<T> il) {
    assign(il.begin(), il.end());
    return *this;
  }

  /// Replaces the contents with `count` copies of `value` (which may be an element).
  void assign(size_type count, const T& value) {
    if (count > capacity()) {
      // Build the new buffer first: `value` may live in the old one.
      const size_type cap = checked_capacity(count);
      T* buf = allocate_and_build(cap, [&](T* b) { construct_fill(b, count, value); });
      replace_storage(buf, cap, count);
      return;
    }
    const size_type n = size();
    T* d = data();
    std::fill_n(d, std::min(n, count), value);
    if (count > n) {
      construct_fill(d + n, count - n, value);
    } else {
      destroy_range(d + count, d + n);
    }
    set_size(count);
  }

  /// Replaces the contents with [first, last), which may lie inside this vector.
  template <class InputIt, std::enable_if_t<detail::is_input_iterator<InputIt>::value, int> = 0>
  void assign(InputIt first, InputIt last) {
    if constexpr (detail::is_forward_iterator_v<InputIt>) {
      const size_type count = distance_checked(first, last);
      if (count > capacity()) {
        const size_type cap = checked_capacity(count);
        T* buf = allocate_and_build(cap, [&](T* b) { construct_copy(b, first, last); });
        replace_storage(buf, cap, count);
        return;
      }
      // Assigning forwards is safe when [first, last) lies inside the vector at or after begin().
      const size_type n = size();
      T* d = data();
      if (count <= n) {
        T* new_end = std::copy(first, last, d);
        destroy_range(new_end, d + n);
      } else {
        InputIt mid = std::next(first, static_cast<difference_type>(n));
        std::copy(first, mid, d);
        construct_copy(d + n, mid, last);
      }
      set_size(count);
    } else {
      T* d = data();
      T* e = d + size();
      T* p = d;
      for (; p != e && first != last; ++p, ++first) *p = *first;
      if (p != e) {
        erase(p, e);
      } else {
        for (; first != last; ++first) emplace_back(*first);
      }
    }
  }

  /// Replaces the contents with `il`.
  void assign(std::initializer_list<T> il) { assign(il.begin(), il.end()); }

  /// Replaces the contents with the elements of `range` (C++23 assign_range).
  template <class Range>
  void assign_range(Range&& range) {
    assign(std::begin(range), std::end(range));
  }

  /// A copy of the allocator.
  allocator_type get_allocator() const noexcept { return this->alloc(); }

  // ---- element access --------------------------------------------------------------------------

  /// Element `pos`; throws std::out_of_range when pos >= size().
  reference at(size_type pos) {
    if (pos >= size()) detail::throw_out_of_range("small_vector::at: position out of range");
    return data()[pos];
  }
  /// Element `pos`; throws std::out_of_range when pos >= size().
  const_reference at(size_type pos) const {
    if (pos >= size()) detail::throw_out_of_range("small_vector::at: position out of range");
    return data()[pos];
  }
  /// Element `pos` (checked with LOWALLOC_ASSERTIONS).
  reference operator[](size_type pos) noexcept {
    LOWALLOC_ASSERT(pos < size());
    return data()[pos];
  }
  /// Element `pos` (checked with LOWALLOC_ASSERTIONS).
  const_reference operator[](size_type pos) const noexcept {
    LOWALLOC_ASSERT(pos < size());
    return data()[pos];
  }
  /// The first element (checked with LOWALLOC_ASSERTIONS).
  reference front() noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[0];
  }
  /// The first element (checked with LOWALLOC_ASSERTIONS).
  const_reference front() const noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[0];
  }
  /// The last element (checked with LOWALLOC_ASSERTIONS).
  reference back() noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[size() - 1];
  }
  /// The last element (checked with LOWALLOC_ASSERTIONS).
  const_reference back() const noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[size() - 1];
  }
  /// The elements, contiguous; never null (points at the inline storage when inline).
  T* data() noexcept {
    // Both candidates are read and one is selected (a cmov rather than a branch), which keeps
    // loops over operator[] free of control flow. When inline, the heap pointer read here is
    // bytes of the inline elements and is discarded.
    T* heap = heap_data();
    T* in = inline_data();
    return is_heap() ? heap : in;
  }
  /// The elements, contiguous; never null (points at the inline storage when inline).
  const T* data() const noexcept { return const_cast<small_vector_base*>(this)->data(); }

  // ---- iterators -------------------------------------------------------------------------------

  iterator begin() noexcept { return data(); }                     ///< First element.
  const_iterator begin() const noexcept { return data(); }         ///< First element.
  const_iterator cbegin() const noexcept { return data(); }        ///< First element.
  iterator end() noexcept { return data() + size(); }              ///< Past the last element.
  const_iterator end() const noexcept { return data() + size(); }  ///< Past the last element.
  const_iterator cend() const noexcept { return end(); }           ///< Past the last element.
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }  ///< Reverse begin.
  const_reverse_iterator rbegin() const noexcept {                        ///< Reverse begin.
    return const_reverse_iterator(end());
  }
  const_reverse_iterator crbegin() const noexcept { return rbegin(); }    ///< Reverse begin.
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }  ///< Reverse end.
  const_reverse_iterator rend() const noexcept {                          ///< Reverse end.
    return const_reverse_iterator(begin());
  }
  const_reverse_iterator crend() const noexcept { return rend(); }  ///< Reverse end.

  // ---- capacity --------------------------------------------------------------------------------

  /// True when there are no elements.
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  /// The number of elements.
  size_type size() const noexcept { return static_cast<size_type>(meta_ & size_mask); }
  /// The largest size: 2^39 - 1, or less when the allocator or the address space says so.
  size_type max_size() const noexcept {
    constexpr size_type by_layout = static_cast<size_type>(size_mask);
    constexpr size_type by_address =
        static_cast<size_type>(std::numeric_limits<difference_type>::max()) / sizeof(T);
    return std::min(
        {by_layout, by_address, static_cast<size_type>(traits::max_size(this->alloc()))});
  }
  /// Makes room for `new_cap` elements; throws std::length_error past max_size(). Allocates
  /// exactly `new_cap` elements when it has to grow. Strong guarantee.
  void reserve(size_type new_cap) {
    if (new_cap <= capacity()) return;
    if (new_cap > max_size()) detail::throw_length_error("small_vector::reserve: too large");
    reallocate(new_cap);
  }
  /// The number of elements that fit without allocating: N while inline.
  size_type capacity() const noexcept { return is_heap() ? heap_capacity() : inline_capacity(); }
  /// The inline capacity N of this vector.
  size_type inline_capacity() const noexcept {
    return static_cast<size_type>((meta_ >> capacity_shift) & inline_capacity_mask);
  }
  /// True when the elements live in a heap buffer rather than in the object.
  bool is_inline() const noexcept { return !is_heap(); }
  /// Releases unused capacity: returns to the inline storage when the elements fit there (no
  /// allocation then), otherwise reallocates to exactly size(). Strong guarantee when T's move
  /// constructor does not throw.
  void shrink_to_fit() {
    if (!is_heap()) return;
    const size_type n = size();
    if (n <= inline_capacity()) {
      T* old = heap_data();
      const size_type old_cap = heap_capacity();
      if constexpr (detail::memcpy_relocatable<Allocator, T>) {
        detail::copy_bytes(inline_data(), old, n * sizeof(T));
      } else {
        // The inline storage overlaps the heap pointer, which is saved in `old` above.
        T* dst = inline_data();
        size_type i = 0;
        LOWALLOC_TRY {
          for (; i < n; ++i) construct(dst + i, std::move_if_noexcept(old[i]));
        }
        LOWALLOC_CATCH_ALL {
          destroy_range(dst, dst + i);
          set_heap(old, old_cap);
          LOWALLOC_RETHROW;
        }
        destroy_range(old, old + n);
      }
      deallocate(old, old_cap);
      meta_ &= ~heap_bit;
    } else if (n < heap_capacity()) {
      reallocate(n);
    }
  }

  // ---- modifiers -------------------------------------------------------------------------------

  /// Destroys every element; keeps the capacity.
  void clear() noexcept {
    T* d = data();
    destroy_range(d, d + size());
    set_size(0);
  }

  /// Inserts a copy of `value` (which may be an element) before `pos`.
  iterator insert(const_iterator pos, const T& value) { return insert_one(pos, value); }
  /// Inserts `value` (which may be an element) before `pos`.
  iterator insert(const_iterator pos, T&& value) { return insert_one(pos, std::move(value)); }
  /// Inserts `count` copies of `value` (which may be an element) before `pos`.
  iterator insert(const_iterator pos, size_type count, const T& value) {
    const size_type idx = index_of(pos);
    if (count == 0) return begin() + idx;
    const size_type n = size();
    if (count > capacity() - n) {
      const size_type cap = grown_capacity(n, count);
      T* buf = allocate_and_build(cap, [&](T* b) { construct_fill(b + idx, count, value); });
      relocate_around(buf, cap, idx, count);
      return buf + idx;
    }
    T* d = data();
    const T* vp = std::addressof(value);
    if (std::less<const T*>()(vp, d + n) && !std::less<const T*>()(vp, d + idx)) {
      // `value` lies in the part that moves: copy it before it does.
      temporary copy(*this, value);
      fill_insert(d, n, idx, count, copy.get());
    } else {
      fill_insert(d, n, idx, count, value);
    }
    return d + idx;
  }
  /// Inserts [first, last) before `pos`; the range may lie inside this vector.
  template <class InputIt, std::enable_if_t<detail::is_input_iterator<InputIt>::value, int> = 0>
  iterator insert(const_iterator pos, InputIt first, InputIt last) {
    const size_type idx = index_of(pos);
    const size_type n = size();
    if constexpr (detail::is_forward_iterator_v<InputIt>) {
      const size_type count = distance_checked(first, last);
      if (count == 0) return begin() + idx;
      if (count > capacity() - n) {
        const size_type cap = grown_capacity(n, count);
        T* buf = allocate_and_build(cap, [&](T* b) { construct_copy(b + idx, first, last); });
        relocate_around(buf, cap, idx, count);
        return buf + idx;
      }
      // Copy the new elements behind the end (the source is read before anything moves), then
      // rotate them into place.
      T* d = data();
      construct_copy(d + n, first, last);
      set_size(n + count);
      std::rotate(d + idx, d + n, d + n + count);
      return d + idx;
    } else {
      for (; first != last; ++first) emplace_back(*first);
      T* d = data();
      std::rotate(d + idx, d + n, d + size());
      return d + idx;
    }
  }
  /// Inserts the elements of `il` before `pos`.
  iterator insert(const_iterator pos, std::initializer_list<T> il) {
    return insert(pos, il.begin(), il.end());
  }
  /// Inserts the elements of `range` before `pos` (C++23 insert_range).
  template <class Range>
  iterator insert_range(const_iterator pos, Range&& range) {
    return insert(pos, std::begin(range), std::end(range));
  }
  /// Constructs an element from `args` before `pos` (the arguments may refer to elements).
  template <class... Args>
  iterator emplace(const_iterator pos, Args&&... args) {
    const size_type idx = index_of(pos);
    if (idx == size()) {
      emplace_back(std::forward<Args>(args)...);
      return begin() + idx;
    }
    // Built through the allocator (as std::vector does), then moved in: the arguments may refer
    // to elements that the insertion moves.
    temporary tmp(*this, std::forward<Args>(args)...);
    return insert_one<false>(pos, std::move(tmp.get()));
  }

  /// Removes the element at `pos`; returns the iterator that follows it.
  iterator erase(const_iterator pos) {
    LOWALLOC_ASSERT(pos >= begin() && pos < end());
    T* p = const_cast<T*>(pos);
    T* e = end();
    std::move(p + 1, e, p);
    destroy_at(e - 1);
    set_size(size() - 1);
    return p;
  }
  /// Removes [first, last); returns the iterator that follows them.
  iterator erase(const_iterator first, const_iterator last) {
    LOWALLOC_ASSERT(first >= begin() && first <= last && last <= end());
    T* f = const_cast<T*>(first);
    T* l = const_cast<T*>(last);
    if (f != l) {
      T* e = end();
      T* new_end = std::move(l, e, f);
      destroy_range(new_end, e);
      set_size(size() - static_cast<size_type>(l - f));
    }
    return f;
  }

  /// Appends a copy of `value` (which may be an element). Strong guarantee.
  void push_back(const T& value) { emplace_back(value); }
  /// Appends `value` (which may be an element). Strong guarantee.
  void push_back(T&& value) { emplace_back(std::move(value)); }

  /// Constructs an element at the end from `args` (which may refer to elements). Allocates only
  /// when size() == capacity(); strong guarantee.
  template <class... Args>
  reference emplace_back(Args&&... args) {
    const std::uint64_t m = meta_;
    const size_type n = static_cast<size_type>(m & size_mask);
    T* d;
    size_type cap;
    if (m & heap_bit) {
      d = heap_data();
      cap = heap_capacity();
    } else {
      d = inline_data();
      cap = static_cast<size_type>((m >> capacity_shift) & inline_capacity_mask);
    }
    if (LOWALLOC_LIKELY(n < cap)) {
      construct(d + n, std::forward<Args>(args)...);
      meta_ = m + size_one;
      return d[n];
    }
    return grow_and_emplace_back(std::forward<Args>(args)...);
  }

  /// Appends the elements of `range` (C++23 append_range).
  template <class Range>
  void append_range(Range&& range) {
    insert(end(), std::begin(range), std::end(range));
  }
  /// Appends [first, last) (LLVM's append).
  template <class InputIt, std::enable_if_t<detail::is_input_iterator<InputIt>::value, int> = 0>
  void append(InputIt first, InputIt last) {
    insert(end(), first, last);
  }

  /// Removes the last element (checked with LOWALLOC_ASSERTIONS).
  void pop_back() noexcept {
    LOWALLOC_ASSERT(!empty());
    destroy_at(data() + size() - 1);
    meta_ -= size_one;
  }

  /// Resizes to `count` elements, value-initialising new ones.
  void resize(size_type count) { resize_impl(count); }
  /// Resizes to `count` elements, copying `value` (which may be an element) into new ones.
  void resize(size_type count, const T& value) { resize_impl(count, value); }

  /// Exchanges the contents. Two heap vectors exchange buffers; otherwise elements are swapped
  /// and moved, and one side may have to allocate when the other has more elements than its
  /// inline capacity. Allocators are swapped when propagate_on_container_swap (unequal ones take
  /// their elements along on the heap), and must be equal otherwise (as for std::vector). Not
  /// noexcept, unlike std::vector's: it may allocate.
  void swap(small_vector_base& other) {
    if (this == &other) return;
    if constexpr (traits::propagate_on_container_swap::value) {
      using std::swap;
      if (!traits::is_always_equal::value && this->alloc() != other.alloc()) {
        // The allocators change sides and every buffer must go with the allocator that made it:
        // put both sides' elements on the heap of their own allocator, then exchange everything.
        if (!is_heap()) reallocate(std::max<size_type>(size(), 1));
        if (!other.is_heap()) other.reallocate(std::max<size_type>(other.size(), 1));
        swap(this->alloc(), other.alloc());
        std::swap(heap_, other.heap_);
        swap_sizes(other);
        return;
      }
      swap(this->alloc(), other.alloc());
    }
    if (is_heap() && other.is_heap()) {
      std::swap(heap_, other.heap_);
      swap_sizes(other);
      return;
    }
    if constexpr (std::is_nothrow_move_constructible_v<T>) {
      // One heap, one inline: hand the buffer over and move the inline elements into the storage
      // the buffer leaves, when they fit there. No allocation.
      small_vector_base* heap_side = is_heap() ? this : other.is_heap() ? &other : nullptr;
      if (heap_side != nullptr) {
        small_vector_base& inl = heap_side == this ? other : *this;
        if (inl.size() <= heap_side->inline_capacity()) {
          const heap_rep rep = heap_side->heap_;
          T* src = inl.inline_data();
          T* dst = heap_side->inline_data();
          const size_type n = inl.size();
          heap_side->relocate_nothrow(src, n, dst);
          heap_side->meta_ &= ~heap_bit;
          inl.heap_ = rep;
          inl.meta_ |= heap_bit;
          swap_sizes(other);
          return;
        }
      }
    }
    small_vector_base& smaller = size() < other.size() ? *this : other;
    small_vector_base& larger = size() < other.size() ? other : *this;
    smaller.reserve(larger.size());
    const size_type ns = smaller.size();
    const size_type nl = larger.size();
    T* ds = smaller.data();
    T* dl = larger.data();
    std::swap_ranges(ds, ds + ns, dl);
    smaller.construct_move(ds + ns, dl + ns, nl - ns);
    destroy_range(dl + ns, dl + nl);
    smaller.set_size(nl);
    larger.set_size(ns);
  }

  /// Exchanges the contents of two vectors (see the member swap).
  friend void swap(small_vector_base& a, small_vector_base& b) { a.swap(b); }

 protected:
  explicit small_vector_base(size_type inline_cap) noexcept(
      std::is_nothrow_default_constructible_v<Allocator>)
      : holder(), meta_(static_cast<std::uint64_t>(inline_cap) << capacity_shift), heap_{} {}
  small_vector_base(size_type inline_cap, const Allocator& a) noexcept
      : holder(a), meta_(static_cast<std::uint64_t>(inline_cap) << capacity_shift), heap_{} {}
  small_vector_base(const small_vector_base&) = delete;
  ~small_vector_base() = default;

  // Construction helpers for small_vector's constructors (the object is empty and inline).
  void init_fill(size_type count, const T& value) {
    if (count > inline_capacity()) {
      const size_type cap = checked_capacity(count);
      T* buf = allocate_and_build(cap, [&](T* b) { construct_fill(b, count, value); });
      set_heap(buf, cap);
    } else {
      construct_fill(inline_data(), count, value);
    }
    set_size(count);
  }
  void init_value(size_type count) {
    if (count > inline_capacity()) {
      const size_type cap = checked_capacity(count);
      T* buf = allocate_and_build(cap, [&](T* b) { construct_value(b, count); });
      set_heap(buf, cap);
    } else {
      construct_value(inline_data(), count);
    }
    set_size(count);
  }
  template <class InputIt>
  void init_range(InputIt first, InputIt last) {
    if constexpr (detail::is_forward_iterator_v<InputIt>) {
      const size_type count = distance_checked(first, last);
      if (count > inline_capacity()) {
        const size_type cap = checked_capacity(count);
        T* buf = allocate_and_build(cap, [&](T* b) { construct_copy(b, first, last); });
        set_heap(buf, cap);
      } else {
        construct_copy(inline_data(), first, last);
      }
      set_size(count);
    } else {
      LOWALLOC_TRY {
        for (; first != last; ++first) emplace_back(*first);
      }
      LOWALLOC_CATCH_ALL {
        destroy_and_deallocate();
        LOWALLOC_RETHROW;
      }
    }
  }
  // Takes other's elements: its heap buffer when the allocators allow it, otherwise element by
  // element. `other` is left empty.
  void init_move(small_vector_base& other) {
    if (other.is_heap() && (traits::is_always_equal::value || this->alloc() == other.alloc())) {
      set_heap(other.heap_data(), other.heap_capacity());
      set_size(other.size());
      other.meta_ &= capacity_field;
      return;
    }
    const size_type n = other.size();
    T* src = opaque_elements(other);
    if (n > inline_capacity()) {
      const size_type cap = checked_capacity(n);
      T* buf = allocate_and_build(cap, [&](T* b) { construct_move(b, src, n); });
      set_heap(buf, cap);
    } else {
      construct_move(inline_data(), src, n);
    }
    set_size(n);
    other.clear();
  }
  void destroy_and_deallocate() noexcept {
    T* d = data();
    destroy_range(d, d + size());
    if (is_heap()) deallocate(heap_data(), heap_capacity());
  }

 private:
  template <class, std::size_t, class>
  friend class small_vector;

  // meta_: bits 0..38 the size, bits 39..62 the inline capacity N, bit 63 is-on-heap. With the
  // flag on top, "inline and not full" is the single comparison meta_ < (N << 39) + N.
  static constexpr unsigned capacity_shift = 39;
  static constexpr std::uint64_t size_mask = (std::uint64_t(1) << capacity_shift) - 1;
  static constexpr std::uint64_t size_one = 1;
  static constexpr std::uint64_t inline_capacity_mask = (std::uint64_t(1) << 24) - 1;
  static constexpr std::uint64_t capacity_field = inline_capacity_mask << capacity_shift;
  static constexpr std::uint64_t heap_bit = std::uint64_t(1) << 63;

  // With std::allocator, trivially copyable elements live in malloc'ed blocks so that they can
  // grow with realloc. (std::allocator is stateless: nothing can observe the difference but a
  // replaced operator new.) Types that are only marked relocatable grow by malloc + memcpy: the
  // realloc path copies the new element first, which for them would be an extra move.
  static constexpr bool use_malloc =
      LOWALLOC_SMALL_VECTOR_REALLOC && detail::is_std_allocator<Allocator>::value &&
      std::is_trivially_copyable_v<T> && alignof(T) <= alignof(std::max_align_t);

  struct heap_rep {
    T* data;
    size_type capacity;
  };
  static constexpr std::size_t head_align = alignof(T) > alignof(heap_rep) ? alignof(T)
                                                                           : alignof(heap_rep);

 protected:
  // The union of heap pointer + capacity and the first inline bytes; the derived small_vector
  // continues the inline storage right behind it.
  static constexpr std::size_t head_size =
      (sizeof(heap_rep) + head_align - 1) / head_align * head_align;

 private:
  std::uint64_t meta_;
  union alignas(head_align) {
    heap_rep heap_;
    unsigned char raw_[head_size];
  };

  bool is_heap() const noexcept { return (meta_ & heap_bit) != 0; }
  T* heap_data() const noexcept { return heap_.data; }
  size_type heap_capacity() const noexcept { return heap_.capacity; }
  T* inline_data() noexcept { return reinterpret_cast<T*>(raw_); }
  const T* inline_data() const noexcept { return reinterpret_cast<const T*>(raw_); }
  // The elements of another vector, whose size GCC cannot relate to its N: reading them through
  // a pointer of unknown origin keeps -Warray-bounds from flagging (in the user's code) a path
  // that moves more than N inline elements, which cannot happen. Used on move paths only, never
  // in loops the compiler should vectorise.
  static T* opaque_elements(small_vector_base& other) noexcept {
    T* p = other.data();
#if defined(__GNUC__) && !defined(__clang__)
    __asm__("" : "+r"(p));
#endif
    return p;
  }
  void set_size(size_type n) noexcept {
    meta_ = (meta_ & ~size_mask) | static_cast<std::uint64_t>(n);
  }
  void set_heap(T* d, size_type cap) noexcept {
    heap_.data = d;
    heap_.capacity = cap;
    meta_ |= heap_bit;
  }
  void swap_sizes(small_vector_base& other) noexcept {
    const std::uint64_t mine = meta_ & size_mask;
    meta_ = (meta_ & ~size_mask) | (other.meta_ & size_mask);
    other.meta_ = (other.meta_ & ~size_mask) | mine;
  }

  // ---- allocation ------------------------------------------------------------------------------
  T* allocate(size_type n) {
    if constexpr (use_malloc) {
      void* p = std::malloc(n * sizeof(T));
      if (p == nullptr) detail::throw_bad_alloc();
      return static_cast<T*>(p);
    } else {
      return traits::allocate(this->alloc(), n);
    }
  }
  void deallocate(T* p, size_type n) noexcept {
    if constexpr (use_malloc) {
      (void)n;
      std::free(p);
    } else {
      traits::deallocate(this->alloc(), p, n);
    }
  }
  // A new buffer of `cap` elements, filled by build(buffer); freed again if build throws.
  template <class Build>
  T* allocate_and_build(size_type cap, Build&& build) {
    T* buf = allocate(cap);
    LOWALLOC_TRY { build(buf); }
    LOWALLOC_CATCH_ALL {
      deallocate(buf, cap);
      LOWALLOC_RETHROW;
    }
    return buf;
  }
  // Frees everything and returns to an empty inline vector (for allocator propagation).
  void release_storage() noexcept {
    destroy_and_deallocate();
    meta_ &= capacity_field;
  }
  // Adopts a freshly built buffer holding `count` elements, dropping the old contents.
  void replace_storage(T* buf, size_type cap, size_type count) noexcept {
    destroy_and_deallocate();
    set_heap(buf, cap);
    set_size(count);
  }

  size_type checked_capacity(size_type n) const {
    if (n > max_size()) detail::throw_length_error("small_vector: size exceeds max_size()");
    return n;
  }
  // The capacity to grow to for `n + extra` elements: geometric (x2), at least what is needed.
  size_type grown_capacity(size_type n, size_type extra) const {
    const size_type ms = max_size();
    if (extra > ms - n) detail::throw_length_error("small_vector: size exceeds max_size()");
    const size_type needed = n + extra;
    const size_type cap = capacity();
    if (cap > ms / 2) return ms;
    return std::max(cap * 2, needed);
  }
  template <class It>
  size_type distance_checked(It first, It last) const {
    const auto d = std::distance(first, last);
    LOWALLOC_ASSERT(d >= 0);
    const auto n = static_cast<size_type>(d);
    return n;
  }
  size_type index_of(const_iterator pos) const noexcept {
    LOWALLOC_ASSERT(pos >= begin() && pos <= end());
    const auto idx = static_cast<size_type>(pos - begin());
    LOWALLOC_ASSUME(idx <= size());
    return idx;
  }

  // ---- element construction --------------------------------------------------------------------
  template <class... Args>
  void construct(T* p, Args&&... args) {
    traits::construct(this->alloc(), p, std::forward<Args>(args)...);
  }
  void destroy_at(T* p) noexcept { traits::destroy(this->alloc(), p); }
  void destroy_range(T* first, T* last) noexcept {
    if constexpr (!std::is_trivially_destructible_v<T> ||
                  !detail::allocator_constructs_plainly<Allocator, T>) {
      for (; first != last; ++first) destroy_at(first);
    } else {
      (void)first, (void)last;
    }
  }
  void construct_fill(T* d, size_type count, const T& value) {
    size_type i = 0;
    LOWALLOC_TRY {
      for (; i < count; ++i) construct(d + i, value);
    }
    LOWALLOC_CATCH_ALL {
      destroy_range(d, d + i);
      LOWALLOC_RETHROW;
    }
  }
  void construct_value(T* d, size_type count) {
    if constexpr (std::is_trivially_default_constructible_v<T> &&
                  detail::allocator_constructs_plainly<Allocator, T>) {
      if (count != 0) std::memset(static_cast<void*>(d), 0, count * sizeof(T));
    } else {
      size_type i = 0;
      LOWALLOC_TRY {
        for (; i < count; ++i) construct(d + i);
      }
      LOWALLOC_CATCH_ALL {
        destroy_range(d, d + i);
        LOWALLOC_RETHROW;
      }
    }
  }
  template <class It>
  void construct_copy(T* d, It first, It last) {
    if constexpr (std::is_pointer_v<It> && detail::memcpy_copyable<Allocator, T> &&
                  std::is_same_v<std::remove_cv_t<std::remove_pointer_t<It>>, T>) {
      detail::copy_bytes(d, first, static_cast<size_type>(last - first) * sizeof(T));
    } else {
      T* p = d;
      LOWALLOC_TRY {
        for (; first != last; ++first, ++p) construct(p, *first);
      }
      LOWALLOC_CATCH_ALL {
        destroy_range(d, p);
        LOWALLOC_RETHROW;
      }
    }
  }
  void construct_move(T* d, T* src, size_type count) {
    if constexpr (detail::memcpy_movable<Allocator, T>) {
      detail::copy_bytes(d, src, count * sizeof(T));
    } else {
      size_type i = 0;
      LOWALLOC_TRY {
        for (; i < count; ++i) construct(d + i, std::move(src[i]));
      }
      LOWALLOC_CATCH_ALL {
        destroy_range(d, d + i);
        LOWALLOC_RETHROW;
      }
    }
  }
  // Moves `count` elements from src to dst and ends the sources; only for nothrow moves.
  void relocate_nothrow(T* src, size_type count, T* dst) noexcept {
    if constexpr (detail::memcpy_relocatable<Allocator, T>) {
      detail::copy_bytes(dst, src, count * sizeof(T));
    } else {
      for (size_type i = 0; i < count; ++i) {
        construct(dst + i, std::move(src[i]));
        destroy_at(src + i);
      }
    }
  }
  // Moves (or copies, when T's move may throw and T is copyable) `count` elements to `dst`. On an
  // exception the sources are intact and nothing is left constructed at dst.
  void transfer(T* src, size_type count, T* dst) {
    if constexpr (detail::memcpy_relocatable<Allocator, T>) {
      detail::copy_bytes(dst, src, count * sizeof(T));
    } else {
      size_type i = 0;
      LOWALLOC_TRY {
        for (; i < count; ++i) construct(dst + i, std::move_if_noexcept(src[i]));
      }
      LOWALLOC_CATCH_ALL {
        destroy_range(dst, dst + i);
        LOWALLOC_RETHROW;
      }
    }
  }
  // Ends the elements that transfer() left behind.
  void end_transferred(T* src, size_type count) noexcept {
    if constexpr (!detail::memcpy_relocatable<Allocator, T>) destroy_range(src, src + count);
  }

  // ---- growth (out of line) --------------------------------------------------------------------

  // Moves the elements into a new buffer of `new_cap` (>= size()).
  LOWALLOC_NOINLINE void reallocate(size_type new_cap) {
    const size_type n = size();
    if constexpr (use_malloc) {
      if (is_heap()) {
        void* p = std::realloc(static_cast<void*>(heap_data()), new_cap * sizeof(T));
        if (p == nullptr) detail::throw_bad_alloc();
        set_heap(static_cast<T*>(p), new_cap);
        return;
      }
    }
    T* buf = allocate(new_cap);
    T* old = data();
    LOWALLOC_TRY { transfer(old, n, buf); }
    LOWALLOC_CATCH_ALL {
      deallocate(buf, new_cap);
      LOWALLOC_RETHROW;
    }
    end_transferred(old, n);
    if (is_heap()) deallocate(old, heap_capacity());
    set_heap(buf, new_cap);
  }

  template <class... Args>
  LOWALLOC_NOINLINE reference grow_and_emplace_back(Args&&... args) {
    const size_type n = size();
    const size_type cap = grown_capacity(n, 1);
    if constexpr (use_malloc) {
      if (is_heap()) {
        // realloc may free the old block, where the arguments may live: build the element first.
        T tmp(std::forward<Args>(args)...);
        reallocate(cap);
        T* d = heap_data();
        construct(d + n, std::move(tmp));
        meta_ += size_one;
        return d[n];
      }
    }
    T* buf = allocate_and_build(cap, [&](T* b) { construct(b + n, std::forward<Args>(args)...); });
    T* old = data();
    LOWALLOC_TRY { transfer(old, n, buf); }
    LOWALLOC_CATCH_ALL {
      destroy_at(buf + n);
      deallocate(buf, cap);
      LOWALLOC_RETHROW;
    }
    end_transferred(old, n);
    if (is_heap()) deallocate(old, heap_capacity());
    set_heap(buf, cap);
    meta_ += size_one;
    return buf[n];
  }

  // push_back's growth path for small trivially copyable T, which it takes in a register.
  LOWALLOC_NOINLINE void grow_and_push_value(T value) { grow_and_emplace_back(value); }

  // `buf` (capacity `cap`) already holds `count` new elements at [idx, idx + count): move the old
  // elements around them, release the old storage and adopt `buf`. Strong guarantee.
  LOWALLOC_NOINLINE void relocate_around(T* buf, size_type cap, size_type idx, size_type count) {
    const size_type n = size();
    T* old = data();
    LOWALLOC_TRY { transfer(old, idx, buf); }
    LOWALLOC_CATCH_ALL {
      destroy_range(buf + idx, buf + idx + count);
      deallocate(buf, cap);
      LOWALLOC_RETHROW;
    }
    LOWALLOC_TRY { transfer(old + idx, n - idx, buf + idx + count); }
    LOWALLOC_CATCH_ALL {
      destroy_range(buf, buf + idx + count);
      deallocate(buf, cap);
      LOWALLOC_RETHROW;
    }
    end_transferred(old, n);
    if (is_heap()) deallocate(old, heap_capacity());
    set_heap(buf, cap);
    set_size(n + count);
  }

  // An element built through the allocator outside the vector, destroyed with the scope.
  class temporary {
   public:
    template <class... Args>
    explicit temporary(small_vector_base& v, Args&&... args) : v_(v) {
      v_.construct(ptr(), std::forward<Args>(args)...);
    }
    temporary(const temporary&) = delete;
    temporary& operator=(const temporary&) = delete;
    ~temporary() { v_.destroy_at(ptr()); }
    T& get() noexcept { return *ptr(); }

   private:
    T* ptr() noexcept { return std::launder(reinterpret_cast<T*>(buf_)); }
    small_vector_base& v_;
    alignas(T) unsigned char buf_[sizeof(T)];
  };

  // Inserts one element before pos. MayAlias: `value` may be an element of this vector.
  template <bool MayAlias = true, class U>
  iterator insert_one(const_iterator pos, U&& value) {
    const size_type idx = index_of(pos);
    const size_type n = size();
    if (n == capacity()) {
      const size_type cap = grown_capacity(n, 1);
      T* buf = allocate_and_build(cap, [&](T* b) { construct(b + idx, std::forward<U>(value)); });
      relocate_around(buf, cap, idx, 1);
      return buf + idx;
    }
    T* d = data();
    T* p = d + idx;
    T* e = d + n;
    if (idx == n) {
      construct(e, std::forward<U>(value));
      set_size(n + 1);
      return p;
    }
    if constexpr (MayAlias) {
      // `value` is an element that the insertion moves: insert a copy of it instead.
      const T* vp = std::addressof(value);
      if (!std::less<const T*>()(vp, p) && std::less<const T*>()(vp, e)) {
        temporary tmp(*this, std::forward<U>(value));
        return insert_one<false>(pos, std::move(tmp.get()));
      }
    }
    construct(e, std::move(e[-1]));
    set_size(n + 1);
    std::move_backward(p, e - 1, e);
    *p = std::forward<U>(value);
    return p;
  }

  // Room exists for `count` more: open a gap of `count` at idx, filled with copies of `value`
  // (which does not lie in the part that moves).
  void fill_insert(T* d, size_type n, size_type idx, size_type count, const T& value) {
    T* p = d + idx;
    T* e = d + n;
    const size_type tail = n - idx;
    if (count <= tail) {
      construct_move(e, e - count, count);
      set_size(n + count);
      std::move_backward(p, e - count, e);
      std::fill_n(p, count, value);
    } else {
      construct_fill(e, count - tail, value);
      set_size(n + count - tail);
      construct_move(p + count, p, tail);
      set_size(n + count);
      std::fill(p, e, value);
    }
  }

  template <class... V>
  void resize_impl(size_type count, const V&... value) {
    const size_type n = size();
    if (count <= n) {
      T* d = data();
      destroy_range(d + count, d + n);
      set_size(count);
      return;
    }
    if (count > capacity()) {
      const size_type cap = grown_capacity(n, count - n);
      T* buf = allocate(cap);
      LOWALLOC_TRY {
        if constexpr (sizeof...(V) == 0) {
          construct_value(buf + n, count - n);
        } else {
          construct_fill(buf + n, count - n, value...);
        }
      }
      LOWALLOC_CATCH_ALL {
        deallocate(buf, cap);
        LOWALLOC_RETHROW;
      }
      relocate_around(buf, cap, n, count - n);
      return;
    }
    if constexpr (sizeof...(V) == 0) {
      construct_value(data() + n, count - n);
    } else {
      construct_fill(data() + n, count - n, value...);
    }
    set_size(count);
  }

  void move_assign_from(small_vector_base& other) {
    constexpr bool pocma = traits::propagate_on_container_move_assignment::value;
    const bool equal = traits::is_always_equal::value || this->alloc() == other.alloc();
    if (other.is_heap() && (pocma || equal)) {
      destroy_and_deallocate();
      if constexpr (pocma) this->alloc() = std::move(other.alloc());
      set_heap(other.heap_data(), other.heap_capacity());
      set_size(other.size());
      other.meta_ &= capacity_field;
      return;
    }
    if constexpr (pocma) {
      if (!equal) {
        release_storage();
        this->alloc() = std::move(other.alloc());
      }
    }
    T* src = opaque_elements(other);
    assign(std::make_move_iterator(src), std::make_move_iterator(src + other.size()));
    other.clear();
  }
};

/// A vector that holds up to N elements inline and allocates from `Allocator` beyond that.
/// See the top of this header; every member is documented on `small_vector_base`.
template <class T, std::size_t N, class Allocator>
class small_vector : public small_vector_base<T, Allocator>,
                     private detail::small_vector_tail<(
                         N * sizeof(T) > small_vector_base<T, Allocator>::head_size
                             ? N * sizeof(T) - small_vector_base<T, Allocator>::head_size
                             : 0)> {
  using base = small_vector_base<T, Allocator>;
  using traits = std::allocator_traits<Allocator>;

 public:
  static_assert(N < (std::size_t(1) << 24), "small_vector: N must be below 2^24");

  using typename base::allocator_type;
  using typename base::size_type;
  using typename base::value_type;

  /// The inline capacity.
  static constexpr std::size_t inline_size = N;

  /// An empty vector. Never allocates.
  small_vector() noexcept(std::is_nothrow_default_constructible_v<Allocator>) : base(N) {}
  /// An empty vector using `alloc`. Never allocates.
  explicit small_vector(const Allocator& alloc) noexcept : base(N, alloc) {}
  /// `count` value-initialised elements.
  explicit small_vector(size_type count, const Allocator& alloc = Allocator()) : base(N, alloc) {
    this->init_value(count);
  }
  /// `count` copies of `value`.
  small_vector(size_type count, const T& value, const Allocator& alloc = Allocator())
      : base(N, alloc) {
    this->init_fill(count, value);
  }
  /// The elements of [first, last).
  template <class InputIt, std::enable_if_t<detail::is_input_iterator<InputIt>::value, int> = 0>
  small_vector(InputIt first, InputIt last, const Allocator& alloc = Allocator()) : base(N, alloc) {
    this->init_range(first, last);
  }
  /// The elements of `il`.
  small_vector(std::initializer_list<T> il, const Allocator& alloc = Allocator()) : base(N, alloc) {
    this->init_range(il.begin(), il.end());
  }
  /// A copy; allocates exactly other.size() elements when they do not fit inline.
  small_vector(const small_vector& other)
      : base(N, traits::select_on_container_copy_construction(other.get_allocator())) {
    if (!copy_whole_inline_buffer<copy_inline_whole>(other)) {
      this->init_range(other.begin(), other.end());
    }
  }
  /// A copy using `alloc`.
  small_vector(const small_vector& other, const Allocator& alloc) : base(N, alloc) {
    this->init_range(other.begin(), other.end());
  }
  /// A copy of a small vector of any inline capacity.
  explicit small_vector(const base& other)
      : base(N, traits::select_on_container_copy_construction(other.get_allocator())) {
    this->init_range(other.begin(), other.end());
  }
  /// Takes `other`'s heap buffer, or moves its inline elements one by one; `other` is left empty.
  small_vector(small_vector&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
      : base(N, other.get_allocator()) {
    if (copy_whole_inline_buffer<move_inline_whole>(other)) {
      other.set_size(0);
    } else {
      this->init_move(other);
    }
  }
  /// Moves from `other` using `alloc`: takes the buffer only when the allocators are equal.
  small_vector(small_vector&& other, const Allocator& alloc) : base(N, alloc) {
    this->init_move(other);
  }
  /// Moves from a small vector of any inline capacity: takes its heap buffer (even when its
  /// elements would fit inline here) or moves its inline elements; `other` is left empty.
  small_vector(base&& other) : base(N, other.get_allocator()) {  // NOLINT: implicit like LLVM's
    this->init_move(other);
  }

  /// Destroys the elements and frees the heap buffer, if any.
  ~small_vector() { this->destroy_and_deallocate(); }

  /// As small_vector_base::emplace_back, with the inline capacity known at compile time.
  template <class... Args>
  typename base::reference emplace_back(Args&&... args) {
    if (LOWALLOC_LIKELY(emplace_without_growth(std::forward<Args>(args)...))) return this->back();
    return this->grow_and_emplace_back(std::forward<Args>(args)...);
  }
  /// As small_vector_base::push_back.
  void push_back(const T& value) {
    if constexpr (pass_by_value) {
      // Small trivial values go to the growth path by value: the argument's address does not
      // escape, so a loop of push_back(i) keeps i in a register.
      const T copy = value;
      if (LOWALLOC_LIKELY(emplace_without_growth(copy))) return;
      if constexpr (spill_whole) {
        if (this->meta_ == inline_base + N) return spill_and_push_value(copy);
      }
      this->grow_and_push_value(copy);
    } else {
      emplace_back(value);
    }
  }
  /// As small_vector_base::push_back.
  void push_back(T&& value) {
    if constexpr (pass_by_value) {
      push_back(static_cast<const T&>(value));
    } else {
      emplace_back(std::move(value));
    }
  }

 private:
  // Small inline buffers of trivially copyable elements are copied whole, with a memcpy of a
  // constant size (a few vector moves) instead of one sized by the element count.
  // The copy and the move are told apart: a trivially copyable T may have a deleted copy (or move).
  static constexpr bool inline_bytes_small = N > 0 && N * sizeof(T) <= 64;
  static constexpr bool copy_inline_whole =
      detail::memcpy_copyable<Allocator, T> && inline_bytes_small;
  static constexpr bool move_inline_whole =
      detail::memcpy_movable<Allocator, T> && inline_bytes_small;

  // For an inline `other` (and an empty or inline *this): copies its whole inline buffer and
  // takes its size, when Whole. False, doing nothing, when that does not apply.
  template <bool Whole>
  bool copy_whole_inline_buffer(const small_vector& other) noexcept {
    if constexpr (Whole) {
      if (!other.is_inline() || &other == this) return false;
      // Bytes past other.size() are indeterminate; copying them as bytes is harmless.
      std::memcpy(static_cast<void*>(this->inline_data()),
                  static_cast<const void*>(other.inline_data()), N * sizeof(T));
      this->set_size(other.size());
      return true;
    } else {
      (void)other;
      return false;
    }
  }

  // (A trivially copyable T may still have a deleted copy constructor: push_back(T&&) of such a
  // T must move, as std::vector's does.)
  static constexpr bool pass_by_value = std::is_trivially_copyable_v<T> &&
                                        std::is_trivially_copy_constructible_v<T> &&
                                        sizeof(T) <= 2 * sizeof(void*);
  static constexpr std::uint64_t inline_base = std::uint64_t(N) << base::capacity_shift;
  static constexpr std::uint64_t heap_base = inline_base | base::heap_bit;

  // The first growth of a full inline buffer copies all N elements: a memcpy of constant size
  // (a few vector moves, not a call) when the elements are bytes and the buffer is small.
  static constexpr bool spill_whole =
      pass_by_value && detail::memcpy_relocatable<Allocator, T> && N * sizeof(T) <= 128;

  // push_back's growth out of a full inline buffer (spill_whole). Strong guarantee: an allocation
  // failure changes nothing.
  LOWALLOC_NOINLINE void spill_and_push_value(T value) {
    const size_type cap = this->grown_capacity(N, 1);
    T* buf = this->allocate(cap);
    LOWALLOC_TRY { this->construct(buf + N, value); }
    LOWALLOC_CATCH_ALL {
      this->deallocate(buf, cap);
      LOWALLOC_RETHROW;
    }
    std::memcpy(static_cast<void*>(buf), static_cast<const void*>(this->inline_data()),
                N * sizeof(T));
    this->set_heap(buf, cap);
    this->meta_ += base::size_one;
  }

  // Constructs the new last element when there is room for it; false (and the arguments
  // untouched) when the vector must grow first. Shaped by measurement (AMD Zen 5, g++ 12 -O2 and
  // -O3, docs/benchmarks.md):
  //  - the inline and the heap case each have their own store. Merged, the slot is a pointer chosen
  //    between the two (two LEAs, then a store through a register); the inline store alone
  //    addresses the object directly (`mov %ebx,0x8(%rsp,%rdx,4)`), 12% less time per element;
  //  - the inline index is the low 32 bits of meta_ (the size: N < 2^24 keeps the capacity field
  //    above bit 32), a 2-byte move instead of subtracting N << 39;
  //  - on the heap, meta_ - heap_base is the size (one compare, no test of the heap bit);
  //  - meta_ is read from memory at every call (load_fresh), as every peer reads its size. Kept
  //    in a register across a loop of push_back, the loop is as fast in most code layouts but
  //    2-2.7x slower in more of them: over 32 layouts of the benchmark loop, the reload cut the
  //    mean time by 8-21% (N = 16 and 32, -O2 and -O3).
  template <class... Args>
  bool emplace_without_growth(Args&&... args) {
    static_assert(base::capacity_shift >= 32, "the inline size must be the low 32 bits of meta_");
    const std::uint64_t m = detail::load_fresh(this->meta_);
    if (LOWALLOC_LIKELY(m < inline_base + N)) {  // inline (heap bit clear) and size < N
      this->construct(this->inline_data() + static_cast<std::uint32_t>(m),
                      std::forward<Args>(args)...);
      this->meta_ = m + 1;
      return true;
    }
    // On the heap, meta_ - heap_base is the size; inline, it wraps to above any capacity.
    const std::uint64_t heap_size = m - heap_base;
    if (LOWALLOC_LIKELY(heap_size < this->heap_capacity())) {
      this->construct(this->heap_data() + static_cast<size_type>(heap_size),
                      std::forward<Args>(args)...);
      this->meta_ = m + 1;
      return true;
    }
    return false;
  }

 public:
  /// Copy assignment (see small_vector_base).
  small_vector& operator=(const small_vector& other) {
    base::operator=(other);
    return *this;
  }
  /// Move assignment (see small_vector_base). With the same N it never allocates when the
  /// allocators propagate or are always equal, and is noexcept then.
  small_vector& operator=(small_vector&& other) noexcept(
      (traits::propagate_on_container_move_assignment::value || traits::is_always_equal::value) &&
      std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>) {
    if (this->is_inline() && copy_whole_inline_buffer<move_inline_whole>(other)) {
      other.set_size(0);
    } else {
      base::operator=(std::move(other));
    }
    return *this;
  }
  /// Copy assignment from a small vector of any inline capacity.
  small_vector& operator=(const base& other) {
    base::operator=(other);
    return *this;
  }
  /// Move assignment from a small vector of any inline capacity.
  small_vector& operator=(base&& other) {
    base::operator=(std::move(other));
    return *this;
  }
  /// Replaces the contents with `il`.
  small_vector& operator=(std::initializer_list<T> il) {
    this->assign(il.begin(), il.end());
    return *this;
  }

  /// Exchanges the contents (see small_vector_base::swap). An exact match, so that
  /// `using std::swap; swap(a, b)` and std::ranges::swap take it over the generic std::swap.
  friend void swap(small_vector& a, small_vector& b) { a.swap(b); }
};

LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_END

// ---- comparisons (any N against any N) ---------------------------------------------------------

/// Equal sizes and equal elements.
template <class T, class A>
bool operator==(const small_vector_base<T, A>& a, const small_vector_base<T, A>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

#if LOWALLOC_HAS_THREE_WAY_COMPARISON
/// Lexicographical three-way comparison (synth-three-way on the elements, as std::vector).
template <class T, class A>
detail::synth_three_way_result_t<T> operator<=>(const small_vector_base<T, A>& a,
                                                const small_vector_base<T, A>& b) {
  return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end(),
                                                detail::synth_three_way{});
}
#else
/// Not equal.
template <class T, class A>
bool operator!=(const small_vector_base<T, A>& a, const small_vector_base<T, A>& b) {
  return !(a == b);
}
/// Lexicographically less.
template <class T, class A>
bool operator<(const small_vector_base<T, A>& a, const small_vector_base<T, A>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}
/// Lexicographically greater.
template <class T, class A>
bool operator>(const small_vector_base<T, A>& a, const small_vector_base<T, A>& b) {
  return b < a;
}
/// Lexicographically less or equal.
template <class T, class A>
bool operator<=(const small_vector_base<T, A>& a, const small_vector_base<T, A>& b) {
  return !(b < a);
}
/// Lexicographically greater or equal.
template <class T, class A>
bool operator>=(const small_vector_base<T, A>& a, const small_vector_base<T, A>& b) {
  return !(a < b);
}
#endif

/// Erases every element equal to `value`; returns how many (std::erase for small vectors).
template <class T, class A, class U>
typename small_vector_base<T, A>::size_type erase(small_vector_base<T, A>& v, const U& value) {
  auto it = std::remove(v.begin(), v.end(), value);
  const auto n = static_cast<std::size_t>(v.end() - it);
  v.erase(it, v.end());
  return n;
}

/// Erases every element for which `pred` is true; returns how many (std::erase_if).
template <class T, class A, class Pred>
typename small_vector_base<T, A>::size_type erase_if(small_vector_base<T, A>& v, Pred pred) {
  auto it = std::remove_if(v.begin(), v.end(), pred);
  const auto n = static_cast<std::size_t>(v.end() - it);
  v.erase(it, v.end());
  return n;
}

static_assert(sizeof(small_vector<int, 8>) == 40, "small_vector<int, 8> must be 40 bytes");
static_assert(sizeof(small_vector<int, 0>) == 24, "small_vector<int, 0> must be 24 bytes");
static_assert(sizeof(small_vector<char, 16>) == 24, "small_vector<char, 16> must be 24 bytes");

}  // namespace lowalloc

#endif  // LOWALLOC_SMALL_VECTOR_HPP
