// lowalloc/inplace_vector.hpp — a vector with a fixed capacity, stored inside the object.
//
// `lowalloc::inplace_vector<T, N>` is C++26's `std::inplace_vector` (P0843, [inplace.vector]) for
// C++17 and later: a contiguous sequence of at most N elements, kept in the object itself.
//
// When it allocates: never. Whatever would take it past N elements (a constructor, assign,
// insert, resize, push_back, emplace_back, append_range, reserve(n > N)) throws std::bad_alloc
// instead. `try_push_back`, `try_emplace_back` and `try_append_range` report a full vector
// without throwing; `unchecked_push_back` and `unchecked_emplace_back` leave the check to the
// caller (checked by LOWALLOC_ASSERT in debug builds).
//
// What it replaces: a `std::vector` whose size has a small known bound (tokens of a line, the
// children of a node, a path's components), or a `std::array` plus a hand-kept count. The object
// is N * sizeof(T) bytes plus the smallest unsigned integer that holds N: 36 bytes for
// `inplace_vector<int, 8>`. Each special member is trivial when T's matching members are (as the
// draft's [inplace.vector.overview]/6 words it, member by member), so it is trivially copyable
// when T is; for N == 0 it is an empty class whose every special member is trivial, whatever T.
//
//   #include <lowalloc/inplace_vector.hpp>
//
//   lowalloc::inplace_vector<int, 4> v{1, 2, 3};
//   v.push_back(4);                  // no allocation, ever
//   if (!v.try_push_back(5)) {       // full: nullptr, and 5 is left alone
//     v.pop_back();
//   }
//   v.push_back(6);                  // would throw std::bad_alloc if v were full
//   lowalloc::erase_if(v, [](int x) { return x % 2 == 0; });  // v == {1, 3}
//
// Differences from the standard: no `from_range_t` constructor (std::from_range is C++23; use
// `append_range`); the range members (append_range, try_append_range, insert_range, assign_range)
// take anything with begin/end, and try_append_range returns std::ranges::dangling for a
// temporary range only under C++20; nothing is constexpr.
#ifndef LOWALLOC_INPLACE_VECTOR_HPP
#define LOWALLOC_INPLACE_VECTOR_HPP

#include <lowalloc/detail/compare.hpp>
#include <lowalloc/detail/config.hpp>
#include <lowalloc/detail/gdb_scripts.hpp>
#include <lowalloc/detail/inplace_vector_storage.hpp>

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>

namespace lowalloc {
namespace detail {
namespace inplace {

/// The whole interface of inplace_vector<T, N> but its default constructor, initializer-list
/// assignment and swap, which inplace_vector adds (the default constructor must be trivial for
/// N == 0 and user-provided otherwise, which takes two classes in C++17).
///
/// Exception guarantees: push_back, emplace_back, try_*, unchecked_*, and insert or emplace at
/// end() are strong (no effect if an exception is thrown); so is every std::bad_alloc for a
/// request above N that can be detected before any change, and resize. Other modifiers give the
/// basic guarantee. Iterators are pointers; an insertion or erasure invalidates the iterators at
/// and after its position, and nothing else.
template <class T, std::size_t N>
class vector_impl : private storage<T, N> {
  using base_type = storage<T, N>;

  static_assert(std::is_object<T>::value && !std::is_const<T>::value && !std::is_volatile<T>::value,
                "inplace_vector<T, N>: T must be a non-const, non-volatile object type");

 public:
  using value_type = T;                                                  ///< T
  using pointer = T*;                                                    ///< T*
  using const_pointer = const T*;                                        ///< const T*
  using reference = T&;                                                  ///< T&
  using const_reference = const T&;                                      ///< const T&
  using size_type = std::size_t;                                         ///< std::size_t
  using difference_type = std::ptrdiff_t;                                ///< std::ptrdiff_t
  using iterator = T*;                                                   ///< contiguous
  using const_iterator = const T*;                                       ///< contiguous
  using reverse_iterator = std::reverse_iterator<iterator>;              ///< reverse
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;  ///< reverse

