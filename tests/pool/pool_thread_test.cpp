// lowalloc::synchronized_pool with several threads: blocks freed on another thread than the one
// that allocated them, thread exit with slots in the caches, pools destroyed before and after the
// threads that used them, several pools at once, release(), stats() while others run. Every test
// ends by checking, through a counting upstream resource, that nothing leaked and nothing was
// freed twice. Also built as pool_tsan_test, under ThreadSanitizer.
#include <lowalloc/pool.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "pool_test_support.hpp"

namespace {

using pool_test::counting_resource;

#if defined(__SANITIZE_THREAD__)
constexpr int scale = 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int scale = 1;
#else
constexpr int scale = 4;
#endif
#else
constexpr int scale = 4;
#endif

// A block in flight: who made it and what it holds.
struct block {
  void* p;
  std::size_t bytes;
  std::uint32_t stamp;
};

void fill(const block& b) {
  auto* c = static_cast<unsigned char*>(b.p);
  for (std::size_t i = 0; i < b.bytes; ++i) c[i] = static_cast<unsigned char>(b.stamp + i);
}

bool intact(const block& b) {
  const auto* c = static_cast<const unsigned char*>(b.p);
  for (std::size_t i = 0; i < b.bytes; ++i) {
    if (c[i] != static_cast<unsigned char>(b.stamp + i)) return false;
  }
  return true;
}

class mailbox {
 public:
  void put(const block& b) {
    std::lock_guard<std::mutex> lock(mutex_);
    q_.push_back(b);
  }
  std::vector<block> take_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<block> out(q_.begin(), q_.end());
    q_.clear();
    return out;
  }

 private:
  std::mutex mutex_;
  std::deque<block> q_;
};

// Each thread allocates blocks and posts them to the next thread, which checks and frees them.
void ring_exchange(int threads, int per_thread, std::size_t slot, std::size_t keep) {
  counting_resource up;
  {
    lowalloc::synchronized_pool pool(slot, 8, {0, keep}, &up);
    std::vector<mailbox> boxes(static_cast<std::size_t>(threads));
    std::atomic<int> corrupted{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        std::mt19937 rng(static_cast<unsigned>(t) + 1);
        mailbox& out = boxes[static_cast<std::size_t>((t + 1) % threads)];
        mailbox& in = boxes[static_cast<std::size_t>(t)];
        int received = 0;
        std::vector<block> mine;  // some blocks are freed by their own thread
        for (int i = 0; i < per_thread; ++i) {
          block b{nullptr, 1 + rng() % slot, static_cast<std::uint32_t>(t * 1000003 + i)};
          b.p = pool.allocate(b.bytes, 8);
          fill(b);
          if (rng() % 4 == 0) {
            mine.push_back(b);
          } else {
            out.put(b);
          }
          if (mine.size() > 50) {
            for (const block& m : mine) {
              if (!intact(m)) ++corrupted;
              pool.deallocate(m.p, m.bytes, 8);
            }
            mine.clear();
          }
          if (i % 16 == 0) {
            for (const block& r : in.take_all()) {
              if (!intact(r)) ++corrupted;
              pool.deallocate(r.p, r.bytes, 8);
              ++received;
            }
          }
        }
        for (const block& m : mine) {
          if (!intact(m)) ++corrupted;
          pool.deallocate(m.p, m.bytes, 8);
        }
        // Leave with blocks still in this thread's cache; the rest of the ring's blocks are freed
        // by the main thread after the join.
      });
    }
    for (std::thread& th : ts) th.join();
    std::size_t left = 0;
    for (mailbox& box : boxes) {
      for (const block& r : box.take_all()) {
        if (!intact(r)) ++corrupted;
        pool.deallocate(r.p, r.bytes, 8);
        ++left;
      }
    }
    EXPECT_EQ(corrupted.load(), 0);
    const lowalloc::pool_stats st = pool.stats();
    EXPECT_EQ(st.slots_in_use, 0u);
    EXPECT_EQ(st.bytes_upstream, up.live_bytes());
    EXPECT_EQ(st.slabs, up.live_blocks());
    static_cast<void>(left);
  }
  EXPECT_EQ(up.live_blocks(), 0u) << "everything back upstream after the pool's destruction";
  EXPECT_EQ(up.allocations(), up.deallocations());
}

