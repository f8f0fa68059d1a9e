// A library written in C++, loaded with dlopen by a program that has no C++ runtime
// (dlopen_cxx.c, as python3 loads an extension module): K x (new char[40], delete[]), then a
// new[] too large to succeed, whose bad_alloc it catches. Returns 0 when it was caught.
#include <cstdint>
#include <new>

namespace {
inline void escape(void* p) { __asm__ volatile("" : : "r"(p) : "memory"); }
}  // namespace

extern "C" int run_cxx(long k) {
  for (long i = 0; i < k; ++i) {
    char* p = new char[40];
    escape(p);
    delete[] p;
  }
  volatile std::size_t too_large = SIZE_MAX / 4;
  try {
    escape(new char[too_large]);
    return 1;
  } catch (const std::bad_alloc&) {
    return 0;
  }
}
