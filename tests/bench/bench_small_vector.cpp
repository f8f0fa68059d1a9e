// bench_small_vector.cpp — lowalloc::small_vector against std::vector and the peers
// (boost::container::small_vector, absl::InlinedVector, llvm::SmallVector), each one compiled in
// only when CMake found it (LOWALLOC_BENCH_HAVE_BOOST / _ABSL / _LLVM).
//
// Benchmarks are named "<workload>/<impl>[/<param>]" so that scripts/bench_table.py can group
// them; impl is one of lowalloc, std_vector, std_vector_reserve, boost, absl, llvm, array_floor.
//
//   push_back/<impl>/<N>      100 vectors of chi-squared(8) lengths, filled by push_back, at eight
//                             code layouts (see "code layout" below): 800 vectors per iteration
//   copy/<impl>/<size>        copy construction, N = 16 (size 8: inline, 32: on the heap)
//   move/<impl>/<size>        move construction and move assignment back, N = 16
//   insert_mid_string/<impl>  8 strings of 20 chars, then 8 more inserted in the middle, N = 16
//   iterate/<impl>/<size>     sum with operator[], N = 16
//
// CMake builds this file twice: bench_small_vector with the build type's flags (Release: -O3), and
// bench_small_vector_O2, the push_back workload alone at -O2, named push_back_O2/<impl>/<N>
// (LOWALLOC_BENCH_PUSH_BACK_ONLY, LOWALLOC_BENCH_WORKLOAD_SUFFIX). Both report their compiler
// flags in the context ("compiler flags"). A third build, bench_small_vector_allocs
// (LOWALLOC_BENCH_COUNT_ALLOCATIONS), links lowalloc::alloc_count and <lowalloc/benchmark.hpp>'s
// memory manager to report allocations per iteration; its timings are not quoted.
//
// Repetitions, min time and output format come from the command line; see
// scripts/run-benchmarks.sh.
#include <lowalloc/small_vector.hpp>

#include <benchmark/benchmark.h>
#ifdef LOWALLOC_BENCH_COUNT_ALLOCATIONS
#include <lowalloc/benchmark.hpp>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#ifdef LOWALLOC_BENCH_HAVE_BOOST
#include <boost/container/small_vector.hpp>
#endif
#ifdef LOWALLOC_BENCH_HAVE_ABSL
#include <absl/container/inlined_vector.h>
#endif
#ifdef LOWALLOC_BENCH_HAVE_LLVM
#include <llvm/ADT/SmallVector.h>
#endif

#ifndef LOWALLOC_BENCH_WORKLOAD_SUFFIX
#define LOWALLOC_BENCH_WORKLOAD_SUFFIX ""
#endif

