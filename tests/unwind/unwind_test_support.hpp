// Shared by the unwinder tests: stack-shaping helpers compiled with different frame-pointer flags.
#ifndef LOWALLOC_TESTS_UNWIND_UNWIND_TEST_SUPPORT_HPP
#define LOWALLOC_TESTS_UNWIND_UNWIND_TEST_SUPPORT_HPP

#include <cstddef>
#include <cstdint>

namespace unwind_test {

using leaf_fn = void (*)(void*);

// unwind_test_nofp.cpp: -fomit-frame-pointer.
namespace nofp {
// `depth` nested noinline frames, then leaf(arg).
int chain(int depth, leaf_fn leaf, void* arg);
// A frame whose CFA is rbp-based (alloca) calling one that uses rbp as a general register.
long alloca_frame(int bytes, leaf_fn leaf, void* arg);
// Stack realignment with a dynamic allocation: GCC's DRAP, CFA = *(rbp - 8).
long drap_frame(int bytes, leaf_fn leaf, void* arg);
// A thread's start routine (pthread_create) whose frames all compute their CFA from the stack
// pointer: for i in [0, n) it calls frames[i % 2](anchor, leaf, arg), every time from one call
// site, with one anchor below its frames, then after(i, context).
using anchored_fn = long (*)(std::uintptr_t anchor, leaf_fn leaf, void* arg);
struct alternate_args {
  std::size_t n;
  anchored_fn frames[2];
  leaf_fn leaf;
  void* arg;
  void (*after)(std::size_t i, void* context);
  void* context;
};
void* alternate_in_thread(void* alternate_args);
}  // namespace nofp

// unwind_test_fp.cpp: -fno-omit-frame-pointer.
namespace fp {
int chain(int depth, leaf_fn leaf, void* arg);
// A frame whose CFA is rbp-based (alloca), its alloca sized so that the stack pointer at its call
// of leaf(arg) is the same for every call with the same 16-aligned `anchor` (at least 64 bytes
// below its frame), wherever the frames above it end.
long alloca_down_to(std::uintptr_t anchor, leaf_fn leaf, void* arg);
// alloca_down_to one frame deeper: its rbp is lower, its stack pointer at the call of leaf not.
long alloca_down_to_one_deeper(std::uintptr_t anchor, leaf_fn leaf, void* arg);
// Calls leaf(arg) of a relay_args from a frame whose CFA is rbp + 16, with its caller's rbp saved
// in it: the caller's rbp is then a word on the stack, in no register.
struct relay_args {
  leaf_fn leaf;
  void* arg;
};
void relay(void* relay_args);
}  // namespace fp

}  // namespace unwind_test

#endif  // LOWALLOC_TESTS_UNWIND_UNWIND_TEST_SUPPORT_HPP
