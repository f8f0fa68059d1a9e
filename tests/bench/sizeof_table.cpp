// Prints sizeof of lowalloc's vectors next to the peers' (the table in docs/containers.md and
// docs/benchmarks.md), as Markdown. Not a timing benchmark: the sizes are facts of the layouts.
#include <lowalloc/inplace_vector.hpp>
#include <lowalloc/small_vector.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

#ifdef LOWALLOC_BENCH_HAVE_BOOST
#include <boost/container/small_vector.hpp>
#include <boost/container/static_vector.hpp>
#endif
#ifdef LOWALLOC_BENCH_HAVE_ABSL
#include <absl/container/inlined_vector.h>
#endif
#ifdef LOWALLOC_BENCH_HAVE_LLVM
#include <llvm/ADT/SmallVector.h>
#endif

namespace {

void cell(long size) {
  if (size < 0) {
    std::printf(" - |");
  } else {
    std::printf(" %ld |", size);
  }
}

template <class T, std::size_t N>
void row(const char* type) {
  std::printf("| %s, %zu |", type, N);
  cell(static_cast<long>(sizeof(lowalloc::small_vector<T, N>)));
#ifdef LOWALLOC_BENCH_HAVE_ABSL
  if constexpr (N > 0) {
    cell(static_cast<long>(sizeof(absl::InlinedVector<T, N>)));
  } else {
    cell(-1);  // absl requires N > 0
  }
#else
  cell(-1);
#endif
#ifdef LOWALLOC_BENCH_HAVE_LLVM
  cell(static_cast<long>(sizeof(llvm::SmallVector<T, N>)));
#else
  cell(-1);
#endif
#ifdef LOWALLOC_BENCH_HAVE_BOOST
  cell(static_cast<long>(sizeof(boost::container::small_vector<T, N>)));
#else
  cell(-1);
#endif
  cell(static_cast<long>(sizeof(lowalloc::inplace_vector<T, N>)));
#ifdef LOWALLOC_BENCH_HAVE_BOOST
  cell(static_cast<long>(sizeof(boost::container::static_vector<T, N>)));
#else
  cell(-1);
#endif
  std::printf("\n");
}

}  // namespace

int main() {
  std::printf(
      "| T, N | lowalloc::small_vector | absl::InlinedVector | llvm::SmallVector | "
      "boost::container::small_vector | lowalloc::inplace_vector | "
      "boost::container::static_vector |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  row<int, 0>("int");
  row<int, 1>("int");
  row<int, 2>("int");
  row<int, 4>("int");
  row<int, 8>("int");
  row<int, 12>("int");
  row<int, 16>("int");
  row<int, 32>("int");
  row<char, 16>("char");
  row<std::uint64_t, 2>("uint64_t");
  row<void*, 8>("void*");
  row<std::string, 4>("std::string");
  return 0;
}
