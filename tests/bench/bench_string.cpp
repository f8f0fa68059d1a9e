// bench_string.cpp — lowalloc::small_string / fixed_string against std::string and the peers
// (boost::container::string, llvm::SmallString), each peer compiled in only when CMake found it
// (LOWALLOC_BENCH_HAVE_BOOST / _LLVM).
//
// Benchmarks are named "<workload>/<impl>[/<param>]" for scripts/bench_table.py; impl is one of
// std_string, small_string_<N>, fixed_string_<N> (fixed_string in the operation benchmarks),
// boost (boost::container::string), llvm (llvm::SmallString<32>).
//
//   tokenize/<impl>              the tokenizer of tokenizer.hpp over the natural text (40000
//                                tokens, lognormal lengths of mean 8); counter "tokens" per run
//   tokenize_sweep/<impl>/<pct>  the same over a text in which exactly pct % of the tokens are
//                                longer than 15 characters
//   build_tokens[_sweep]/...     the same without the scan for separators: the tokens' positions
//                                are found before the timed loop (the string type's share alone)
//   construct/<impl>/<len>       construction from (pointer, len) and destruction of one string
//   construct_2t/<impl>/<len>/threads:2   the same on 2 threads at once (heap contention); the
//                                time is the CPU time per string of each thread
//   find|compare|append|equal/<impl>/<len>   one operation on strings of 10 (short) or 200 (long)
//                                characters; fixed_string is fixed_string<32> at 10, <256> at 200
//
// The heap allocations of the tokenizer are counted by string_alloc_counts, not here: counting
// replaces operator new and malloc, which would distort these timings. bench_string_allocs is this
// file again with LOWALLOC_BENCH_COUNT_ALLOCATIONS: linked with lowalloc::alloc_count and with
// <lowalloc/benchmark.hpp>'s memory manager, it reports allocations per iteration of every
// benchmark (its timings are not quoted).
#include "tokenizer.hpp"

#include <lowalloc/string.hpp>

#include <benchmark/benchmark.h>
#ifdef LOWALLOC_BENCH_COUNT_ALLOCATIONS
#include <lowalloc/benchmark.hpp>
#endif

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace lowalloc_bench;

// --- the tokenizer -------------------------------------------------------------------------------

// One iteration = one run of the tokenizer over the whole text: every token constructed into the
// vector (reserved once, outside the timed loop, for every contender alike), then all destroyed.
// Scan = false: build_tokens, the same without the scan for separators (positions found before).
template <class Impl, bool Scan>
void tokenize_text(benchmark::State& state, int long_share_percent) {
  const text& t = cached_text(long_share_percent);
  const std::vector<token_span> spans = find_tokens(t.bytes);
  std::vector<typename Impl::type> tokens;
  tokens.reserve(t.lengths.size());
  const auto run = [&] {
    if constexpr (Scan) {
      tokenize<Impl>(t.bytes, tokens);
    } else {
      build_tokens<Impl>(t.bytes, spans, tokens);
    }
  };
  run();
  const std::string error = check_tokens<Impl>(t, tokens);
  tokens.clear();
  if (!error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(tokens.data());
    benchmark::ClobberMemory();
    tokens.clear();
  }
  const auto n = static_cast<std::int64_t>(t.lengths.size());
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["tokens"] = static_cast<double>(n);
}

// --- construction and destruction ----------------------------------------------------------------

const char* construct_source() {
  static const std::string source = [] {
    std::string s;
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>('a' + i % 26));
    return s;
  }();
  return source.data();
}

template <class String>
void construct(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const char* p = construct_source();
  for (auto _ : state) {
    benchmark::DoNotOptimize(p);
    String s(p, n);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations());
}

// --- operations on short and long strings --------------------------------------------------------

constexpr std::size_t kShort = 10;
constexpr std::size_t kLongOp = 200;

std::string_view op_text(std::size_t n) {
  static const std::string s = [] {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> letter('a', 'z');
    std::string out;
    for (std::size_t i = 0; i < 256; ++i) out.push_back(static_cast<char>(letter(rng)));
    return out;
  }();
  return std::string_view(s).substr(0, n);
}

template <class String>
String make(std::string_view s) {
  return String(s.data(), s.size());
}

// Where the texts lie (data() % 4096: the cache line and the distance to a page end, where
// memcmp/memchr take a slower path) changes the speed of memcmp/memchr
// over 200 characters by more than the interface costs: recorded, to tell the two apart.
template <class String>
void record_alignment(benchmark::State& state, const String& a, const String& b) {
  state.counters["align_a"] =
      static_cast<double>(reinterpret_cast<std::uintptr_t>(a.data()) % 4096);
  state.counters["align_b"] =
      static_cast<double>(reinterpret_cast<std::uintptr_t>(b.data()) % 4096);
}

// s.find(needle): the needle is the last 4 characters, found only at the end.
template <class String>
void op_find(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  String hay = make<String>(op_text(n));
  String needle = make<String>(op_text(n).substr(n - 4));
  if (hay.find(needle) != n - 4) {
    state.SkipWithError("the needle is not found where expected");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(hay);
    benchmark::DoNotOptimize(needle);
    auto pos = hay.find(needle);
    benchmark::DoNotOptimize(pos);
  }
  record_alignment(state, hay, needle);
}

