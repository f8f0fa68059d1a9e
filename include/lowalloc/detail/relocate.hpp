// lowalloc/detail/relocate.hpp — relocation of elements between buffers. Internal: the opt-in
// trait it rests on, `lowalloc::is_trivially_relocatable`, is public in <lowalloc/relocate.hpp>
// (included here, so that code including this path for the trait keeps compiling).
#ifndef LOWALLOC_DETAIL_RELOCATE_HPP
#define LOWALLOC_DETAIL_RELOCATE_HPP

#include <lowalloc/detail/config.hpp>
#include <lowalloc/relocate.hpp>

#include <cstddef>
#include <cstring>
#include <memory>
#if LOWALLOC_HAS_MEMORY_RESOURCE
#include <memory_resource>
#endif
#include <type_traits>
#include <utility>

namespace lowalloc {
namespace detail {

template <class A, class T, class = void>
struct has_custom_construct : std::false_type {};
template <class A, class T>
struct has_custom_construct<
    A, T,
    std::void_t<decltype(std::declval<A&>().construct(std::declval<T*>(), std::declval<T&&>()))>>
    : std::true_type {};

template <class A, class T, class = void>
struct has_custom_destroy : std::false_type {};
template <class A, class T>
struct has_custom_destroy<A, T,
                          std::void_t<decltype(std::declval<A&>().destroy(std::declval<T*>()))>>
    : std::true_type {};

template <class A>
struct is_std_allocator : std::false_type {};
template <class U>
struct is_std_allocator<std::allocator<U>> : std::true_type {};

template <class A>
struct is_polymorphic_allocator : std::false_type {};
#if LOWALLOC_HAS_MEMORY_RESOURCE
template <class U>
struct is_polymorphic_allocator<std::pmr::polymorphic_allocator<U>> : std::true_type {};
#endif

// Whether an allocator's construct/destroy are plain placement new and destructor calls for T, so
// that bytes may be copied in their place: std::allocator, polymorphic_allocator for types that
// take no allocator, and allocators that define neither. (disjunction: the deprecated members of
// std::allocator and polymorphic_allocator are never looked at.)
template <class A, class T>
inline constexpr bool allocator_constructs_plainly =
    std::disjunction<is_std_allocator<A>, is_polymorphic_allocator<A>,
                     std::conjunction<std::negation<has_custom_construct<A, T>>,
                                      std::negation<has_custom_destroy<A, T>>>>::value &&
    !std::conjunction<is_polymorphic_allocator<A>, std::uses_allocator<T, A>>::value;

// Relocation through memcpy is allowed for T under allocator A.
template <class A, class T>
inline constexpr bool memcpy_relocatable =
    is_trivially_relocatable_v<T>&& allocator_constructs_plainly<A, T>;

// Copy construction through memcpy is allowed for T under allocator A. (A trivially copyable T
// may have a deleted copy constructor; a copy must not compile then, as for std::vector.)
template <class A, class T>
inline constexpr bool memcpy_copyable = std::is_trivially_copyable_v<T>&&
    std::is_trivially_copy_constructible_v<T>&& allocator_constructs_plainly<A, T>;

// Move construction through memcpy is allowed for T under allocator A.
template <class A, class T>
inline constexpr bool memcpy_movable = std::is_trivially_copyable_v<T>&&
    std::is_trivially_move_constructible_v<T>&& allocator_constructs_plainly<A, T>;

inline void copy_bytes(void* dst, const void* src, std::size_t bytes) noexcept {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_RELOCATE_HPP
