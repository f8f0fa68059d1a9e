// The program tests/debugger/ prints in gdb (and lldb): each lowalloc type inline and spilled to
// the heap. Built -O0 -g; the debugger stops at the line marked "break here".
#include <lowalloc/arena.hpp>
#include <lowalloc/inplace_vector.hpp>
#include <lowalloc/pool.hpp>
#include <lowalloc/small_vector.hpp>
#include <lowalloc/string.hpp>

#include <cstdio>
#include <string>

namespace {

// Keeps the objects alive until the breakpoint.
void use(const void* p) { std::printf("%p\n", p); }

}  // namespace

int printers_other_unit();  // printers_other.cpp

int main() {
  lowalloc::small_vector<int, 4> vi_inline = {1, 2};
  lowalloc::small_vector<int, 4> vi_heap;
  for (int i = 0; i < 10; ++i) vi_heap.push_back(i * i);
  lowalloc::small_vector<std::string, 2> vs = {"one", "two", "three"};
  lowalloc::small_vector_base<int>& vbase = vi_heap;
  lowalloc::small_vector<int, 4> vempty;
  lowalloc::inplace_vector<int, 8> iv = {7, 8, 9};
  lowalloc::inplace_vector<int, 0> iv0;
  lowalloc::small_string<32> s_short = "short";
  lowalloc::small_string<32> s_long = "a text longer than thirty-one characters";
  lowalloc::small_string<24> s24_long = "spilled from a 24-byte small_string";
  lowalloc::small_string<32> s_quote = "tab\there \"quoted\"";
  lowalloc::fixed_string<16> fs = "fixed";
  lowalloc::fixed_string<300> fs_big = "size kept in a word";
  lowalloc::small_u16string<16> s16 = u"wide";
  lowalloc::arena<1024> ar;
  for (int i = 0; i < 4; ++i) use(ar.allocate(100));
  lowalloc::arena<0> ar_chunks;
  use(ar_chunks.allocate(2000));
  lowalloc::pool pl(48);
  void* blocks[5];
  for (void*& b : blocks) b = pl.allocate(40);
  pl.deallocate(blocks[4], 40);
  use(pl.allocate(100));  // oversize
  lowalloc::synchronized_pool spl(32);
  use(spl.allocate(24));
  use(&vbase);
  use(&spl);
  use(&iv);
  use(&fs);
  use(&fs_big);
  use(&iv0);
  use(&vempty);
  return printers_other_unit() == 2 ? 0 : 1;  // break here
}
