// The objects analysis on synthetic traces (tests/support/trace_writer.hpp) with known stamps and
// peaks: lifetimes in time, class by class, and the objects alive at the process's peak.
#include "analyze/objects.hpp"
#include "analyze/analysis.hpp"
#include "support/trace_writer.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using lowalloc::analyze::analysis;
using lowalloc::analyze::object_counts;
using lowalloc::analyze::object_tracker;
using lowalloc_test::trace_writer;
using durations = std::array<std::uint64_t, object_counts::duration_classes>;

// The trace's analysis with `tracker` as a sink, finished. The tracker's peak is the
// accounting's.
analysis run(const trace_writer& w, object_tracker& tracker) {
  lowalloc::analyze::options o;
  o.symbolize = false;
  analysis a = lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), o, {&tracker});
  tracker.finish();
  EXPECT_EQ(tracker.peak_bytes(), a.totals.peak_bytes);
  return a;
}

// The objects of the site whose innermost frame has this address (none: all zero).
object_counts at(const analysis& a, const object_tracker& tracker, std::uint64_t ip) {
  const std::vector<object_counts> by_site = tracker.by_site(a);
  for (std::size_t i = 0; i < a.sites.size(); ++i)
    if (!a.sites[i].stack.empty() && a.sites[i].stack[0].address == ip) return by_site[i];
  return object_counts();
}

std::uint64_t sum(const durations& d) { return std::accumulate(d.begin(), d.end(), 0ull); }

