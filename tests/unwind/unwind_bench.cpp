// unwind_capture vs libunwind unw_backtrace vs glibc backtrace(), 12 frames of a deeper stack whose
// own frames have no frame pointer. Run: unwind_bench --benchmark_repetitions=5
#include "trace/unwind.hpp"
#include "unwind_test_support.hpp"

#define UNW_LOCAL_ONLY
#include <execinfo.h>
#include <libunwind.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

#include <benchmark/benchmark.h>

namespace lt = lowalloc::trace;

namespace {

enum class method { ours, ours_cold, libunwind, glibc };

struct bench_arg {
  benchmark::State* state;
  method m;
  std::size_t max;
};

std::uintptr_t thread_stack_hi() {
  pthread_attr_t attr;
  void* addr = nullptr;
  std::size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) std::abort();
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  return reinterpret_cast<std::uintptr_t>(addr) + size;
}

lt::unwind_cache* bench_cache() {
  static void* memory = mmap(nullptr, lt::unwind_cache_bytes(), PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  static lt::unwind_cache* cache = lt::unwind_cache_init(memory);
  return cache;
}

// Runs the benchmark loop at the bottom of the stack built by nofp::chain.
void loop(void* p) {
  auto* a = static_cast<bench_arg*>(p);
  std::uintptr_t frames[64];
  void* ptrs[64];
  std::size_t n = 0;
  const std::uintptr_t hi = thread_stack_hi();
  lt::unwind_cache* cache = bench_cache();
  const int max = static_cast<int>(a->max);
  for (auto _ : *a->state) {
    switch (a->m) {
      case method::ours:
        n = lt::unwind_capture(cache, frames, a->max, 0, 0, hi);
        break;
      case method::ours_cold:
        lt::unwind_cache_clear(cache);
        n = lt::unwind_capture(cache, frames, a->max, 0, 0, hi);
        break;
      case method::libunwind:
        n = static_cast<std::size_t>(unw_backtrace(ptrs, max));
        break;
      case method::glibc:
        n = static_cast<std::size_t>(backtrace(ptrs, max));
        break;
    }
    benchmark::DoNotOptimize(frames);
    benchmark::DoNotOptimize(ptrs);
  }
  a->state->counters["frames"] = static_cast<double>(n);
}

void run(benchmark::State& state, method m) {
  bench_arg a{&state, m, static_cast<std::size_t>(state.range(0))};
  unwind_test::nofp::chain(10, loop, &a);
}

void bm_unwind_capture(benchmark::State& state) { run(state, method::ours); }
void bm_unwind_capture_cold(benchmark::State& state) { run(state, method::ours_cold); }
void bm_unw_backtrace(benchmark::State& state) { run(state, method::libunwind); }
void bm_glibc_backtrace(benchmark::State& state) { run(state, method::glibc); }

BENCHMARK(bm_unwind_capture)->Arg(12)->Arg(64);
BENCHMARK(bm_unwind_capture_cold)->Arg(12);
BENCHMARK(bm_unw_backtrace)->Arg(12)->Arg(64);
BENCHMARK(bm_glibc_backtrace)->Arg(12);

}  // namespace

BENCHMARK_MAIN();
