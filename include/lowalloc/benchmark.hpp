// lowalloc/benchmark.hpp — heap allocations per iteration in Google Benchmark's output.
//
// NEEDS: the program links `lowalloc::alloc_count` (which replaces operator new/delete and, on
// glibc, malloc; a program that forgets it fails to link, naming
// `benchmark_memory_manager_needs_lowalloc_alloc_count`) and Google Benchmark
// (`benchmark::benchmark`, 1.7 or later). Nothing else in lowalloc includes this header, so the
// rest of lowalloc does not depend on Google Benchmark.
//
// `benchmark_memory_manager` is a `benchmark::MemoryManager` over alloc_count's per-thread
// counters. Once it is registered, Google Benchmark runs every benchmark once more after timing
// it (16 iterations, or fewer if the timed run had fewer) between the manager's Start() and Stop(),
// and writes into its JSON output, per run:
//   allocs_per_iter        allocations in that run / its iterations
//   max_bytes_used         peak of the bytes held, above what was held at Start() (usable sizes)
//   total_allocated_bytes  bytes requested by the run's allocations
//   net_heap_growth        bytes held at Stop() minus bytes held at Start() (usable sizes)
// The timed runs are not counted differently, but they do run with alloc_count's operator new,
// which costs a few nanoseconds per allocation: see docs/benchmarks.md before timing with it.
// Google Benchmark 1.7's console output does not show these fields; `benchmark_memory_reporter`
// adds them to it as counters (allocs_per_iter, bytes_per_iter, max_bytes_used).
//
// Replace BENCHMARK_MAIN() with:
//
//   #include <lowalloc/benchmark.hpp>
//
//   static void push_back(benchmark::State& state) {
//     for (auto _ : state) {
//       std::vector<int> v;
//       for (int i = 0; i < 100; ++i) v.push_back(i);
//       benchmark::DoNotOptimize(v.data());
//     }
//   }
//   BENCHMARK(push_back);
//   LOWALLOC_BENCHMARK_MAIN();   // ... allocs_per_iter=8.0625 bytes_per_iter=1020 ...
//
// What the figures include:
// - Only the calling thread's allocations are counted. Google Benchmark (1.7 to 1.9) makes the
//   counted run on the main thread with one thread, also for a benchmark registered with
//   Threads(n); work the benchmark hands to threads of its own is not counted.
// - Everything between Start() and Stop() is counted, Google Benchmark's own allocations too: its
//   thread manager (one allocation, freed before Stop()), a copy of the benchmark's arguments if
//   it has any (one more), the user counters the benchmark sets (SetItemsProcessed,
//   state.counters: 4 for the first one with 1.7), and the fixture's SetUp(). The benchmark's own
//   allocations outside its loop count as well. So a benchmark whose loop allocates nothing
//   reports allocs_per_iter 0.0625 (1/16), or 0.375 with an argument and items_per_second; the
//   difference between two benchmarks of the same shape, or between two builds of one, is exact.
// - max_bytes_used and net_heap_growth are in usable sizes (malloc_usable_size: the block the
//   allocator handed out, e.g. 24 bytes for a 10-byte request on glibc x86-64, exactly the request
//   under ASan), because a free does not say how many bytes were requested; total_allocated_bytes
//   counts the requests. Where the C library has no malloc_usable_size
//   (`lowalloc::live_bytes_counted()` is false) both are `benchmark_memory_manager::not_measured`,
//   Google Benchmark's TombstoneValue, which its JSON output leaves out for net_heap_growth and
//   prints as 9223372036854775807 for max_bytes_used.
// - With ASan or another sanitizer that owns malloc, only operator new/delete are counted (see
//   `lowalloc::malloc_counted()`).
#ifndef LOWALLOC_BENCHMARK_HPP
#define LOWALLOC_BENCHMARK_HPP

#if defined(__has_include)
#if !__has_include(<benchmark/benchmark.h>)
#error "<lowalloc/benchmark.hpp> needs Google Benchmark (<benchmark/benchmark.h>, libbenchmark-dev)"
#endif
#endif

#include <benchmark/benchmark.h>
#include <lowalloc/alloc_count.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace lowalloc {

/// A `benchmark::MemoryManager` that counts the calling thread's heap activity with
/// lowalloc::alloc_count. Register it with `register_benchmark_memory_manager()` or
/// `benchmark::RegisterMemoryManager(&m)`; it must outlive the benchmark run.
class benchmark_memory_manager : public ::benchmark::MemoryManager {
 public:
  /// A figure that cannot be measured here: the value of Google Benchmark's TombstoneValue, which
  /// its shared library (1.7 to 1.9, built with hidden symbols) does not export for programs to
  /// read.
  static constexpr std::int64_t not_measured = std::numeric_limits<std::int64_t>::max();

  benchmark_memory_manager() noexcept {
    detail::benchmark_memory_manager_needs_lowalloc_alloc_count();
  }

  /// Starts counting, and starts the peak of live bytes from the bytes held now. Never allocates.
  void Start() override {
    start_ = thread_alloc_totals();
    outer_peak_ = exchange_thread_peak(start_.live_bytes);
  }

