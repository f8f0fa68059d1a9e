// A program for the tests of `lowalloc diff` and `lowalloc check`, with allocations known by
// construction: `diff_program N [leak]` calls words(N) and counts(N) ten times, then words(N / 2)
// once from another line.
// - words(n): n strings of 20..29 characters (one allocation each: longer than std::string's 15
//   inline characters, moved into the vector) and the vector's growth to n (1, 2, 4, ...: 8
//   allocations for n = 100): 108 allocations for n = 100, 57 for n = 50.
// - counts(n): n std::map nodes.
// It also writes to stdout (a stdio buffer) and sets a locale, whose allocations the C library
// keeps until exit (the runtime's own), and with `leak` leaks one block of 1,000 bytes of its own.
// The tests build it a second time with 20 lines added above words() and 3 lines inside counts()
// above its site (the EDIT markers): every site must still be found; and a third time with
// words() reserving its vector first (EDIT RESERVE): its site then has the strings but not the
// vector's growth.
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

// EDIT ABOVE

std::vector<std::string> words(int n) {
  std::vector<std::string> out;
  // EDIT RESERVE
  for (int i = 0; i < n; ++i)
    out.push_back(std::string(static_cast<std::size_t>(20 + i % 10), 'w'));
  return out;
}

long counts(int n) {
  std::map<int, long> m;
  long sum = 0;
  // EDIT INSIDE
  for (int i = 0; i < n; ++i) m[i * 7 % n] = i;
  for (const auto& kv : m) sum += kv.second;
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100;
  std::setlocale(LC_ALL, "C.UTF-8");
  long total = 0;
  for (int rep = 0; rep < 10; ++rep) {
    total += static_cast<long>(words(n).size());
    total += counts(n);
  }
  total += static_cast<long>(words(n / 2).size());
  if (argc > 2 && std::strcmp(argv[2], "leak") == 0) {
    void* volatile kept = std::malloc(1000);
    (void)kept;
  }
  std::printf("%ld\n", total);
  return 0;
}
