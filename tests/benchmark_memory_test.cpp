// lowalloc::benchmark_memory_manager: exact figures between Start() and Stop(), then the same
// figures through a real Google Benchmark run (its reporters' Run and JSON fields), and the
// console counters of benchmark_memory_reporter.
//
// Blocks are 24 and 40 bytes: on glibc x86-64 (chunks of 32 and 48) and under ASan (which reports
// the request) their usable size is the request, so max_bytes_used and net_heap_growth, which are
// usable sizes, have the same exact values in every preset.
#include <lowalloc/benchmark.hpp>

#include "support/escape.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

// MemoryManager::Result's constructor reads MemoryManager::TombstoneValue, which Google
// Benchmark's shared library (1.7 to 1.9) does not export: a program that constructs a Result
// needs a definition of its own. Weak, so that a library that does define it wins.
__attribute__((weak)) const std::int64_t benchmark::MemoryManager::TombstoneValue =
    lowalloc::benchmark_memory_manager::not_measured;

namespace {

using result = benchmark::MemoryManager::Result;

using lowalloc::test::escape;

// Two allocations, 24 and 40 bytes, both held at once, both freed.
void two_allocations() {
  void* a = ::operator new(24);
  escape(a);
  void* b = ::operator new(40);
  escape(b);
  ::operator delete(b);
  ::operator delete(a);
}

// A usable-size figure: exact where live bytes are counted, Google Benchmark's "not available"
// elsewhere.
std::int64_t live(std::int64_t bytes) {
  return lowalloc::live_bytes_counted() ? bytes : lowalloc::benchmark_memory_manager::not_measured;
}

TEST(BenchmarkMemoryManager, CountsBetweenStartAndStop) {
  lowalloc::benchmark_memory_manager m;
  result r;
  m.Start();
  for (int i = 0; i < 10; ++i) two_allocations();
  m.Stop(r);
  EXPECT_EQ(r.num_allocs, 20);
  EXPECT_EQ(r.total_allocated_bytes, 10 * (24 + 40));
  EXPECT_EQ(r.max_bytes_used, live(24 + 40));
  EXPECT_EQ(r.net_heap_growth, live(0));
}

TEST(BenchmarkMemoryManager, KeptBlocksAreNetGrowth) {
  lowalloc::benchmark_memory_manager m;
  void* kept[3];
  result r;
  m.Start();
  for (void*& p : kept) p = ::operator new(40);
  ::operator delete(kept[0]);
  m.Stop(r);
  EXPECT_EQ(r.num_allocs, 3);
  EXPECT_EQ(r.total_allocated_bytes, 120);
  EXPECT_EQ(r.max_bytes_used, live(120));
  EXPECT_EQ(r.net_heap_growth, live(80));
  ::operator delete(kept[1]);
  ::operator delete(kept[2]);
}

// Bytes held before Start() and freed after it: negative growth, and the peak is measured from
// what was held at Start(), so freeing first then allocating less leaves it at 0.
TEST(BenchmarkMemoryManager, FreeingOlderBlocksIsNegativeGrowth) {
  void* old = ::operator new(40);
  escape(old);
  lowalloc::benchmark_memory_manager m;
  result r;
  m.Start();
  ::operator delete(old);
  void* p = ::operator new(24);
  escape(p);
  m.Stop(r);
  EXPECT_EQ(r.num_allocs, 1);
  EXPECT_EQ(r.total_allocated_bytes, 24);
  EXPECT_EQ(r.max_bytes_used, live(0));
  EXPECT_EQ(r.net_heap_growth, live(-16));
  ::operator delete(p);
}

// A peak measured around the manager's run still sees its own peak, and the manager's.
TEST(BenchmarkMemoryManager, EnclosingPeakSurvives) {
  if (!lowalloc::live_bytes_counted()) GTEST_SKIP() << "no malloc_usable_size here";
  const std::ptrdiff_t base = lowalloc::thread_alloc_totals().live_bytes;
  const std::ptrdiff_t saved = lowalloc::exchange_thread_peak(base);
  void* a = ::operator new(40);
  escape(a);
  ::operator delete(a);
  lowalloc::benchmark_memory_manager m;
  result r;
  m.Start();
  two_allocations();
  m.Stop(r);
  EXPECT_EQ(r.max_bytes_used, 64);
  EXPECT_EQ(lowalloc::thread_alloc_totals().peak_live_bytes - base, 64);
  lowalloc::exchange_thread_peak(saved > base + 64 ? saved : base + 64);
}

// ---- through Google Benchmark -------------------------------------------------------------------
// 16 iterations: Google Benchmark's counted run makes min(16, iterations) of them.
constexpr int iterations = 16;

void bm_empty(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(bm_empty)->Iterations(iterations);

void bm_two_allocations(benchmark::State& state) {
  for (auto _ : state) two_allocations();
}
BENCHMARK(bm_two_allocations)->Iterations(iterations);

// Keeps one 40-byte block per iteration until the test frees them (timed run + counted run).
void* g_kept[2 * iterations];
std::size_t g_kept_count = 0;

void bm_keep_one(benchmark::State& state) {
  for (auto _ : state) {
    g_kept[g_kept_count] = ::operator new(40);
    escape(g_kept[g_kept_count]);
    ++g_kept_count;
  }
}
BENCHMARK(bm_keep_one)->Iterations(iterations);

struct run_figures {
  std::string name;
  bool has_memory = false;
  double allocs_per_iter = 0;
  result memory;
};

// Keeps what the runner reports; its memory_result points into the runner and is copied here.
class capture_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      run_figures f;
      f.name = run.benchmark_name();
      f.has_memory = run.memory_result != nullptr;
      f.allocs_per_iter = run.allocs_per_iter;
      if (run.memory_result != nullptr) f.memory = *run.memory_result;
      runs_.push_back(f);
    }
  }
  const run_figures& get(const std::string& name) const {
    for (const run_figures& f : runs_)
      if (f.name == name) return f;
    static const run_figures none;
    ADD_FAILURE() << "no run named " << name;
    return none;
  }

 private:
  std::vector<run_figures> runs_;
};