TEST(SynchronizedPoolThreads, TwoThreadsExchangeBlocks) { ring_exchange(2, 20000 * scale, 24, 1); }

TEST(SynchronizedPoolThreads, FourThreadsExchangeBlocks) { ring_exchange(4, 10000 * scale, 48, 0); }

TEST(SynchronizedPoolThreads, LargeSlotsSmallCaches) { ring_exchange(3, 3000 * scale, 3000, 2); }

TEST(SynchronizedPoolThreads, ThreadExitGivesTheCacheBack) {
  counting_resource up;
  lowalloc::synchronized_pool pool(32, 16, {64, 0}, &up);
  std::thread t([&] {
    std::vector<void*> ps;
    for (int i = 0; i < 300; ++i) ps.push_back(pool.allocate(32));
    for (void* p : ps) pool.deallocate(p, 32);
    // Now some slots sit in this thread's cache: their slabs are not empty for the central pool.
    EXPECT_GT(pool.stats().slabs, 0u);
    EXPECT_EQ(pool.stats().slots_in_use, 0u);
  });
  t.join();
  // The cache went back at thread exit: every slab is empty, and keep_empty_slabs is 0.
  EXPECT_EQ(pool.stats().slabs, 0u);
  EXPECT_EQ(up.live_blocks(), 0u);
}

TEST(SynchronizedPoolThreads, BlocksOfAnExitedThreadAreFreedElsewhere) {
  counting_resource up;
  lowalloc::synchronized_pool pool(16, 16, {}, &up);
  std::vector<void*> ps;
  std::thread t([&] {
    for (int i = 0; i < 1000; ++i) ps.push_back(pool.allocate(16));
  });
  t.join();
  EXPECT_EQ(pool.stats().slots_in_use, 1000u);
  for (void* p : ps) pool.deallocate(p, 16);
  EXPECT_EQ(pool.stats().slots_in_use, 0u);
  std::thread t2([&] {  // and a thread that frees what the main thread allocated
    for (int i = 0; i < 10; ++i) ps[static_cast<std::size_t>(i)] = pool.allocate(16);
  });
  t2.join();
  std::thread t3([&] {
    for (int i = 0; i < 10; ++i) pool.deallocate(ps[static_cast<std::size_t>(i)], 16);
  });
  t3.join();
  EXPECT_EQ(pool.stats().slots_in_use, 0u);
}

TEST(SynchronizedPoolThreads, PoolDestroyedBeforeTheThreadExits) {
  counting_resource up;
  auto pool = std::make_unique<lowalloc::synchronized_pool>(32, 16, lowalloc::pool_options{}, &up);
  std::mutex m;
  std::condition_variable cv;
  int phase = 0;
  std::thread t([&] {
    std::vector<void*> ps;
    for (int i = 0; i < 200; ++i) ps.push_back(pool->allocate(32));
    for (void* p : ps) pool->deallocate(p, 32);  // slots in this thread's cache
    {
      std::unique_lock<std::mutex> lock(m);
      phase = 1;
      cv.notify_all();
      cv.wait(lock, [&] { return phase == 2; });
    }
    // The pool is gone; another pool on this thread still works (and prunes the dead cache).
    lowalloc::synchronized_pool other(32, 16, {}, &up);
    void* q = other.allocate(32);
    other.deallocate(q, 32);
  });  // exits with a cache of a destroyed pool: must not touch it
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return phase == 1; });
    pool.reset();
    EXPECT_EQ(up.live_blocks(), 0u) << "the pool gave everything back, cached slots included";
    phase = 2;
    cv.notify_all();
  }
  t.join();
  EXPECT_EQ(up.live_blocks(), 0u);
}

