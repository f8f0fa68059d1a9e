// lowalloc/detail/inplace_vector_storage.hpp — storage and algorithms of
// lowalloc::inplace_vector. Internal: not part of the API.
//
// The storage is N * sizeof(T) raw bytes aligned as T, followed by the smallest unsigned integer
// that holds N, so inplace_vector<int, 8> is 36 bytes. Layers make each special member exactly as
// trivial as T allows ([inplace.vector.overview]/6), without requires-clauses (C++17):
//
//   storage_data            the bytes and the size; every special member trivial
//   storage_destroy         a destructor, when T's is not trivial
//   storage_copy_construct  element-wise copy construction, when T's is not trivial
//   storage_move_construct  element-wise move construction, when T's is not trivial
//   storage_copy_assign     element-wise copy assignment, unless T's destructor, copy
//                           construction and copy assignment are all trivial
//   storage_move_assign     the same for move assignment
//
// N == 0 has a storage of its own, an empty class whose every member is trivial. The algorithms
// below depend on T and the iterator types only, never on N, so their code is shared by every
// capacity.
#ifndef LOWALLOC_DETAIL_INPLACE_VECTOR_STORAGE_HPP
#define LOWALLOC_DETAIL_INPLACE_VECTOR_STORAGE_HPP

#include <lowalloc/detail/config.hpp>
#include <lowalloc/detail/iterator.hpp>
#include <lowalloc/detail/throw.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#if LOWALLOC_HAS_RANGES
#include <ranges>
#endif

// Everything is in namespace lowalloc::detail::inplace, so that these generic helper names never
// collide with another component's detail helpers.
namespace lowalloc {
namespace detail {
namespace inplace {

// --- the size member -----------------------------------------------------------------------------

template <std::size_t N>
using size_type_for = std::conditional_t<
    N <= std::numeric_limits<std::uint8_t>::max(), std::uint8_t,
    std::conditional_t<N <= std::numeric_limits<std::uint16_t>::max(), std::uint16_t,
                       std::conditional_t<N <= std::numeric_limits<std::uint32_t>::max(),
                                          std::uint32_t, std::uint64_t>>>;

// --- iterator and range traits (C++17: no concepts, no std::ranges) ------------------------------

template <class It>
using enable_if_iterator_t = std::enable_if_t<has_iterator_category<It>::value, int>;

namespace adl {
using std::begin;
using std::end;
template <class R>
auto range_begin(R& r) -> decltype(begin(r)) {
  return begin(r);
}
template <class R>
auto range_end(R& r) -> decltype(end(r)) {
  return end(r);
}
}  // namespace adl

using adl::range_begin;
using adl::range_end;

template <class R>
using range_iterator_t = decltype(range_begin(std::declval<R&>()));
template <class R>
using range_sentinel_t = decltype(range_end(std::declval<R&>()));

template <class R, class = void>
struct is_range : std::false_type {};
template <class R>
struct is_range<R, std::void_t<range_iterator_t<R>, range_sentinel_t<R>>> : std::true_type {};

template <class R>
using enable_if_range_t = std::enable_if_t<is_range<R>::value, int>;

// An iterator into the range, or std::ranges::dangling when the range is a temporary that does
// not lend its iterators (as std's borrowed_iterator_t; C++17 has no dangling, so the iterator).
#if LOWALLOC_HAS_RANGES
template <class R>
using borrowed_range_iterator_t = std::conditional_t<
    std::is_lvalue_reference<R>::value ||
        std::ranges::enable_borrowed_range<std::remove_cv_t<std::remove_reference_t<R>>>,
    range_iterator_t<R>, std::ranges::dangling>;
#else
template <class R>
using borrowed_range_iterator_t = range_iterator_t<R>;
#endif

// Forward iteration with a last of the iterator's own type: the count is known before anything
// is constructed.
template <class It, class Sent>
struct is_counted_range : std::integral_constant<bool, std::is_same<It, Sent>::value &&
                                                           is_forward_iterator<It>::value> {};

// --- element algorithms: depend on T, not on N ---------------------------------------------------

template <class T, class... Args>
T* construct_element(T* p, Args&&... args) {
  return ::new (static_cast<void*>(p)) T(std::forward<Args>(args)...);
}

// Constructs the elements of [first, last) at dest, at most `room` of them: all or nothing. Throws
// std::bad_alloc (and constructs nothing) when there are more than `room`.
template <class T, class It, class Sent>
std::size_t construct_range(T* dest, std::size_t room, It first, Sent last) {
  if constexpr (is_counted_range<It, Sent>::value) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    if (n > room) throw_bad_alloc();
    std::uninitialized_copy(first, last, dest);
    return n;
  } else {
    std::size_t n = 0;
    LOWALLOC_TRY {
      for (; first != last; ++first, ++n) {
        if (n == room) throw_bad_alloc();
        inplace::construct_element(dest + n, *first);
      }
    }
    LOWALLOC_CATCH_ALL {
      std::destroy_n(dest, n);
      LOWALLOC_RETHROW;
    }
    return n;
  }
}

// Makes the `size` elements at d equal to the `n` elements of `first`: assigns over the common
// prefix, then constructs the rest or destroys the surplus. The caller sets the size to n after.
// Basic guarantee; the constructed tail is all or nothing, so on an exception the size is `size`.
template <class T, class It>
void assign_elements(T* d, std::size_t size, It first, std::size_t n) {
  const std::size_t common = std::min(size, n);
  for (std::size_t i = 0; i < common; ++i, ++first) d[i] = *first;
  if (n > size) {
    std::uninitialized_copy_n(first, n - size, d + size);
  } else {
    std::destroy(d + n, d + size);
  }
}

// Swaps the contents of a (na elements) and b (nb elements), na >= nb. Basic guarantee: on an
// exception both keep their sizes. The caller swaps the sizes after.
template <class T>
void swap_elements(T* a, std::size_t na, T* b, std::size_t nb) {
  using std::swap;
  for (std::size_t i = 0; i < nb; ++i) swap(a[i], b[i]);
  std::uninitialized_move(a + nb, a + na, b + nb);
  std::destroy(a + nb, a + na);
}

// --- storage -------------------------------------------------------------------------------------
//
// Every layer's default constructor is user-provided, so that value-initialisation (`v{}`, or a
// layer's `Base()`) does not zero N * sizeof(T) bytes first. N == 0 is the exception: it has no
// bytes, and [inplace.vector.overview]/6 wants it trivially default constructible.

template <class T, std::size_t N>
class storage_data {
 public:
  storage_data() noexcept {}  // NOLINT(modernize-use-equals-default): see above

