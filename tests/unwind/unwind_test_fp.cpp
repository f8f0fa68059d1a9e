// Test frames compiled with -fno-omit-frame-pointer (set in CMakeLists.txt).
#include "unwind_test_support.hpp"

#define UNWIND_TEST_NS fp
#include "unwind_test_chain.inc"

namespace unwind_test::fp {

// Not instrumented: ASan pads and aligns an alloca to 32 bytes, and the size must translate into
// the stack pointer 16 bytes for 16 bytes.
__attribute__((no_sanitize("address"))) long alloca_down_to(std::uintptr_t anchor, leaf_fn leaf,
                                                            void* arg) {
  // rbp is 16-aligned here and so is anchor: whatever the rounding of the size, the stack pointer
  // after the alloca moves by exactly as much as rbp did between two calls.
  const auto fp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const std::uintptr_t bytes = fp > anchor + 64 ? fp - anchor : 64;
  auto* buf = static_cast<volatile char*>(__builtin_alloca(bytes));
  buf[0] = 1;
  leaf(arg);
  return buf[0];
}

long alloca_down_to_one_deeper(std::uintptr_t anchor, leaf_fn leaf, void* arg) {
  long (*volatile next)(std::uintptr_t, leaf_fn, void*) = alloca_down_to;  // not inlined
  const long r = next(anchor, leaf, arg);
  asm volatile("" ::: "memory");  // no tail call: this frame stays on the stack
  return r + 1;
}

void relay(void* args) {
  const auto* r = static_cast<const relay_args*>(args);
  r->leaf(r->arg);
  asm volatile("" ::: "memory");  // no tail call: this frame stays on the stack
}

}  // namespace unwind_test::fp