  // --- construction ------------------------------------------------------------------------------

  /// Empty.
  vector_impl() = default;

  /// `n` value-initialised elements. Throws std::bad_alloc if n > N.
  explicit vector_impl(size_type n) { resize(n); }

  /// `n` copies of `value`. Throws std::bad_alloc if n > N.
  vector_impl(size_type n, const T& value) { resize(n, value); }

  /// Copies of the elements of [first, last) (input iterators too). Throws std::bad_alloc if
  /// there are more than N.
  template <class InputIt, enable_if_iterator_t<InputIt> = 0>
  vector_impl(InputIt first, InputIt last) {
    append_all_or_nothing(first, last);
  }

  /// Copies of the elements of `il`. Throws std::bad_alloc if there are more than N.
  vector_impl(std::initializer_list<T> il) { append_all_or_nothing(il.begin(), il.end()); }

  // Copy and move construction and assignment, and the destructor, are implicit: each is trivial
  // when [inplace.vector.overview]/6 says so (all of them for N == 0). A move moves the elements
  // one by one when T's move is not trivial, and leaves the source's elements moved from, its
  // size unchanged.

  /// Replaces the contents with `n` copies of `value` (which may be an element of *this).
  /// Throws std::bad_alloc if n > N, with no effect. Basic guarantee otherwise.
  void assign(size_type n, const T& value) {
    if (n > N) detail::throw_bad_alloc();
    if constexpr (N == 0) return;  // (see "N == 0" below)
    T* d = data();
    const size_type old = size();
    std::fill_n(d, std::min(n, old), value);
    if (n > old) {
      std::uninitialized_fill_n(d + old, n - old, value);
    } else {
      std::destroy(d + n, d + old);
    }
    this->set_size(n);
  }

  /// Replaces the contents with copies of [first, last), which must not point into *this.
  /// Throws std::bad_alloc if there are more than N: with no effect for forward iterators; for
  /// input iterators after assigning over the old elements. Basic guarantee.
  template <class InputIt, detail::inplace::enable_if_iterator_t<InputIt> = 0>
  void assign(InputIt first, InputIt last) {
    assign_iter(first, last);
  }

  /// Replaces the contents with copies of `il`. Throws std::bad_alloc if il.size() > N. Basic.
  void assign(std::initializer_list<T> il) { assign_iter(il.begin(), il.end()); }

  /// Replaces the contents with copies of the elements of `rg` (anything with begin and end,
  /// not *this). Throws std::bad_alloc if there are more than N. Basic guarantee.
  template <class R, detail::inplace::enable_if_range_t<R> = 0>
  void assign_range(R&& rg) {
    assign_iter(detail::inplace::range_begin(rg), detail::inplace::range_end(rg));
  }

  // --- element access ----------------------------------------------------------------------------

