// escape(p): keeps the optimiser from pairing up and removing an allocation and its release, for
// the tests that count allocations. Not part of lowalloc's API.
#ifndef LOWALLOC_TESTS_SUPPORT_ESCAPE_HPP
#define LOWALLOC_TESTS_SUPPORT_ESCAPE_HPP

namespace lowalloc::test {

template <class T>
void escape(T* p) {
#if defined(__GNUC__)
  asm volatile("" : : "g"(p) : "memory");
#else
  static T* volatile sink;
  sink = p;
#endif
}

}  // namespace lowalloc::test

#endif