  /// Fills every field of `result` with the activity since Start(). Never allocates.
  void Stop(Result& result) override {
    const alloc_totals now = thread_alloc_totals();
    result.num_allocs = static_cast<std::int64_t>(now.allocations - start_.allocations);
    result.total_allocated_bytes = static_cast<std::int64_t>(now.bytes - start_.bytes);
    if (live_bytes_counted()) {
      result.max_bytes_used = static_cast<std::int64_t>(now.peak_live_bytes - start_.live_bytes);
      result.net_heap_growth = static_cast<std::int64_t>(now.live_bytes - start_.live_bytes);
    } else {
      result.max_bytes_used = not_measured;
      result.net_heap_growth = not_measured;
    }
    // An enclosing measurement of the peak still sees this one's.
    exchange_thread_peak(now.peak_live_bytes > outer_peak_ ? now.peak_live_bytes : outer_peak_);
  }

  // Google Benchmark 1.7 calls this deprecated form; 1.8 removed it (then this is an overload).
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winconsistent-missing-override"
#endif
  /// Same as Stop(Result&).
  void Stop(Result* result) { Stop(*result); }
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

 private:
  alloc_totals start_;
  std::ptrdiff_t outer_peak_ = 0;
};

/// Registers one process-wide `benchmark_memory_manager` with Google Benchmark (again on every
/// call, harmlessly) and returns it.
inline benchmark_memory_manager& register_benchmark_memory_manager() {
  static benchmark_memory_manager manager;
  ::benchmark::RegisterMemoryManager(&manager);
  return manager;
}

/// A display reporter that shows the memory manager's figures on the console. It wraps Google
/// Benchmark's default display reporter (so --benchmark_format and --benchmark_color still
/// apply); when that is the console reporter, each run that has memory figures gets three
/// counters: allocs_per_iter, bytes_per_iter (total_allocated_bytes per iteration) and
/// max_bytes_used. The JSON and CSV reporters are left as they are: Google Benchmark's JSON
/// already has allocs_per_iter, max_bytes_used, total_allocated_bytes and net_heap_growth.
class benchmark_memory_reporter : public ::benchmark::BenchmarkReporter {
 public:
  benchmark_memory_reporter() : inner_(::benchmark::CreateDefaultDisplayReporter()) {}
  /// Wraps `inner`, which is used as it is (a ConsoleReporter gets the counters).
  explicit benchmark_memory_reporter(std::unique_ptr<::benchmark::BenchmarkReporter> inner)
      : inner_(std::move(inner)) {}

  bool ReportContext(const Context& context) override {
    inner_->SetOutputStream(&GetOutputStream());
    inner_->SetErrorStream(&GetErrorStream());
    return inner_->ReportContext(context);
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    if (dynamic_cast<::benchmark::ConsoleReporter*>(inner_.get()) == nullptr) {
      inner_->ReportRuns(runs);
      return;
    }
    std::vector<Run> shown(runs);
    for (Run& run : shown) {
      if (run.memory_result == nullptr) continue;
      const ::benchmark::MemoryManager::Result& m = *run.memory_result;
      // allocs_per_iter is num_allocs over the counted run's iterations, which the Run does not
      // carry: total bytes per iteration follow from the same ratio.
      double bytes_per_iter = 0;
      if (m.num_allocs > 0 && m.total_allocated_bytes != not_measured)
        bytes_per_iter = static_cast<double>(m.total_allocated_bytes) * run.allocs_per_iter /
                         static_cast<double>(m.num_allocs);
      run.counters["allocs_per_iter"] = ::benchmark::Counter(run.allocs_per_iter);
      run.counters["bytes_per_iter"] = ::benchmark::Counter(
          bytes_per_iter, ::benchmark::Counter::kDefaults, ::benchmark::Counter::kIs1024);
      if (m.max_bytes_used != not_measured)
        run.counters["max_bytes_used"] =
            ::benchmark::Counter(static_cast<double>(m.max_bytes_used),
                                 ::benchmark::Counter::kDefaults, ::benchmark::Counter::kIs1024);
    }
    inner_->ReportRuns(shown);
  }

  void Finalize() override { inner_->Finalize(); }

 private:
  static constexpr std::int64_t not_measured = benchmark_memory_manager::not_measured;

  std::unique_ptr<::benchmark::BenchmarkReporter> inner_;
};

/// BENCHMARK_MAIN() with the memory manager registered and its figures on the console. Returns
/// what main returns.
inline int run_benchmarks_with_memory(int argc, char** argv) {
  char arg0_default[] = "benchmark";
  char* args_default = arg0_default;
  if (argv == nullptr) {
    argc = 1;
    argv = &args_default;
  }
  ::benchmark::Initialize(&argc, argv);
  if (::benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_benchmark_memory_manager();
  benchmark_memory_reporter display;
  ::benchmark::RunSpecifiedBenchmarks(&display);
  ::benchmark::Shutdown();
  return 0;
}

}  // namespace lowalloc

/// Defines main() as BENCHMARK_MAIN() does, with lowalloc's memory manager and console figures.
#define LOWALLOC_BENCHMARK_MAIN()                                                                \
  int main(int argc, char** argv) { return ::lowalloc::run_benchmarks_with_memory(argc, argv); } \
  int main(int, char**)

#endif  // LOWALLOC_BENCHMARK_HPP
