// libFuzzer target: the differential harness of tests/support/vector_ops.hpp (small_vector against
// std::vector, compared after every operation) driven by the fuzzer's bytes. The first byte picks
// the element type and N; every later choice is decoded from the bytes that follow. A mismatch
// prints the failed check and aborts.
#include <lowalloc/small_vector.hpp>

#include "support/element_types.hpp"
#include "support/vector_ops.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// At most this many operations per input, so that one input cannot run for long.
constexpr std::size_t kMaxSteps = 20000;

template <class T, std::size_t N>
int run(const std::uint8_t* data, std::size_t size) {
  const long live_before = lowalloc_test::counts().live();
  {
    lowalloc_test::byte_source src(data, size);
    lowalloc_test::vector_ops<T, N> ops;
    for (std::size_t i = 0; i < kMaxSteps && !src.exhausted(); ++i) {
      if (!ops.step(src)) {
        std::fprintf(stderr, "small_vector_fuzz: %s\n", ops.failure().c_str());
        std::abort();
      }
    }
  }
  if (lowalloc_test::counts().live() != live_before) {
    std::fprintf(stderr, "small_vector_fuzz: %ld objects leaked\n",
                 lowalloc_test::counts().live() - live_before);
    std::abort();
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t* rest = data + 1;
  const std::size_t n = size - 1;
  using lowalloc_test::counted;
  switch (data[0] % 15) {
    case 0:
      return run<int, 0>(rest, n);
    case 1:
      return run<int, 1>(rest, n);
    case 2:
      return run<int, 2>(rest, n);
    case 3:
      return run<int, 8>(rest, n);
    case 4:
      return run<int, 33>(rest, n);
    case 5:
      return run<std::string, 0>(rest, n);
    case 6:
      return run<std::string, 1>(rest, n);
    case 7:
      return run<std::string, 2>(rest, n);
    case 8:
      return run<std::string, 8>(rest, n);
    case 9:
      return run<std::string, 33>(rest, n);
    case 10:
      return run<counted, 0>(rest, n);
    case 11:
      return run<counted, 1>(rest, n);
    case 12:
      return run<counted, 2>(rest, n);
    case 13:
      return run<counted, 8>(rest, n);
    default:
      return run<counted, 33>(rest, n);
  }
}
