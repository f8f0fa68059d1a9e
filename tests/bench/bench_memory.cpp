// bench_memory.cpp — lowalloc's memory resources (arena, pool, synchronized_pool, pool_allocator)
// against a raw bump pointer, std::pmr, glibc malloc, boost::pool, mimalloc and jemalloc.
//
// Benchmarks are named "<workload>/<impl>/<param>" so that scripts/bench_table.py groups them;
// lowalloc's row is "lowalloc", the group's baseline in the tables. One iteration is one batch of
// kPairs = 1024 allocate/free pairs (the same sizes, the same order, the same precomputed random
// numbers for every implementation), so time per pair = time per iteration / 1024.
//
//   arena_<pattern>/<impl>/<size>   lowalloc::arena vs bump, pmr_monotonic, malloc, mimalloc,
//                                   jemalloc; lowalloc_chunked is an arena with a 1 KiB inline
//                                   buffer that lives on its (reset, reused) upstream chunk
//   pool_<pattern>/<impl>/<size>    lowalloc::pool vs malloc, mimalloc, jemalloc, pmr_unsync_pool
//                                   (std::pmr::unsynchronized_pool_resource), boost (boost::pool);
//                                   lowalloc_keep_all never gives an empty slab back (as the
//                                   two pool peers), lowalloc keeps one (the default)
//   map_insert_erase/<impl>/1000    std::map<int,int>: 1000 inserts, then 1000 erases in another
//   list_insert_erase/<impl>/1000   random order (std::list<int>: push_back, erase); impl is
//                                   lowalloc (pool_allocator), std_allocator, pmr_unsync_pool,
//                                   lowalloc_pmr (std::pmr container over a lowalloc::pool)
//   sync_churn/<impl>/16/threads:N  the 16-byte churn on 1 and 2 threads: lowalloc is one shared
//                                   synchronized_pool; pool_unsync (1 thread) is lowalloc::pool
//
// <pattern>: single (allocate, free at once), bulk (1024 allocations, then 1024 frees in order),
// reversed (frees in reverse order), churn (a working set of up to 128 blocks: a random sequence
// of allocations and frees of random blocks, 1024 of each per batch). <size>: 16 (every request
// 16 bytes) or mixed (uniform 8..256 bytes). Every request asks for alignof(std::max_align_t).
// The pools get one slot size for the whole group: 16, or 256 for mixed. The arena-like resources
// (lowalloc::arena, bump, pmr_monotonic) are reset at the end of every batch, inside the timing.
//
// Fairness:
// - malloc, mimalloc and jemalloc are all called through function pointers read at run time:
//   glibc's malloc/free from dlsym(RTLD_DEFAULT), mi_malloc/mi_free and jemalloc's malloc/free
//   from dlsym on a dlopen(RTLD_LOCAL) handle. mimalloc and jemalloc are never linked: their
//   libraries export malloc, which would replace glibc's for the whole binary. If a library
//   cannot be loaded its benchmarks are not registered (the reason is in the JSON context).
//   Debian's libjemalloc.so.2 needs more static TLS than glibc reserves for dlopen():
//   scripts/bench-memory.sh sets GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384.
// - every implementation object (the arena, the bump pointer, the pools...) is on the heap,
//   reached through a pointer and escaped before the timed loop, and every returned pointer goes
//   through benchmark::DoNotOptimize (a compiler barrier): each implementation keeps its state in
//   memory and reloads it after each allocation, like real code (an arena is passed by
//   reference, a bump pointer lives in some object); nothing is elided.
// - the blocks are not written to: this measures the allocator, not the cache behaviour of the
//   memory it returns.
//
// sync_churn: Google Benchmark reports, for N threads, cpu_time = the CPU time of all threads
// / all iterations of all threads = the CPU cost of one batch on one thread, directly comparable
// with the 1-thread figure; real_time = wall time / all iterations = the inverse of the
// throughput (x N for the per-thread wall cost). On this 2-vCPU shared machine real time also
// counts the time a thread waits for a core taken by another process, so CPU time (the tables'
// default) is the per-operation cost; it does not count time blocked in the kernel (a sleeping
// mutex), so scripts/bench-memory.sh shows real_time x threads next to it. No UseRealTime().
//
// The lowalloc parts are compiled in when <lowalloc/arena.hpp> and <lowalloc/pool.hpp> exist
// (__has_include is no build dependency: a build made before they existed must recompile this
// file). Repetitions, min time and output format come from the command line; see
// scripts/run-benchmarks.sh and scripts/bench-memory.sh.
#include <benchmark/benchmark.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <memory_resource>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