  /// The element at `i`; throws std::out_of_range if i >= size().
  reference at(size_type i) {
    if (i >= size()) detail::throw_out_of_range("lowalloc::inplace_vector::at");
    return data()[i];
  }
  /// The element at `i`; throws std::out_of_range if i >= size().
  const_reference at(size_type i) const {
    if (i >= size()) detail::throw_out_of_range("lowalloc::inplace_vector::at");
    return data()[i];
  }
  /// The element at `i`. Precondition (LOWALLOC_ASSERT): i < size().
  reference operator[](size_type i) noexcept {
    LOWALLOC_ASSERT(i < size());
    return data()[i];
  }
  /// The element at `i`. Precondition (LOWALLOC_ASSERT): i < size().
  const_reference operator[](size_type i) const noexcept {
    LOWALLOC_ASSERT(i < size());
    return data()[i];
  }
  /// The first element. Precondition (LOWALLOC_ASSERT): !empty().
  reference front() noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[0];
  }
  /// The first element. Precondition (LOWALLOC_ASSERT): !empty().
  const_reference front() const noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[0];
  }
  /// The last element. Precondition (LOWALLOC_ASSERT): !empty().
  reference back() noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[size() - 1];
  }
  /// The last element. Precondition (LOWALLOC_ASSERT): !empty().
  const_reference back() const noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[size() - 1];
  }
  /// The elements, contiguous; nullptr when N == 0.
  T* data() noexcept { return base_type::data(); }
  /// The elements, contiguous; nullptr when N == 0.
  const T* data() const noexcept { return base_type::data(); }

  // --- iterators ---------------------------------------------------------------------------------

  /// First element.
  iterator begin() noexcept { return data(); }
  /// First element.
  const_iterator begin() const noexcept { return data(); }
  /// Past the last element.
  iterator end() noexcept { return data() + size(); }
  /// Past the last element.
  const_iterator end() const noexcept { return data() + size(); }
  /// First element of the reversed sequence.
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  /// First element of the reversed sequence.
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  /// Past the last element of the reversed sequence.
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  /// Past the last element of the reversed sequence.
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  /// First element.
  const_iterator cbegin() const noexcept { return begin(); }
  /// Past the last element.
  const_iterator cend() const noexcept { return end(); }
  /// First element of the reversed sequence.
  const_reverse_iterator crbegin() const noexcept { return rbegin(); }
  /// Past the last element of the reversed sequence.
  const_reverse_iterator crend() const noexcept { return rend(); }

  // --- size and capacity -------------------------------------------------------------------------

  /// True when there are no elements.
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  /// The number of elements.
  size_type size() const noexcept { return base_type::size(); }
  /// N.
  static constexpr size_type max_size() noexcept { return N; }
  /// N.
  static constexpr size_type capacity() noexcept { return N; }

  /// Throws std::bad_alloc if n > N; does nothing otherwise.
  static void reserve(size_type n) {
    if (n > N) detail::throw_bad_alloc();
  }
  /// Does nothing: the capacity is always N.
  static void shrink_to_fit() noexcept {}

  /// Erases the elements after the first `n`, or appends value-initialised ones. Throws
  /// std::bad_alloc if n > N. Strong guarantee.
  void resize(size_type n) {
    const size_type old = size();
    if (n > old) {
      if (n > N || N == 0) detail::throw_bad_alloc();
      std::uninitialized_value_construct_n(data() + old, n - old);
      this->set_size(n);
    } else {
      erase_tail(n);
    }
  }

  /// Erases the elements after the first `n`, or appends copies of `value` (which may be an
  /// element of *this). Throws std::bad_alloc if n > N. Strong guarantee.
  void resize(size_type n, const T& value) {
    const size_type old = size();
    if (n > old) {
      if (n > N || N == 0) detail::throw_bad_alloc();
      std::uninitialized_fill_n(data() + old, n - old, value);
      this->set_size(n);
    } else {
      erase_tail(n);
    }
  }

  // --- appending ---------------------------------------------------------------------------------

  /// Appends T(args...). Throws std::bad_alloc if size() == N. Strong guarantee; `args` may
  /// refer to elements of *this.
  template <class... Args>
  reference emplace_back(Args&&... args) {
    if (LOWALLOC_UNLIKELY(full())) detail::throw_bad_alloc();
    return unchecked_emplace_back(std::forward<Args>(args)...);
  }
  /// Appends a copy of `value` (which may be an element of *this). Throws std::bad_alloc if
  /// size() == N. Strong guarantee.
  reference push_back(const T& value) { return emplace_back(value); }
  /// Appends `value` moved. Throws std::bad_alloc if size() == N (`value` is then not moved
  /// from). Strong guarantee.
  reference push_back(T&& value) { return emplace_back(std::move(value)); }

  /// Appends T(args...) and returns its address, or returns nullptr if size() == N (then
  /// nothing is constructed and `args` are not touched). Strong guarantee.
  template <class... Args>
  pointer try_emplace_back(Args&&... args) {
    if (LOWALLOC_UNLIKELY(full())) return nullptr;
    return std::addressof(unchecked_emplace_back(std::forward<Args>(args)...));
  }
  /// Appends a copy of `value` and returns its address, or returns nullptr if size() == N.
  pointer try_push_back(const T& value) { return try_emplace_back(value); }
  /// Appends `value` moved and returns its address, or returns nullptr if size() == N (then
  /// `value` is not moved from).
  pointer try_push_back(T&& value) { return try_emplace_back(std::move(value)); }

  /// Appends T(args...). Precondition (LOWALLOC_ASSERT): size() < N. Strong guarantee.
  template <class... Args>
  reference unchecked_emplace_back(Args&&... args) {
    LOWALLOC_ASSERT(!full());
    if constexpr (N == 0) {
      std::abort();  // the precondition cannot hold
    } else {
      const size_type n = size();
      T* p = detail::inplace::construct_element(data() + n, std::forward<Args>(args)...);
      this->set_size(n + 1);
      return *p;
    }
  }
  /// Appends a copy of `value`. Precondition (LOWALLOC_ASSERT): size() < N. Strong guarantee.
  reference unchecked_push_back(const T& value) { return unchecked_emplace_back(value); }
  /// Appends `value` moved. Precondition (LOWALLOC_ASSERT): size() < N. Strong guarantee.
  reference unchecked_push_back(T&& value) { return unchecked_emplace_back(std::move(value)); }

  /// Appends copies of the elements of `rg` (anything with begin and end). Throws
  /// std::bad_alloc if they do not fit: before any change when the count is known in advance
  /// (forward iterators with a last of the same type), else after appending the first ones
  /// (as std: if an exception is thrown after k elements were appended, those k stay).
  template <class R, detail::inplace::enable_if_range_t<R> = 0>
  void append_range(R&& rg) {
    auto first = detail::inplace::range_begin(rg);
    auto last = detail::inplace::range_end(rg);
    if constexpr (detail::inplace::is_counted_range<decltype(first), decltype(last)>::value) {
      if (static_cast<size_type>(std::distance(first, last)) > N - size()) {
        detail::throw_bad_alloc();
      }
      for (; first != last; ++first) unchecked_emplace_back(*first);
    } else {
      for (; first != last; ++first) emplace_back(*first);
    }
  }

  /// Appends copies of the first elements of `rg` until it is exhausted or size() == N, and
  /// returns an iterator to the first element of `rg` not appended (std::ranges::dangling for
  /// a temporary range under C++20). Each element of `rg` is read at most once. If an exception
  /// is thrown, the elements appended before it stay.
  template <class R, detail::inplace::enable_if_range_t<R> = 0>
  detail::inplace::borrowed_range_iterator_t<R> try_append_range(R&& rg) {
    auto first = detail::inplace::range_begin(rg);
    auto last = detail::inplace::range_end(rg);
    for (; !full() && first != last; ++first) unchecked_emplace_back(*first);
    return first;
  }

  /// Destroys the last element. Precondition (LOWALLOC_ASSERT): !empty().
  void pop_back() noexcept {
    LOWALLOC_ASSERT(!empty());
    const size_type n = size() - 1;
    std::destroy_at(data() + n);
    this->set_size(n);
  }

  // --- insertion ---------------------------------------------------------------------------------

  /// Inserts T(args...) before `pos`; returns an iterator to it. Throws std::bad_alloc if
  /// size() == N, with no effect. Strong guarantee at end(), basic elsewhere; `args` may refer
  /// to elements of *this.
  template <class... Args>
  iterator emplace(const_iterator pos, Args&&... args) {
    const size_type i = index_of(pos);
    if (LOWALLOC_UNLIKELY(full())) detail::throw_bad_alloc();
    if (i == size()) {
      unchecked_emplace_back(std::forward<Args>(args)...);
    } else {
      T value(std::forward<Args>(args)...);  // before anything moves: args may alias
      insert_moved(i, value);
    }
    return begin() + i;
  }

  /// Inserts a copy of `value` (which may be an element of *this) before `pos`. Throws
  /// std::bad_alloc if size() == N, with no effect. Strong guarantee at end(), basic elsewhere.
  iterator insert(const_iterator pos, const T& value) { return emplace(pos, value); }

  /// Inserts `value` moved before `pos`. Throws std::bad_alloc if size() == N, with no effect
  /// (`value` is then not moved from). Strong guarantee at end(), basic elsewhere.
  iterator insert(const_iterator pos, T&& value) {
    const size_type i = index_of(pos);
    if (LOWALLOC_UNLIKELY(full())) detail::throw_bad_alloc();
    if (i == size()) {
      unchecked_emplace_back(std::move(value));
    } else {
      insert_moved(i, value);
    }
    return begin() + i;
  }

  /// Inserts `n` copies of `value` (which may be an element of *this) before `pos`; returns an
  /// iterator to the first. Throws std::bad_alloc if size() + n > N, with no effect. Basic.
  iterator insert(const_iterator pos, size_type n, const T& value) {
    const size_type i = index_of(pos);
    const size_type old = size();
    if (n > N - old) detail::throw_bad_alloc();
    if constexpr (N == 0) return begin();  // (see "N == 0" below)
    std::uninitialized_fill_n(data() + old, n, value);
    this->set_size(old + n);
    return rotate_into_place(i, old);
  }

  /// Inserts copies of [first, last) before `pos` (the range may be part of *this when its
  /// iterators are forward); returns an iterator to the first. Throws std::bad_alloc if they do
  /// not fit, with no effect. Basic guarantee.
  template <class InputIt, detail::inplace::enable_if_iterator_t<InputIt> = 0>
  iterator insert(const_iterator pos, InputIt first, InputIt last) {
    return insert_iter(pos, first, last);
  }

  /// Inserts copies of the elements of `il` before `pos`; returns an iterator to the first.
  /// Throws std::bad_alloc if they do not fit, with no effect. Basic guarantee.
  iterator insert(const_iterator pos, std::initializer_list<T> il) {
    return insert_iter(pos, il.begin(), il.end());
  }

  /// Inserts copies of the elements of `rg` (anything with begin and end) before `pos`; returns
  /// an iterator to the first. Throws std::bad_alloc if they do not fit, with no effect. Basic.
  template <class R, detail::inplace::enable_if_range_t<R> = 0>
  iterator insert_range(const_iterator pos, R&& rg) {
    return insert_iter(pos, detail::inplace::range_begin(rg), detail::inplace::range_end(rg));
  }

  // --- erasure -----------------------------------------------------------------------------------

  /// Erases the element at `pos` (not end()); returns the iterator after it. Basic guarantee.
  iterator erase(const_iterator pos) {
    LOWALLOC_ASSERT(pos != cend());
    return erase(pos, pos + 1);
  }

  /// Erases [first, last); returns the iterator after them. Basic guarantee.
  iterator erase(const_iterator first, const_iterator last) {
    const size_type i = index_of(first);
    const size_type j = index_of(last);
    LOWALLOC_ASSERT(i <= j);
    T* d = data();
    if (N != 0 && i != j) {
      T* new_end = std::move(d + j, d + size(), d + i);
      erase_tail(static_cast<size_type>(new_end - d));
    }
    return d + i;
  }

  /// Destroys every element.
  void clear() noexcept { erase_tail(0); }

 protected:
  static constexpr bool nothrow_swap = N == 0 || (std::is_nothrow_swappable<T>::value &&
                                                  std::is_nothrow_move_constructible<T>::value);

  void swap(vector_impl& other) noexcept(nothrow_swap) {
    if (N == 0 || this == &other) return;
    const size_type a = size();
    const size_type b = other.size();
    if (a >= b) {
      detail::inplace::swap_elements(data(), a, other.data(), b);
    } else {
      detail::inplace::swap_elements(other.data(), b, data(), a);
    }
    this->set_size(b);
    other.set_size(a);
  }

 private:
  // N == 0: data() is nullptr, and every path that would construct or move an element throws
  // std::bad_alloc or does nothing first. The `N == 0` tests remove those paths at compile time:
  // GCC cannot always prove them dead and would warn (-Wnonnull) about the null pointer.

  bool full() const noexcept { return size() == N; }

  size_type index_of(const_iterator pos) const noexcept {
    LOWALLOC_ASSERT(cbegin() <= pos && pos <= cend());
    return static_cast<size_type>(pos - cbegin());
  }

  void erase_tail(size_type n) noexcept {
    std::destroy(data() + n, end());
    this->set_size(n);
  }

  // Appends [first, last): all of it, or nothing (std::bad_alloc if it does not fit).
  template <class It, class Sent>
  void append_all_or_nothing(It first, Sent last) {
    if constexpr (N == 0) {
      if (first != last) detail::throw_bad_alloc();
    } else {
      const size_type old = size();
      this->set_size(old + detail::inplace::construct_range(data() + old, N - old, first, last));
    }
  }

  // Moves `value` into position i < size(); size() < N. Makes room by moving the last element
  // one up, then shifting the rest.
  void insert_moved(size_type i, T& value) {
    if constexpr (N != 0) {
      T* d = data();
      const size_type n = size();
      detail::inplace::construct_element(d + n, std::move(d[n - 1]));
      this->set_size(n + 1);
      std::move_backward(d + i, d + n - 1, d + n);
      d[i] = std::move(value);
    }
  }

  // The elements appended at [old, size()) belong before position i: rotate them there.
  iterator rotate_into_place(size_type i, size_type old) {
    T* d = data();
    std::rotate(d + i, d + old, d + size());
    return d + i;
  }

  // Appending first (nothing moves, so the source may lie in *this), then rotating: bad_alloc
  // and a throwing element construction leave *this unchanged.
  template <class It, class Sent>
  iterator insert_iter(const_iterator pos, It first, Sent last) {
    const size_type i = index_of(pos);
    const size_type old = size();
    append_all_or_nothing(first, last);
    return rotate_into_place(i, old);
  }

  template <class It, class Sent>
  void assign_iter(It first, Sent last) {
    if constexpr (detail::inplace::is_counted_range<It, Sent>::value) {
      const auto n = static_cast<size_type>(std::distance(first, last));
      if (n > N) detail::throw_bad_alloc();
      if constexpr (N == 0) return;  // (see "N == 0" below)
      detail::inplace::assign_elements(data(), size(), first, n);
      this->set_size(n);
    } else {
      T* d = data();
      const size_type old = size();
      size_type i = 0;
      for (; i != old && first != last; ++i, ++first) d[i] = *first;
      if (i != old) {
        erase_tail(i);
      } else {
        append_all_or_nothing(first, last);
      }
    }
  }
};

}  // namespace inplace
}  // namespace detail

