// Prints sizeof of lowalloc's vectors and strings next to the peers' (the tables in
// docs/containers.md and docs/benchmarks.md), as Markdown. Not a timing benchmark: the sizes are
// facts of the layouts.
#include <lowalloc/inplace_vector.hpp>
#include <lowalloc/small_vector.hpp>
#include <lowalloc/string.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#ifdef LOWALLOC_BENCH_HAVE_BOOST
#include <boost/container/small_vector.hpp>
#include <boost/container/static_vector.hpp>
#include <boost/container/string.hpp>
#endif
#ifdef LOWALLOC_BENCH_HAVE_ABSL
#include <absl/container/inlined_vector.h>
#endif
#ifdef LOWALLOC_BENCH_HAVE_LLVM
#include <llvm/ADT/SmallString.h>
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

// --- strings -------------------------------------------------------------------------------------

// The inline capacity, measured: the longest length L (up to 256, and up to max_size()) for which
// a string of L characters keeps them inside its own object (data() points into the object), so
// that building it cannot have allocated.
template <class String>
std::size_t measured_inline_capacity() {
  std::size_t inline_max = 0;
  const std::size_t limit = String().max_size() < 256 ? String().max_size() : 256;
  for (std::size_t len = 1; len <= limit; ++len) {
    const std::string chars(len, 'x');
    const String s(chars.begin(), chars.end());
    const auto object = reinterpret_cast<std::uintptr_t>(&s);
    const auto data = reinterpret_cast<std::uintptr_t>(s.data());
    if (data < object || data + len > object + sizeof(String)) break;
    inline_max = len;
  }
  return inline_max;
}

template <class String>
void string_row(const char* type) {
  std::printf("| `%s` | %zu | %zu | %zu |\n", type, sizeof(String),
              measured_inline_capacity<String>(), static_cast<std::size_t>(String().capacity()));
}

void string_table() {
  std::printf("| type | sizeof | inline capacity (measured) | capacity() of an empty string |\n");
  std::printf("| --- | ---: | ---: | ---: |\n");
  string_row<std::string>("std::string");
  string_row<lowalloc::small_string<16>>("lowalloc::small_string<16>");
  string_row<lowalloc::small_string<24>>("lowalloc::small_string<24>");
  string_row<lowalloc::small_string<32>>("lowalloc::small_string<32>");
  string_row<lowalloc::small_string<64>>("lowalloc::small_string<64>");
  string_row<lowalloc::fixed_string<15>>("lowalloc::fixed_string<15>");
  string_row<lowalloc::fixed_string<31>>("lowalloc::fixed_string<31>");
  string_row<lowalloc::fixed_string<32>>("lowalloc::fixed_string<32>");
  string_row<lowalloc::fixed_string<64>>("lowalloc::fixed_string<64>");
#ifdef LOWALLOC_BENCH_HAVE_BOOST
  string_row<boost::container::string>("boost::container::string");
#endif
#ifdef LOWALLOC_BENCH_HAVE_LLVM
  string_row<llvm::SmallString<16>>("llvm::SmallString<16>");
  string_row<llvm::SmallString<32>>("llvm::SmallString<32>");
  string_row<llvm::SmallString<64>>("llvm::SmallString<64>");
#endif
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
  std::printf("\n");
  string_table();
  return 0;
}