#if __has_include(<lowalloc/arena.hpp>)
#include <lowalloc/arena.hpp>
#define LOWALLOC_BENCH_HAVE_ARENA 1
#else
#define LOWALLOC_BENCH_HAVE_ARENA 0
#endif
#if __has_include(<lowalloc/pool.hpp>)
#include <lowalloc/pool.hpp>
#define LOWALLOC_BENCH_HAVE_POOL 1
#else
#define LOWALLOC_BENCH_HAVE_POOL 0
#endif

#ifdef LOWALLOC_BENCH_HAVE_BOOST
#include <boost/pool/pool.hpp>
#endif

namespace {

constexpr std::size_t kPairs = 1024;      // allocate/free pairs per iteration (one batch)
constexpr std::size_t kWorkingSet = 128;  // churn: at most this many blocks live
constexpr std::size_t kMinMixed = 8;      // mixed sizes: uniform in [kMinMixed, kMaxMixed]
constexpr std::size_t kMaxMixed = 256;
constexpr std::size_t kAlign = alignof(std::max_align_t);
constexpr std::size_t kArenaBytes = kPairs * kMaxMixed;  // one batch, whatever the sizes
constexpr unsigned kSeed = 20240917;

// --- the workloads -------------------------------------------------------------------------------

struct churn_op {
  std::uint32_t slot;  // index in the working set
  std::uint32_t size;  // bytes; for a free, the size it was allocated with
  bool allocate;
};

struct workload {
  std::string param;               // "16" or "mixed"
  std::size_t slot_size = 0;       // the pools' slot: the largest request
  std::vector<std::size_t> sizes;  // single, bulk, reversed: kPairs request sizes
  std::vector<churn_op> churn;     // churn: kPairs allocations and kPairs frees
};

// A batch of churn: ramps up to half the working set, then allocates or frees (a random live
// block) with equal odds within [0, kWorkingSet] live blocks until kPairs allocations were made,
// then frees what is left in random order. Depends only on the random numbers, never on
// addresses, so every implementation runs the same sequence.
std::vector<churn_op> make_churn(std::mt19937& rng, const std::function<std::size_t()>& size) {
  std::vector<churn_op> ops;
  std::vector<std::uint32_t> live, free_slots;
  std::vector<std::uint32_t> slot_size(kWorkingSet);
  for (std::size_t i = kWorkingSet; i-- > 0;) free_slots.push_back(static_cast<std::uint32_t>(i));
  std::bernoulli_distribution coin(0.5);
  std::size_t allocations = 0;
  auto free_random = [&] {
    std::uniform_int_distribution<std::size_t> pick(0, live.size() - 1);
    const std::size_t i = pick(rng);
    const std::uint32_t slot = live[i];
    live[i] = live.back();
    live.pop_back();
    free_slots.push_back(slot);
    ops.push_back({slot, slot_size[slot], false});
  };
  while (allocations < kPairs) {
    const bool ramp = live.size() < kWorkingSet / 2 && allocations < kWorkingSet / 2;
    const bool alloc = live.empty() || (live.size() < kWorkingSet && (ramp || coin(rng)));
    if (alloc) {
      const std::uint32_t slot = free_slots.back();
      free_slots.pop_back();
      slot_size[slot] = static_cast<std::uint32_t>(size());
      live.push_back(slot);
      ops.push_back({slot, slot_size[slot], true});
      ++allocations;
    } else {
      free_random();
    }
  }
  while (!live.empty()) free_random();
  return ops;
}

workload make_workload(bool mixed) {
  workload w;
  w.param = mixed ? "mixed" : "16";
  w.slot_size = mixed ? kMaxMixed : 16;
  std::mt19937 rng(kSeed + (mixed ? 1 : 0));
  std::uniform_int_distribution<std::size_t> dist(kMinMixed, kMaxMixed);
  const std::function<std::size_t()> size = [&]() -> std::size_t { return mixed ? dist(rng) : 16; };
  for (std::size_t i = 0; i < kPairs; ++i) w.sizes.push_back(size());
  w.churn = make_churn(rng, size);
  return w;
}

const workload& workload_16() {
  static const workload w = make_workload(false);
  return w;
}
const workload& workload_mixed() {
  static const workload w = make_workload(true);
  return w;
}

// --- malloc, mimalloc, jemalloc: function pointers read at run time ------------------------------

struct malloc_api {
  void* (*allocate)(std::size_t) = nullptr;
  void (*release)(void*) = nullptr;
  std::string status;  // where the symbols come from, or why they are missing
};

malloc_api g_glibc, g_mimalloc, g_jemalloc;

std::string origin_of(void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "?";
}

malloc_api load_api(void* handle, const char* alloc_name, const char* free_name) {
  malloc_api api;
  void* a = dlsym(handle, alloc_name);
  void* f = dlsym(handle, free_name);
  if (a == nullptr || f == nullptr) {
    api.status = std::string("missing ") + alloc_name + "/" + free_name;
    return api;
  }
  api.allocate = reinterpret_cast<void* (*)(std::size_t)>(a);
  api.release = reinterpret_cast<void (*)(void*)>(f);
  api.status = std::string(alloc_name) + "/" + free_name + " from " + origin_of(a);
  return api;
}

malloc_api load_library(const char* library, const char* alloc_name, const char* free_name) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    malloc_api api;
    const char* why = dlerror();
    api.status = std::string("not loaded: ") + (why != nullptr ? why : library);
    return api;
  }
  return load_api(handle, alloc_name, free_name);  // never closed: the process keeps it
}