TEST(SynchronizedPoolThreads, ThreadExitsBeforeThePoolIsDestroyed) {
  counting_resource up;
  {
    lowalloc::synchronized_pool pool(64, 16, {}, &up);
    for (int round = 0; round < 4; ++round) {
      std::thread t([&] {
        std::vector<void*> ps;
        for (int i = 0; i < 500; ++i) ps.push_back(pool.allocate(50));
        for (std::size_t i = 0; i < ps.size(); i += 2) pool.deallocate(ps[i], 50);
        for (std::size_t i = 1; i < ps.size(); i += 2) pool.deallocate(ps[i], 50);
      });
      t.join();
      EXPECT_EQ(pool.stats().slots_in_use, 0u);
      EXPECT_LE(pool.stats().slabs, 1u) << "round " << round;
    }
  }
  EXPECT_EQ(up.live_blocks(), 0u);
}

TEST(SynchronizedPoolThreads, ManyPoolsAtOnce) {
  // More pools than the per-thread lookup table has entries, used in turn by three threads.
  counting_resource up;
  constexpr int pools = 13;
  std::vector<std::unique_ptr<lowalloc::synchronized_pool>> ps;
  for (int i = 0; i < pools; ++i) {
    ps.push_back(std::make_unique<lowalloc::synchronized_pool>(
        16 + 8 * static_cast<std::size_t>(i), 8, lowalloc::pool_options{64, 1}, &up));
  }
  std::vector<std::thread> ts;
  std::atomic<int> corrupted{0};
  for (int t = 0; t < 3; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) + 100);
      std::vector<std::vector<block>> live(pools);
      for (int i = 0; i < 5000 * scale; ++i) {
        const auto k = static_cast<std::size_t>(rng() % pools);
        lowalloc::synchronized_pool& p = *ps[k];
        if (live[k].empty() || rng() % 2 == 0) {
          block b{nullptr, p.slot_size(), static_cast<std::uint32_t>(rng())};
          b.p = p.allocate(b.bytes, 8);
          fill(b);
          live[k].push_back(b);
        } else {
          const std::size_t j = rng() % live[k].size();
          if (!intact(live[k][j])) ++corrupted;
          p.deallocate(live[k][j].p, live[k][j].bytes, 8);
          live[k][j] = live[k].back();
          live[k].pop_back();
        }
      }
      for (std::size_t k = 0; k < live.size(); ++k) {
        for (const block& b : live[k]) ps[k]->deallocate(b.p, b.bytes, 8);
      }
    });
  }
  for (std::thread& th : ts) th.join();
  EXPECT_EQ(corrupted.load(), 0);
  for (auto& p : ps) {
    EXPECT_EQ(p->stats().slots_in_use, 0u);
    EXPECT_LE(p->stats().slabs, 1u);
  }
  // Destroyed in a shuffled order.
  std::mt19937 rng(7);
  while (!ps.empty()) {
    ps.erase(ps.begin() + static_cast<long>(rng() % ps.size()));
  }
  EXPECT_EQ(up.live_blocks(), 0u);
}