/// A sequence of at most N elements of T stored inside the object; never allocates. Every member
/// but the ones below is documented on detail::inplace::vector_impl, its exception guarantees
/// too.
template <class T, std::size_t N>
class inplace_vector : public detail::inplace::vector_impl<T, N> {
  using impl = detail::inplace::vector_impl<T, N>;

 public:
  using impl::impl;

  /// Empty. (User-provided, so that `inplace_vector v{}` does not zero the element bytes.)
  inplace_vector() noexcept {}  // NOLINT(modernize-use-equals-default)

  /// Replaces the contents with copies of `il`. Throws std::bad_alloc if il.size() > N. Basic.
  inplace_vector& operator=(std::initializer_list<T> il) {
    this->assign(il);
    return *this;
  }

  /// Exchanges the contents with `other`, element by element. Basic guarantee.
  void swap(inplace_vector& other) noexcept(impl::nothrow_swap) { impl::swap(other); }

  /// Exchanges the contents of `a` and `b` (an exact match, so `using std::swap; swap(a, b)` and
  /// std::ranges::swap find it). Basic guarantee.
  friend void swap(inplace_vector& a, inplace_vector& b) noexcept(impl::nothrow_swap) { a.swap(b); }
};

/// N == 0: an empty class whose every special member is trivial, the default constructor too.
template <class T>
class inplace_vector<T, 0> : public detail::inplace::vector_impl<T, 0> {
  using impl = detail::inplace::vector_impl<T, 0>;

