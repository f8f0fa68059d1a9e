// K x each of: new/delete of a 40-byte object, new[]/delete[] of 10 ints (40 bytes, no
// cookie), new[]/delete[] of 3 objects with a destructor (3 x 8 bytes + an 8-byte cookie),
// and new/delete of an alignas(64) type (aligned operator new). First a new[] too large to
// succeed, whose bad_alloc the program catches: it records nothing, and the thread records on.
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

inline void escape(void* p) { __asm__ volatile("" : : "r"(p) : "memory"); }

struct object {
  long fields[5];
};
static_assert(sizeof(object) == 40, "object is 40 bytes");

struct with_destructor {
  char bytes[8];
  ~with_destructor() { escape(bytes); }
};

struct alignas(64) aligned {
  char bytes[64];
};

}  // namespace

int main(int argc, char** argv) {
  long k = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 0;
  volatile std::size_t too_large = SIZE_MAX / 4;
  try {
    escape(new char[too_large]);
    return 3;
  } catch (const std::bad_alloc&) {
  }
  for (long i = 0; i < k; ++i) {
    object* o = new object();
    escape(o);
    delete o;
    int* ints = new int[10];
    escape(ints);
    delete[] ints;
    with_destructor* d = new with_destructor[3];
    escape(d);
    delete[] d;
    aligned* a = new aligned();
    escape(a);
    delete a;
  }
  return 0;
}