namespace {

// --- the implementations: one tag per container, all used through the std::vector interface -----

struct lowalloc_impl {
  static constexpr const char* name = "lowalloc";
  static constexpr bool reserve = false;
  template <class T, std::size_t N>
  using vector = lowalloc::small_vector<T, N>;
};

struct std_vector_impl {
  static constexpr const char* name = "std_vector";
  static constexpr bool reserve = false;
  template <class T, std::size_t N>
  using vector = std::vector<T>;
};

// std::vector with reserve(N) before the first push_back: one allocation per vector.
struct std_vector_reserve_impl {
  static constexpr const char* name = "std_vector_reserve";
  static constexpr bool reserve = true;
  template <class T, std::size_t N>
  using vector = std::vector<T>;
};

#ifdef LOWALLOC_BENCH_HAVE_BOOST
struct boost_impl {
  static constexpr const char* name = "boost";
  static constexpr bool reserve = false;
  template <class T, std::size_t N>
  using vector = boost::container::small_vector<T, N>;
};
#endif

#ifdef LOWALLOC_BENCH_HAVE_ABSL
struct absl_impl {
  static constexpr const char* name = "absl";
  static constexpr bool reserve = false;
  template <class T, std::size_t N>
  using vector = absl::InlinedVector<T, N>;
};
#endif

#ifdef LOWALLOC_BENCH_HAVE_LLVM
struct llvm_impl {
  static constexpr const char* name = "llvm";
  static constexpr bool reserve = false;
  template <class T, std::size_t N>
  using vector = llvm::SmallVector<T, static_cast<unsigned>(N)>;
};
#endif

// --- the push_back workload ----------------------------------------------------------------------

constexpr std::size_t kLengths = 100;
constexpr unsigned kSeed = 20240611;
constexpr int kMaxLength = 256;  // the array floor's capacity; chi-squared(8) stays far below

// 100 lengths drawn from chi-squared(8) (mean 8; ~4% exceed 16), rounded, fixed seed.
const std::vector<int>& chi2_lengths() {
  static const std::vector<int> lengths = [] {
    std::mt19937 rng(kSeed);
    std::chi_squared_distribution<double> dist(8.0);
    std::vector<int> out;
    for (std::size_t i = 0; i < kLengths; ++i) {
      out.push_back(std::min(kMaxLength, static_cast<int>(std::lround(dist(rng)))));
    }
    return out;
  }();
  return lengths;
}

std::int64_t chi2_total() {
  std::int64_t total = 0;
  for (const int n : chi2_lengths()) total += n;
  return total;
}

// --- code layout: every push_back loop at eight places
// ----------------------------------------------
//
// Where a hot loop falls in the address space decides its speed more than anything in it: on AMD
// Zen 5 here, one and the same push_back loop of lowalloc, boost or llvm runs from 1x to 2.7x its
// best time depending only on how many bytes precede it (a loop split across two 64-byte fetch
// blocks is one cause, not the only one). Which place a loop gets is decided by the size of every
// function before it in the binary: a lottery of the build, which in one binary can make any
// container look 30% faster or slower than in the next. So each push_back benchmark runs its
// workload in eight copies: functions that start on a 64-byte boundary, their code then shifted by
// 0, 8, ..., 56 bytes (NOPs at the top, run once per call). The loop meets eight places, as it
// would across the builds of a user's program, and the time is their sum. Built with plain flags;
// the loop itself is placed by the compiler as in any build.

// The shifts. LOWALLOC_BENCH_PHASES=1 in the environment also registers each shift on its own, as
// push_back_phase/<impl>/<N>/<shift>.
constexpr int kShiftStep = 8;
constexpr int kShiftCount = 8;

#if defined(__GNUC__)
#define LOWALLOC_BENCH_LAYOUT_FN __attribute__((noinline, aligned(64)))
template <int Shift>
inline void shift_code() {
  if constexpr (Shift > 0) asm volatile(".skip %c0, 0x90" : : "n"(Shift));  // one-byte NOPs
}
#else  // other compilers: the eight copies, without the shifts
#define LOWALLOC_BENCH_LAYOUT_FN
template <int Shift>
inline void shift_code() {}
#endif

// 100 vectors of chi-squared(8) lengths, filled by push_back, with the code shifted by Shift.
template <class Impl, std::size_t N, int Shift>
LOWALLOC_BENCH_LAYOUT_FN void fill_vectors(const std::vector<int>& lengths) {
  using vector = typename Impl::template vector<int, N>;
  shift_code<Shift>();
  for (const int n : lengths) {
    vector v;
    if constexpr (Impl::reserve) v.reserve(N);
    for (int i = 0; i < n; ++i) v.push_back(i);
    int* data = v.data();
    std::size_t size = v.size();
    benchmark::DoNotOptimize(data);
    benchmark::DoNotOptimize(size);
  }
}

// The floor: the same writes into a raw array on the stack, no container at all.
template <int Shift>
LOWALLOC_BENCH_LAYOUT_FN void fill_arrays(const std::vector<int>& lengths) {
  shift_code<Shift>();
  for (const int n : lengths) {
    std::array<int, kMaxLength> a;
    for (int i = 0; i < n; ++i) a[static_cast<std::size_t>(i)] = i;
    int* data = a.data();
    std::size_t size = static_cast<std::size_t>(n);
    benchmark::DoNotOptimize(data);
    benchmark::DoNotOptimize(size);
  }
}

template <class Impl, std::size_t N, int... I>
void fill_vectors_everywhere(const std::vector<int>& lengths, std::integer_sequence<int, I...>) {
  (fill_vectors<Impl, N, I * kShiftStep>(lengths), ...);
}
template <int... I>
void fill_arrays_everywhere(const std::vector<int>& lengths, std::integer_sequence<int, I...>) {
  (fill_arrays<I * kShiftStep>(lengths), ...);
}

// One iteration: the 100 vectors at each of the eight places (800 vectors).
template <class Impl, std::size_t N>
void push_back(benchmark::State& state) {
  const std::vector<int>& lengths = chi2_lengths();
  for (auto _ : state) {
    fill_vectors_everywhere<Impl, N>(lengths, std::make_integer_sequence<int, kShiftCount>{});
  }
  state.SetItemsProcessed(state.iterations() * kShiftCount * chi2_total());
}

void push_back_array_floor(benchmark::State& state) {
  const std::vector<int>& lengths = chi2_lengths();
  for (auto _ : state) {
    fill_arrays_everywhere(lengths, std::make_integer_sequence<int, kShiftCount>{});
  }
  state.SetItemsProcessed(state.iterations() * kShiftCount * chi2_total());
}

// One phase alone (100 vectors per iteration), to see the lottery.
template <class Impl, std::size_t N, int Shift>
void push_back_phase(benchmark::State& state) {
  const std::vector<int>& lengths = chi2_lengths();
  for (auto _ : state) fill_vectors<Impl, N, Shift>(lengths);
  state.SetItemsProcessed(state.iterations() * chi2_total());
}

// --- copy, move, insert, iterate (N = 16) --------------------------------------------------------

constexpr std::size_t kN = 16;

template <class Vector>
Vector make_ints(std::size_t size) {
  Vector v;
  for (std::size_t i = 0; i < size; ++i) v.push_back(static_cast<int>(i));
  return v;
}

template <class Impl>
void copy(benchmark::State& state) {
  using vector = typename Impl::template vector<int, kN>;
  vector src = make_ints<vector>(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(src);
    vector dst(src);
    benchmark::DoNotOptimize(dst);
  }
}

// GCC 12 sees boost::container::small_vector's move of its inline elements through a memmove of
// an unbounded length (-Wstringop-overread, a false positive inside the peer's header).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
// One iteration = a move construction out of `a` and a move assignment back into it.
template <class Impl>
void move(benchmark::State& state) {
  using vector = typename Impl::template vector<int, kN>;
  const auto size = static_cast<std::size_t>(state.range(0));
  vector a = make_ints<vector>(size);
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    vector b(std::move(a));
    benchmark::DoNotOptimize(b);
    a = std::move(b);
  }
  if (a.size() != size) state.SkipWithError("the moved vector lost its elements");
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif

template <class Impl>
void insert_mid_string(benchmark::State& state) {
  using vector = typename Impl::template vector<std::string, kN>;
  std::vector<std::string> pool;  // 20 chars: every string is on the heap (libstdc++ SSO is 15)
  for (std::size_t i = 0; i < kN; ++i) pool.emplace_back(20, static_cast<char>('a' + i));
  for (auto _ : state) {
    vector v;
    for (std::size_t i = 0; i < kN / 2; ++i) v.push_back(pool[i]);
    for (std::size_t i = kN / 2; i < kN; ++i) {
      v.insert(v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), pool[i]);
    }
    benchmark::DoNotOptimize(v);
  }
}

