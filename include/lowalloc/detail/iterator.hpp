// lowalloc/detail/iterator.hpp — iterator traits shared by small_vector, inplace_vector and
// basic_string. Internal: not part of the API.
//
// C++17 has no iterator concepts, so the containers pick their (first, last) overloads and their
// counted or one-by-one paths from iterator_category. Every trait is false for a type without one
// (an integer, in `v.assign(3, 7)`), so each can guard an overload on its own.
#ifndef LOWALLOC_DETAIL_ITERATOR_HPP
#define LOWALLOC_DETAIL_ITERATOR_HPP

#include <iterator>
#include <type_traits>

namespace lowalloc {
namespace detail {

template <class It>
using iterator_category_t = typename std::iterator_traits<It>::iterator_category;

template <class It, class = void>
struct has_iterator_category : std::false_type {};
template <class It>
struct has_iterator_category<It, std::void_t<iterator_category_t<It>>> : std::true_type {};

template <class It, class Tag, bool = has_iterator_category<It>::value>
struct has_iterator_tag : std::false_type {};
template <class It, class Tag>
struct has_iterator_tag<It, Tag, true> : std::is_convertible<iterator_category_t<It>, Tag> {};

template <class It>
struct is_input_iterator : has_iterator_tag<It, std::input_iterator_tag> {};

// Forward iterators can be walked twice: the count is known before anything is constructed.
template <class It>
struct is_forward_iterator : has_iterator_tag<It, std::forward_iterator_tag> {};

template <class It>
inline constexpr bool is_forward_iterator_v = is_forward_iterator<It>::value;

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_ITERATOR_HPP
