// lowalloc/detail/compare.hpp — the synth-three-way of small_vector's and inplace_vector's
// operator<=>. Internal: not part of the API.
//
// Both order their elements as std::vector does under C++20 ([container.opt.reqmts]), so that
// elements with only a < still order the containers.
#ifndef LOWALLOC_DETAIL_COMPARE_HPP
#define LOWALLOC_DETAIL_COMPARE_HPP

#include <lowalloc/detail/config.hpp>

#include <type_traits>
#include <utility>
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
#include <compare>
#endif

namespace lowalloc {
namespace detail {

#if LOWALLOC_HAS_THREE_WAY_COMPARISON
// The standard's synth-three-way: <=> when T and U are three-way comparable, else an ordering
// built from <.
struct synth_three_way {
  template <class T, class U>
  constexpr auto operator()(const T& t, const U& u) const {
    if constexpr (std::three_way_comparable_with<T, U>) {
      return t <=> u;
    } else {
      if (t < u) return std::weak_ordering::less;
      if (u < t) return std::weak_ordering::greater;
      return std::weak_ordering::equivalent;
    }
  }
};

// synth-three-way-result<T>. No `type` when T has no <, so that a container's operator<=> drops
// out of overload resolution (and std::three_way_comparable says false) instead of failing to
// compile.
template <class T, class = void>
struct synth_three_way_result {};
template <class T>
struct synth_three_way_result<
    T, std::void_t<decltype(std::declval<const T&>() < std::declval<const T&>())>> {
  using type = decltype(synth_three_way{}(std::declval<const T&>(), std::declval<const T&>()));
};
template <class T>
using synth_three_way_result_t = typename synth_three_way_result<T>::type;
#endif

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_COMPARE_HPP