 public:
  using impl::impl;

  /// Empty. Trivial.
  inplace_vector() = default;

  /// Empty when `il` is; else throws std::bad_alloc.
  inplace_vector& operator=(std::initializer_list<T> il) {
    this->assign(il);
    return *this;
  }

  /// Does nothing.
  void swap(inplace_vector&) noexcept {}

  /// Does nothing.
  friend void swap(inplace_vector&, inplace_vector&) noexcept {}
};

// --- comparison ----------------------------------------------------------------------------------

/// True when `a` and `b` have the same size and equal elements.
template <class T, std::size_t N>
bool operator==(const inplace_vector<T, N>& a, const inplace_vector<T, N>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

#if LOWALLOC_HAS_THREE_WAY_COMPARISON
/// Lexicographical three-way comparison: T's <=>, or an ordering synthesised from T's <.
template <class T, std::size_t N>
detail::synth_three_way_result_t<T> operator<=>(const inplace_vector<T, N>& a,
                                                const inplace_vector<T, N>& b) {
  return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end(),
                                                detail::synth_three_way{});
}
#else
/// True when `a` and `b` differ in size or in an element.
template <class T, std::size_t N>
bool operator!=(const inplace_vector<T, N>& a, const inplace_vector<T, N>& b) {
  return !(a == b);
}
/// Lexicographical comparison with T's <.
template <class T, std::size_t N>
bool operator<(const inplace_vector<T, N>& a, const inplace_vector<T, N>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}
/// Lexicographical comparison with T's <.
template <class T, std::size_t N>
bool operator>(const inplace_vector<T, N>& a, const inplace_vector<T, N>& b) {
  return b < a;
}
/// Lexicographical comparison with T's <.
template <class T, std::size_t N>
bool operator<=(const inplace_vector<T, N>& a, const inplace_vector<T, N>& b) {
  return !(b < a);
}
/// Lexicographical comparison with T's <.
template <class T, std::size_t N>
bool operator>=(const inplace_vector<T, N>& a, const inplace_vector<T, N>& b) {
  return !(a < b);
}
#endif

