// The hot allocation is in make_strings (compiled with -g): K strings of 100 characters,
// each built, checked and dropped.
#include <cstdlib>
#include <string>

std::size_t make_strings(long n);

__attribute__((noinline)) std::size_t make_strings(long n) {
  std::size_t total = 0;
  for (long i = 0; i < n; ++i) {
    std::string s(100, static_cast<char>('a' + i % 26));
    __asm__ volatile("" : : "r"(s.data()) : "memory");
    total += s.size();
  }
  return total;
}

int main(int argc, char** argv) {
  long k = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 0;
  return make_strings(k) == static_cast<std::size_t>(k) * 100 ? 0 : 1;
}
