// lowalloc/string.hpp — the complete std::basic_string interface over a pluggable storage, and
// two storages: small_string (inline, then heap) and fixed_string (inline, never allocates).
//
// `lowalloc::basic_string<CharT, Storage, Traits>` has every member and non-member of C++20's
// std::basic_string (plus C++23's contains and resize_and_overwrite), written once on top of a
// minimal Storage. Two storages ship with it:
//
//  - `lowalloc::small_string<N = 32, Allocator = std::allocator<char>>` keeps up to N-1
//    characters in the object and allocates from Allocator only past that.
//    sizeof(small_string<N>) == N for every N that is a multiple of 8 and >= 24, so
//    small_string<32> is as big as libstdc++'s std::string but holds 31 characters inline, not 15.
//    std::pmr works: `lowalloc::pmr::small_string<N>`.
//  - `lowalloc::fixed_string<N>` holds up to N characters and never allocates; whatever would take
//    it past N throws std::length_error (max_size() == N). sizeof(fixed_string<N>) == N + 1.
//
// Wide variants go through the same templates: small_wstring<N>, small_u16string<N>,
// small_u32string<N>, small_u8string<N> (C++20), fixed_wstring<N>, ... (N counts characters).
//
// When they allocate: an operation allocates only when its result does not fit in the storage's
// current capacity, and then once. A small_string's inline capacity is N-1; growth on the heap is
// geometric (2x), construction and copies allocate exactly what they need.
//
//   #include <lowalloc/string.hpp>
//
//   lowalloc::small_string<> name = "a name of 31 characters or less";  // no allocation
//   name += " and now some more";                                        // one allocation
//   std::string_view v = name;                                           // implicit, free
//   std::string s(name);                                                 // explicit: allocates
//   std::unordered_map<lowalloc::small_string<>, int> counts;            // std::hash works
//
// Differences from std::basic_string, each documented on its member:
//  - Conversion to std::basic_string is explicit (it allocates); construction from one is
//    implicit. Construction from a string_view-like type is explicit, as in std.
//  - Moving an inline string copies its characters; a moved-from string is empty. Swapping or
//    moving inline strings invalidates iterators into them (as std::string's SSO does).
//  - shrink_to_fit of a small_string returns the text to the inline buffer when it fits.
//  - Nothing is constexpr.
//  - getline, erase and erase_if are declared in namespace lowalloc (found by argument-dependent
//    lookup) and, unless LOWALLOC_NO_STD_OVERLOADS is defined, also made visible in namespace std
//    with using-declarations, so that `std::getline(in, s)` keeps compiling after a one-type
//    change. Strictly, adding declarations to std is not permitted; every implementation accepts
//    it. Define LOWALLOC_NO_STD_OVERLOADS to keep std untouched.
//
// The storage concept, for writing a storage of your own, is spelled out in
// <lowalloc/string_storage.hpp>, next to the two storages above.
#ifndef LOWALLOC_STRING_HPP
#define LOWALLOC_STRING_HPP

#include <lowalloc/detail/config.hpp>
#include <lowalloc/detail/gdb_scripts.hpp>
#include <lowalloc/detail/iterator.hpp>
#include <lowalloc/detail/string_bytes.hpp>
#include <lowalloc/detail/throw.hpp>
#include <lowalloc/string_storage.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <istream>
#include <iterator>
#include <limits>
#include <memory>
#if LOWALLOC_HAS_MEMORY_RESOURCE
#include <memory_resource>
#endif
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
#include <compare>
#endif

namespace lowalloc {

template <class CharT, class Storage, class Traits = std::char_traits<CharT>>
class basic_string;

namespace detail {

template <class T>
struct type_identity {
  using type = T;
};
template <class T>
using type_identity_t = typename type_identity<T>::type;

template <class S, class = void>
struct storage_allocator {
  using type = std::allocator<typename S::value_type>;
  static constexpr bool aware = false;
};
template <class S>
struct storage_allocator<S, std::void_t<typename S::allocator_type>> {
  using type = typename S::allocator_type;
  static constexpr bool aware = true;
};

// A length that comes as std::size_t (a string view's, a C string's, an initializer list's) as
// the string's size_type. A size_type narrower than std::size_t cannot hold every one; one it
// cannot hold is past max_size(), and throws as such rather than wrapping around.
template <class SizeType>
SizeType narrow_length(std::size_t n) {
  if constexpr (sizeof(SizeType) < sizeof(std::size_t)) {
    if (n >= std::size_t(std::numeric_limits<SizeType>::max())) {
      throw_length_error("basic_string: length past max_size()");
    }
  }
  return static_cast<SizeType>(n);
}

// The contiguous iterator of basic_string: a pointer in a class, so that `s.insert(0, 2, 'x')`
// is not ambiguous between a position and an iterator.
template <class T>
class string_iterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
#if LOWALLOC_HAS_CXX20
  using iterator_concept = std::contiguous_iterator_tag;
#endif
  using value_type = std::remove_const_t<T>;
  using element_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = T*;
  using reference = T&;

  constexpr string_iterator() noexcept : p_(nullptr) {}
  constexpr explicit string_iterator(T* p) noexcept : p_(p) {}
  template <class U, class = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  constexpr string_iterator(const string_iterator<U>& o) noexcept : p_(o.base()) {}

  constexpr T* base() const noexcept { return p_; }
  constexpr reference operator*() const noexcept { return *p_; }
  constexpr pointer operator->() const noexcept { return p_; }
  constexpr reference operator[](difference_type n) const noexcept { return p_[n]; }

  constexpr string_iterator& operator++() noexcept {
    ++p_;
    return *this;
  }
  constexpr string_iterator operator++(int) noexcept { return string_iterator(p_++); }
  constexpr string_iterator& operator--() noexcept {
    --p_;
    return *this;
  }
  constexpr string_iterator operator--(int) noexcept { return string_iterator(p_--); }
  constexpr string_iterator& operator+=(difference_type n) noexcept {
    p_ += n;
    return *this;
  }
  constexpr string_iterator& operator-=(difference_type n) noexcept {
    p_ -= n;
    return *this;
  }
  friend constexpr string_iterator operator+(string_iterator it, difference_type n) noexcept {
    return string_iterator(it.p_ + n);
  }
  friend constexpr string_iterator operator+(difference_type n, string_iterator it) noexcept {
    return string_iterator(it.p_ + n);
  }
  friend constexpr string_iterator operator-(string_iterator it, difference_type n) noexcept {
    return string_iterator(it.p_ - n);
  }