  T* data() noexcept { return std::launder(static_cast<T*>(static_cast<void*>(bytes_))); }
  const T* data() const noexcept {
    return std::launder(static_cast<const T*>(static_cast<const void*>(bytes_)));
  }
  std::size_t size() const noexcept { return size_; }
  void set_size(std::size_t n) noexcept { size_ = static_cast<size_type_for<N>>(n); }

 private:
  alignas(T) unsigned char bytes_[N * sizeof(T)];
  size_type_for<N> size_ = 0;
};

template <class T>
class storage_empty {
 public:
  static T* data() noexcept { return nullptr; }
  static std::size_t size() noexcept { return 0; }
  static void set_size([[maybe_unused]] std::size_t n) noexcept { LOWALLOC_ASSERT(n == 0); }
};

// Each layer below provides one special member and defaults the others, so that each member of
// the finished storage is trivial exactly when [inplace.vector.overview]/6.1-6.3 says it is, and
// independently of the others. A layer is left out of the chain when its member can be trivial.

template <class T, class Base>
class storage_destroy : public Base {
 public:
  storage_destroy() noexcept {}  // NOLINT(modernize-use-equals-default): see above
  storage_destroy(const storage_destroy&) = default;
  storage_destroy(storage_destroy&&) = default;
  storage_destroy& operator=(const storage_destroy&) = default;
  storage_destroy& operator=(storage_destroy&&) = default;
  ~storage_destroy() { std::destroy_n(this->data(), this->size()); }
};

template <class T, class Base>
class storage_copy_construct : public Base {
 public:
  storage_copy_construct() noexcept {}  // NOLINT(modernize-use-equals-default): see above
  storage_copy_construct(const storage_copy_construct& other) : Base() {
    std::uninitialized_copy_n(other.data(), other.size(), this->data());
    this->set_size(other.size());
  }
  storage_copy_construct(storage_copy_construct&&) = default;
  storage_copy_construct& operator=(const storage_copy_construct&) = default;
  storage_copy_construct& operator=(storage_copy_construct&&) = default;
};

// Moves the elements; `other` keeps its size, its elements moved from (as std).
template <class T, class Base>
class storage_move_construct : public Base {
 public:
  storage_move_construct() noexcept {}  // NOLINT(modernize-use-equals-default): see above
  storage_move_construct(const storage_move_construct&) = default;
  storage_move_construct(storage_move_construct&& other) noexcept(
      std::is_nothrow_move_constructible<T>::value)
      : Base() {
    std::uninitialized_move_n(other.data(), other.size(), this->data());
    this->set_size(other.size());
  }
  storage_move_construct& operator=(const storage_move_construct&) = default;
  storage_move_construct& operator=(storage_move_construct&&) = default;
};

template <class T, class Base>
class storage_copy_assign : public Base {
 public:
  storage_copy_assign() noexcept {}  // NOLINT(modernize-use-equals-default): see above
  storage_copy_assign(const storage_copy_assign&) = default;
  storage_copy_assign(storage_copy_assign&&) = default;
  storage_copy_assign& operator=(const storage_copy_assign& other) {
    if (this != &other) {
      inplace::assign_elements(this->data(), this->size(), other.data(), other.size());
      this->set_size(other.size());
    }
    return *this;
  }
  storage_copy_assign& operator=(storage_copy_assign&&) = default;
};

template <class T, class Base>
class storage_move_assign : public Base {
 public:
  storage_move_assign() noexcept {}  // NOLINT(modernize-use-equals-default): see above
  storage_move_assign(const storage_move_assign&) = default;
  storage_move_assign(storage_move_assign&&) = default;
  storage_move_assign& operator=(const storage_move_assign&) = default;
  storage_move_assign& operator=(storage_move_assign&& other) noexcept(
      std::is_nothrow_move_assignable<T>::value&& std::is_nothrow_move_constructible<T>::value) {
    if (this != &other) {
      inplace::assign_elements(this->data(), this->size(), std::make_move_iterator(other.data()),
                               other.size());
      this->set_size(other.size());
    }
    return *this;
  }
};

// Base itself when Trivial, else Layer<T, Base>.
template <bool Trivial, template <class, class> class Layer, class T, class Base>
using layer_unless = std::conditional_t<Trivial, Base, Layer<T, Base>>;

template <class T, std::size_t N>
struct storage_select {
  static constexpr bool trivial_destroy = std::is_trivially_destructible<T>::value;
  static constexpr bool trivial_copy = std::is_trivially_copy_constructible<T>::value;
  static constexpr bool trivial_move = std::is_trivially_move_constructible<T>::value;
  using destroyed = layer_unless<trivial_destroy, storage_destroy, T, storage_data<T, N>>;
  using copied = layer_unless<trivial_copy, storage_copy_construct, T, destroyed>;
  using moved = layer_unless<trivial_move, storage_move_construct, T, copied>;
  using copy_assigned =
      layer_unless<trivial_destroy && trivial_copy && std::is_trivially_copy_assignable<T>::value,
                   storage_copy_assign, T, moved>;
  using type =
      layer_unless<trivial_destroy && trivial_move && std::is_trivially_move_assignable<T>::value,
                   storage_move_assign, T, copy_assigned>;
};
template <class T>
struct storage_select<T, 0> {
  using type = storage_empty<T>;
};

template <class T, std::size_t N>
using storage = typename storage_select<T, N>::type;

static_assert(sizeof(storage<std::uint32_t, 8>) == 36, "8 * 4 bytes + a uint8_t size");
static_assert(sizeof(storage<char, 255>) == 256, "255 bytes + a uint8_t size");
static_assert(sizeof(storage<char, 256>) == 258, "256 bytes + a uint16_t size");
static_assert(std::is_empty<storage<std::uint32_t, 0>>::value, "N == 0 is empty");
static_assert(std::is_trivially_copyable<storage<std::uint32_t, 8>>::value, "");

}  // namespace inplace
}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_INPLACE_VECTOR_STORAGE_HPP
