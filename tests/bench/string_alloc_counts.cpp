// string_alloc_counts.cpp — heap allocations of the string benchmarks, counted with
// lowalloc::alloc_count (which replaces operator new and, on glibc, malloc: so llvm::SmallString,
// which grows with malloc, is counted too). Prints the Markdown tables of docs/benchmarks.md.
//
// Not a timing benchmark, and kept out of bench_string on purpose: the counting replacements of
// operator new and malloc would distort every timing. It runs the same tokenizer over the same
// texts (tokenizer.hpp) once per contender, after one uncounted warm-up run.
#include "tokenizer.hpp"

#include <lowalloc/alloc_count.hpp>
#include <lowalloc/string.hpp>

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace lowalloc_bench;

struct counts {
  std::size_t allocations = 0;
  std::size_t deallocations = 0;
  std::size_t bytes = 0;
  std::string error;
};

// Heap activity of one run of the tokenizer (the vector is reserved before counting starts).
template <class Impl>
counts count_tokenize(int long_share_percent) {
  const text& t = cached_text(long_share_percent);
  std::vector<typename Impl::type> tokens;
  tokens.reserve(t.lengths.size());
  tokenize<Impl>(t.bytes, tokens);  // warm-up, uncounted
  counts c;
  c.error = check_tokens<Impl>(t, tokens);
  tokens.clear();
  lowalloc::alloc_counter counter;
  tokenize<Impl>(t.bytes, tokens);
  tokens.clear();
  c.allocations = counter.allocations();
  c.deallocations = counter.deallocations();
  c.bytes = counter.bytes();
  return c;
}

std::string percent_change(std::size_t value, std::size_t base) {
  if (base == 0) return "n/a";
  const double change =
      100.0 * (static_cast<double>(value) - static_cast<double>(base)) / static_cast<double>(base);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", change);
  return buf;
}

int failures = 0;

void report_error(const char* name, const counts& c) {
  if (!c.error.empty()) {
    std::fprintf(stderr, "string_alloc_counts: %s: %s\n", name, c.error.c_str());
    ++failures;
  }
  if (c.allocations != c.deallocations) {
    std::fprintf(stderr, "string_alloc_counts: %s: %zu allocations but %zu deallocations\n", name,
                 c.allocations, c.deallocations);
    ++failures;
  }
}

void tokenizer_table() {
  const text& t = cached_text(kNaturalShare);
  std::printf("Tokenizer text: %s\n\n", describe(t).c_str());
  std::printf(
      "| impl | type | sizeof | heap allocations per run | per 1000 tokens | vs std_string | "
      "bytes requested |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");
  const std::size_t base = count_tokenize<std_string_impl>(kNaturalShare).allocations;
  for_each_tokenizer_impl([&](auto tag) {
    using Impl = decltype(tag);
    const counts c = count_tokenize<Impl>(kNaturalShare);
    report_error(Impl::name, c);
    std::printf("| %s | `%s` | %zu | %zu | %.1f | %s | %zu |\n", Impl::name, Impl::display,
                sizeof(typename Impl::type), c.allocations,
                1000.0 * static_cast<double>(c.allocations) / static_cast<double>(kTokens),
                percent_change(c.allocations, base).c_str(), c.bytes);
  });
  std::printf("\n");
}

void sweep_table() {
  std::printf("Sweep: heap allocations per run of %zu tokens\n\n", kTokens);
  std::printf("| tokens > 15 chars | tokens > 31 chars |");
  for_each_sweep_impl([](auto tag) { std::printf(" %s |", decltype(tag)::name); });
  std::printf(" small_string_32 vs std_string |\n");
  std::printf("|---:|---:|");
  for_each_sweep_impl([](auto) { std::printf("---:|"); });
  std::printf("---:|\n");
  for (const int pct : kSweepShares) {
    const text& t = cached_text(pct);
    std::printf("| %d%% | %.2f%% |", pct,
                100.0 * static_cast<double>(t.count_longer_than(31)) /
                    static_cast<double>(t.lengths.size()));
    for_each_sweep_impl([&](auto tag) {
      using Impl = decltype(tag);
      const counts c = count_tokenize<Impl>(pct);
      report_error(Impl::name, c);
      std::printf(" %zu |", c.allocations);
    });
    const std::size_t std_allocs = count_tokenize<std_string_impl>(pct).allocations;
    const std::size_t small_allocs = count_tokenize<small_string_impl<32>>(pct).allocations;
    std::printf(" %s |\n", percent_change(small_allocs, std_allocs).c_str());
  }
  std::printf("\n");
}

template <class String>
std::size_t construct_allocations(std::size_t n) {
  static const std::string source(256, 'x');
  lowalloc::alloc_counter counter;
  {
    String s(source.data(), n);
    const char* volatile sink = s.data();
    (void)sink;
  }
  return counter.allocations();
}

void construct_table() {
  std::printf("Construction from (pointer, length): heap allocations per string\n\n");
  std::printf("| length | std_string | small_string_32 | small_string_64 | fixed_string_128 |\n");
  std::printf("|---:|---:|---:|---:|---:|\n");
  for (const std::size_t n : {1, 8, 15, 16, 31, 32, 64, 128}) {
    std::printf("| %zu | %zu | %zu | %zu | %zu |\n", n, construct_allocations<std::string>(n),
                construct_allocations<lowalloc::small_string<32>>(n),
                construct_allocations<lowalloc::small_string<64>>(n),
                construct_allocations<lowalloc::fixed_string<128>>(n));
  }
  std::printf("\n");
}

}  // namespace

int main() {
  if (!lowalloc::malloc_counted()) {
    std::printf("Note: only operator new/delete are counted here (not malloc).\n\n");
  }
  tokenizer_table();
  sweep_table();
  construct_table();
  return failures == 0 ? 0 : 1;
}