 private:
  T* p_;
};

template <class A, class B>
constexpr std::ptrdiff_t operator-(const string_iterator<A>& a,
                                   const string_iterator<B>& b) noexcept {
  return a.base() - b.base();
}
template <class A, class B>
constexpr bool operator==(const string_iterator<A>& a, const string_iterator<B>& b) noexcept {
  return a.base() == b.base();
}
template <class A, class B>
constexpr bool operator!=(const string_iterator<A>& a, const string_iterator<B>& b) noexcept {
  return a.base() != b.base();
}
template <class A, class B>
constexpr bool operator<(const string_iterator<A>& a, const string_iterator<B>& b) noexcept {
  return a.base() < b.base();
}
template <class A, class B>
constexpr bool operator>(const string_iterator<A>& a, const string_iterator<B>& b) noexcept {
  return a.base() > b.base();
}
template <class A, class B>
constexpr bool operator<=(const string_iterator<A>& a, const string_iterator<B>& b) noexcept {
  return a.base() <= b.base();
}
template <class A, class B>
constexpr bool operator>=(const string_iterator<A>& a, const string_iterator<B>& b) noexcept {
  return a.base() >= b.base();
}

// Iterators that are pointers to the characters (ours, and raw pointers): the fast paths.
template <class It, class CharT>
struct is_char_pointer_iter
    : std::bool_constant<std::is_same_v<It, CharT*> || std::is_same_v<It, const CharT*> ||
                         std::is_same_v<It, string_iterator<CharT>> ||
                         std::is_same_v<It, string_iterator<const CharT>>> {};

template <class CharT>
const CharT* iter_to_ptr(const CharT* p) noexcept {
  return p;
}
template <class T>
const std::remove_const_t<T>* iter_to_ptr(string_iterator<T> it) noexcept {
  return it.base();
}

// The allocator of a new string made from an existing one (operator+), as for a copy.
template <class A>
A copy_allocator(const A& a) {
  return std::allocator_traits<A>::select_on_container_copy_construction(a);
}

// Traits::move, without a call for short texts when Traits is std::char_traits (whose move is
// memmove).
template <class Traits, class CharT>
LOWALLOC_ALWAYS_INLINE void move_chars(CharT* d, const CharT* s, std::size_t n) noexcept {
  if constexpr (std::is_same_v<Traits, std::char_traits<CharT>>) {
    if (n * sizeof(CharT) <= 32) {
      move_short_bytes(reinterpret_cast<unsigned char*>(d),
                       reinterpret_cast<const unsigned char*>(s), n * sizeof(CharT));
      return;
    }
  }
  Traits::move(d, s, opaque(n));
}

// An exception while extracting into a string: badbit, rethrown if the stream asks for it.
template <class Stream>
void stream_failed(Stream& is) {
  LOWALLOC_TRY { is.setstate(std::ios_base::badbit); }
  LOWALLOC_CATCH_ALL {}
  if (is.exceptions() & std::ios_base::badbit) LOWALLOC_RETHROW;
}

template <class Traits, class = void>
struct traits_comparison {
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
  using type = std::weak_ordering;
#endif
};
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
template <class Traits>
struct traits_comparison<Traits, std::void_t<typename Traits::comparison_category>> {
  using type = typename Traits::comparison_category;
};
#endif

}  // namespace detail

LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_BEGIN

/// The std::basic_string interface over Storage (see the storage concept at the top of this
/// file). Positions past size() throw std::out_of_range and lengths past max_size() throw
/// std::length_error, where std::basic_string throws them; every operation that can throw leaves
/// the string unchanged (strong guarantee). Arguments may point into the string itself.
template <class CharT, class Storage, class Traits>
class basic_string {
  using alloc_info = detail::storage_allocator<Storage>;
  using sv_type = std::basic_string_view<CharT, Traits>;

  template <class T>
  static constexpr bool is_sv_like =
      std::is_convertible_v<const T&, sv_type> && !std::is_convertible_v<const T&, const CharT*>;
  template <class T>
  using enable_sv = std::enable_if_t<is_sv_like<T>, int>;
  template <class It>
  using enable_iter = std::enable_if_t<detail::is_input_iterator<It>::value, int>;

 public:
  using traits_type = Traits;
  using value_type = CharT;
  using storage_type = Storage;
  using allocator_type = typename alloc_info::type;
  /// The allocator's size_type and difference_type, as std::basic_string (std::size_t and
  /// std::ptrdiff_t for a storage without an allocator, and for std::allocator).
  using size_type = typename std::allocator_traits<allocator_type>::size_type;
  using difference_type = typename std::allocator_traits<allocator_type>::difference_type;
  using reference = CharT&;
  using const_reference = const CharT&;
  using pointer = CharT*;
  using const_pointer = const CharT*;
  using iterator = detail::string_iterator<CharT>;
  using const_iterator = detail::string_iterator<const CharT>;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  static_assert(std::is_same_v<typename Traits::char_type, CharT>,
                "basic_string: Traits::char_type must be CharT");
  static_assert(std::is_same_v<typename Storage::value_type, CharT>,
                "basic_string: Storage::value_type must be CharT");

  static constexpr size_type npos = size_type(-1);

  // --- construction -------------------------------------------------------------------------

  basic_string() noexcept(std::is_nothrow_default_constructible_v<Storage>) = default;
  /// Storages without an allocator ignore it.
  explicit basic_string(const allocator_type& a) noexcept : s_(make_storage(a)) {}

  basic_string(size_type count, CharT ch, const allocator_type& a = allocator_type())
      : s_(make_storage(a)) {
    init_fill(count, ch);
  }
  basic_string(const basic_string& o, size_type pos, const allocator_type& a = allocator_type())
      : s_(make_storage(a)) {
    init(o.data() + o.check_pos(pos, "basic_string"), o.size() - pos);
  }
  basic_string(const basic_string& o, size_type pos, size_type count,
               const allocator_type& a = allocator_type())
      : s_(make_storage(a)) {
    init(o.data() + o.check_pos(pos, "basic_string"), o.clamp(pos, count));
  }
  basic_string(const CharT* s, size_type count, const allocator_type& a = allocator_type())
      : s_(make_storage(a)) {
    init(s, count);
  }
  basic_string(const CharT* s, const allocator_type& a = allocator_type()) : s_(make_storage(a)) {
    LOWALLOC_ASSERT(s != nullptr);
    init(s, length_of(Traits::length(s)));
  }
  basic_string(std::nullptr_t) = delete;
  template <class InputIt, enable_iter<InputIt> = 0>
  basic_string(InputIt first, InputIt last, const allocator_type& a = allocator_type())
      : s_(make_storage(a)) {
    init_range(first, last);
  }
  basic_string(std::initializer_list<CharT> il, const allocator_type& a = allocator_type())
      : s_(make_storage(a)) {
    init(il.begin(), length_of(il.size()));
  }
  /// From anything convertible to std::basic_string_view (explicit, as in std).
  template <class T, enable_sv<T> = 0>
  explicit basic_string(const T& t, const allocator_type& a = allocator_type())
      : s_(make_storage(a)) {
    const sv_type v = t;
    init(v.data(), length_of(v.size()));
  }
  template <class T, std::enable_if_t<std::is_convertible_v<const T&, sv_type>, int> = 0>
  basic_string(const T& t, size_type pos, size_type count,
               const allocator_type& a = allocator_type())
      : s_(make_storage(a)) {
    const sv_type v = sv_type(t).substr(pos, count);
    init(v.data(), length_of(v.size()));
  }
  /// From a std::basic_string: implicit, so that code handing std::strings over keeps compiling.
  template <class A>
  basic_string(const std::basic_string<CharT, Traits, A>& str,
               const allocator_type& a = allocator_type())
      : s_(make_storage(a)) {
    init(str.data(), length_of(str.size()));
  }
  template <class A>
  basic_string(const std::basic_string<CharT, Traits, A>& str, size_type pos,
               const allocator_type& a = allocator_type())
      : basic_string(sv_type(str), pos, npos, a) {}

  basic_string(const basic_string&) = default;
  basic_string(const basic_string& o, const allocator_type& a) : s_(copy_storage(o.s_, a)) {}
  basic_string(basic_string&&) noexcept = default;
  basic_string(basic_string&& o, const allocator_type& a) : s_(move_storage(std::move(o.s_), a)) {}

  ~basic_string() = default;

  // --- assignment ---------------------------------------------------------------------------

  basic_string& operator=(const basic_string&) = default;
  basic_string& operator=(basic_string&&) noexcept(std::is_nothrow_move_assignable_v<Storage>) =
      default;
  basic_string& operator=(const CharT* s) { return assign(s); }
  basic_string& operator=(CharT ch) { return assign(size_type(1), ch); }
  basic_string& operator=(std::initializer_list<CharT> il) {
    return assign(il.begin(), length_of(il.size()));
  }
  template <class T, enable_sv<T> = 0>
  basic_string& operator=(const T& t) {
    const sv_type v = t;
    return assign(v.data(), length_of(v.size()));
  }
  basic_string& operator=(std::nullptr_t) = delete;

