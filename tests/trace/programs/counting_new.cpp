// A program with an operator new of its own that counts and calls malloc, as many do: the
// recorder sees every allocation through malloc, and nothing is shadowed. K x (new of 40 bytes,
// delete).
#include <cstdio>
#include <cstdlib>
#include <new>

#include "common.h"

static long news;

void* operator new(std::size_t n) {
  ++news;
  if (void* p = std::malloc(n != 0 ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

struct forty {
  char bytes[40];
};

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long i = 0; i < k; ++i) {
    forty* p = new forty;
    escape(p);
    delete p;
  }
  std::printf("%ld\n", news);
  return news >= k ? 0 : 1;
}
