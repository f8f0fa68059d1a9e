// libFuzzer target: the differential harness of tests/support/string_ops.hpp (lowalloc's strings
// against std::string, compared after every operation) driven by the fuzzer's bytes. The first
// byte picks the type: small_string<24>, <32>, <64> or fixed_string<64>; every later choice is
// decoded from the bytes that follow. A mismatch prints the failed check and aborts.
#include <lowalloc/string.hpp>

#include "support/string_ops.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// At most this many operations per input, so that one input cannot run for long.
constexpr std::size_t kMaxSteps = 20000;

template <class S>
int run(const std::uint8_t* data, std::size_t size) {
  lowalloc_test::byte_source src(data, size);
  lowalloc_test::string_ops<S> ops;
  for (std::size_t i = 0; i < kMaxSteps && !src.exhausted(); ++i) {
    if (!ops.step(src)) {
      std::fprintf(stderr, "string_fuzz: %s\n", ops.failure().c_str());
      std::abort();
    }
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t* rest = data + 1;
  const std::size_t n = size - 1;
  switch (data[0] % 4) {
    case 0:
      return run<lowalloc::small_string<24>>(rest, n);
    case 1:
      return run<lowalloc::small_string<32>>(rest, n);
    case 2:
      return run<lowalloc::small_string<64>>(rest, n);
    default:
      return run<lowalloc::fixed_string<64>>(rest, n);
  }
}
