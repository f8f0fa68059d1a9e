// One function per standard-library operation that allocates, each called from main: the report
// must name each site's operation (the kind, the container the user wrote, the member called).
// Built -O2 -g, as a user builds: libstdc++'s members appear as DWARF inline frames and as
// exported symbols of libstdc++.so.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace ops {

volatile long sink = 0;

__attribute__((noinline)) void vector_push_back(long n) {
  std::vector<int> v;
  for (long i = 0; i < n; ++i) v.push_back(static_cast<int>(i));
  sink = sink + static_cast<long>(v.size());
}

__attribute__((noinline)) void vector_of_strings_emplace_back(long n) {
  std::vector<std::string> v;
  for (long i = 0; i < n; ++i) v.emplace_back("x");
  sink = sink + static_cast<long>(v.size());
}

__attribute__((noinline)) void vector_reserve(long n) {
  for (long i = 0; i < n; ++i) {
    std::vector<double> v;
    v.reserve(16);
    sink = sink + static_cast<long>(v.capacity());
  }
}

__attribute__((noinline)) void vector_copy(long n, const std::vector<long>& from) {
  for (long i = 0; i < n; ++i) {
    std::vector<long> v(from);
    sink = sink + v[0];
  }
}

__attribute__((noinline)) void string_construction(long n) {
  for (long i = 0; i < n; ++i) {
    std::string s("a string longer than fifteen characters");
    sink = sink + s[static_cast<std::size_t>(i) % s.size()];
  }
}

__attribute__((noinline)) void string_append(long n) {
  std::string s;
  for (long i = 0; i < n; ++i) s += 'x';
  sink = sink + static_cast<long>(s.size());
}

__attribute__((noinline)) void map_insert(long n) {
  std::map<int, long> m;
  for (long i = 0; i < n; ++i) m[static_cast<int>(i)] = i;
  sink = sink + static_cast<long>(m.size());
}

__attribute__((noinline)) void set_insert(long n) {
  std::set<long> s;
  for (long i = 0; i < n; ++i) s.insert(i);
  sink = sink + static_cast<long>(s.size());
}

__attribute__((noinline)) void unordered_map_insert(long n) {
  std::unordered_map<long, int> m;
  for (long i = 0; i < n; ++i) m[i] = static_cast<int>(i);
  sink = sink + static_cast<long>(m.size());
}

__attribute__((noinline)) void list_push_back(long n) {
  std::list<long> l;
  for (long i = 0; i < n; ++i) l.push_back(i);
  sink = sink + static_cast<long>(l.size());
}

__attribute__((noinline)) void deque_push_back(long n) {
  std::deque<long> d;
  for (long i = 0; i < n; ++i) d.push_back(i);
  sink = sink + static_cast<long>(d.size());
}

__attribute__((noinline)) void shared(long n) {
  for (long i = 0; i < n; ++i) {
    auto p = std::make_shared<long>(i);
    sink = sink + *p;
  }
}

__attribute__((noinline)) void unique(long n) {
  for (long i = 0; i < n; ++i) {
    auto p = std::make_unique<long>(i);
    __asm__ volatile("" : : "r"(p.get()) : "memory");  // (else the allocation is elided)
    sink = sink + *p;
  }
}

__attribute__((noinline)) void plain_new(long n) {
  for (long i = 0; i < n; ++i) {
    long* p = new long(i);
    __asm__ volatile("" : : "r"(p) : "memory");
    sink = sink + *p;
    delete p;
  }
}

__attribute__((noinline)) void function_with_large_capture(long n) {
  long a = sink, b = sink + 1, c = sink + 2;
  for (long i = 0; i < n; ++i) {
    std::function<long()> f = [a, b, c] { return a + b + c; };
    sink = sink + f();
  }
}

}  // namespace ops

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 0;
  const std::vector<long> from(8, 1);
  ops::vector_push_back(n);
  ops::vector_of_strings_emplace_back(n);
  ops::vector_reserve(n);
  ops::vector_copy(n, from);
  ops::string_construction(n);
  ops::string_append(n);
  ops::map_insert(n);
  ops::set_insert(n);
  ops::unordered_map_insert(n);
  ops::list_push_back(n);
  ops::deque_push_back(n);
  ops::shared(n);
  ops::unique(n);
  ops::plain_new(n);
  ops::function_with_large_capture(n);
  std::printf("%ld\n", static_cast<long>(ops::sink));
  return 0;
}
