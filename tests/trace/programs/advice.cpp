// One site per kind of `lowalloc advise`, each with a known distribution, so that a test can
// check that each site gets the advice it should, and that the clean site gets none. Built -O2
// -g, as a user builds; with libstdc++ and with libc++. argv[1]: K, a multiple of 100.
//  - chi_squared: K vectors of int, of 2 * X elements for X chi-squared with 3 degrees of
//    freedom (mean 6, a long tail), filled by push_back, all kept: small_vector;
//  - tokens: K strings of lognormal length (median 20 characters, sigma 0.5), made from a C
//    string, all kept: small_string;
//  - map_churn: one std::map<long, long> that gets K keys, the oldest erased past 500: pool;
//  - node_lists: one std::list<long> that gets K elements, the oldest popped past 200: pool;
//  - growth_loop: K/100 vectors of long, 1000 to 1023 elements each by push_back, all kept:
//    reserve;
//  - hoisted: K strings of 40 characters built by append, one at a time: reuse;
//  - shared: K shared_ptr<point>(new point), all kept: make_shared;
//  - callbacks: K std::function<long()> holding 40 bytes of capture, all kept: function;
//  - pass_by_value: K calls that copy a std::vector<int> of 50 elements to pass it by value:
//    copy;
//  - lookup: K lookups of a C string in a std::map<std::string, int>: transparent_lookup;
//  - requests: K/10 requests, each a std::list<long> of 20 to 49 elements dropped at its end
//    (a burst of frees): arena;
//  - clean: K/10 vectors of 100 ints, reserved once and kept: nothing to gain.
//
// Built again with the changes `lowalloc advise` suggests, one macro each, so that a test can
// compare the allocations it predicted with the ones the changed program makes:
//  - ADVICE_CHI_N: chi_squared's vector is a lowalloc::small_vector<int, ADVICE_CHI_N>;
//  - ADVICE_TOKEN_N: tokens' strings are lowalloc::small_string<ADVICE_TOKEN_N>;
//  - ADVICE_MAP_POOL: map_churn's map takes its nodes from a lowalloc::pool of that slot size;
//  - ADVICE_LIST_POOL: node_lists' list takes its nodes from a lowalloc::pool of that size;
//  - ADVICE_GROWTH_RESERVE: growth_loop's vectors reserve that many elements first;
//  - ADVICE_MAKE_SHARED: shared uses std::make_shared;
//  - ADVICE_ARENA_N: requests' lists take their nodes from a lowalloc::arena<ADVICE_ARENA_N>.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#if defined(ADVICE_CHI_N)
#include <lowalloc/small_vector.hpp>
#endif
#if defined(ADVICE_TOKEN_N)
#include <lowalloc/string.hpp>
#endif
#if defined(ADVICE_MAP_POOL) || defined(ADVICE_LIST_POOL)
#include <lowalloc/pool.hpp>
#endif
#if defined(ADVICE_ARENA_N)
#include <lowalloc/arena.hpp>
#endif

namespace advice {

volatile long sink = 0;

// The same numbers with either standard library: a xorshift generator and Box-Muller.
std::uint64_t state = 0x9e3779b97f4a7c15u;
double uniform() {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (static_cast<double>(state >> 11) + 0.5) / 9007199254740992.0;
}
double normal() {
  return std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform());
}

#if defined(ADVICE_CHI_N)
using chi_vector = lowalloc::small_vector<int, ADVICE_CHI_N>;
#else
using chi_vector = std::vector<int>;
#endif
#if defined(ADVICE_TOKEN_N)
using token_string = lowalloc::small_string<ADVICE_TOKEN_N>;
#else
using token_string = std::string;
#endif

std::vector<chi_vector> chi_kept;
std::vector<token_string> tokens_kept;
std::vector<std::vector<long>> growth_kept;
struct point {
  double x, y, z;
};
std::vector<std::shared_ptr<point>> shared_kept;
std::vector<std::function<long()>> callbacks_kept;
std::vector<std::vector<int>> clean_kept;

__attribute__((noinline)) void chi_squared(long n) {
  chi_vector v;
  for (long i = 0; i < n; ++i) v.push_back(static_cast<int>(i));
  chi_kept.push_back(std::move(v));
}

__attribute__((noinline)) void tokens(const char* text, std::size_t length) {
  tokens_kept.push_back(token_string(text, length));
}

#if defined(ADVICE_MAP_POOL)
lowalloc::pool map_nodes(ADVICE_MAP_POOL);
std::map<long, long, std::less<long>, lowalloc::pool_allocator<std::pair<const long, long>>>
    churned(map_nodes);
#else
std::map<long, long> churned;
#endif

__attribute__((noinline)) void map_churn(long i) {
  churned.emplace(i, i * 2);
  if (i >= 500) churned.erase(i - 500);
}

