// lowalloc::node_size_v<C> equals the size C's allocator is asked for when one element is
// inserted, for every standard node container, with libstdc++ and (built by clang++ against
// libc++, see CMakeLists.txt) libc++. No Google Test: the same file builds against either library.
#include <lowalloc/node_size.hpp>
#include <lowalloc/string.hpp>

#include <cstdio>
#include <cstdlib>
#include <forward_list>
#include <functional>
#include <list>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

// One allocation request: bytes, and whether the element type is a pointer (a bucket array).
struct request {
  std::size_t bytes;
  std::size_t align;
  bool pointers;
};
std::vector<request>* log_ = nullptr;

template <class T>
struct probe {
  using value_type = T;
  probe() = default;
  template <class U>
  probe(const probe<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) {
    if (log_ != nullptr) log_->push_back({n * sizeof(T), alignof(T), std::is_pointer<T>::value});
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
};
template <class T, class U>
bool operator==(const probe<T>&, const probe<U>&) noexcept {
  return true;
}
template <class T, class U>
bool operator!=(const probe<T>&, const probe<U>&) noexcept {
  return false;
}

int failures = 0;

// Inserts one element with `insert` and compares node_size_v / node_align_v with the one request
// that is not a bucket array.
template <class C, class Insert>
void check(const char* name, Insert insert) {
  std::vector<request> seen;
  {
    C c;
    log_ = &seen;
    insert(c);
    log_ = nullptr;
  }
  std::size_t nodes = 0;
  std::size_t bytes = 0;
  std::size_t align = 0;
  for (const request& r : seen) {
    if (r.pointers) continue;
    ++nodes;
    bytes = r.bytes;
    align = r.align;
  }
  if (nodes != 1 || bytes != lowalloc::node_size_v<C> || align != lowalloc::node_align_v<C>) {
    std::printf(
        "FAIL %s: %zu node requests, last %zu bytes aligned %zu; node_size_v %zu, "
        "node_align_v %zu\n",
        name, nodes, bytes, align, lowalloc::node_size_v<C>, lowalloc::node_align_v<C>);
    ++failures;
  } else {
    std::printf("ok   %s: %zu bytes\n", name, bytes);
  }
}

template <class T>
using alloc = probe<T>;
using str = lowalloc::small_string<32>;
using kv = std::pair<const str, int>;
using ikv = std::pair<const int, int>;

// has_node_size<T>: node_size<T> is defined (SFINAE-friendly for other types).
template <class T, class = void>
struct has_node_size : std::false_type {};
template <class T>
struct has_node_size<T, std::void_t<decltype(lowalloc::node_size<T>::value)>> : std::true_type {};
static_assert(!has_node_size<std::vector<int>>::value, "no node_size for a vector");
static_assert(lowalloc::node_size_v<const std::set<int>> == lowalloc::node_size_v<std::set<int>>,
              "const ignored");

}  // namespace

int main() {
  check<std::map<int, int, std::less<int>, alloc<ikv>>>("map<int, int>",
                                                        [](auto& c) { c.emplace(1, 1); });
  check<std::map<str, int, std::less<str>, alloc<kv>>>("map<small_string<32>, int>",
                                                       [](auto& c) { c.emplace("k", 1); });
  check<std::multimap<str, int, std::less<str>, alloc<kv>>>("multimap<small_string<32>, int>",
                                                            [](auto& c) { c.emplace("k", 1); });
  check<std::set<std::string, std::less<std::string>, alloc<std::string>>>(
      "set<std::string>", [](auto& c) { c.emplace("k"); });
  check<std::multiset<char, std::less<char>, alloc<char>>>("multiset<char>",
                                                           [](auto& c) { c.insert('k'); });
  check<std::unordered_map<int, int, std::hash<int>, std::equal_to<int>, alloc<ikv>>>(
      "unordered_map<int, int>", [](auto& c) { c.emplace(1, 1); });
  check<std::unordered_map<str, int, std::hash<str>, std::equal_to<str>, alloc<kv>>>(
      "unordered_map<small_string<32>, int>", [](auto& c) { c.emplace("k", 1); });
  check<
      std::unordered_multimap<std::string, int, std::hash<std::string>, std::equal_to<std::string>,
                              alloc<std::pair<const std::string, int>>>>(
      "unordered_multimap<std::string, int>", [](auto& c) { c.emplace("k", 1); });
  check<std::unordered_set<long, std::hash<long>, std::equal_to<long>, alloc<long>>>(
      "unordered_set<long>", [](auto& c) { c.insert(1L); });
  check<std::unordered_multiset<std::string, std::hash<std::string>, std::equal_to<std::string>,
                                alloc<std::string>>>("unordered_multiset<std::string>",
                                                     [](auto& c) { c.emplace("k"); });
  check<std::list<str, alloc<str>>>("list<small_string<32>>", [](auto& c) { c.emplace_back("k"); });
  check<std::forward_list<double, alloc<double>>>("forward_list<double>",
                                                  [](auto& c) { c.push_front(1.0); });
  check<std::forward_list<long double, alloc<long double>>>("forward_list<long double>",
                                                            [](auto& c) { c.push_front(1.0L); });
  return failures == 0 ? 0 : 1;
}
