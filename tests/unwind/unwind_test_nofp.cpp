// Test frames compiled with -fomit-frame-pointer (set in CMakeLists.txt): CFA from rsp, rbp used
// as a general register, except where alloca/realignment force an rbp-based CFA.
#include "unwind_test_support.hpp"

#define UNWIND_TEST_NS nofp
#include "unwind_test_chain.inc"

namespace unwind_test::nofp {
namespace {

const volatile long g_inputs[7] = {1, 2, 3, 4, 5, 6, 7};

// Seven values live across the call: GCC needs every callee-saved register, rbp included.
__attribute__((noinline)) long heavy_regs(leaf_fn leaf, void* arg) {
  const long a = g_inputs[0], b = g_inputs[1], c = g_inputs[2], d = g_inputs[3];
  const long e = g_inputs[4], f = g_inputs[5], g = g_inputs[6];
  leaf(arg);
  return a * 3 + b * 5 + c * 7 + d * 11 + e * 13 + f * 17 + g * 19 + (a ^ g) * (b ^ f) * (c ^ e);
}

volatile int g_marker;

// One call site of every frame it calls, so that the return address into this frame sits at the
// same address whichever it calls.
__attribute__((noipa)) void enter(anchored_fn frame, std::uintptr_t anchor, leaf_fn leaf,
                                  void* arg) {
  g_marker = 1;
  frame(anchor, leaf, arg);
  g_marker = 1;
}

}  // namespace

void* alternate_in_thread(void* args) {
  const auto* a = static_cast<const alternate_args*>(args);
  // Below this frame by more than the frames between it and the alloca, 16-aligned. (From the
  // stack pointer: __builtin_frame_address would give this frame a frame pointer, and a local's
  // address may be on a sanitizer's fake stack.)
  std::uintptr_t sp;
  asm volatile("mov %%rsp, %0" : "=r"(sp));
  const std::uintptr_t anchor = (sp - 1024) & ~std::uintptr_t{15};
  for (std::size_t i = 0; i < a->n; ++i) {
    enter(a->frames[i % 2], anchor, a->leaf, a->arg);
    a->after(i, a->context);
    asm volatile("" : "+r"(i));  // the count hidden from the compiler: no unrolled call sites
  }
  return nullptr;
}

long alloca_frame(int bytes, leaf_fn leaf, void* arg) {
  auto* buf = static_cast<volatile char*>(__builtin_alloca(static_cast<unsigned long>(bytes)));
  buf[0] = 1;
  buf[bytes - 1] = 2;
  const long r = heavy_regs(leaf, arg);
  return r + buf[0] + buf[bytes - 1];
}

long drap_frame(int bytes, leaf_fn leaf, void* arg) {
  alignas(64) volatile char aligned[64];
  aligned[0] = 1;
  auto* buf = static_cast<volatile char*>(__builtin_alloca(static_cast<unsigned long>(bytes)));
  buf[0] = 1;
  const long r = heavy_regs(leaf, arg);
  return r + aligned[0] + buf[0];
}

}  // namespace unwind_test::nofp