// --- erasure -------------------------------------------------------------------------------------

/// Erases every element equal to `value`; returns how many. Found by ADL.
template <class T, std::size_t N, class U = T>
std::size_t erase(inplace_vector<T, N>& c, const U& value) {
  auto it = std::remove(c.begin(), c.end(), value);
  const auto n = static_cast<std::size_t>(c.end() - it);
  c.erase(it, c.end());
  return n;
}

/// Erases every element for which `pred` is true; returns how many. Found by ADL.
template <class T, std::size_t N, class Predicate>
std::size_t erase_if(inplace_vector<T, N>& c, Predicate pred) {
  auto it = std::remove_if(c.begin(), c.end(), pred);
  const auto n = static_cast<std::size_t>(c.end() - it);
  c.erase(it, c.end());
  return n;
}

static_assert(sizeof(inplace_vector<std::uint32_t, 8>) == 36, "8 * 4 bytes + a uint8_t size");
static_assert(std::is_trivially_copyable<inplace_vector<std::uint32_t, 8>>::value,
              "trivially copyable when T is");
static_assert(std::is_empty<inplace_vector<std::uint32_t, 0>>::value, "empty when N == 0");
static_assert(std::is_trivially_default_constructible<inplace_vector<std::uint32_t, 0>>::value,
              "trivially default constructible when N == 0");

}  // namespace lowalloc

#endif  // LOWALLOC_INPLACE_VECTOR_HPP
