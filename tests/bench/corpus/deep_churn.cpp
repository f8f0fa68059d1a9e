// Corpus program for scripts/bench-tracer.py --corpus: a string churn 40 frames deep. A chain of
// 40 noinline calls, and at its bottom COUNT std::strings longer than libstdc++'s 15-character
// inline buffer are made and destroyed, so every allocation has a 40-frame stack to record.
//
// Usage: deep_churn [COUNT=4000000]
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr int depth = 40;

__attribute__((noinline)) unsigned long churn(long count) {
  static const char text[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  unsigned long sum = 0;
  for (long i = 0; i < count; ++i) {
    std::string s(text, 16 + static_cast<std::size_t>(i % 40));
    asm volatile("" : : "r"(s.data()) : "memory");
    sum += static_cast<unsigned char>(s[s.size() / 2]);
  }
  return sum;
}

__attribute__((noinline)) unsigned long descend(int level, long count) {
  unsigned long r = level == 0 ? churn(count) : descend(level - 1, count);
  asm volatile("" : "+r"(r) : : "memory");  // not a tail call: every level keeps its frame
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  long count = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 4000000;
  // descend(n) runs n + 1 frames of its own, under main: 40 frames down to the string's allocation.
  std::printf("%lu\n", descend(depth - 2, count));
  return 0;
}
