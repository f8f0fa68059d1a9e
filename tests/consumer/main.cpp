// Uses the installed headers and lowalloc::alloc_count the way a user project would.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/inplace_vector.hpp>
#include <lowalloc/small_vector.hpp>

#include <cstdio>

int main() {
  lowalloc::alloc_counter scope;
  lowalloc::small_vector<int, 4> v{1, 2, 3};
  lowalloc::inplace_vector<int, 4> w(v.begin(), v.end());
  const bool ok = v.size() == 3 && w.size() == 3 && scope.allocations() == 0;
  v.assign(10, 7);  // spills: exactly one allocation
  if (!ok || scope.allocations() != 1) {
    std::fprintf(stderr, "consumer: unexpected result (%zu allocations)\n", scope.allocations());
    return 1;
  }
  return 0;
}
