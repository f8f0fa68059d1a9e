// lowalloc/relocate.hpp — `lowalloc::is_trivially_relocatable`, the opt-in that lets lowalloc's
// containers move elements with memcpy. Include it (it is light: <type_traits> only) where you
// specialise the trait for your type, next to the type, so that every container that holds one
// sees the specialisation.
#ifndef LOWALLOC_RELOCATE_HPP
#define LOWALLOC_RELOCATE_HPP

#include <type_traits>

namespace lowalloc {

/// True when moving a T to a new address and ending the old object's lifetime can be done with
/// memcpy and no constructor or destructor call. Trivially copyable types are; specialise it for
/// your own types that are too (most types that own a heap pointer, such as a unique_ptr-like
/// handle), and lowalloc's containers grow and move them with memcpy:
///
///   template <> struct lowalloc::is_trivially_relocatable<my_handle> : std::true_type {};
///
/// Relocation only ever replaces a move followed by a destruction, never a copy.
template <class T>
struct is_trivially_relocatable : std::is_trivially_copyable<T> {};

/// is_trivially_relocatable<T>::value.
template <class T>
inline constexpr bool is_trivially_relocatable_v = is_trivially_relocatable<T>::value;

}  // namespace lowalloc

#endif  // LOWALLOC_RELOCATE_HPP