void load_allocators() {
  g_glibc = load_api(RTLD_DEFAULT, "malloc", "free");
  g_mimalloc = load_library("libmimalloc.so.2", "mi_malloc", "mi_free");
  g_jemalloc = load_library("libjemalloc.so.2", "malloc", "free");
}

// --- the implementations: allocate(size), deallocate(p, size), end_batch() ----------------------

[[noreturn]] __attribute__((noinline, cold)) void out_of_memory() { throw std::bad_alloc(); }

class malloc_family {
 public:
  explicit malloc_family(const malloc_api& api) : allocate_(api.allocate), release_(api.release) {}
  void* allocate(std::size_t n) {
    void* p = allocate_(n);
    if (p == nullptr) out_of_memory();
    return p;
  }
  void deallocate(void* p, std::size_t) noexcept { release_(p); }
  void end_batch() noexcept {}

 private:
  void* (*allocate_)(std::size_t);
  void (*release_)(void*);
};

struct glibc_impl : malloc_family {
  static constexpr const char* name = "malloc";
  static bool available() { return g_glibc.allocate != nullptr; }
  explicit glibc_impl(const workload&) : malloc_family(g_glibc) {}
};

struct mimalloc_impl : malloc_family {
  static constexpr const char* name = "mimalloc";
  static bool available() { return g_mimalloc.allocate != nullptr; }
  explicit mimalloc_impl(const workload&) : malloc_family(g_mimalloc) {}
};

struct jemalloc_impl : malloc_family {
  static constexpr const char* name = "jemalloc";
  static bool available() { return g_jemalloc.allocate != nullptr; }
  explicit jemalloc_impl(const workload&) : malloc_family(g_jemalloc) {}
};

// The floor: the simplest correct bump pointer over a buffer that holds one batch.
class bump_impl {
 public:
  static constexpr const char* name = "bump";
  static bool available() { return true; }
  explicit bump_impl(const workload&)
      : buffer_(std::make_unique<std::max_align_t[]>(kArenaBytes / sizeof(std::max_align_t))),
        begin_(reinterpret_cast<char*>(buffer_.get())),
        cur_(begin_),
        end_(begin_ + kArenaBytes) {}
  void* allocate(std::size_t n) {
    const std::size_t step = (n + kAlign - 1) & ~(kAlign - 1);
    if (step > static_cast<std::size_t>(end_ - cur_)) out_of_memory();
    void* p = cur_;
    cur_ += step;
    return p;
  }
  void deallocate(void*, std::size_t) noexcept {}
  void end_batch() noexcept { cur_ = begin_; }

 private:
  std::unique_ptr<std::max_align_t[]> buffer_;
  char* begin_;
  char* cur_;
  char* end_;
};

