// A large synthetic trace, for the report's scale (docs/benchmarks.md): see
// tests/support/synthetic_trace.hpp for what it holds.
//
// Usage: synthetic_trace FILE ALLOCATIONS [STACKS=1000] [LIVE=100000]
#include "support/synthetic_trace.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: synthetic_trace FILE ALLOCATIONS [STACKS=1000] [LIVE=100000]\n");
    return 2;
  }
  const std::uint64_t allocations = std::strtoull(argv[2], nullptr, 10);
  const std::uint64_t stacks = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1000;
  const std::uint64_t live = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 100000;
  if (stacks == 0 || live == 0) {
    std::fprintf(stderr, "synthetic_trace: STACKS and LIVE must be at least 1\n");
    return 2;
  }
  std::FILE* out = std::fopen(argv[1], "wb");
  if (out == nullptr) {
    std::perror(argv[1]);
    return 1;
  }
  const bool ok = lowalloc_test::write_synthetic_trace(out, allocations, stacks, live);
  if (std::fclose(out) != 0 || !ok) {
    std::perror(argv[1]);
    return 1;
  }
  return 0;
}