TEST(SynchronizedPoolThreads, ReleaseInvalidatesEveryCache) {
  counting_resource up;
  lowalloc::synchronized_pool pool(32, 16, {}, &up);
  std::mutex m;
  std::condition_variable cv;
  int phase = 0;
  bool ok = true;
  std::thread t([&] {
    for (int i = 0; i < 100; ++i) pool.deallocate(pool.allocate(32), 32);  // fills its cache
    std::unique_lock<std::mutex> lock(m);
    phase = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return phase == 2; });
    // After release(): what this thread gets must come from a live slab, not its old cache.
    for (int i = 0; i < 10; ++i) {
      void* p = pool.allocate(32);
      if (up.block_of(p, 32).first == nullptr) ok = false;
      std::memset(p, 0, 32);
      pool.deallocate(p, 32);
    }
  });
  for (int i = 0; i < 100; ++i) pool.deallocate(pool.allocate(32), 32);
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return phase == 1; });
    pool.release();
    EXPECT_EQ(up.live_blocks(), 0u);
    void* p = pool.allocate(32);
    EXPECT_NE(up.block_of(p, 32).first, nullptr);
    pool.deallocate(p, 32);
    phase = 2;
    cv.notify_all();
  }
  t.join();  // the thread's stale cache is discarded, not given back
  EXPECT_TRUE(ok);
  EXPECT_EQ(pool.stats().slots_in_use, 0u);
  EXPECT_EQ(pool.stats().slabs, up.live_blocks());
}

TEST(SynchronizedPoolThreads, ContainersOnSharedPool) {
  counting_resource up;
  {
    lowalloc::synchronized_pool pool(64, alignof(std::max_align_t), {}, &up);
    using map_t =
        std::map<int, int, std::less<int>,
                 lowalloc::pool_allocator<std::pair<const int, int>, lowalloc::synchronized_pool>>;
    std::vector<map_t> results;
    std::mutex results_mutex;
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; ++t) {
      ts.emplace_back([&, t] {
        map_t m(pool);
        std::list<int, lowalloc::pool_allocator<int, lowalloc::synchronized_pool>> l(pool);
        for (int i = 0; i < 2000 * scale; ++i) {
          m[i % 1500] += t;
          l.push_back(i);
          if (l.size() > 100) l.pop_front();
        }
        std::lock_guard<std::mutex> lock(results_mutex);
        results.push_back(std::move(m));  // its nodes are freed by the main thread
      });
    }
    for (std::thread& th : ts) th.join();
    std::size_t nodes = 0;
    for (const map_t& m : results) {
      EXPECT_EQ(m.size(), 1500u);
      nodes += m.size();
    }
    EXPECT_EQ(pool.stats().slots_in_use, nodes);
    results.clear();
    EXPECT_EQ(pool.stats().slots_in_use, 0u);
  }
  EXPECT_EQ(up.live_blocks(), 0u);
}

TEST(SynchronizedPoolThreads, StatsWhileOthersRun) {
  counting_resource up;
  lowalloc::synchronized_pool pool(16, 16, {}, &up);
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) {
      const lowalloc::pool_stats st = pool.stats();
      EXPECT_LE(st.slots_in_use, 200000u);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t) {
    ts.emplace_back([&] {
      std::vector<void*> ps;
      for (int i = 0; i < 5000 * scale; ++i) {
        ps.push_back(pool.allocate(16));
        if (ps.size() > 300) {
          for (void* p : ps) pool.deallocate(p, 16);
          ps.clear();
        }
      }
      for (void* p : ps) pool.deallocate(p, 16);
    });
  }
  for (std::thread& th : ts) th.join();
  stop = true;
  reader.join();
  EXPECT_EQ(pool.stats().slots_in_use, 0u);
}

TEST(SynchronizedPoolThreads, OversizeFromManyThreads) {
  counting_resource up;
  {
    lowalloc::synchronized_pool pool(32, 16, {}, &up);
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; ++t) {
      ts.emplace_back([&] {
        for (int i = 0; i < 500 * scale; ++i) {
          void* p = pool.allocate(100 + static_cast<std::size_t>(i % 50));
          std::memset(p, 1, 100);
          pool.deallocate(p, 100 + static_cast<std::size_t>(i % 50));
        }
      });
    }
    for (std::thread& th : ts) th.join();
    EXPECT_EQ(pool.stats().oversize_allocations, 0u);
  }
  EXPECT_EQ(up.live_blocks(), 0u);
}

}  // namespace