// std::pmr::monotonic_buffer_resource over a buffer that holds one batch; release() per batch.
class pmr_monotonic_impl {
 public:
  static constexpr const char* name = "pmr_monotonic";
  static bool available() { return true; }
  explicit pmr_monotonic_impl(const workload&)
      : buffer_(std::make_unique<std::max_align_t[]>(kArenaBytes / sizeof(std::max_align_t))),
        resource_(buffer_.get(), kArenaBytes) {}
  void* allocate(std::size_t n) { return resource_.allocate(n, kAlign); }
  void deallocate(void* p, std::size_t n) noexcept { resource_.deallocate(p, n, kAlign); }
  void end_batch() noexcept { resource_.release(); }

 private:
  std::unique_ptr<std::max_align_t[]> buffer_;
  std::pmr::monotonic_buffer_resource resource_;
};

class pmr_pool_impl {
 public:
  static constexpr const char* name = "pmr_unsync_pool";
  static bool available() { return true; }
  explicit pmr_pool_impl(const workload&) {}
  void* allocate(std::size_t n) { return resource_.allocate(n, kAlign); }
  void deallocate(void* p, std::size_t n) noexcept { resource_.deallocate(p, n, kAlign); }
  void end_batch() noexcept {}

 private:
  std::pmr::unsynchronized_pool_resource resource_;
};

#ifdef LOWALLOC_BENCH_HAVE_BOOST
// boost::pool<>: one chunk size (the workload's slot size), malloc() and O(1) free().
class boost_pool_impl {
 public:
  static constexpr const char* name = "boost";
  static bool available() { return true; }
  explicit boost_pool_impl(const workload& w) : pool_(w.slot_size) {}
  void* allocate(std::size_t) {
    void* p = pool_.malloc();
    if (p == nullptr) out_of_memory();
    return p;
  }
  void deallocate(void* p, std::size_t) noexcept { pool_.free(p); }
  void end_batch() noexcept {}

 private:
  boost::pool<> pool_;
};
#endif

#if LOWALLOC_BENCH_HAVE_ARENA
// The arena holds a whole batch inline (the fast path), like bump and pmr_monotonic's buffers.
template <std::size_t N>
class arena_impl {
 public:
  static bool available() { return true; }
  explicit arena_impl(const workload&) {}
  void* allocate(std::size_t n) { return arena_.allocate(n); }
  void deallocate(void* p, std::size_t n) noexcept { arena_.deallocate(p, n); }
  void end_batch() noexcept { arena_.reset(); }

 private:
  lowalloc::arena<N> arena_;
};

struct lowalloc_arena_impl : arena_impl<kArenaBytes> {
  static constexpr const char* name = "lowalloc";
  using arena_impl::arena_impl;
};

// 1 KiB inline: the batch lives on upstream chunks, kept across reset() (the largest one).
struct lowalloc_arena_chunked_impl : arena_impl<1024> {
  static constexpr const char* name = "lowalloc_chunked";
  using arena_impl::arena_impl;
};
#endif

#if LOWALLOC_BENCH_HAVE_POOL
class lowalloc_pool_impl {
 public:
  static constexpr const char* name = "lowalloc";
  static bool available() { return true; }
  explicit lowalloc_pool_impl(const workload& w) : pool_(w.slot_size) {}
  void* allocate(std::size_t n) { return pool_.allocate(n); }
  void deallocate(void* p, std::size_t n) noexcept { pool_.deallocate(p, n); }
  void end_batch() noexcept {}

 private:
  lowalloc::pool pool_;
};

// The same with pool_options::keep_empty_slabs = unlimited: no slab goes back upstream before
// the pool's destruction, as with pmr_unsync_pool and boost (the default keeps one empty slab, so
// a batch that empties several slabs gives them back and takes them again the next time).
class lowalloc_pool_keep_impl {
 public:
  static constexpr const char* name = "lowalloc_keep_all";
  static bool available() { return true; }
  explicit lowalloc_pool_keep_impl(const workload& w) : pool_(w.slot_size, kAlign, keep_all()) {}
  void* allocate(std::size_t n) { return pool_.allocate(n); }
  void deallocate(void* p, std::size_t n) noexcept { pool_.deallocate(p, n); }
  void end_batch() noexcept {}

 private:
  static lowalloc::pool_options keep_all() {
    lowalloc::pool_options o;
    o.keep_empty_slabs = static_cast<std::size_t>(-1);
    return o;
  }
  lowalloc::pool pool_;
};