  basic_string& assign(size_type count, CharT ch) { return replace_fill(0, size(), count, ch); }
  basic_string& assign(const basic_string& o) { return *this = o; }
  basic_string& assign(const basic_string& o, size_type pos, size_type count = npos) {
    return assign(o.data() + o.check_pos(pos, "basic_string::assign"), o.clamp(pos, count));
  }
  basic_string& assign(basic_string&& o) noexcept(std::is_nothrow_move_assignable_v<Storage>) {
    return *this = std::move(o);
  }
  basic_string& assign(const CharT* s, size_type count) {
    if (LOWALLOC_LIKELY(count <= capacity())) {
      detail::move_chars<Traits>(data(), s, count);
      s_.set_size(count);
      return *this;
    }
    return replace_impl(0, size(), s, count);
  }
  basic_string& assign(const CharT* s) { return assign(s, length_of(Traits::length(s))); }
  template <class InputIt, enable_iter<InputIt> = 0>
  basic_string& assign(InputIt first, InputIt last) {
    return replace_range(0, size(), first, last);
  }
  basic_string& assign(std::initializer_list<CharT> il) {
    return assign(il.begin(), length_of(il.size()));
  }
  template <class T, enable_sv<T> = 0>
  basic_string& assign(const T& t) {
    const sv_type v = t;
    return assign(v.data(), length_of(v.size()));
  }
  template <class T, enable_sv<T> = 0>
  basic_string& assign(const T& t, size_type pos, size_type count = npos) {
    const sv_type v = sv_type(t).substr(pos, count);
    return assign(v.data(), length_of(v.size()));
  }

  /// The allocator the storage uses (a default-constructed std::allocator for storages without).
  allocator_type get_allocator() const noexcept {
    if constexpr (alloc_info::aware) {
      return s_.get_allocator();
    } else {
      return allocator_type();
    }
  }

  // --- element access -----------------------------------------------------------------------