TEST(ObjectsDuration, ClassBoundariesAtTheTraceRate) {
  // 100 ns a tick (TIME (0, 0), (1300, 130000), and the last before END). The objects freed in
  // the first block wait for the rate (the records span too few ticks until the second block);
  // the later ones are classed at once. Equal sizes: no free is taken for a growth.
  constexpr std::uint64_t ns_per_tick = 100;
  trace_writer w;
  w.block(1, 0, 0).stack(1, {0x1000}).stack(2, {0x2000}).stack(3, {0x3000});
  w.alloc(10, 16, 0x10, 1).free(10, 0x10);    // 0: within its tick
  w.alloc(20, 16, 0x20, 1).free(29, 0x20);    // 900 ns: under 1 ms
  w.alloc(30, 16, 0x30, 1).free(40, 0x30);    // 1 us
  w.alloc(50, 16, 0x40, 1).free(149, 0x40);   // 9.9 us
  w.alloc(150, 16, 0x50, 1).free(250, 0x50);  // 10 us
  w.alloc(300, 16, 0x60, 1);                  // freed in the next block
  // A growth chain: from its first allocation (10.5 us), not its last block's (1 us).
  w.alloc(400, 16, 0x70, 2).alloc(495, 32, 0x80, 2).free(495, 0x70).free(505, 0x80);
  // Its free not recorded: it ends when its address is handed out again (120 us).
  w.alloc(600, 16, 0x90, 3);
  w.end_block();
  w.block(1, 1300, 1300 * ns_per_tick);
  w.free(1300, 0x60);          // 100 us
  w.alloc(1800, 16, 0x90, 3);  // the forgotten one's address (outliving its block): alive
  w.alloc(2000, 16, 0xA0, 1).free(11999, 0xA0);         // 999.9 us
  w.alloc(12000, 16, 0xB0, 1).free(22000, 0xB0);        // 1 ms: 1..10 ms
  w.alloc(30000, 16, 0xC0, 1).free(130000, 0xC0);       // 10 ms: 10..100 ms
  w.alloc(200000, 16, 0xD0, 1).free(1200000, 0xD0);     // 100 ms: 0.1..1 s
  w.alloc(2000000, 16, 0xE0, 1).free(11999999, 0xE0);   // 999.9999 ms
  w.alloc(12000000, 16, 0xF0, 1).free(22000000, 0xF0);  // 1 s: 1 s or more
  w.alloc(22000001, 16, 0x100, 1);                      // alive at the end
  w.time(22000002, 22000002 * ns_per_tick).end(22000002).end_block();
  object_tracker tracker;
  const analysis a = run(w, tracker);

  const object_counts one = at(a, tracker, 0x1000);
  EXPECT_EQ(one.objects, 13u);
  EXPECT_EQ(one.by_duration, (durations{1, 6, 1, 1, 2, 1, 1}));
  EXPECT_EQ(one.alive_at_end, 1u);
  const object_counts growth = at(a, tracker, 0x2000);
  EXPECT_EQ(growth.objects, 1u);
  EXPECT_EQ(growth.allocations, 2u);
  EXPECT_EQ(growth.by_duration, (durations{0, 1, 0, 0, 0, 0, 0}));
  const object_counts reused = at(a, tracker, 0x3000);
  EXPECT_EQ(reused.objects, 2u);
  EXPECT_EQ(reused.by_duration, (durations{0, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(a.totals.frees, 14u);  // (the forgotten block is not freed)
}

TEST(ObjectsDuration, TimeRecordsAFewTicksApartDoNotFixTheRate) {
  // Ticks are truncated: TIME (0, 0) and (2, 350) say 175 ns a tick where the clock runs at 100
  // (the later records). An object of 8,000 ticks freed between them lived 800 us, not 1.4 ms.
  trace_writer w;
  w.block(1, 0, 0).stack(1, {0x1000}).alloc(1, 16, 0x10, 1).end_block();
  w.block(1, 2, 350).free(8001, 0x10).end_block();
  w.block(1, 20000, 2000000).alloc(20000, 16, 0x20, 1).free(20012, 0x20).end_block();  // 1.2 us
  object_tracker tracker;
  const analysis a = run(w, tracker);
  EXPECT_EQ(at(a, tracker, 0x1000).by_duration, (durations{0, 2, 0, 0, 0, 0, 0}));
}

TEST(ObjectsDuration, AShortTraceTakesItsWholeSpansRate) {
  // 1 us a tick, the TIME records 100 ticks apart (under rate_span): the lifetimes wait until
  // the end, then take that rate. 5 ticks: 5 us; 50 ticks: 50 us (at the fallback's 131 us a
  // tick: 655 us and 6.55 ms).
  trace_writer w;
  w.block(1, 0, 0).stack(1, {0x1000});
  w.alloc(10, 16, 0x10, 1).free(15, 0x10);
  w.alloc(20, 16, 0x20, 1).free(70, 0x20);  // 50 us
  w.time(100, 100000).end(100).end_block();
  object_tracker tracker;
  const analysis a = run(w, tracker);
  EXPECT_EQ(at(a, tracker, 0x1000).by_duration, (durations{0, 2, 0, 0, 0, 0, 0}));
}

TEST(ObjectsDuration, WithoutASecondTimeRecordTheRecordersTickWithoutATsc) {
  // One TIME record (a trace cut short): no rate; a tick is taken as 2^17 ns.
  trace_writer w;
  w.block(1, 1000, 5000).stack(1, {0x1000});
  w.alloc(1000, 16, 0x10, 1).free(1001, 0x10);  // 131 us
  w.alloc(1010, 16, 0x20, 1).free(1018, 0x20);  // 1.05 ms
  w.alloc(1020, 16, 0x30, 1).free(1020, 0x30);  // 0
  w.end_block();
  object_tracker tracker;
  const analysis a = run(w, tracker);
  EXPECT_EQ(at(a, tracker, 0x1000).by_duration, (durations{1, 1, 1, 0, 0, 0, 0}));
}

TEST(ObjectsDuration, ClassOfANanosecondCount) {
  // Never the first (within a tick: no time measured) nor the last (alive at the end).
  EXPECT_EQ(object_counts::duration_class(1), 1u);
  EXPECT_EQ(object_counts::duration_class(999999.9), 1u);
  EXPECT_EQ(object_counts::duration_class(1e6), 2u);
  EXPECT_EQ(object_counts::duration_class(99999999), 3u);
  EXPECT_EQ(object_counts::duration_class(1e8), 4u);
  EXPECT_EQ(object_counts::duration_class(1e9), 5u);
  EXPECT_EQ(object_counts::duration_class(1e15), 5u);
}

TEST(ObjectsAtPeak, TheLaterHigherPeakCounts) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).stack(2, {0x2000}).stack(3, {0x3000}).stack(4, {0x4000});
  w.stack(5, {0x5000});
  w.alloc(1, 100, 0xA1, 1);         // X 1
  w.alloc(2, 500, 0xC1, 3);         // Z 1, then never changes
  w.alloc(3, 10, 0xE1, 5);          // V 1
  w.alloc(4, 50, 0xB1, 2);          // Y 1: live 660, the first peak (X 1, Y 1, Z 1, V 1)
  w.free(5, 0xA1);                  // X 0
  w.free(6, 0xE1);                  // V 0, and no change after
  w.alloc(7, 30, 0xB2, 2);          // Y 2
  w.alloc(8, 30, 0xB3, 2);          // Y 3
  w.alloc(9, 120, 0xA2, 1);         // X 1: live 730, the peak (X 1, Y 3, Z 1, V 0, W 0)
  w.free(10, 0xB1).free(11, 0xB2);  // Y's blocks freed after the peak
  w.alloc(12, 40, 0xD1, 4);         // W, after the peak
  w.free(13, 0xA2).free(14, 0xB3);
  w.end_block();
  object_tracker tracker;
  const analysis a = run(w, tracker);
  EXPECT_EQ(a.totals.peak_bytes, 730u);
  EXPECT_EQ(at(a, tracker, 0x1000).alive_at_peak, 1u);
  EXPECT_EQ(at(a, tracker, 0x2000).alive_at_peak, 3u);
  EXPECT_EQ(at(a, tracker, 0x3000).alive_at_peak, 1u);  // unchanged since before the peak
  EXPECT_EQ(at(a, tracker, 0x4000).alive_at_peak, 0u);
  EXPECT_EQ(at(a, tracker, 0x5000).alive_at_peak, 0u);  // 1 at the first peak
  EXPECT_EQ(at(a, tracker, 0x2000).max_alive, 3u);
}

TEST(ObjectsAtPeak, LostForgottenAndUnmatchedBlocksAreNotLive) {
  // A lost block (1000 bytes) and its later free (unmatched) are never live; a block whose free
  // was not recorded stops being live when its address is handed out again. Counted live, the
  // first would make the peak 1000 and the second 370 at X's allocation.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).stack(2, {0x2000}).stack(3, {0x3000});
  w.alloc(1, 1000, 0xE0, 1).forget(0xE0);  // lost
  w.alloc(2, 200, 0xF0, 2);                // live 200: the peak (Y 1)
  w.end_block();
  w.block(1, 3).free(3, 0xE0);  // the lost block's free: unmatched
  w.free(4, 0x9999);            // never allocated
  w.alloc(5, 20, 0xF0, 2);      // Y's first block is forgotten: live 20
  w.alloc(6, 150, 0xF8, 3);     // X: live 170
  w.end_block();
  object_tracker tracker;
  const analysis a = run(w, tracker);
  EXPECT_EQ(a.lost_events, 1u);
  EXPECT_EQ(a.unmatched_frees, 2u);
  EXPECT_EQ(a.totals.peak_bytes, 200u);
  EXPECT_EQ(at(a, tracker, 0x1000).alive_at_peak, 0u);
  EXPECT_EQ(at(a, tracker, 0x1000).objects, 0u);
  EXPECT_EQ(at(a, tracker, 0x2000).alive_at_peak, 1u);
  EXPECT_EQ(at(a, tracker, 0x2000).objects, 2u);
  EXPECT_EQ(at(a, tracker, 0x3000).alive_at_peak, 0u);
}

TEST(ObjectsAtPeak, AGrowthUnderWayAtThePeakIsOneObject) {
  // The peak comes with the new buffer, while the old one is live: two blocks, one object.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  w.alloc(1, 16, 0xA0, 1).alloc(2, 32, 0xB0, 1).free(3, 0xA0).free(4, 0xB0);
  w.end_block();
  object_tracker tracker;
  const analysis a = run(w, tracker);
  EXPECT_EQ(a.totals.peak_bytes, 48u);
  EXPECT_EQ(at(a, tracker, 0x1000).objects, 1u);
  EXPECT_EQ(at(a, tracker, 0x1000).alive_at_peak, 1u);
}

TEST(ObjectsAtPeak, AGrowthAfterThePeakOfOnlyOneOfItsBlocksCountsIt) {
  // Another thread's block makes the peak, and frees it (a free by another thread does not stop
  // a growth). Then thread 1's growth: in `newer_first` the larger block is made before the
  // peak and the freed one after it, in the other the freed one before the peak and the larger
  // one after. Either way one block of the object was live at the peak.
  for (const bool newer_first : {true, false}) {
    trace_writer w;
    w.block(1, 0).stack(1, {0x1000});
    if (newer_first)
      w.alloc(1, 64, 0xA0, 1).alloc(4, 16, 0xB0, 1).free(5, 0xB0).free(6, 0xA0);
    else
      w.alloc(1, 16, 0xA0, 1).alloc(4, 64, 0xB0, 1).free(5, 0xA0).free(6, 0xB0);
    w.end_block();
    w.block(2, 2).stack(1, {0x2000}).alloc(2, 1000, 0xC0, 1).free(3, 0xC0).end_block();
    object_tracker tracker;
    const analysis a = run(w, tracker);
    EXPECT_EQ(a.totals.peak_bytes, (newer_first ? 64u : 16u) + 1000u) << newer_first;
    EXPECT_EQ(at(a, tracker, 0x1000).objects, 1u) << newer_first;  // a growth
    EXPECT_EQ(at(a, tracker, 0x1000).alive_at_peak, 1u) << newer_first;
    EXPECT_EQ(at(a, tracker, 0x2000).alive_at_peak, 1u) << newer_first;
  }
}

TEST(ObjectsAtPeak, MatchesABruteForceReplay) {
  // Random alloc/free sequences over three stacks (one size each: no growth), and the sites'
  // sum, against a full snapshot at each new peak.
  std::mt19937_64 rng(11);
  constexpr std::uint64_t sizes[4] = {0, 100, 37, 250};
  for (int round = 0; round < 20; ++round) {
    trace_writer w;
    w.block(1, 0).stack(1, {0x1000}).stack(2, {0x2000}).stack(3, {0x3000});
    std::unordered_map<std::uint64_t, int> live;  // addr -> stack
    std::uint64_t live_bytes = 0;
    std::uint64_t peak = 0;
    std::uint64_t stack_live[4] = {};
    std::uint64_t stack_peak[4] = {};
    std::uint64_t t = 1;
    for (int i = 0; i < 300; ++i, ++t) {
      const std::uint64_t addr = 0x100 + (rng() % 40) * 16;
      auto it = live.find(addr);
      if (it != live.end()) {
        w.free(t, addr);
        live_bytes -= sizes[it->second];
        --stack_live[it->second];
        live.erase(it);
      } else {
        const int s = 1 + static_cast<int>(rng() % 3);
        w.alloc(t, sizes[s], addr, static_cast<std::uint64_t>(s));
        live[addr] = s;
        live_bytes += sizes[s];
        ++stack_live[s];
        if (live_bytes > peak) {
          peak = live_bytes;
          for (int k = 1; k <= 3; ++k) stack_peak[k] = stack_live[k];
        }
      }
    }
    w.end_block();
    object_tracker tracker;
    const analysis a = run(w, tracker);
    EXPECT_EQ(a.totals.peak_bytes, peak);
    std::uint64_t all = 0;
    for (int k = 1; k <= 3; ++k) {
      const object_counts o = at(a, tracker, 0x1000u * static_cast<std::uint64_t>(k));
      EXPECT_EQ(o.alive_at_peak, stack_peak[k]) << "round " << round << " stack " << k;
      EXPECT_EQ(sum(o.by_duration), o.objects);
      all += stack_peak[k];
    }
    object_counts total;
    for (const object_counts& o : tracker.by_site(a)) total.add(o);
    EXPECT_EQ(total.alive_at_peak, all);
  }
}

TEST(ObjectsAtPeak, AddSumsEveryClassAndTheCountAtThePeak) {
  object_counts x;
  x.alive_at_peak = 3;
  x.by_duration[0] = 1;
  x.by_duration[6] = 2;
  object_counts y;
  y.alive_at_peak = 4;
  y.by_duration[6] = 5;
  x.add(y);
  EXPECT_EQ(x.alive_at_peak, 7u);
  EXPECT_EQ(x.by_duration, (durations{1, 0, 0, 0, 0, 0, 7}));
}

// A stack's counters live in 32 bits until one would overflow, then move to their full-width
// record: moved at every few objects, the counts are the same.
TEST(ObjectsCounters, MovedToTheirFullRecordTheCountsAreTheSame) {
  std::mt19937_64 rng(5);
  trace_writer w;
  w.block(1, 0, 0).stack(1, {0x1000}).stack(2, {0x2000}).stack(3, {0x3000});
  std::unordered_map<std::uint64_t, std::uint64_t> live;  // addr -> size
  std::uint64_t t = 1;
  for (int i = 0; i < 3000; ++i, t += rng() % 3) {
    const std::uint64_t addr = 0x100 + (rng() % 64) * 16;
    auto it = live.find(addr);
    if (it != live.end()) {
      w.free(t, addr);
      live.erase(it);
    } else {
      const std::uint64_t stack = 1 + rng() % 3;
      const std::uint64_t size = 8u << (rng() % 5);
      w.alloc(t, size, addr, stack);
      live[addr] = size;
    }
  }
  w.time(t, t * 1000).end(t).end_block();
  object_tracker whole;
  const analysis a = run(w, whole);
  object_tracker spilled;
  spilled.spill_at(2);
  const analysis b = run(w, spilled);
  const std::vector<object_counts> x = whole.by_site(a);
  const std::vector<object_counts> y = spilled.by_site(b);
  ASSERT_EQ(x.size(), y.size());
  std::uint64_t objects = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].objects, y[i].objects) << i;
    EXPECT_EQ(x[i].allocations, y[i].allocations) << i;
    EXPECT_EQ(x[i].alive_at_end, y[i].alive_at_end) << i;
    EXPECT_EQ(x[i].max_alive, y[i].max_alive) << i;
    EXPECT_EQ(x[i].alive_at_peak, y[i].alive_at_peak) << i;
    EXPECT_EQ(x[i].by_allocations, y[i].by_allocations) << i;
    EXPECT_EQ(x[i].by_lifetime, y[i].by_lifetime) << i;
    EXPECT_EQ(x[i].by_duration, y[i].by_duration) << i;
    ASSERT_EQ(x[i].first_sizes.buckets.size(), y[i].first_sizes.buckets.size()) << i;
    for (std::size_t k = 0; k < x[i].first_sizes.buckets.size(); ++k)
      EXPECT_EQ(x[i].first_sizes.buckets[k].count, y[i].first_sizes.buckets[k].count);
    ASSERT_EQ(x[i].final_sizes.buckets.size(), y[i].final_sizes.buckets.size()) << i;
    for (std::size_t k = 0; k < x[i].final_sizes.buckets.size(); ++k)
      EXPECT_EQ(x[i].final_sizes.buckets[k].count, y[i].final_sizes.buckets[k].count);
    EXPECT_EQ(sum(y[i].by_duration), y[i].objects);
    objects += y[i].objects;
  }
  EXPECT_GT(objects, 500u);
}

}  // namespace
