// Objects whose histories are known: `lowalloc report --objects` must find each one. Built -O2
// -g, as a user builds. argv[1]: K, a multiple of 10.
//  - growth: K vectors of int, vector k gets k % 10 + 1 elements: its growth allocates 1, 2, 4,
//    8 and 16 elements' worth (libstdc++ doubles), 1 to 5 allocations, one vector alive at once;
//  - strings: K/10 vectors of 5 strings of 40 characters each, the strings built on the line of
//    the push_back: 5 one-block strings and a vector of 4 blocks per call;
//  - held: K strings of 30 characters made with new (a 32-byte object, then its 31-byte buffer),
//    all alive together, then deleted: 2K one-block objects, K of each stack alive at once, one
//    temporary (the last buffer made is the first block freed after it).
//
// Built again with the changes `lowalloc advise` suggests, one macro each, so that a test can
// compare the allocations it predicted with the ones the changed program makes:
//  - OBJECTS_GROWTH_N: growth's vector is a lowalloc::small_vector<int, OBJECTS_GROWTH_N>;
//  - OBJECTS_GROWTH_REUSE: growth's vector is made once and cleared at each call;
//  - OBJECTS_GROWTH_RESERVE: growth's vector reserves that many elements first;
//  - OBJECTS_HELD_N: held's strings are lowalloc::small_string<OBJECTS_HELD_N>.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#if defined(OBJECTS_GROWTH_N)
#include <lowalloc/small_vector.hpp>
#endif
#if defined(OBJECTS_HELD_N)
#include <lowalloc/string.hpp>
#endif

namespace objects {

volatile long sink = 0;

#if defined(OBJECTS_GROWTH_N)
using growth_vector = lowalloc::small_vector<int, OBJECTS_GROWTH_N>;
#else
using growth_vector = std::vector<int>;
#endif
#if defined(OBJECTS_HELD_N)
using held_string = lowalloc::small_string<OBJECTS_HELD_N>;
#else
using held_string = std::string;
#endif

__attribute__((noinline)) void growth(long n) {
#if defined(OBJECTS_GROWTH_REUSE)
  static growth_vector v;
  v.clear();
#else
  growth_vector v;
#endif
#if defined(OBJECTS_GROWTH_RESERVE)
  v.reserve(OBJECTS_GROWTH_RESERVE);
#endif
  for (long i = 0; i < n; ++i) v.push_back(static_cast<int>(i));
  sink = sink + static_cast<long>(v.size());
}

__attribute__((noinline)) void strings() {
  std::vector<std::string> v;
  for (int i = 0; i < 5; ++i) v.push_back(std::string(40, static_cast<char>('a' + i)));
  sink = sink + static_cast<long>(v.size());
}

__attribute__((noinline)) held_string* held(long i) {
  return new held_string(30, static_cast<char>('a' + i % 26));
}

}  // namespace objects

int main(int argc, char** argv) {
  const long k = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 0;
  for (long i = 0; i < k; ++i) objects::growth(i % 10 + 1);
  for (long i = 0; i < k / 10; ++i) objects::strings();
  std::vector<objects::held_string*> all(static_cast<std::size_t>(k));
  for (long i = 0; i < k; ++i) all[static_cast<std::size_t>(i)] = objects::held(i);
  for (objects::held_string* s : all) delete s;
  std::printf("%ld\n", static_cast<long>(objects::sink));
  return 0;
}