// a.compare(b): equal but for the last character.
template <class String>
void op_compare(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  String a = make<String>(op_text(n));
  String b = a;
  b[n - 1] = static_cast<char>(b[n - 1] == 'a' ? 'b' : 'a');
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
    int r = a.compare(b);
    benchmark::DoNotOptimize(r);
  }
  record_alignment(state, a, b);
}

// a == b: equal strings in two objects (the whole length is compared).
template <class String>
void op_equal(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  String a = make<String>(op_text(n));
  String b = make<String>(op_text(n));
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
    bool r = a == b;
    benchmark::DoNotOptimize(r);
  }
  record_alignment(state, a, b);
}

// s.clear(); s.append(first half); s.append(second half): within the capacity, reserved before
// the loop (so no contender allocates in the loop).
template <class String>
void op_append(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const String first = make<String>(op_text(n).substr(0, n / 2));
  const String second = make<String>(op_text(n).substr(n / 2));
  String s;
  s.reserve(n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(s);
    s.clear();
    s.append(first);
    s.append(second);
    benchmark::DoNotOptimize(s);
  }
  record_alignment(state, s, first);
  if (s.size() != n) state.SkipWithError("append lost characters");
}

// --- registration --------------------------------------------------------------------------------

template <class Impl>
void register_tokenize() {
  benchmark::RegisterBenchmark((std::string("tokenize/") + Impl::name).c_str(),
                               tokenize_text<Impl, true>, kNaturalShare);
  benchmark::RegisterBenchmark((std::string("build_tokens/") + Impl::name).c_str(),
                               tokenize_text<Impl, false>, kNaturalShare);
  benchmark::AddCustomContext(std::string("string sizeof ") + Impl::name,
                              std::to_string(sizeof(typename Impl::type)));
}

template <class Impl>
void register_sweep() {
  for (const int pct : kSweepShares) {
    const std::string suffix = std::string("/") + Impl::name + "/" + std::to_string(pct);
    benchmark::RegisterBenchmark(("tokenize_sweep" + suffix).c_str(), tokenize_text<Impl, true>,
                                 pct);
    benchmark::RegisterBenchmark(("build_tokens_sweep" + suffix).c_str(),
                                 tokenize_text<Impl, false>, pct);
  }
}

constexpr int kConstructLengths[] = {1, 8, 15, 16, 31, 32, 64, 128};

template <class String>
void register_construct(const char* impl) {
  auto* one =
      benchmark::RegisterBenchmark((std::string("construct/") + impl).c_str(), construct<String>);
  auto* two = benchmark::RegisterBenchmark((std::string("construct_2t/") + impl).c_str(),
                                           construct<String>);
  for (const int n : kConstructLengths) {
    one->Arg(n);
    two->Arg(n);
  }
  two->Threads(2);
}

template <class String>
void register_op(const char* impl, std::size_t length) {
  const auto arg = static_cast<std::int64_t>(length);
  const std::string suffix = std::string("/") + impl;
  benchmark::RegisterBenchmark(("find" + suffix).c_str(), op_find<String>)->Arg(arg);
  benchmark::RegisterBenchmark(("compare" + suffix).c_str(), op_compare<String>)->Arg(arg);
  benchmark::RegisterBenchmark(("append" + suffix).c_str(), op_append<String>)->Arg(arg);
  benchmark::RegisterBenchmark(("equal" + suffix).c_str(), op_equal<String>)->Arg(arg);
}

void register_all() {
  for_each_tokenizer_impl([](auto tag) { register_tokenize<decltype(tag)>(); });
  for_each_sweep_impl([](auto tag) { register_sweep<decltype(tag)>(); });

  register_construct<std::string>("std_string");
  register_construct<lowalloc::small_string<32>>("small_string_32");
  register_construct<lowalloc::small_string<64>>("small_string_64");
  register_construct<lowalloc::fixed_string<128>>("fixed_string_128");

  // fixed_string: <32> for the short strings, <256> for the long ones.
  register_op<std::string>("std_string", kShort);
  register_op<lowalloc::small_string<32>>("small_string_32", kShort);
  register_op<lowalloc::fixed_string<32>>("fixed_string", kShort);
  register_op<std::string>("std_string", kLongOp);
  register_op<lowalloc::small_string<32>>("small_string_32", kLongOp);
  register_op<lowalloc::fixed_string<256>>("fixed_string", kLongOp);
}

void add_workload_context() {
  benchmark::AddCustomContext("tokenizer text", describe(cached_text(kNaturalShare)));
  for (const int pct : kSweepShares) {
    benchmark::AddCustomContext("tokenizer sweep text " + std::to_string(pct) + "%",
                                describe(cached_text(pct)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  add_workload_context();
#ifdef LOWALLOC_BENCH_COUNT_ALLOCATIONS
  return lowalloc::run_benchmarks_with_memory(argc, argv);
#else
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
#endif
}