#if defined(ADVICE_LIST_POOL)
lowalloc::pool list_nodes(ADVICE_LIST_POOL);
std::list<long, lowalloc::pool_allocator<long>> listed(list_nodes);
#else
std::list<long> listed;
#endif

__attribute__((noinline)) void node_lists(long i) {
  listed.push_back(i);
  if (listed.size() > 200) listed.pop_front();
}

__attribute__((noinline)) void growth_loop(long n) {
  std::vector<long> v;
#if defined(ADVICE_GROWTH_RESERVE)
  v.reserve(ADVICE_GROWTH_RESERVE);
#endif
  for (long i = 0; i < n; ++i) v.push_back(i);
  growth_kept.push_back(std::move(v));
}

__attribute__((noinline)) void hoisted(long i) {
  std::string s;
  for (int k = 0; k < 40; ++k) s += static_cast<char>('a' + (i + k) % 26);
  sink = sink + static_cast<long>(s.size()) + s[7];
}

__attribute__((noinline)) void shared(long i) {
  const double d = static_cast<double>(i);
#if defined(ADVICE_MAKE_SHARED)
  shared_kept.push_back(std::make_shared<point>(point{d, d, d}));
#else
  shared_kept.push_back(std::shared_ptr<point>(new point{d, d, d}));
#endif
}

__attribute__((noinline)) void callbacks(long i) {
  const long a = i, b = i + 1, c = i + 2, d = i + 3, e = i + 4;
  callbacks_kept.push_back([a, b, c, d, e] { return a + b + c + d + e; });
}

__attribute__((noinline)) long by_value(std::vector<int> v) {
  return static_cast<long>(v.size()) + v[3];
}

__attribute__((noinline)) void pass_by_value(const std::vector<int>& v) {
  sink = sink + by_value(v);
}

std::map<std::string, int> table = {{"configuration.value.number.one", 1},
                                    {"configuration.value.number.two", 2},
                                    {"configuration.value.number.three", 3}};

__attribute__((noinline)) bool lookup(const char* key) { return table.find(key) != table.end(); }

__attribute__((noinline)) void requests(long n) {
#if defined(ADVICE_ARENA_N)
  lowalloc::arena<ADVICE_ARENA_N> a;
  std::list<long, lowalloc::arena_allocator<long>> l(a);
#else
  std::list<long> l;
#endif
  for (long i = 0; i < n; ++i) l.push_back(i);
  long total = 0;
  for (long v : l) total += v;
  sink = sink + total;
}

__attribute__((noinline)) void clean() {
  std::vector<int> v;
  v.reserve(100);
  for (int i = 0; i < 100; ++i) v.push_back(i);
  clean_kept.push_back(std::move(v));
}

}  // namespace advice

int main(int argc, char** argv) {
  using namespace advice;
  const long k = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 0;
  // The containers that keep the objects allocate once each, before the sites do.
  chi_kept.reserve(static_cast<std::size_t>(k));
  tokens_kept.reserve(static_cast<std::size_t>(k));
  growth_kept.reserve(static_cast<std::size_t>(k / 100));
  shared_kept.reserve(static_cast<std::size_t>(k));
  callbacks_kept.reserve(static_cast<std::size_t>(k));
  clean_kept.reserve(static_cast<std::size_t>(k / 10));
  char text[512];
  for (std::size_t i = 0; i < sizeof text; ++i) text[i] = static_cast<char>('a' + i % 26);
  for (long i = 0; i < k; ++i) {
    const double x = normal(), y = normal(), z = normal();
    chi_squared(std::lround(2 * (x * x + y * y + z * z)));
  }
  for (long i = 0; i < k; ++i) {
    const long length = std::lround(std::exp(std::log(20.0) + 0.5 * normal()));
    tokens(text, static_cast<std::size_t>(std::min<long>(length, 500)));
  }
  for (long i = 0; i < k; ++i) map_churn(i);
  for (long i = 0; i < k; ++i) node_lists(i);
  for (long i = 0; i < k / 100; ++i) growth_loop(1000 + i % 24);
  for (long i = 0; i < k; ++i) hoisted(i);
  for (long i = 0; i < k; ++i) shared(i);
  for (long i = 0; i < k; ++i) callbacks(i);
  const std::vector<int> fifty(50, 7);
  for (long i = 0; i < k; ++i) pass_by_value(fifty);
  static const char* const keys[] = {"configuration.value.number.one",
                                     "configuration.value.number.four"};
  for (long i = 0; i < k; ++i) sink = sink + lookup(keys[i % 2]);
  for (long i = 0; i < k / 10; ++i) requests(20 + i % 30);
  for (long i = 0; i < k / 10; ++i) clean();
  long total = 0;
  for (const auto& f : callbacks_kept) total += f();
  std::printf("%ld %ld\n", static_cast<long>(sink), total);
  return 0;
}