// For sync_churn (1 thread): the single-threaded pool, to show what the synchronization costs.
struct lowalloc_unsync_pool_impl : lowalloc_pool_impl {
  static constexpr const char* name = "pool_unsync";
  using lowalloc_pool_impl::lowalloc_pool_impl;
};

// One synchronized_pool shared by every thread of every sync_churn run; it outlives them all.
lowalloc::synchronized_pool& shared_sync_pool() {
  static lowalloc::synchronized_pool pool(16);
  return pool;
}

class lowalloc_sync_pool_impl {
 public:
  static constexpr const char* name = "lowalloc";
  static bool available() { return true; }
  explicit lowalloc_sync_pool_impl(const workload&) : pool_(shared_sync_pool()) {}
  void* allocate(std::size_t n) { return pool_.allocate(n); }
  void deallocate(void* p, std::size_t n) noexcept { pool_.deallocate(p, n); }
  void end_batch() noexcept {}

 private:
  lowalloc::synchronized_pool& pool_;
};
#endif

// --- the patterns --------------------------------------------------------------------------------

enum class pattern { single, bulk, reversed, churn };

const char* pattern_name(pattern p) {
  switch (p) {
    case pattern::single:
      return "single";
    case pattern::bulk:
      return "bulk";
    case pattern::reversed:
      return "reversed";
    case pattern::churn:
      return "churn";
  }
  return "?";
}

template <pattern P, class Impl>
void run_batch(Impl& impl, const workload& w, void** ptrs) {
  if constexpr (P == pattern::single) {
    for (std::size_t i = 0; i < kPairs; ++i) {
      void* p = impl.allocate(w.sizes[i]);
      benchmark::DoNotOptimize(p);
      impl.deallocate(p, w.sizes[i]);
    }
  } else if constexpr (P == pattern::bulk || P == pattern::reversed) {
    for (std::size_t i = 0; i < kPairs; ++i) {
      ptrs[i] = impl.allocate(w.sizes[i]);
      benchmark::DoNotOptimize(ptrs[i]);
    }
    if constexpr (P == pattern::bulk) {
      for (std::size_t i = 0; i < kPairs; ++i) impl.deallocate(ptrs[i], w.sizes[i]);
    } else {
      for (std::size_t i = kPairs; i-- > 0;) impl.deallocate(ptrs[i], w.sizes[i]);
    }
  } else {
    for (const churn_op& op : w.churn) {
      if (op.allocate) {
        ptrs[op.slot] = impl.allocate(op.size);
        benchmark::DoNotOptimize(ptrs[op.slot]);
      } else {
        impl.deallocate(ptrs[op.slot], op.size);
      }
    }
  }
  impl.end_batch();
  benchmark::ClobberMemory();
}

template <pattern P, class Impl>
void alloc_free(benchmark::State& state, const workload* w) {
  // On the heap, reached through a pointer, for every implementation alike (an arena is passed by
  // reference, a bump pointer lives in some object): the state is reloaded after each barrier.
  const std::unique_ptr<Impl> owner = std::make_unique<Impl>(*w);
  Impl* escaped = owner.get();
  benchmark::DoNotOptimize(escaped);
  Impl& impl = *owner;
  std::vector<void*> ptrs(kPairs);
  run_batch<P>(impl, *w, ptrs.data());  // warm-up: the pools' slabs, the arena's chunks
  for (auto _ : state) run_batch<P>(impl, *w, ptrs.data());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kPairs));
}

template <class Impl>
void register_patterns(const char* section) {
  if (!Impl::available()) return;
  for (const workload* w : {&workload_16(), &workload_mixed()}) {
    for (const pattern p : {pattern::single, pattern::bulk, pattern::reversed, pattern::churn}) {
      const std::string name =
          std::string(section) + "_" + pattern_name(p) + "/" + Impl::name + "/" + w->param;
      auto* fn = p == pattern::single     ? alloc_free<pattern::single, Impl>
                 : p == pattern::bulk     ? alloc_free<pattern::bulk, Impl>
                 : p == pattern::reversed ? alloc_free<pattern::reversed, Impl>
                                          : alloc_free<pattern::churn, Impl>;
      benchmark::RegisterBenchmark(name.c_str(), fn, w);
    }
  }
}

