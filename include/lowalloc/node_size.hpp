// lowalloc/node_size.hpp — the size of one node of a standard node container, to size a pool.
//
// A node container allocates one block per element: the element and the container's links
// (and, for the unordered containers, maybe its hash code). `lowalloc::pool` serves requests up to
// its slot size; a larger node silently goes to upstream, one heap allocation per element. The
// node's size depends on the element type and on the standard library, so do not guess it:
//
//   using tree = std::map<lowalloc::small_string<32>, int, std::less<>,
//                         lowalloc::pool_allocator<std::pair<const lowalloc::small_string<32>,
//                         int>>>;
//   lowalloc::pool nodes(lowalloc::node_size_v<tree>);   // 72 bytes (libstdc++ and libc++)
//   tree m(nodes);                                       // every node is a slot
//
// `node_size<C>::value` (`node_size_v<C>`) is sizeof the node type that C's allocator is rebound
// to, for std::map, multimap, set, multiset, unordered_map, unordered_multimap, unordered_set,
// unordered_multiset, list and forward_list (and their std::pmr aliases), with libstdc++ and
// libc++, at compile time. `node_align_v<C>` is the node's alignment. The bucket array of an
// unordered container is a separate allocation of bucket_count() pointers, larger than a node
// as soon as the table grows: a pool sends it to upstream (pool_stats::oversize_allocations
// counts it), which is one allocation per rehash, not per element.
#ifndef LOWALLOC_NODE_SIZE_HPP
#define LOWALLOC_NODE_SIZE_HPP

#include <lowalloc/detail/config.hpp>

#include <cstddef>
#include <forward_list>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace lowalloc {

/// node_size<C>::value: the bytes of one node of the standard node container C (see above).
/// Undefined for other types and other standard libraries.
template <class Container>
struct node_size;

/// node_align<C>::value: the alignment of C's node.
template <class Container>
struct node_align;

namespace detail {

template <class Node>
struct node_of {
  using type = Node;
};

#if defined(_LIBCPP_VERSION)
template <class A>
using node_void_pointer = typename std::allocator_traits<A>::void_pointer;
template <class V, class A>
using tree_node_t = std::__tree_node<V, node_void_pointer<A>>;
template <class V, class A>
using hash_node_t = std::__hash_node<V, node_void_pointer<A>>;
template <class T, class A>
using list_node_t = std::__list_node<T, node_void_pointer<A>>;
template <class T, class A>
using forward_list_node_t = std::__forward_list_node<T, node_void_pointer<A>>;
template <class K, class T>
using map_value_t = std::__value_type<K, T>;
template <class K, class T>
using hash_map_value_t = std::__hash_value_type<K, T>;
#define LOWALLOC_HAS_NODE_SIZE 1
#elif defined(__GLIBCXX__)
template <class V, class A>
using tree_node_t = std::_Rb_tree_node<V>;
// libstdc++ stores the hash code in the node unless the hash is fast and noexcept (std::hash of
// an integer or a pointer): the same test as the container's.
template <class V, class Key, class Hash>
using hash_node_t = std::__detail::_Hash_node<V, std::__cache_default<Key, Hash>::value>;
template <class T, class A>
using list_node_t = std::_List_node<T>;
template <class T, class A>
using forward_list_node_t = std::_Fwd_list_node<T>;
#define LOWALLOC_HAS_NODE_SIZE 1
#else
#define LOWALLOC_HAS_NODE_SIZE 0
#endif

#if LOWALLOC_HAS_NODE_SIZE
template <class Container>
struct node_type_of;

#if defined(_LIBCPP_VERSION)
template <class K, class T, class C, class A>
struct node_type_of<std::map<K, T, C, A>> : node_of<tree_node_t<map_value_t<K, T>, A>> {};
template <class K, class T, class C, class A>
struct node_type_of<std::multimap<K, T, C, A>> : node_of<tree_node_t<map_value_t<K, T>, A>> {};
template <class K, class T, class H, class E, class A>
struct node_type_of<std::unordered_map<K, T, H, E, A>>
    : node_of<hash_node_t<hash_map_value_t<K, T>, A>> {};
template <class K, class T, class H, class E, class A>
struct node_type_of<std::unordered_multimap<K, T, H, E, A>>
    : node_of<hash_node_t<hash_map_value_t<K, T>, A>> {};
template <class K, class H, class E, class A>
struct node_type_of<std::unordered_set<K, H, E, A>> : node_of<hash_node_t<K, A>> {};
template <class K, class H, class E, class A>
struct node_type_of<std::unordered_multiset<K, H, E, A>> : node_of<hash_node_t<K, A>> {};
#else
template <class K, class T, class C, class A>
struct node_type_of<std::map<K, T, C, A>> : node_of<tree_node_t<std::pair<const K, T>, A>> {};
template <class K, class T, class C, class A>
struct node_type_of<std::multimap<K, T, C, A>> : node_of<tree_node_t<std::pair<const K, T>, A>> {};
template <class K, class T, class H, class E, class A>
struct node_type_of<std::unordered_map<K, T, H, E, A>>
    : node_of<hash_node_t<std::pair<const K, T>, K, H>> {};
template <class K, class T, class H, class E, class A>
struct node_type_of<std::unordered_multimap<K, T, H, E, A>>
    : node_of<hash_node_t<std::pair<const K, T>, K, H>> {};
template <class K, class H, class E, class A>
struct node_type_of<std::unordered_set<K, H, E, A>> : node_of<hash_node_t<K, K, H>> {};
template <class K, class H, class E, class A>
struct node_type_of<std::unordered_multiset<K, H, E, A>> : node_of<hash_node_t<K, K, H>> {};
#endif
template <class K, class C, class A>
struct node_type_of<std::set<K, C, A>> : node_of<tree_node_t<K, A>> {};
template <class K, class C, class A>
struct node_type_of<std::multiset<K, C, A>> : node_of<tree_node_t<K, A>> {};
template <class T, class A>
struct node_type_of<std::list<T, A>> : node_of<list_node_t<T, A>> {};
template <class T, class A>
struct node_type_of<std::forward_list<T, A>> : node_of<forward_list_node_t<T, A>> {};

template <class Container, class = void>
struct node_size_impl {};
template <class Container>
struct node_size_impl<Container, std::void_t<typename node_type_of<Container>::type>>
    : std::integral_constant<std::size_t, sizeof(typename node_type_of<Container>::type)> {};

template <class Container, class = void>
struct node_align_impl {};
template <class Container>
struct node_align_impl<Container, std::void_t<typename node_type_of<Container>::type>>
    : std::integral_constant<std::size_t, alignof(typename node_type_of<Container>::type)> {};
#endif

}  // namespace detail

#if LOWALLOC_HAS_NODE_SIZE
template <class Container>
struct node_size : detail::node_size_impl<std::remove_cv_t<Container>> {};
template <class Container>
struct node_align : detail::node_align_impl<std::remove_cv_t<Container>> {};

/// The bytes of one node of Container: the slot size of a pool that serves its every node.
template <class Container>
inline constexpr std::size_t node_size_v = node_size<Container>::value;
/// The alignment of Container's node: at most the slot alignment of a pool that serves it.
template <class Container>
inline constexpr std::size_t node_align_v = node_align<Container>::value;
#endif

}  // namespace lowalloc

#endif  // LOWALLOC_NODE_SIZE_HPP
