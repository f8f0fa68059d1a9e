// The tracer benchmark's workload: a string-heavy program. Each thread builds COUNT std::strings
// of random length 5..40 one character at a time (as a tokenizer or a parser would), hashes them,
// keeps 1% and destroys the rest. With libstdc++'s 15-character inline buffer, about 70% of the
// strings allocate, and those of 31..40 characters grow twice. Random numbers come from
// std::mt19937 and uniform_int_distribution, as ordinary code would make them.
//
// Usage: trace_workload [COUNT=1000000] [THREADS=1]   (scripts/bench-tracer.py runs it)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct result {
  std::uint64_t hash = 0;
  std::size_t kept = 0;
};

result work(std::uint32_t seed, long count) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> length_of(5, 40);
  std::uniform_int_distribution<int> letter('a', 'z');
  std::uniform_int_distribution<int> percent(0, 99);
  std::vector<std::string> kept;
  result r;
  for (long i = 0; i < count; ++i) {
    std::size_t length = length_of(rng);
    std::string s;
    for (std::size_t j = 0; j < length; ++j) s.push_back(static_cast<char>(letter(rng)));
    r.hash ^= std::hash<std::string>{}(s);
    if (percent(rng) == 0) kept.push_back(std::move(s));
  }
  r.kept = kept.size();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  long count = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1000000;
  int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  if (count < 0 || threads < 1 || threads > 64) {
    std::fprintf(stderr, "usage: trace_workload [COUNT] [THREADS]\n");
    return 64;
  }
  std::vector<result> results(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back([&results, t, count] {
      results[static_cast<std::size_t>(t)] = work(static_cast<std::uint32_t>(t) + 1, count);
    });
  results[0] = work(1, count);
  for (auto& th : pool) th.join();
  std::uint64_t hash = 0;
  std::size_t kept = 0;
  for (const result& r : results) {
    hash ^= r.hash;
    kept += r.kept;
  }
  std::printf("%ld strings x %d threads, kept %zu, hash %016llx\n", count, threads, kept,
              static_cast<unsigned long long>(hash));
  return 0;
}