template <class Impl>
void register_sync(bool two_threads) {
  if (!Impl::available()) return;
  const std::string name = std::string("sync_churn/") + Impl::name + "/16";
  auto* b =
      benchmark::RegisterBenchmark(name.c_str(), alloc_free<pattern::churn, Impl>, &workload_16());
  b->Threads(1);
  if (two_threads) b->Threads(2);
}

// --- containers ----------------------------------------------------------------------------------

constexpr std::size_t kNodes = 1000;

struct node_keys {
  std::vector<int> insert;  // a random permutation of 0..kNodes-1
  std::vector<int> erase;   // another one
};

const node_keys& keys() {
  static const node_keys k = [] {
    node_keys out;
    std::mt19937 rng(kSeed + 2);
    for (std::size_t i = 0; i < kNodes; ++i) out.insert.push_back(static_cast<int>(i));
    out.erase = out.insert;
    std::shuffle(out.insert.begin(), out.insert.end(), rng);
    std::shuffle(out.erase.begin(), out.erase.end(), rng);
    return out;
  }();
  return k;
}

// An allocator that records the largest single request and its alignment: the node size the
// pools need for their slots, whatever the standard library's node layout is.
struct probe_record {
  std::size_t bytes = 0;
  std::size_t align = 1;
};

template <class T>
struct probe_allocator {
  using value_type = T;
  probe_record* record;
  explicit probe_allocator(probe_record* r) noexcept : record(r) {}
  template <class U>
  probe_allocator(const probe_allocator<U>& other) noexcept : record(other.record) {}
  T* allocate(std::size_t n) {
    record->bytes = std::max(record->bytes, n * sizeof(T));
    record->align = std::max(record->align, alignof(T));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
  friend bool operator==(const probe_allocator& a, const probe_allocator& b) {
    return a.record == b.record;
  }
  friend bool operator!=(const probe_allocator& a, const probe_allocator& b) { return !(a == b); }
};

const probe_record& map_node() {
  static const probe_record r = [] {
    probe_record rec;
    using alloc = probe_allocator<std::pair<const int, int>>;
    std::map<int, int, std::less<int>, alloc> m{alloc(&rec)};
    m.emplace(1, 1);
    return rec;
  }();
  return r;
}

const probe_record& list_node() {
  static const probe_record r = [] {
    probe_record rec;
    std::list<int, probe_allocator<int>> l{probe_allocator<int>(&rec)};
    l.push_back(1);
    return rec;
  }();
  return r;
}

template <class Map>
void map_batch(Map& m, const node_keys& k) {
  for (const int key : k.insert) m.emplace(key, key);
  benchmark::DoNotOptimize(m);
  for (const int key : k.erase) m.erase(key);
  benchmark::ClobberMemory();
}

template <class List>
void list_batch(List& l, const node_keys& k, std::vector<typename List::iterator>& its) {
  for (std::size_t i = 0; i < kNodes; ++i) its[i] = l.insert(l.end(), static_cast<int>(i));
  benchmark::DoNotOptimize(l);
  for (const int key : k.erase) l.erase(its[static_cast<std::size_t>(key)]);
  benchmark::ClobberMemory();
}

template <class Map>
void run_map(benchmark::State& state, Map& m) {
  const node_keys& k = keys();
  map_batch(m, k);
  for (auto _ : state) map_batch(m, k);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kNodes));
}

template <class List>
void run_list(benchmark::State& state, List& l) {
  const node_keys& k = keys();
  std::vector<typename List::iterator> its(kNodes);
  list_batch(l, k, its);
  for (auto _ : state) list_batch(l, k, its);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kNodes));
}