template <class Impl>
void iterate(benchmark::State& state) {
  using vector = typename Impl::template vector<int, kN>;
  vector v = make_ints<vector>(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(v);
    int sum = 0;
    for (std::size_t i = 0; i < v.size(); ++i) sum += v[i];
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// --- registration --------------------------------------------------------------------------------

template <class Impl, std::size_t N, int... I>
void register_push_back_phases(std::integer_sequence<int, I...>) {
  const std::string prefix = std::string("push_back_phase" LOWALLOC_BENCH_WORKLOAD_SUFFIX "/") +
                             Impl::name + "/" + std::to_string(N) + "/";
  (benchmark::RegisterBenchmark((prefix + std::to_string(I * kShiftStep)).c_str(),
                                push_back_phase<Impl, N, I * kShiftStep>),
   ...);
}

bool phases_wanted() {
  const char* env = std::getenv("LOWALLOC_BENCH_PHASES");
  return env != nullptr && std::string(env) == "1";
}

template <class Impl, std::size_t N>
void register_push_back() {
  const std::string name = std::string("push_back" LOWALLOC_BENCH_WORKLOAD_SUFFIX "/") +
                           Impl::name + "/" + std::to_string(N);
  benchmark::RegisterBenchmark(name.c_str(), push_back<Impl, N>);
  if (phases_wanted()) {
    register_push_back_phases<Impl, N>(std::make_integer_sequence<int, kShiftCount>{});
  }
  using vector = typename Impl::template vector<int, N>;
  if constexpr (!Impl::reserve) {
    benchmark::AddCustomContext(
        "sizeof " + std::string(Impl::name) + "<int, " + std::to_string(N) + ">",
        std::to_string(sizeof(vector)));
  }
}

template <class Impl>
void register_push_back_all() {
  register_push_back<Impl, 8>();
  register_push_back<Impl, 12>();
  register_push_back<Impl, 16>();
  register_push_back<Impl, 32>();
}

template <class Impl>
void register_containers() {
  const std::string impl = Impl::name;
  benchmark::RegisterBenchmark(("copy/" + impl).c_str(), copy<Impl>)->Arg(8)->Arg(32);
  benchmark::RegisterBenchmark(("move/" + impl).c_str(), move<Impl>)->Arg(8)->Arg(32);
  benchmark::RegisterBenchmark(("insert_mid_string/" + impl).c_str(), insert_mid_string<Impl>);
  benchmark::RegisterBenchmark(("iterate/" + impl).c_str(), iterate<Impl>)->Arg(16)->Arg(1000);
}

// Calls f(tag) for lowalloc, std::vector and every peer that was compiled in.
template <class F>
void for_each_container(F f) {
  f(lowalloc_impl{});
  f(std_vector_impl{});
#ifdef LOWALLOC_BENCH_HAVE_BOOST
  f(boost_impl{});
#endif
#ifdef LOWALLOC_BENCH_HAVE_ABSL
  f(absl_impl{});
#endif
#ifdef LOWALLOC_BENCH_HAVE_LLVM
  f(llvm_impl{});
#endif
}

void register_all() {
  for_each_container([](auto tag) { register_push_back_all<decltype(tag)>(); });
  register_push_back_all<std_vector_reserve_impl>();
  for (const int n : {8, 12, 16, 32}) {
    const std::string name =
        "push_back" LOWALLOC_BENCH_WORKLOAD_SUFFIX "/array_floor/" + std::to_string(n);
    benchmark::RegisterBenchmark(name.c_str(), push_back_array_floor);
  }
#ifndef LOWALLOC_BENCH_PUSH_BACK_ONLY
  for_each_container([](auto tag) { register_containers<decltype(tag)>(); });
#endif
}

void add_workload_context() {
  const std::vector<int>& lengths = chi2_lengths();
  std::size_t over[3] = {0, 0, 0};
  for (const int n : lengths) {
    over[0] += n > 8;
    over[1] += n > 16;
    over[2] += n > 32;
  }
  benchmark::AddCustomContext(
      "push_back lengths",
      std::to_string(kLengths) + " x chi-squared(8), seed " + std::to_string(kSeed) + ", total " +
          std::to_string(chi2_total()) + ", max " +
          std::to_string(*std::max_element(lengths.begin(), lengths.end())) +
          ", >8: " + std::to_string(over[0]) + ", >16: " + std::to_string(over[1]) +
          ", >32: " + std::to_string(over[2]));
#ifdef LOWALLOC_BENCH_FLAGS
  benchmark::AddCustomContext("compiler flags", LOWALLOC_BENCH_FLAGS);
#endif
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
