// A second translation unit with lowalloc's headers: the program must still carry exactly one
// copy of the printers in .debug_gdb_scripts.
#include <lowalloc/small_vector.hpp>
#include <lowalloc/string.hpp>

int printers_other_unit();
int printers_other_unit() {
  lowalloc::small_vector<int, 2> v = {1};
  lowalloc::small_string<> s = "x";
  return v[0] + static_cast<int>(s.size());
}