void register_containers() {
  const std::string map = "map_insert_erase/", list = "list_insert_erase/";
  const std::string n = "/" + std::to_string(kNodes);
  benchmark::RegisterBenchmark((map + "std_allocator" + n).c_str(), [](benchmark::State& s) {
    std::map<int, int> m;
    run_map(s, m);
  });
  benchmark::RegisterBenchmark((list + "std_allocator" + n).c_str(), [](benchmark::State& s) {
    std::list<int> l;
    run_list(s, l);
  });
  benchmark::RegisterBenchmark((map + "pmr_unsync_pool" + n).c_str(), [](benchmark::State& s) {
    std::pmr::unsynchronized_pool_resource r;
    std::pmr::map<int, int> m(&r);
    run_map(s, m);
  });
  benchmark::RegisterBenchmark((list + "pmr_unsync_pool" + n).c_str(), [](benchmark::State& s) {
    std::pmr::unsynchronized_pool_resource r;
    std::pmr::list<int> l(&r);
    run_list(s, l);
  });
#if LOWALLOC_BENCH_HAVE_POOL
  benchmark::RegisterBenchmark((map + "lowalloc" + n).c_str(), [](benchmark::State& s) {
    lowalloc::pool p(map_node().bytes, map_node().align);
    using alloc = lowalloc::pool_allocator<std::pair<const int, int>>;
    std::map<int, int, std::less<int>, alloc> m{alloc(p)};
    run_map(s, m);
  });
  benchmark::RegisterBenchmark((list + "lowalloc" + n).c_str(), [](benchmark::State& s) {
    lowalloc::pool p(list_node().bytes, list_node().align);
    std::list<int, lowalloc::pool_allocator<int>> l{lowalloc::pool_allocator<int>(p)};
    run_list(s, l);
  });
  benchmark::RegisterBenchmark((map + "lowalloc_pmr" + n).c_str(), [](benchmark::State& s) {
    lowalloc::pool p(map_node().bytes, map_node().align);
    std::pmr::map<int, int> m(&p);
    run_map(s, m);
  });
  benchmark::RegisterBenchmark((list + "lowalloc_pmr" + n).c_str(), [](benchmark::State& s) {
    lowalloc::pool p(list_node().bytes, list_node().align);
    std::pmr::list<int> l(&p);
    run_list(s, l);
  });
#endif
}

// --- registration --------------------------------------------------------------------------------

template <class Impl>
void register_arena() {
  register_patterns<Impl>("arena");
}

template <class Impl>
void register_pool() {
  register_patterns<Impl>("pool");
}

void register_all() {
#if LOWALLOC_BENCH_HAVE_ARENA
  register_arena<lowalloc_arena_impl>();
  register_arena<lowalloc_arena_chunked_impl>();
#endif
  register_arena<bump_impl>();
  register_arena<pmr_monotonic_impl>();
  register_arena<glibc_impl>();
  register_arena<mimalloc_impl>();
  register_arena<jemalloc_impl>();

#if LOWALLOC_BENCH_HAVE_POOL
  register_pool<lowalloc_pool_impl>();
  register_pool<lowalloc_pool_keep_impl>();
#endif
  register_pool<glibc_impl>();
  register_pool<mimalloc_impl>();
  register_pool<jemalloc_impl>();
  register_pool<pmr_pool_impl>();
#ifdef LOWALLOC_BENCH_HAVE_BOOST
  register_pool<boost_pool_impl>();
#endif

  register_containers();

#if LOWALLOC_BENCH_HAVE_POOL
  register_sync<lowalloc_sync_pool_impl>(true);
  register_sync<lowalloc_unsync_pool_impl>(false);
#endif
  register_sync<glibc_impl>(true);
  register_sync<mimalloc_impl>(true);
  register_sync<jemalloc_impl>(true);
}

void add_context() {
  benchmark::AddCustomContext("memory glibc", g_glibc.status);
  benchmark::AddCustomContext("memory mimalloc", g_mimalloc.status);
  benchmark::AddCustomContext("memory jemalloc", g_jemalloc.status);
  benchmark::AddCustomContext("memory lowalloc arena",
                              LOWALLOC_BENCH_HAVE_ARENA ? "yes" : "no (no lowalloc/arena.hpp)");
  benchmark::AddCustomContext("memory lowalloc pool",
                              LOWALLOC_BENCH_HAVE_POOL ? "yes" : "no (no lowalloc/pool.hpp)");
  benchmark::AddCustomContext("memory pairs per iteration", std::to_string(kPairs));
  benchmark::AddCustomContext("memory workload",
                              "sizes 16 or uniform " + std::to_string(kMinMixed) + ".." +
                                  std::to_string(kMaxMixed) + ", churn working set " +
                                  std::to_string(kWorkingSet) + ", seed " + std::to_string(kSeed));
  benchmark::AddCustomContext("memory container nodes",
                              "map " + std::to_string(map_node().bytes) + " B, list " +
                                  std::to_string(list_node().bytes) + " B, " +
                                  std::to_string(kNodes) + " per iteration");
}

}  // namespace

int main(int argc, char** argv) {
  load_allocators();
  register_all();
  add_context();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