  reference at(size_type pos) {
    if (pos >= size()) detail::throw_out_of_range("basic_string::at: pos >= size()");
    return data()[pos];
  }
  const_reference at(size_type pos) const {
    if (pos >= size()) detail::throw_out_of_range("basic_string::at: pos >= size()");
    return data()[pos];
  }
  /// s[size()] is the terminator (reading it is allowed; writing anything but CharT() is not).
  reference operator[](size_type pos) noexcept {
    LOWALLOC_ASSERT(pos <= size());
    return data()[pos];
  }
  const_reference operator[](size_type pos) const noexcept {
    LOWALLOC_ASSERT(pos <= size());
    return data()[pos];
  }
  reference front() noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[0];
  }
  const_reference front() const noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[0];
  }
  reference back() noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[size() - 1];
  }
  const_reference back() const noexcept {
    LOWALLOC_ASSERT(!empty());
    return data()[size() - 1];
  }
  CharT* data() noexcept { return s_.data(); }
  const CharT* data() const noexcept { return s_.data(); }
  /// O(1); always terminated.
  const CharT* c_str() const noexcept { return s_.data(); }
  operator sv_type() const noexcept { return sv_type(data(), size()); }
  /// Explicit: it allocates a std::basic_string.
  template <class A>
  explicit operator std::basic_string<CharT, Traits, A>() const {
    return std::basic_string<CharT, Traits, A>(data(), size());
  }

  // --- iterators ----------------------------------------------------------------------------

  iterator begin() noexcept { return iterator(data()); }
  const_iterator begin() const noexcept { return const_iterator(data()); }
  const_iterator cbegin() const noexcept { return begin(); }
  iterator end() noexcept { return iterator(data() + size()); }
  const_iterator end() const noexcept { return const_iterator(data() + size()); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator crbegin() const noexcept { return rbegin(); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  const_reverse_iterator crend() const noexcept { return rend(); }

  // --- capacity -----------------------------------------------------------------------------

  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  // The storage counts in std::size_t; its sizes never pass max_size(), which size_type holds.
  size_type size() const noexcept { return static_cast<size_type>(s_.size()); }
  size_type length() const noexcept { return size(); }
  size_type max_size() const noexcept {
    if constexpr (sizeof(size_type) >= sizeof(std::size_t)) {
      return s_.max_size();
    } else {
      constexpr auto below_npos = std::size_t(std::numeric_limits<size_type>::max()) - 1;
      return static_cast<size_type>(std::min<std::size_t>(s_.max_size(), below_npos));
    }
  }
  size_type capacity() const noexcept { return static_cast<size_type>(s_.capacity()); }
  /// Never shrinks (C++20). std::length_error when new_cap > max_size().
  void reserve(size_type new_cap) {
    if (new_cap > max_size()) detail::throw_length_error("basic_string::reserve");
    s_.reserve(new_cap);
  }
  /// Deprecated in C++20: shrink_to_fit().
  void reserve() { shrink_to_fit(); }
  /// A small_string whose text fits inline returns to its inline buffer.
  void shrink_to_fit() { s_.shrink_to_fit(); }

  // --- modifiers ----------------------------------------------------------------------------

  void clear() noexcept { s_.set_size(0); }

  basic_string& insert(size_type index, size_type count, CharT ch) {
    return replace_fill(check_pos(index, "basic_string::insert"), 0, count, ch);
  }
  basic_string& insert(size_type index, const CharT* s) {
    return insert(index, s, length_of(Traits::length(s)));
  }
  basic_string& insert(size_type index, const CharT* s, size_type count) {
    return replace_impl(check_pos(index, "basic_string::insert"), 0, s, count);
  }
  basic_string& insert(size_type index, const basic_string& str) {
    return insert(index, str.data(), str.size());
  }
  basic_string& insert(size_type index, const basic_string& str, size_type index_str,
                       size_type count = npos) {
    check_pos(index, "basic_string::insert");
    return insert(index, str.data() + str.check_pos(index_str, "basic_string::insert"),
                  str.clamp(index_str, count));
  }
  iterator insert(const_iterator pos, CharT ch) { return insert(pos, size_type(1), ch); }
  iterator insert(const_iterator pos, size_type count, CharT ch) {
    const size_type i = index_of(pos);
    replace_fill(i, 0, count, ch);
    return begin() + difference_type(i);
  }
  template <class InputIt, enable_iter<InputIt> = 0>
  iterator insert(const_iterator pos, InputIt first, InputIt last) {
    const size_type i = index_of(pos);
    replace_range(i, 0, first, last);
    return begin() + difference_type(i);
  }
  iterator insert(const_iterator pos, std::initializer_list<CharT> il) {
    const size_type i = index_of(pos);
    replace_impl(i, 0, il.begin(), length_of(il.size()));
    return begin() + difference_type(i);
  }
  template <class T, enable_sv<T> = 0>
  basic_string& insert(size_type index, const T& t) {
    const sv_type v = t;
    return insert(index, v.data(), length_of(v.size()));
  }
  template <class T, enable_sv<T> = 0>
  basic_string& insert(size_type index, const T& t, size_type index_str, size_type count = npos) {
    check_pos(index, "basic_string::insert");
    const sv_type v = sv_type(t).substr(index_str, count);
    return insert(index, v.data(), length_of(v.size()));
  }

  basic_string& erase(size_type index = 0, size_type count = npos) {
    check_pos(index, "basic_string::erase");
    erase_impl(index, clamp(index, count));
    return *this;
  }
  iterator erase(const_iterator pos) {
    const size_type i = index_of(pos);
    LOWALLOC_ASSERT(i < size());
    erase_impl(i, 1);
    return begin() + difference_type(i);
  }
  iterator erase(const_iterator first, const_iterator last) {
    const size_type i = index_of(first);
    LOWALLOC_ASSERT(first <= last && index_of(last) <= size());
    erase_impl(i, size_type(last - first));
    return begin() + difference_type(i);
  }

  void push_back(CharT ch) {
    const size_type sz = size();
    if (LOWALLOC_LIKELY(sz < capacity())) {
      data()[sz] = ch;
      s_.set_size(sz + 1);
    } else {
      replace_fill(sz, 0, 1, ch);
    }
  }
  void pop_back() noexcept {
    LOWALLOC_ASSERT(!empty());
    s_.set_size(size() - 1);
  }

  basic_string& append(size_type count, CharT ch) {
    const size_type sz = size();
    if (LOWALLOC_LIKELY(count <= capacity() - sz)) {
      Traits::assign(data() + sz, count, ch);
      s_.set_size(sz + count);
      return *this;
    }
    return replace_fill(sz, 0, count, ch);
  }
  basic_string& append(const basic_string& str) { return append(str.data(), str.size()); }
  basic_string& append(const basic_string& str, size_type pos, size_type count = npos) {
    return append(str.data() + str.check_pos(pos, "basic_string::append"), str.clamp(pos, count));
  }
  basic_string& append(const CharT* s, size_type count) {
    const size_type sz = size();
    if (LOWALLOC_LIKELY(count <= capacity() - sz)) {
      // a move: s may reach the terminator, as in s.append(s.c_str(), s.size() + 1)
      detail::move_chars<Traits>(data() + sz, s, count);
      s_.set_size(sz + count);
      return *this;
    }
    return replace_impl(sz, 0, s, count);
  }
  basic_string& append(const CharT* s) { return append(s, length_of(Traits::length(s))); }
  template <class InputIt, enable_iter<InputIt> = 0>
  basic_string& append(InputIt first, InputIt last) {
    return replace_range(size(), 0, first, last);
  }
  basic_string& append(std::initializer_list<CharT> il) {
    return append(il.begin(), length_of(il.size()));
  }
  template <class T, enable_sv<T> = 0>
  basic_string& append(const T& t) {
    const sv_type v = t;
    return append(v.data(), length_of(v.size()));
  }
  template <class T, enable_sv<T> = 0>
  basic_string& append(const T& t, size_type pos, size_type count = npos) {
    const sv_type v = sv_type(t).substr(pos, count);
    return append(v.data(), length_of(v.size()));
  }

  basic_string& operator+=(const basic_string& str) { return append(str); }
  basic_string& operator+=(CharT ch) {
    push_back(ch);
    return *this;
  }
  basic_string& operator+=(const CharT* s) { return append(s); }
  basic_string& operator+=(std::initializer_list<CharT> il) { return append(il); }
  template <class T, enable_sv<T> = 0>
  basic_string& operator+=(const T& t) {
    return append(t);
  }

  basic_string& replace(size_type pos, size_type count, const basic_string& str) {
    return replace(pos, count, str.data(), str.size());
  }
  basic_string& replace(const_iterator first, const_iterator last, const basic_string& str) {
    return replace(first, last, str.data(), str.size());
  }
  basic_string& replace(size_type pos, size_type count, const basic_string& str, size_type pos2,
                        size_type count2 = npos) {
    check_pos(pos, "basic_string::replace");
    return replace(pos, count, str.data() + str.check_pos(pos2, "basic_string::replace"),
                   str.clamp(pos2, count2));
  }
  template <class InputIt, enable_iter<InputIt> = 0>
  basic_string& replace(const_iterator first, const_iterator last, InputIt first2, InputIt last2) {
    return replace_range(index_of(first), size_type(last - first), first2, last2);
  }
  basic_string& replace(size_type pos, size_type count, const CharT* s, size_type count2) {
    check_pos(pos, "basic_string::replace");
    return replace_impl(pos, clamp(pos, count), s, count2);
  }
  basic_string& replace(const_iterator first, const_iterator last, const CharT* s,
                        size_type count2) {
    return replace_impl(index_of(first), size_type(last - first), s, count2);
  }
  basic_string& replace(size_type pos, size_type count, const CharT* s) {
    return replace(pos, count, s, length_of(Traits::length(s)));
  }
  basic_string& replace(const_iterator first, const_iterator last, const CharT* s) {
    return replace(first, last, s, length_of(Traits::length(s)));
  }
  basic_string& replace(size_type pos, size_type count, size_type count2, CharT ch) {
    check_pos(pos, "basic_string::replace");
    return replace_fill(pos, clamp(pos, count), count2, ch);
  }
  basic_string& replace(const_iterator first, const_iterator last, size_type count2, CharT ch) {
    return replace_fill(index_of(first), size_type(last - first), count2, ch);
  }
  basic_string& replace(const_iterator first, const_iterator last,
                        std::initializer_list<CharT> il) {
    return replace(first, last, il.begin(), length_of(il.size()));
  }
  template <class T, enable_sv<T> = 0>
  basic_string& replace(size_type pos, size_type count, const T& t) {
    const sv_type v = t;
    return replace(pos, count, v.data(), length_of(v.size()));
  }
  template <class T, enable_sv<T> = 0>
  basic_string& replace(const_iterator first, const_iterator last, const T& t) {
    const sv_type v = t;
    return replace(first, last, v.data(), length_of(v.size()));
  }
  template <class T, enable_sv<T> = 0>
  basic_string& replace(size_type pos, size_type count, const T& t, size_type pos2,
                        size_type count2 = npos) {
    check_pos(pos, "basic_string::replace");
    const sv_type v = sv_type(t).substr(pos2, count2);
    return replace(pos, count, v.data(), length_of(v.size()));
  }

  /// Copies at most count characters from pos on; no terminator. std::out_of_range if pos > size().
  size_type copy(CharT* dest, size_type count, size_type pos = 0) const {
    check_pos(pos, "basic_string::copy");
    const size_type n = clamp(pos, count);
    Traits::copy(dest, data() + pos, n);
    return n;
  }

  void resize(size_type count) { resize(count, CharT()); }
  void resize(size_type count, CharT ch) {
    const size_type sz = size();
    if (count <= sz) {
      s_.set_size(count);
    } else {
      append(count - sz, ch);
    }
  }
  /// C++23: makes room for count characters, lets op(data(), count) write them and return the new
  /// size r <= count. op must not throw.
  template <class Operation>
  void resize_and_overwrite(size_type count, Operation op) {
    if (count > capacity()) grow_keep(count);
    // Both arguments are prvalues (LWG 3645): op may take them by value or by rvalue reference.
    const auto r = std::move(op)(data(), static_cast<size_type>(count));
    if constexpr (std::is_signed_v<decltype(r)>) LOWALLOC_ASSERT(r >= 0);
    LOWALLOC_ASSERT(size_type(r) <= count);
    s_.set_size(size_type(r));
  }

  void swap(basic_string& o) noexcept { s_.swap(o.s_); }

  // --- search -------------------------------------------------------------------------------

  basic_string substr(size_type pos = 0, size_type count = npos) const {
    return basic_string(*this, pos, count);
  }

  int compare(const basic_string& str) const noexcept { return view().compare(str.view()); }
  int compare(size_type pos1, size_type count1, const basic_string& str) const {
    return view().compare(pos1, count1, str.view());
  }
  int compare(size_type pos1, size_type count1, const basic_string& str, size_type pos2,
              size_type count2 = npos) const {
    return view().compare(pos1, count1, str.view(), pos2, count2);
  }
  int compare(const CharT* s) const { return view().compare(s); }
  int compare(size_type pos1, size_type count1, const CharT* s) const {
    return view().compare(pos1, count1, s);
  }
  int compare(size_type pos1, size_type count1, const CharT* s, size_type count2) const {
    return view().compare(pos1, count1, s, count2);
  }
  template <class T, enable_sv<T> = 0>
  int compare(const T& t) const {
    return view().compare(sv_type(t));
  }
  template <class T, enable_sv<T> = 0>
  int compare(size_type pos1, size_type count1, const T& t) const {
    return view().compare(pos1, count1, sv_type(t));
  }
  template <class T, enable_sv<T> = 0>
  int compare(size_type pos1, size_type count1, const T& t, size_type pos2,
              size_type count2 = npos) const {
    return view().compare(pos1, count1, sv_type(t), pos2, count2);
  }

  bool starts_with(sv_type v) const noexcept {
    return size() >= v.size() && Traits::compare(data(), v.data(), v.size()) == 0;
  }
  bool starts_with(CharT ch) const noexcept { return !empty() && Traits::eq(data()[0], ch); }
  bool starts_with(const CharT* s) const { return starts_with(sv_type(s)); }
  bool ends_with(sv_type v) const noexcept {
    return size() >= v.size() &&
           Traits::compare(data() + (size() - v.size()), v.data(), v.size()) == 0;
  }
  bool ends_with(CharT ch) const noexcept { return !empty() && Traits::eq(back(), ch); }
  bool ends_with(const CharT* s) const { return ends_with(sv_type(s)); }
  bool contains(sv_type v) const noexcept { return view().find(v) != sv_type::npos; }
  bool contains(CharT ch) const noexcept { return view().find(ch) != sv_type::npos; }
  bool contains(const CharT* s) const { return view().find(s) != sv_type::npos; }

#define LOWALLOC_STRING_FIND(name, default_pos)                                         \
  size_type name(const basic_string& str, size_type pos = default_pos) const noexcept { \
    return found(view().name(str.view(), pos));                                         \
  }                                                                                     \
  size_type name(const CharT* s, size_type pos, size_type count) const {                \
    return found(view().name(s, pos, count));                                           \
  }                                                                                     \
  size_type name(const CharT* s, size_type pos = default_pos) const {                   \
    return found(view().name(s, pos));                                                  \
  }                                                                                     \
  size_type name(CharT ch, size_type pos = default_pos) const noexcept {                \
    return found(view().name(ch, pos));                                                 \
  }                                                                                     \
  template <class T, enable_sv<T> = 0>                                                  \
  size_type name(const T& t, size_type pos = default_pos)                               \
      const noexcept(std::is_nothrow_constructible_v<sv_type, const T&>) {              \
    return found(view().name(sv_type(t), pos));                                         \
  }
  LOWALLOC_STRING_FIND(find, 0)
  LOWALLOC_STRING_FIND(rfind, npos)
  LOWALLOC_STRING_FIND(find_first_of, 0)
  LOWALLOC_STRING_FIND(find_last_of, npos)
  LOWALLOC_STRING_FIND(find_first_not_of, 0)
  LOWALLOC_STRING_FIND(find_last_not_of, npos)
#undef LOWALLOC_STRING_FIND

  /// The storage, for storage-specific operations.
  const Storage& storage() const noexcept { return s_; }

 private:
  sv_type view() const noexcept { return sv_type(data(), size()); }

  static size_type length_of(std::size_t n) { return detail::narrow_length<size_type>(n); }
  // A position found in view(): string_view's npos becomes ours.
  static size_type found(std::size_t pos) noexcept {
    return pos == sv_type::npos ? npos : static_cast<size_type>(pos);
  }

  static Storage make_storage([[maybe_unused]] const allocator_type& a) noexcept {
    if constexpr (alloc_info::aware) {
      return Storage(a);
    } else {
      return Storage();
    }
  }
  static Storage copy_storage(const Storage& o, [[maybe_unused]] const allocator_type& a) {
    if constexpr (alloc_info::aware) {
      return Storage(o, a);
    } else {
      return Storage(o);
    }
  }
  static Storage move_storage(Storage&& o, [[maybe_unused]] const allocator_type& a) {
    if constexpr (alloc_info::aware) {
      return Storage(std::move(o), a);
    } else {
      return Storage(std::move(o));
    }
  }
  Storage empty_like() const noexcept { return make_storage(get_allocator()); }

  size_type check_pos(size_type pos, const char* what) const {
    if (pos > size()) detail::throw_out_of_range(what);
    return pos;
  }
  size_type clamp(size_type pos, size_type count) const noexcept {
    const size_type rest = size() - pos;
    return count < rest ? count : rest;
  }
  size_type index_of(const_iterator it) const noexcept {
    LOWALLOC_ASSERT(it >= begin() && it <= end());
    return size_type(it.base() - data());
  }
  bool inside(const CharT* s) const noexcept {
    const CharT* const p = data();
    return !std::less<const CharT*>()(s, p) && !std::less<const CharT*>()(p + size(), s);
  }

  // The capacity to grow to for a text of n characters: at least twice the current one.
  size_type recommend(size_type n) const noexcept {
    const size_type cap = capacity();
    const size_type ms = max_size();
    if (n <= cap) return cap;
    const size_type twice = cap < ms / 2 ? 2 * cap : ms;
    return n < twice ? twice : n;
  }
  LOWALLOC_NOINLINE void grow_keep(size_type n) {
    if (n > max_size()) detail::throw_length_error("basic_string: length past max_size()");
    s_.reserve(recommend(n));
  }

  // Construction: the inline case is a copy and two stores; the heap case is out of line.
  void init(const CharT* s, size_type n) {
    if (LOWALLOC_LIKELY(n <= s_.capacity())) {
      s_.set_size(n);  // first: the copy below cannot change what size() and data() read
      detail::move_chars<Traits>(s_.data(), s, n);
    } else {
      init_heap(s, n);
    }
  }
  LOWALLOC_NOINLINE void init_heap(const CharT* s, size_type n) {
    if (n > max_size()) detail::throw_length_error("basic_string: length past max_size()");
    s_.reserve(n);
    Traits::copy(s_.data(), s, n);
    s_.set_size(n);
  }
  void init_fill(size_type n, CharT ch) {
    if (n > s_.capacity()) {
      if (n > max_size()) detail::throw_length_error("basic_string: length past max_size()");
      s_.reserve(n);
    }
    Traits::assign(s_.data(), n, ch);
    s_.set_size(n);
  }
  template <class It>
  void init_range(It first, It last) {
    if constexpr (detail::is_char_pointer_iter<It, CharT>::value) {
      init(detail::iter_to_ptr(first), size_type(last - first));
    } else if constexpr (detail::is_forward_iterator_v<It>) {
      const auto d = std::distance(first, last);
      const size_type n = size_type(d);
      if (n > max_size()) detail::throw_length_error("basic_string: length past max_size()");
      s_.reserve(n);
      CharT* p = s_.data();
      for (; first != last; ++first) Traits::assign(*p++, static_cast<CharT>(*first));
      s_.set_size(n);
    } else {
      for (; first != last; ++first) push_back(static_cast<CharT>(*first));
    }
  }

  void erase_impl(size_type pos, size_type n) noexcept {
    const size_type sz = size();
    if (n == 0) return;
    CharT* p = data();
    Traits::move(p + pos, p + pos + n, sz - pos - n);
    s_.set_size(sz - n);
  }

  // Replaces [pos, pos + n1) (pos <= size(), n1 <= size() - pos) with [s, s + n2), which may lie
  // in the string itself.
  LOWALLOC_NOINLINE basic_string& replace_impl(size_type pos, size_type n1, const CharT* s,
                                               size_type n2) {
    const size_type sz = size();
    if (n2 > n1 && n2 - n1 > max_size() - sz) {
      detail::throw_length_error("basic_string: length past max_size()");
    }
    const size_type new_size = sz - n1 + n2;
    if (new_size > capacity()) return replace_grow(pos, n1, s, n2);
    CharT* p = data();
    const size_type tail = sz - pos - n1;
    if (!inside(s)) {
      if (tail != 0 && n1 != n2) Traits::move(p + pos + n2, p + pos + n1, tail);
      if (n2 != 0) Traits::copy(p + pos, s, n2);
    } else if (n2 <= n1) {
      // Shrinking: the source is read before the tail moves left over it.
      if (n2 != 0) Traits::move(p + pos, s, n2);
      if (tail != 0 && n1 != n2) Traits::move(p + pos + n2, p + pos + n1, tail);
    } else {
      // Growing in place: the tail moves right first; whatever part of the source was in it
      // moved with it. The terminator moves too: the source may end with it.
      Traits::move(p + pos + n2, p + pos + n1, tail + 1);
      const CharT* const hole_end = p + pos + n1;
      if (!std::less<const CharT*>()(hole_end, s + n2)) {  // s + n2 <= hole_end: did not move
        Traits::move(p + pos, s, n2);
      } else if (!std::less<const CharT*>()(s, hole_end)) {  // s >= hole_end: moved entirely
        Traits::copy(p + pos, s + (n2 - n1), n2);
      } else {  // straddles: the front stayed, the back moved
        const size_type k = size_type(hole_end - s);
        Traits::move(p + pos, s, k);
        Traits::copy(p + pos + k, p + pos + n2, n2 - k);
      }
    }
    s_.set_size(new_size);
    return *this;
  }

  // replace_impl when the result does not fit: builds it in a new buffer (the old one, and any
  // source inside it, stay valid until the swap), so it allocates once.
  LOWALLOC_NOINLINE basic_string& replace_grow(size_type pos, size_type n1, const CharT* s,
                                               size_type n2) {
    const size_type sz = size();
    const size_type new_size = sz - n1 + n2;
    Storage t = empty_like();
    t.reserve(recommend(new_size));
    CharT* d = t.data();
    const CharT* p = data();
    Traits::copy(d, p, pos);
    Traits::copy(d + pos, s, n2);
    Traits::copy(d + pos + n2, p + pos + n1, sz - pos - n1);
    t.set_size(new_size);
    s_.swap(t);
    return *this;
  }

  LOWALLOC_NOINLINE basic_string& replace_fill(size_type pos, size_type n1, size_type n2,
                                               CharT ch) {
    const size_type sz = size();
    if (n2 > n1 && n2 - n1 > max_size() - sz) {
      detail::throw_length_error("basic_string: length past max_size()");
    }
    const size_type new_size = sz - n1 + n2;
    if (new_size > capacity()) grow_keep(new_size);
    CharT* p = data();
    const size_type tail = sz - pos - n1;
    if (tail != 0 && n1 != n2) Traits::move(p + pos + n2, p + pos + n1, tail);
    if (n2 != 0) Traits::assign(p + pos, n2, ch);
    s_.set_size(new_size);
    return *this;
  }

  template <class It>
  basic_string& replace_range(size_type pos, size_type n1, It first, It last) {
    if constexpr (detail::is_char_pointer_iter<It, CharT>::value) {
      return replace_impl(pos, n1, detail::iter_to_ptr(first), size_type(last - first));
    } else if constexpr (detail::is_forward_iterator_v<It>) {
      // The range may be an iterator into this string that is not a pointer (a
      // reverse_iterator): it is read before anything it points at moves.
      const size_type n2 = size_type(std::distance(first, last));
      const size_type sz = size();
      if (n2 > n1 && n2 - n1 > max_size() - sz) {
        detail::throw_length_error("basic_string: length past max_size()");
      }
      const size_type new_size = sz - n1 + n2;
      if (n2 <= capacity() - sz) {
        // Copy into the spare capacity, then rotate into place and close the gap.
        CharT* p = data();
        CharT* q = p + sz;
        for (; first != last; ++first) Traits::assign(*q++, static_cast<CharT>(*first));
        std::rotate(p + pos + n1, p + sz, p + sz + n2);
        Traits::move(p + pos, p + pos + n1, sz + n2 - pos - n1);
        s_.set_size(new_size);
        return *this;
      }
      Storage t = empty_like();
      t.reserve(recommend(new_size));
      CharT* d = t.data();
      const CharT* p = data();
      Traits::copy(d, p, pos);
      CharT* q = d + pos;
      for (; first != last; ++first) Traits::assign(*q++, static_cast<CharT>(*first));
      Traits::copy(d + pos + n2, p + pos + n1, sz - pos - n1);
      t.set_size(new_size);
      s_.swap(t);
      return *this;
    } else {
      const basic_string t(first, last, get_allocator());
      return replace_impl(pos, n1, t.data(), t.size());
    }
  }

  Storage s_;
};

// --- non-members --------------------------------------------------------------------------------

/// operator+ reuses the buffer of an rvalue operand when it has room.
template <class C, class S, class T>
basic_string<C, S, T> operator+(const basic_string<C, S, T>& a, const basic_string<C, S, T>& b) {
  basic_string<C, S, T> r(detail::copy_allocator(a.get_allocator()));
  r.reserve(a.size() + b.size());
  r.append(a).append(b);
  return r;
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(const basic_string<C, S, T>& a, const C* b) {
  const auto n = detail::narrow_length<typename basic_string<C, S, T>::size_type>(T::length(b));
  basic_string<C, S, T> r(detail::copy_allocator(a.get_allocator()));
  r.reserve(a.size() + n);
  r.append(a).append(b, n);
  return r;
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(const basic_string<C, S, T>& a, C b) {
  basic_string<C, S, T> r(detail::copy_allocator(a.get_allocator()));
  r.reserve(a.size() + 1);
  r.append(a).push_back(b);
  return r;
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(const C* a, const basic_string<C, S, T>& b) {
  const auto n = detail::narrow_length<typename basic_string<C, S, T>::size_type>(T::length(a));
  basic_string<C, S, T> r(detail::copy_allocator(b.get_allocator()));
  r.reserve(n + b.size());
  r.append(a, n).append(b);
  return r;
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(C a, const basic_string<C, S, T>& b) {
  basic_string<C, S, T> r(detail::copy_allocator(b.get_allocator()));
  r.reserve(1 + b.size());
  r.push_back(a);
  r.append(b);
  return r;
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(basic_string<C, S, T>&& a, basic_string<C, S, T>&& b) {
  if (a.size() + b.size() > a.capacity() && a.size() + b.size() <= b.capacity() &&
      a.get_allocator() == b.get_allocator()) {
    return std::move(b.insert(0, a));
  }
  return std::move(a.append(b));
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(basic_string<C, S, T>&& a, const basic_string<C, S, T>& b) {
  return std::move(a.append(b));
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(basic_string<C, S, T>&& a, const C* b) {
  return std::move(a.append(b));
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(basic_string<C, S, T>&& a, C b) {
  a.push_back(b);
  return std::move(a);
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(const basic_string<C, S, T>& a, basic_string<C, S, T>&& b) {
  return std::move(b.insert(0, a));
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(const C* a, basic_string<C, S, T>&& b) {
  return std::move(b.insert(0, a));
}
template <class C, class S, class T>
basic_string<C, S, T> operator+(C a, basic_string<C, S, T>&& b) {
  b.insert(b.begin(), a);
  return std::move(b);
}

// Comparisons: against any lowalloc string of the same character type and traits, a
// std::basic_string, a const CharT* and anything convertible to a basic_string_view (== and <=>
// under C++20; ==, !=, <, >, <=, >= in both argument orders under C++17).
namespace detail {
template <class C, class T>
bool str_equal(std::basic_string_view<C, T> a, std::basic_string_view<C, T> b) noexcept {
  return a.size() == b.size() && T::compare(a.data(), b.data(), a.size()) == 0;
}
}  // namespace detail

#if LOWALLOC_HAS_THREE_WAY_COMPARISON
template <class C, class S1, class S2, class T>
bool operator==(const basic_string<C, S1, T>& a, const basic_string<C, S2, T>& b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S1, class S2, class T>
typename detail::traits_comparison<T>::type operator<=>(const basic_string<C, S1, T>& a,
                                                        const basic_string<C, S2, T>& b) noexcept {
  using cat = typename detail::traits_comparison<T>::type;
  return static_cast<cat>(
      std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <=> 0);
}
template <class C, class S, class T>
bool operator==(const basic_string<C, S, T>& a, const C* b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
typename detail::traits_comparison<T>::type operator<=>(const basic_string<C, S, T>& a,
                                                        const C* b) noexcept {
  using cat = typename detail::traits_comparison<T>::type;
  return static_cast<cat>(
      std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <=> 0);
}
template <class C, class S, class T, class A>
bool operator==(const basic_string<C, S, T>& a, const std::basic_string<C, T, A>& b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T, class A>
typename detail::traits_comparison<T>::type operator<=>(
    const basic_string<C, S, T>& a, const std::basic_string<C, T, A>& b) noexcept {
  using cat = typename detail::traits_comparison<T>::type;
  return static_cast<cat>(
      std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <=> 0);
}
template <class C, class S, class T>
bool operator==(const basic_string<C, S, T>& a,
                detail::type_identity_t<std::basic_string_view<C, T>> b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
typename detail::traits_comparison<T>::type operator<=>(
    const basic_string<C, S, T>& a,
    detail::type_identity_t<std::basic_string_view<C, T>> b) noexcept {
  using cat = typename detail::traits_comparison<T>::type;
  return static_cast<cat>(
      std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <=> 0);
}
#else
template <class C, class S1, class S2, class T>
bool operator==(const basic_string<C, S1, T>& a, const basic_string<C, S2, T>& b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S1, class S2, class T>
bool operator!=(const basic_string<C, S1, T>& a, const basic_string<C, S2, T>& b) noexcept {
  return !detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S1, class S2, class T>
bool operator<(const basic_string<C, S1, T>& a, const basic_string<C, S2, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) < 0;
}
template <class C, class S1, class S2, class T>
bool operator>(const basic_string<C, S1, T>& a, const basic_string<C, S2, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) > 0;
}
template <class C, class S1, class S2, class T>
bool operator<=(const basic_string<C, S1, T>& a, const basic_string<C, S2, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <= 0;
}
template <class C, class S1, class S2, class T>
bool operator>=(const basic_string<C, S1, T>& a, const basic_string<C, S2, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) >= 0;
}
template <class C, class S, class T>
bool operator==(const basic_string<C, S, T>& a, const C* b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
bool operator!=(const basic_string<C, S, T>& a, const C* b) noexcept {
  return !detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
bool operator<(const basic_string<C, S, T>& a, const C* b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) < 0;
}
template <class C, class S, class T>
bool operator>(const basic_string<C, S, T>& a, const C* b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) > 0;
}
template <class C, class S, class T>
bool operator<=(const basic_string<C, S, T>& a, const C* b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <= 0;
}
template <class C, class S, class T>
bool operator>=(const basic_string<C, S, T>& a, const C* b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) >= 0;
}
template <class C, class S, class T, class A>
bool operator==(const basic_string<C, S, T>& a, const std::basic_string<C, T, A>& b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T, class A>
bool operator!=(const basic_string<C, S, T>& a, const std::basic_string<C, T, A>& b) noexcept {
  return !detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T, class A>
bool operator<(const basic_string<C, S, T>& a, const std::basic_string<C, T, A>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) < 0;
}
template <class C, class S, class T, class A>
bool operator>(const basic_string<C, S, T>& a, const std::basic_string<C, T, A>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) > 0;
}
template <class C, class S, class T, class A>
bool operator<=(const basic_string<C, S, T>& a, const std::basic_string<C, T, A>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <= 0;
}
template <class C, class S, class T, class A>
bool operator>=(const basic_string<C, S, T>& a, const std::basic_string<C, T, A>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) >= 0;
}
template <class C, class S, class T>
bool operator==(const basic_string<C, S, T>& a,
                detail::type_identity_t<std::basic_string_view<C, T>> b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
bool operator!=(const basic_string<C, S, T>& a,
                detail::type_identity_t<std::basic_string_view<C, T>> b) noexcept {
  return !detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
bool operator<(const basic_string<C, S, T>& a,
               detail::type_identity_t<std::basic_string_view<C, T>> b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) < 0;
}
template <class C, class S, class T>
bool operator>(const basic_string<C, S, T>& a,
               detail::type_identity_t<std::basic_string_view<C, T>> b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) > 0;
}
template <class C, class S, class T>
bool operator<=(const basic_string<C, S, T>& a,
                detail::type_identity_t<std::basic_string_view<C, T>> b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <= 0;
}
template <class C, class S, class T>
bool operator>=(const basic_string<C, S, T>& a,
                detail::type_identity_t<std::basic_string_view<C, T>> b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) >= 0;
}
template <class C, class S, class T>
bool operator==(const C* a, const basic_string<C, S, T>& b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
bool operator!=(const C* a, const basic_string<C, S, T>& b) noexcept {
  return !detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
bool operator<(const C* a, const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) < 0;
}
template <class C, class S, class T>
bool operator>(const C* a, const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) > 0;
}
template <class C, class S, class T>
bool operator<=(const C* a, const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <= 0;
}
template <class C, class S, class T>
bool operator>=(const C* a, const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) >= 0;
}
template <class C, class S, class T, class A>
bool operator==(const std::basic_string<C, T, A>& a, const basic_string<C, S, T>& b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T, class A>
bool operator!=(const std::basic_string<C, T, A>& a, const basic_string<C, S, T>& b) noexcept {
  return !detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T, class A>
bool operator<(const std::basic_string<C, T, A>& a, const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) < 0;
}
template <class C, class S, class T, class A>
bool operator>(const std::basic_string<C, T, A>& a, const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) > 0;
}
template <class C, class S, class T, class A>
bool operator<=(const std::basic_string<C, T, A>& a, const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <= 0;
}
template <class C, class S, class T, class A>
bool operator>=(const std::basic_string<C, T, A>& a, const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) >= 0;
}
template <class C, class S, class T>
bool operator==(detail::type_identity_t<std::basic_string_view<C, T>> a,
                const basic_string<C, S, T>& b) noexcept {
  return detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
bool operator!=(detail::type_identity_t<std::basic_string_view<C, T>> a,
                const basic_string<C, S, T>& b) noexcept {
  return !detail::str_equal(std::basic_string_view<C, T>(a), std::basic_string_view<C, T>(b));
}
template <class C, class S, class T>
bool operator<(detail::type_identity_t<std::basic_string_view<C, T>> a,
               const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) < 0;
}
template <class C, class S, class T>
bool operator>(detail::type_identity_t<std::basic_string_view<C, T>> a,
               const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) > 0;
}
template <class C, class S, class T>
bool operator<=(detail::type_identity_t<std::basic_string_view<C, T>> a,
                const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) <= 0;
}
template <class C, class S, class T>
bool operator>=(detail::type_identity_t<std::basic_string_view<C, T>> a,
                const basic_string<C, S, T>& b) noexcept {
  return std::basic_string_view<C, T>(a).compare(std::basic_string_view<C, T>(b)) >= 0;
}
#endif  // LOWALLOC_HAS_THREE_WAY_COMPARISON

template <class C, class S, class T>
void swap(basic_string<C, S, T>& a, basic_string<C, S, T>& b) noexcept {
  a.swap(b);
}

/// Writes the characters, honouring the stream's width and fill (as for std::basic_string).
template <class C, class S, class T>
std::basic_ostream<C, T>& operator<<(std::basic_ostream<C, T>& os, const basic_string<C, S, T>& s) {
  return os << std::basic_string_view<C, T>(s);
}

/// Skips leading whitespace, then reads up to width() characters (max_size() when width() is 0)
/// until whitespace or end of input; failbit when nothing was read. As std::basic_string's.
template <class C, class S, class T>
std::basic_istream<C, T>& operator>>(std::basic_istream<C, T>& is, basic_string<C, S, T>& s) {
  using istream = std::basic_istream<C, T>;
  std::ios_base::iostate state = std::ios_base::goodbit;
  std::size_t extracted = 0;
  const typename istream::sentry ok(is, false);
  if (ok) {
    LOWALLOC_TRY {
      s.clear();
      const std::streamsize w = is.width();
      const std::size_t n = w > 0 ? std::size_t(w) : s.max_size();
      const std::ctype<C>& ct = std::use_facet<std::ctype<C>>(is.getloc());
      std::basic_streambuf<C, T>* sb = is.rdbuf();
      typename T::int_type c = sb->sgetc();
      while (extracted < n && !T::eq_int_type(c, T::eof()) &&
             !ct.is(std::ctype_base::space, T::to_char_type(c))) {
        s.push_back(T::to_char_type(c));
        ++extracted;
        c = sb->snextc();
      }
      // Not when the width stopped it, even at the end of the input (as libstdc++).
      if (extracted < n && T::eq_int_type(c, T::eof())) state |= std::ios_base::eofbit;
      is.width(0);
    }
    LOWALLOC_CATCH_ALL { detail::stream_failed(is); }
  }
  if (extracted == 0) state |= std::ios_base::failbit;
  if (state != std::ios_base::goodbit) is.setstate(state);
  return is;
}

/// Reads characters until delim (extracted, not stored), end of input (eofbit) or max_size()
/// characters (failbit); failbit when nothing was extracted. As std::getline.
template <class C, class S, class T>
std::basic_istream<C, T>& getline(std::basic_istream<C, T>& is, basic_string<C, S, T>& s, C delim) {
  using istream = std::basic_istream<C, T>;
  std::ios_base::iostate state = std::ios_base::goodbit;
  std::size_t extracted = 0;
  const typename istream::sentry ok(is, true);
  if (ok) {
    LOWALLOC_TRY {
      s.clear();
      const std::size_t n = s.max_size();
      std::basic_streambuf<C, T>* sb = is.rdbuf();
      for (typename T::int_type c = sb->sgetc();; c = sb->snextc()) {
        if (T::eq_int_type(c, T::eof())) {
          state |= std::ios_base::eofbit;
          break;
        }
        if (T::eq_int_type(c, T::to_int_type(delim))) {
          ++extracted;
          sb->sbumpc();
          break;
        }
        if (s.size() == n) {
          state |= std::ios_base::failbit;
          break;
        }
        s.push_back(T::to_char_type(c));
        ++extracted;
      }
    }
    LOWALLOC_CATCH_ALL { detail::stream_failed(is); }
  }
  if (extracted == 0) state |= std::ios_base::failbit;
  if (state != std::ios_base::goodbit) is.setstate(state);
  return is;
}
template <class C, class S, class T>
std::basic_istream<C, T>& getline(std::basic_istream<C, T>& is, basic_string<C, S, T>& s) {
  return lowalloc::getline(is, s, is.widen('\n'));
}
template <class C, class S, class T>
std::basic_istream<C, T>& getline(std::basic_istream<C, T>&& is, basic_string<C, S, T>& s,
                                  C delim) {
  return lowalloc::getline(is, s, delim);
}
template <class C, class S, class T>
std::basic_istream<C, T>& getline(std::basic_istream<C, T>&& is, basic_string<C, S, T>& s) {
  return lowalloc::getline(is, s, is.widen('\n'));
}

/// Erases every character equal to value; returns how many.
template <class C, class S, class T, class U>
typename basic_string<C, S, T>::size_type erase(basic_string<C, S, T>& s, const U& value) {
  const auto it = std::remove(s.begin(), s.end(), value);
  const auto n = static_cast<typename basic_string<C, S, T>::size_type>(s.end() - it);
  s.erase(it, s.end());
  return n;
}
/// Erases every character for which pred is true; returns how many.
template <class C, class S, class T, class Pred>
typename basic_string<C, S, T>::size_type erase_if(basic_string<C, S, T>& s, Pred pred) {
  const auto it = std::remove_if(s.begin(), s.end(), pred);
  const auto n = static_cast<typename basic_string<C, S, T>::size_type>(s.end() - it);
  s.erase(it, s.end());
  return n;
}

// --- the shipped strings ------------------------------------------------------------------------

/// Up to N-1 characters inline, then the heap through Allocator.
template <class CharT, std::size_t N, class Traits = std::char_traits<CharT>,
          class Allocator = std::allocator<CharT>>
using basic_small_string = basic_string<CharT, small_storage<CharT, N, Allocator>, Traits>;

template <std::size_t N = 32, class Allocator = std::allocator<char>>
using small_string = basic_small_string<char, N, std::char_traits<char>, Allocator>;
template <std::size_t N = 32, class Allocator = std::allocator<wchar_t>>
using small_wstring = basic_small_string<wchar_t, N, std::char_traits<wchar_t>, Allocator>;
template <std::size_t N = 32, class Allocator = std::allocator<char16_t>>
using small_u16string = basic_small_string<char16_t, N, std::char_traits<char16_t>, Allocator>;
template <std::size_t N = 32, class Allocator = std::allocator<char32_t>>
using small_u32string = basic_small_string<char32_t, N, std::char_traits<char32_t>, Allocator>;
#if defined(__cpp_char8_t)
template <std::size_t N = 32, class Allocator = std::allocator<char8_t>>
using small_u8string = basic_small_string<char8_t, N, std::char_traits<char8_t>, Allocator>;
#endif

/// Up to N characters, never allocates.
template <class CharT, std::size_t N, class Traits = std::char_traits<CharT>>
using basic_fixed_string = basic_string<CharT, fixed_storage<CharT, N>, Traits>;

template <std::size_t N>
using fixed_string = basic_fixed_string<char, N>;
template <std::size_t N>
using fixed_wstring = basic_fixed_string<wchar_t, N>;
template <std::size_t N>
using fixed_u16string = basic_fixed_string<char16_t, N>;
template <std::size_t N>
using fixed_u32string = basic_fixed_string<char32_t, N>;
#if defined(__cpp_char8_t)
template <std::size_t N>
using fixed_u8string = basic_fixed_string<char8_t, N>;
#endif

#if LOWALLOC_HAS_MEMORY_RESOURCE
namespace pmr {
/// small_string with a std::pmr::polymorphic_allocator.
template <std::size_t N = 32>
using small_string = lowalloc::small_string<N, std::pmr::polymorphic_allocator<char>>;
template <std::size_t N = 32>
using small_wstring = lowalloc::small_wstring<N, std::pmr::polymorphic_allocator<wchar_t>>;
}  // namespace pmr
#endif

LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_END

}  // namespace lowalloc

/// Equal to std::hash<std::basic_string_view<CharT>> of the same characters, so that lowalloc
/// strings, std::strings and string_views hash alike (heterogeneous lookup).
template <class CharT, class Storage>
struct std::hash<lowalloc::basic_string<CharT, Storage, std::char_traits<CharT>>> {
  std::size_t operator()(
      const lowalloc::basic_string<CharT, Storage, std::char_traits<CharT>>& s) const noexcept {
    return std::hash<std::basic_string_view<CharT>>()(std::basic_string_view<CharT>(s));
  }
};

#ifndef LOWALLOC_NO_STD_OVERLOADS
// std::getline(in, s), std::erase(s, c) and std::erase_if(s, p) keep compiling when s changes
// type from std::string (see the header comment).
namespace std {
using lowalloc::erase;
using lowalloc::erase_if;
using lowalloc::getline;
}  // namespace std
#endif

#endif  // LOWALLOC_STRING_HPP
