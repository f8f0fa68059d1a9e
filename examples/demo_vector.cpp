// demo_vector — what lowalloc::small_vector buys on a typical small-vector workload.
//
// 100 vectors of ints whose lengths follow a chi-squared(8) distribution (mean 8, a few longer
// than 16) are each filled by push_back and destroyed: once as std::vector<int>, once as
// lowalloc::small_vector<int, 16>. Prints the heap allocations of one run (counted by
// lowalloc::alloc_count) and the best time per run. `make bench` builds and runs it; the same
// workload against the peers is in tests/bench/bench_small_vector.cpp.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/small_vector.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

std::vector<int> chi2_lengths() {
  std::mt19937 rng(20240611);  // the benchmark's seed
  std::chi_squared_distribution<double> dist(8.0);
  std::vector<int> lengths(100);
  for (int& n : lengths) n = static_cast<int>(std::lround(dist(rng)));
  return lengths;
}

// The vectors' addresses and last elements escape here, so the optimiser cannot drop the work.
const void* volatile g_data;
volatile int g_last;

template <class Vector>
void run_once(const std::vector<int>& lengths) {
  for (const int n : lengths) {
    Vector v;
    for (int i = 0; i < n; ++i) v.push_back(i);
    g_data = v.data();
    if (n > 0) g_last = v.back();
  }
}

struct result {
  std::size_t allocations;
  double ns_per_run;  // best of 15 samples of 2000 runs: the machine may be busy
};

template <class Vector>
result measure(const std::vector<int>& lengths) {
  lowalloc::alloc_counter counter;
  run_once<Vector>(lengths);
  result r{counter.allocations(), 1e300};
  for (int sample = 0; sample < 15; ++sample) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 2000; ++i) run_once<Vector>(lengths);
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    r.ns_per_run = std::min(r.ns_per_run, took.count() / 2000);
  }
  return r;
}

}  // namespace

int main() {
  const std::vector<int> lengths = chi2_lengths();
  long total = 0;
  for (const int n : lengths) total += n;
  const auto longer = std::count_if(lengths.begin(), lengths.end(), [](int n) { return n > 16; });
  std::printf("push_back into %zu fresh vectors, chi-squared(8) lengths: %ld ints, %ld > 16\n\n",
              lengths.size(), total, static_cast<long>(longer));

  const result a = measure<std::vector<int>>(lengths);
  const result b = measure<lowalloc::small_vector<int, 16>>(lengths);
  std::printf("%-32s %12s %12s\n", "container", "allocations", "time/run");
  std::printf("%-32s %12zu %9.2f us\n", "std::vector<int>", a.allocations, a.ns_per_run / 1e3);
  std::printf("%-32s %12zu %9.2f us\n", "lowalloc::small_vector<int, 16>", b.allocations,
              b.ns_per_run / 1e3);
  std::printf("%-32s %11.1fx %11.1fx\n", "std::vector / small_vector",
              double(a.allocations) / double(std::max<std::size_t>(b.allocations, 1)),
              a.ns_per_run / b.ns_per_run);
  return 0;
}