// Registers the manager for one test and unregisters it after, so the other tests run bare.
class BenchmarkRun : public ::testing::Test {
 protected:
  void SetUp() override { benchmark::RegisterMemoryManager(&manager_); }
  void TearDown() override {
    benchmark::RegisterMemoryManager(nullptr);
    for (std::size_t i = 0; i < g_kept_count; ++i) ::operator delete(g_kept[i]);
    g_kept_count = 0;
  }

 private:
  lowalloc::benchmark_memory_manager manager_;
};

TEST_F(BenchmarkRun, ReportsExactFiguresPerIteration) {
  capture_reporter reporter;
  ASSERT_EQ(benchmark::RunSpecifiedBenchmarks(&reporter, "^bm_"), 3u);
  const std::string suffix = "/iterations:" + std::to_string(iterations);
  const run_figures& empty = reporter.get("bm_empty" + suffix);
  const run_figures& two = reporter.get("bm_two_allocations" + suffix);
  const run_figures& keep = reporter.get("bm_keep_one" + suffix);
  ASSERT_TRUE(empty.has_memory && two.has_memory && keep.has_memory);

  // Google Benchmark's own allocation in the counted run: its thread manager (docs/benchmarks.md
  // and <lowalloc/benchmark.hpp> quote it). Held across the loop, freed before Stop().
  EXPECT_EQ(empty.memory.num_allocs, 1);
  EXPECT_EQ(empty.memory.net_heap_growth, live(0));

  // Over that baseline, every figure is exact.
  EXPECT_EQ(two.memory.num_allocs - empty.memory.num_allocs, 2 * iterations);
  EXPECT_EQ(two.allocs_per_iter - empty.allocs_per_iter, 2.0);
  EXPECT_EQ(two.memory.total_allocated_bytes - empty.memory.total_allocated_bytes,
            iterations * (24 + 40));
  EXPECT_EQ(two.memory.net_heap_growth, live(0));
  if (lowalloc::live_bytes_counted()) {
    EXPECT_EQ(two.memory.max_bytes_used - empty.memory.max_bytes_used, 24 + 40);
  }

  EXPECT_EQ(keep.memory.num_allocs - empty.memory.num_allocs, iterations);
  EXPECT_EQ(keep.allocs_per_iter - empty.allocs_per_iter, 1.0);
  EXPECT_EQ(keep.memory.net_heap_growth, live(iterations * 40));
  if (lowalloc::live_bytes_counted()) {
    EXPECT_EQ(keep.memory.max_bytes_used - empty.memory.max_bytes_used, iterations * 40);
  }
  EXPECT_EQ(g_kept_count, 2u * iterations);
}

TEST_F(BenchmarkRun, JsonHasTheMemoryFields) {
  benchmark::JSONReporter json;
  std::ostringstream out;
  std::ostringstream err;
  json.SetOutputStream(&out);
  json.SetErrorStream(&err);
  ASSERT_EQ(benchmark::RunSpecifiedBenchmarks(&json, "^bm_two_allocations"), 1u);
  const std::string text = out.str();
  EXPECT_NE(text.find("\"allocs_per_iter\": 2.0625"), std::string::npos) << text;
  EXPECT_NE(text.find("\"total_allocated_bytes\": "), std::string::npos) << text;
  if (lowalloc::live_bytes_counted()) {
    EXPECT_NE(text.find("\"max_bytes_used\": "), std::string::npos) << text;
    EXPECT_NE(text.find("\"net_heap_growth\": 0"), std::string::npos) << text;
  }
}

TEST_F(BenchmarkRun, ConsoleShowsPerIterationCounters) {
  lowalloc::benchmark_memory_reporter display(
      std::make_unique<benchmark::ConsoleReporter>(benchmark::ConsoleReporter::OO_None));
  std::ostringstream out;
  std::ostringstream err;
  display.SetOutputStream(&out);
  display.SetErrorStream(&err);
  ASSERT_EQ(benchmark::RunSpecifiedBenchmarks(&display, "^bm_two_allocations"), 1u);
  const std::string text = out.str();
  EXPECT_NE(text.find("allocs_per_iter=2.0625"), std::string::npos) << text;
  EXPECT_NE(text.find("bytes_per_iter="), std::string::npos) << text;
  if (lowalloc::live_bytes_counted()) {
    EXPECT_NE(text.find("max_bytes_used="), std::string::npos) << text;
  }
}

// Without the manager, Google Benchmark reports no memory figures and the reporter adds none.
TEST(BenchmarkMemoryReporter, RunsWithoutMemoryAreLeftAlone) {
  lowalloc::benchmark_memory_reporter display(
      std::make_unique<benchmark::ConsoleReporter>(benchmark::ConsoleReporter::OO_None));
  std::ostringstream out;
  std::ostringstream err;
  display.SetOutputStream(&out);
  display.SetErrorStream(&err);
  ASSERT_EQ(benchmark::RunSpecifiedBenchmarks(&display, "^bm_empty"), 1u);
  EXPECT_NE(out.str().find("bm_empty"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("allocs_per_iter"), std::string::npos) << out.str();
}

}  // namespace
