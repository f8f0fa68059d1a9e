// The analyzer's numbers on synthetic traces with known contents (tests/support/trace_writer.hpp):
// counts, temporary, leaks, peak, histogram, the cross-stream merge, modules and stacks.
#include "analyze/analysis.hpp"
#include "analyze/events.hpp"
#include "analyze/flat_map.hpp"
#include "support/trace_writer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using lowalloc::analyze::analysis;
using lowalloc::analyze::counters;
using lowalloc::analyze::histogram;
using lowalloc::analyze::site;
using lowalloc_test::trace_writer;

analysis run(const trace_writer& w, bool symbolize = false) {
  lowalloc::analyze::options o;
  o.symbolize = symbolize;
  return lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), o);
}

// The site whose innermost frame has this address.
const site& site_at(const analysis& a, std::uint64_t ip) {
  for (const site& s : a.sites)
    if (!s.stack.empty() && s.stack[0].address == ip) return s;
  ADD_FAILURE() << "no site at " << ip;
  static const site none;
  return none;
}

// Format version 6: stack ids are the process's. A stream names the stacks another stream
// defined, even one whose record is merged after the event was decoded: stream 2's event of 300
// is decoded once its event of 160 is merged, before stream 1's STACK 2 (at 200).
TEST(Analyze, InVersion6AStreamNamesTheStacksOtherStreamsDefined) {
  trace_writer w(6);
  w.block(1, 100).process(42, 7, 0, "/bin/app", {"app"}).thread(1);
  w.stack(1, {0x1000, 0x2000}).alloc(101, 10, 0x10000, 1);
  w.alloc(200, 10, 0x10010, 1).stack(2, {0x3000, 0x2000}).alloc(250, 30, 0x10020, 2);
  w.end_block();
  w.block(2, 100).thread(2).alloc(160, 10, 0x20000, 1).alloc(300, 30, 0x20010, 2);
  w.end(310).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.truncation, "");
  EXPECT_EQ(a.totals.allocations, 5u);
  EXPECT_EQ(a.stacks_lost, 0u);
  EXPECT_EQ(site_at(a, 0x1000).totals.allocations, 3u);
  EXPECT_EQ(site_at(a, 0x3000).totals.allocations, 2u);
  EXPECT_EQ(a.threads, 2u);
  // Two streams that met a stack at the same moment both define it, with the same frames.
  trace_writer both(6);
  both.block(1, 100).thread(1).stack(1, {0x1000, 0x2000}).alloc(101, 10, 0x10000, 1).end_block();
  both.block(2, 100).thread(2).stack(1, {0x1000, 0x2000}).alloc(101, 10, 0x20000, 1).end_block();
  const analysis b = run(both);
  EXPECT_EQ(b.truncation, "");
  EXPECT_EQ(site_at(b, 0x1000).totals.allocations, 2u);
  EXPECT_EQ(b.sites.size(), 1u);
}

// Format version 6: a stack defined in a block that never reached the file (its thread was
// killed before writing it) leaves the other threads' allocations from it without a stack: they
// count, with no frames, and the analysis says how many.
TEST(Analyze, InVersion6AnAllocationWhoseStacksRecordWasLostCountsWithoutIt) {
  trace_writer w(6);
  w.block(1, 100).thread(1).stack(1, {0x1000}).alloc(101, 10, 0x10000, 1);
  w.alloc(102, 20, 0x10010, 9).alloc(103, 30, 0x10020, 9).free(104, 0x10010).end(105);
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.truncation, "");
  EXPECT_EQ(a.totals.allocations, 3u);
  EXPECT_EQ(a.totals.frees, 1u);
  EXPECT_EQ(a.totals.leaked_bytes, 40u);
  EXPECT_EQ(a.stacks_lost, 2u);
  EXPECT_EQ(site_at(a, 0x1000).totals.allocations, 1u);
}

// read_process: the PROCESS record from the first block of each stream in turn, without
// reading the events; other threads' blocks may come first in the file (threads that ended
// before the first thread's block was written).
std::string saved(const trace_writer& w, const std::string& name) {
  const std::string path =
      ::testing::TempDir() + "/lowalloc_analyze_" + std::to_string(::getpid()) + "_" + name;
  w.save(path);
  return path;
}

TEST(Analyze, ReadProcessFindsThePROCESSRecordAfterOtherStreamsBlocks) {
  trace_writer w(lowalloc::trace_format::version);
  w.block(3, 90).thread(4244).end_block();
  w.block(2, 95).thread(4243).end_block();
  w.block(1, 100).process(42, 7, lowalloc::trace_format::process_flag_exec, "/bin/app",
                          {"app", "-x"});
  w.thread(4242).stack(1, {0x1000});
  w.alloc(101, 10, 0x10000, 1).end_block();
  w.block(1, 110).free(111, 0x10000).end(112).end_block_prefixed();
  const auto p = lowalloc::analyze::read_process(saved(w, "later_stream.trace"));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pid, 42u);
  EXPECT_EQ(p->ppid, 7u);
  EXPECT_TRUE(p->exec_child);
  EXPECT_FALSE(p->fork_child);
  EXPECT_EQ(p->exe, "/bin/app");
  EXPECT_EQ(p->argv, (std::vector<std::string>{"app", "-x"}));
}

TEST(Analyze, ReadProcessOfAFileWithoutOneIsNothing) {
  trace_writer none(lowalloc::trace_format::version);
  none.block(1, 100).thread(1).end(101).end_block();
  EXPECT_FALSE(lowalloc::analyze::read_process(saved(none, "no_process.trace")).has_value());
  trace_writer not_a_trace;
  not_a_trace.file() = "not a trace at all\n";
  EXPECT_FALSE(lowalloc::analyze::read_process(saved(not_a_trace, "text.trace")).has_value());
  EXPECT_FALSE(lowalloc::analyze::read_process(::testing::TempDir() + "/no_such_file").has_value());
  // A first block that does not decompress.
  trace_writer damaged(lowalloc::trace_format::version);
  damaged.block(1, 100).process(42, 7, 0, "/bin/app", {"app"}).end_block();
  damaged.file()[damaged.file().size() - 6] ^= 0x5a;
  EXPECT_FALSE(lowalloc::analyze::read_process(saved(damaged, "damaged.trace")).has_value());
}

TEST(Analyze, CountsAllocationsFreesBytesAndKinds) {
  trace_writer w;
  w.block(1, 100).process(42, 7, 0, "/bin/app", {"app", "-x"}).thread(4242);
  w.stack(1, {0x1000, 0x2000});
  w.alloc(101, 10, 0x10000, 1, lowalloc::trace_format::kind_malloc);
  w.alloc(102, 20, 0x10020, 1, lowalloc::trace_format::kind_calloc);
  w.alloc(103, 30, 0x10040, 1, lowalloc::trace_format::kind_posix_memalign);
  w.free(104, 0x10020).free(105, 0x10000);
  w.end(106).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 3u);
  EXPECT_EQ(a.totals.bytes_allocated, 60u);
  EXPECT_EQ(a.totals.frees, 2u);
  EXPECT_EQ(a.totals.leaked_allocations, 1u);
  EXPECT_EQ(a.totals.leaked_bytes, 30u);
  EXPECT_EQ(a.allocations_by_kind[0], 1u);
  EXPECT_EQ(a.allocations_by_kind[1], 1u);
  EXPECT_EQ(a.allocations_by_kind[4], 1u);
  EXPECT_EQ(a.unmatched_frees, 0u);
  EXPECT_EQ(a.threads, 1u);
  EXPECT_TRUE(a.complete);
  EXPECT_TRUE(a.truncation.empty());
  EXPECT_EQ(a.process.pid, 42u);
  EXPECT_EQ(a.process.ppid, 7u);
  EXPECT_EQ(a.process.exe, "/bin/app");
  ASSERT_EQ(a.process.argv.size(), 2u);
  EXPECT_EQ(a.process.argv[1], "-x");
  ASSERT_EQ(a.sites.size(), 1u);
  EXPECT_EQ(a.sites[0].stack.size(), 2u);
  EXPECT_EQ(a.sites[0].stack[1].address, 0x2000u);
  EXPECT_EQ(a.sites[0].totals.allocations, 3u);
  EXPECT_EQ(a.sites[0].totals.frees, 2u);
}

TEST(Analyze, TemporaryIsPerThreadAndIgnoresFreesOfOtherAddresses) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  w.end_block();
  w.block(2, 0).stack(1, {0x2000});
  w.end_block();
  // Stream 1: C, then B; freeing C (not the latest) does not stop B from being temporary.
  w.block(1, 1);
  w.alloc(1, 8, 0xC00, 1);   // C
  w.alloc(2, 8, 0xB00, 1);   // B
  w.free(3, 0xC00);          // C: not temporary (B was allocated after it)
  w.free(4, 0xB00);          // B: temporary
  w.alloc(5, 8, 0xD00, 1);   // D, freed by stream 2 below: not temporary
  w.alloc(7, 8, 0xE00, 1);   // E
  w.free(9, 0xE00);          // E: temporary although stream 2 allocated F in between
  w.alloc(10, 8, 0x100, 1);  // G
  w.alloc(11, 8, 0x200, 1);  // H
  w.free(12, 0x100);         // G: not temporary
  w.end_block();
  w.block(2, 6);
  w.free(6, 0xD00);         // D, freed by another thread right after
  w.alloc(8, 8, 0xF00, 1);  // F
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 7u);
  EXPECT_EQ(a.totals.frees, 5u);
  EXPECT_EQ(a.totals.temporary, 2u);
  EXPECT_EQ(site_at(a, 0x1000).totals.temporary, 2u);
  EXPECT_EQ(site_at(a, 0x2000).totals.temporary, 0u);
  EXPECT_EQ(a.threads, 2u);
}

TEST(Analyze, FreeByAnotherThreadOfTheLatestAllocationIsNotTemporary) {
  // Stream 1 allocates X; stream 2 frees it and stream 3 gets X back; stream 1 frees it. (Stream
  // 1's free is in a later block: within one block the recorder would write a FREE_LOCAL.)
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x500, 1).end_block();
  w.block(1, 4).free(5, 0x500).end_block();
  w.block(2, 0).free(2, 0x500).end_block();
  w.block(3, 0).stack(1, {0x3000}).alloc(3, 8, 0x500, 1).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 2u);
  EXPECT_EQ(a.totals.frees, 2u);
  EXPECT_EQ(a.totals.temporary, 0u);
  EXPECT_EQ(a.unmatched_frees, 0u);
}

TEST(Analyze, TemporaryAcrossBlocksOfAStream) {
  // The latest allocation is listed in ADDRESSES; its FREE (with the address) is in the next
  // block, with nothing allocated by the stream in between.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x500, 1).alloc(2, 8, 0x600, 1).end_block();
  w.block(1, 3).free(3, 0x500).free(4, 0x600).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.frees, 2u);
  EXPECT_EQ(a.totals.temporary, 1u);  // 0x600 only: 0x500 was followed by 0x600
}

TEST(Analyze, AllocationsNeitherFreedNorListedAreLost) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  w.alloc(1, 100, 0x500, 1).alloc(2, 50, 0x600, 1).forget(0x500);
  w.alloc(3, 30, 0x700, 1).alloc(4, 20, 0x700, 1);  // the same address twice: the first is lost
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 4u);
  EXPECT_EQ(a.totals.bytes_allocated, 200u);
  EXPECT_EQ(a.lost_events, 2u);
  EXPECT_EQ(a.totals.leaked_allocations, 2u);
  EXPECT_EQ(a.totals.leaked_bytes, 70u);
  EXPECT_EQ(a.totals.peak_bytes, 70u);
}

TEST(Analyze, EqualStampsFreeBeforeAnotherStreamsAllocOfTheAddress) {
  // Stream 2 allocated X; at stamp 10 stream 2 frees X and stream 1 receives X. Stream 1 comes
  // first at equal stamps, but its ALLOC waits for the FREE of the same stamp.
  trace_writer w;
  w.block(1, 10).stack(1, {0x1000}).alloc(10, 8, 0x700, 1).end_block();
  w.block(2, 5).stack(1, {0x2000}).alloc(5, 16, 0x700, 1).end_block();
  w.block(2, 10).free(10, 0x700).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.frees, 1u);
  EXPECT_EQ(a.unmatched_frees, 0u);
  EXPECT_EQ(site_at(a, 0x2000).totals.frees, 1u);
  EXPECT_EQ(site_at(a, 0x1000).totals.leaked_bytes, 8u);
  EXPECT_EQ(a.totals.leaked_bytes, 8u);
  EXPECT_EQ(a.totals.peak_bytes, 16u);
}

TEST(Analyze, EqualStampsAllocBeforeAnotherStreamsFreeOfTheAddress) {
  // Stream 2 allocates X at stamp 10 and stream 1 frees it at the same stamp: the FREE waits.
  trace_writer w;
  w.block(1, 10).free(10, 0x700).end_block();
  w.block(2, 10).stack(1, {0x2000}).alloc(10, 16, 0x700, 1).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.frees, 1u);
  EXPECT_EQ(a.unmatched_frees, 0u);
  EXPECT_EQ(a.totals.leaked_allocations, 0u);
}

TEST(Analyze, EqualStampsAThreadFreeingWhatAnotherAllocatesInTurn) {
  // A producer and a consumer within one tick: stream 1 allocates X, stream 2 frees it, stream 1
  // gets X back, stream 2 frees it again. Stream 1's second ALLOC waits for the first FREE; then
  // stream 2's second FREE, which must wait for that ALLOC, finds it waiting and lets it go first
  // (a free taken before the allocation it frees was unmatched: 94% of a producer's blocks).
  // The recorder lists each of the three allocations of X: another thread freed the ones before.
  trace_writer w;
  w.block(1, 10).stack(1, {0x1000}).alloc_untracked(10, 8, 1).alloc_untracked(10, 8, 1);
  w.alloc_untracked(10, 8, 1).addresses({{0, 0x700}, {1, 0x700}, {2, 0x700}}).end_block();
  w.block(2, 10).free(10, 0x700).free(10, 0x700).free(10, 0x700).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 3u);
  EXPECT_EQ(a.totals.frees, 3u);
  EXPECT_EQ(a.unmatched_frees, 0u);
  EXPECT_EQ(a.lost_events, 0u);
  EXPECT_EQ(a.frees_not_seen, 0u);
  EXPECT_EQ(a.totals.leaked_allocations, 0u);
  EXPECT_EQ(a.totals.peak_bytes, 8u);
}

TEST(Analyze, ABlockWhoseAddressIsAllocatedAgainBeforeItsFreeIsCountedAsNotSeen) {
  // One stream lists two allocations of X and no free of the first: the first block is dropped,
  // neither freed nor leaked, and the report says so.
  trace_writer w;
  w.block(1, 10).stack(1, {0x1000}).alloc_untracked(10, 8, 1).alloc_untracked(11, 16, 1);
  w.addresses({{0, 0x700}, {1, 0x700}}).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 2u);
  EXPECT_EQ(a.totals.frees, 0u);
  EXPECT_EQ(a.frees_not_seen, 1u);
  EXPECT_EQ(a.totals.leaked_allocations, 1u);
  EXPECT_EQ(a.totals.leaked_bytes, 16u);
  EXPECT_EQ(a.unmatched_frees, 0u);
}

TEST(Analyze, ReallocIsAFreeThenAnAlloc) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  w.alloc(1, 16, 0x1000, 1);
  w.realloc(2, 0x1000, 64, 0x2000, 1);   // moved: FREE old, ALLOC new
  w.realloc(3, 0x2000, 128, 0x2000, 1);  // in place
  w.free(4, 0x2000);
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 3u);
  EXPECT_EQ(a.totals.bytes_allocated, 16u + 64 + 128);
  EXPECT_EQ(a.totals.frees, 3u);
  EXPECT_EQ(a.allocations_by_kind[lowalloc::trace_format::kind_realloc], 2u);
  EXPECT_EQ(a.allocations_by_kind[lowalloc::trace_format::kind_malloc], 1u);
  // Each block was freed by its thread before the thread allocated again.
  EXPECT_EQ(a.totals.temporary, 3u);
  EXPECT_EQ(a.totals.leaked_allocations, 0u);
  EXPECT_EQ(a.totals.peak_bytes, 128u);
}

TEST(Analyze, PeakWithPerSiteValuesAtThePeak) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).stack(2, {0x2000});
  w.alloc(1, 100, 0xA1, 1);  // X 100, live 100
  w.alloc(2, 50, 0xA2, 2);   // Y 50, live 150: peak
  w.free(3, 0xA1);           // live 50
  w.alloc(4, 30, 0xA3, 2);   // Y 80 now, live 80: Y changed after the peak
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.peak_bytes, 150u);
  EXPECT_EQ(site_at(a, 0x1000).totals.peak_bytes, 100u);
  EXPECT_EQ(site_at(a, 0x2000).totals.peak_bytes, 50u);
  EXPECT_EQ(a.totals.leaked_bytes, 80u);
  EXPECT_EQ(site_at(a, 0x2000).totals.leaked_bytes, 80u);
  EXPECT_EQ(site_at(a, 0x2000).totals.leaked_allocations, 2u);
  EXPECT_EQ(site_at(a, 0x1000).totals.leaked_allocations, 0u);
}

TEST(Analyze, PeakIsTheLatestMaximum) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).stack(2, {0x2000});
  w.alloc(1, 100, 0xA1, 1);  // X 100
  w.alloc(2, 50, 0xA2, 2);   // Y 50: peak 150
  w.free(3, 0xA1);           // X 0
  w.alloc(4, 30, 0xA3, 2);   // Y 80
  w.alloc(5, 120, 0xA4, 1);  // X 120: live 200, the new peak (X 120, Y 80)
  w.free(6, 0xA2);           // Y 30
  w.free(7, 0xA4);           // X 0
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.peak_bytes, 200u);
  EXPECT_EQ(site_at(a, 0x1000).totals.peak_bytes, 120u);
  EXPECT_EQ(site_at(a, 0x2000).totals.peak_bytes, 80u);
  EXPECT_EQ(a.totals.leaked_bytes, 30u);
  EXPECT_EQ(a.totals.leaked_allocations, 1u);
}

TEST(Analyze, PeakMatchesABruteForceReplay) {
  // Random alloc/free sequences over three sites: the lazy snapshot against a full one.
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    trace_writer w;
    w.block(1, 0).stack(1, {0x1000}).stack(2, {0x2000}).stack(3, {0x3000});
    std::unordered_map<std::uint64_t, std::pair<std::uint64_t, int>> live;  // addr -> size, site
    std::uint64_t live_bytes = 0;
    std::uint64_t peak = 0;
    std::uint64_t site_live[4] = {};
    std::uint64_t site_peak[4] = {};
    std::uint64_t site_max[4] = {};
    std::uint64_t t = 1;
    for (int i = 0; i < 300; ++i, ++t) {
      const std::uint64_t addr = 0x100 + (rng() % 40) * 16;
      auto it = live.find(addr);
      if (it != live.end()) {
        w.free(t, addr);
        live_bytes -= it->second.first;
        site_live[it->second.second] -= it->second.first;
        live.erase(it);
      } else {
        const std::uint64_t size = 1 + rng() % 1000;
        const int s = 1 + static_cast<int>(rng() % 3);
        w.alloc(t, size, addr, static_cast<std::uint64_t>(s));
        live[addr] = {size, s};
        live_bytes += size;
        site_live[s] += size;
        site_max[s] = std::max(site_max[s], site_live[s]);
        if (live_bytes > peak) {
          peak = live_bytes;
          for (int k = 1; k <= 3; ++k) site_peak[k] = site_live[k];
        }
      }
    }
    w.end_block();
    const analysis a = run(w);
    EXPECT_EQ(a.totals.peak_bytes, peak);
    EXPECT_EQ(a.totals.leaked_bytes, live_bytes);
    for (int k = 1; k <= 3; ++k) {
      const std::uint64_t ip = 0x1000u * static_cast<std::uint64_t>(k);
      bool found = false;
      for (const site& s : a.sites) {
        if (s.stack[0].address != ip) continue;
        found = true;
        EXPECT_EQ(s.totals.peak_bytes, site_peak[k]) << "round " << round << " site " << k;
        EXPECT_EQ(s.totals.leaked_bytes, site_live[k]);
        EXPECT_EQ(s.totals.max_live_bytes, site_max[k]) << "round " << round << " site " << k;
        EXPECT_TRUE(s.max_live_exact());
      }
      EXPECT_TRUE(found || site_peak[k] == 0);
    }
  }
}

TEST(Analyze, MaxLiveIsEachSitesOwnMaximumNotItsShareOfThePeak) {
  // A allocates 3 x 100 bytes and frees them before B's peak: A has nothing live at the peak,
  // but 300 bytes were live at once.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).stack(2, {0x2000});
  w.alloc(1, 100, 0xA1, 1).alloc(2, 100, 0xA2, 1).alloc(3, 100, 0xA3, 1);  // A: 300 live
  w.free(4, 0xA1).free(5, 0xA2).free(6, 0xA3);                             // A: 0
  w.alloc(7, 500, 0xB1, 2);                                                // B: 500, the peak
  w.free(8, 0xB1);
  w.alloc(9, 40, 0xA4, 1);  // A: 40 after the peak
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.peak_bytes, 500u);
  EXPECT_EQ(a.totals.max_live_bytes, 500u);
  const site& sa = site_at(a, 0x1000);
  EXPECT_EQ(sa.totals.peak_bytes, 0u);
  EXPECT_EQ(sa.totals.max_live_bytes, 300u);
  EXPECT_EQ(sa.max_live_at_least, 300u);
  EXPECT_TRUE(sa.max_live_exact());
  const site& sb = site_at(a, 0x2000);
  EXPECT_EQ(sb.totals.peak_bytes, 500u);
  EXPECT_EQ(sb.totals.max_live_bytes, 500u);
}

TEST(Analyze, MaxLiveOfASiteOfSeveralStacksIsARangeUnlessTheyAgree) {
  // Two stacks that differ only in the C runtime's start frames (outside the line) are one site
  // once folded: their maxima at different moments (100, then 200) say only that the site's is
  // 200..300 (it is 200); at one moment (100 + 200 together), 300 exactly.
  for (const bool together : {false, true}) {
    trace_writer w;
    w.block(1, 0);
    w.module(1, 1, 0x400000, "/nonexistent/app", {{0x400000, 0x1000}});
    w.module(1, 2, 0x7f0000000000, "/nonexistent/libc.so.6", {{0x7f0000001000, 0x2000}});
    w.stack(1, {0x400100, 0x7f0000001100, 0x400050});
    w.stack(2, {0x400100, 0x7f0000001200, 0x400060});
    w.alloc(2, 100, 0xA1, 1);
    if (!together) w.free(3, 0xA1);
    w.alloc(4, 200, 0xA2, 2);
    w.free(5, 0xA2);
    if (together) w.free(6, 0xA1);
    w.end_block();
    const analysis a = run(w);
    ASSERT_EQ(a.sites.size(), 1u);
    const site& s = a.sites[0];
    EXPECT_EQ(s.folded_start_frames, 2u);
    EXPECT_EQ(s.totals.max_live_bytes, 300u) << together;
    EXPECT_EQ(s.max_live_at_least, together ? 300u : 200u);
    EXPECT_EQ(s.max_live_exact(), together);
  }
}

TEST(Analyze, TheCRuntimesStartFramesAreFoldedOffTheOuterEnd) {
  // Unsymbolized: main's line, __libc_start_call_main and __libc_start_main_impl in libc.so.6,
  // _start in the executable (a frame without a name that calls the C library's start frames);
  // a thread: its function, start_thread and clone3 in libc.so.6.
  trace_writer w;
  w.block(1, 0);
  w.module(1, 1, 0x400000, "/nonexistent/app", {{0x400000, 0x1000}});
  w.module(1, 2, 0x7f0000000000, "/nonexistent/libc.so.6", {{0x7f0000001000, 0x2000}});
  w.stack(1, {0x400100, 0x400200, 0x7f0000001100, 0x7f0000001200, 0x400050});
  w.stack(2, {0x400300, 0x7f0000001300, 0x7f0000001400});
  w.alloc(2, 8, 0xA1, 1).alloc(3, 8, 0xA2, 2);
  w.end_block();
  for (const bool fold : {true, false}) {
    lowalloc::analyze::options o;
    o.symbolize = false;
    o.fold_allocator = fold;
    const analysis a = lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), o);
    const site& main_site = site_at(a, 0x400100);
    ASSERT_EQ(main_site.stack.size(), fold ? 2u : 5u);
    EXPECT_EQ(main_site.stack[1].address, 0x400200u);
    EXPECT_EQ(main_site.folded_start_frames, fold ? 3u : 0u);
    const site& thread_site = site_at(a, 0x400300);
    EXPECT_EQ(thread_site.stack.size(), fold ? 1u : 3u);
    EXPECT_EQ(thread_site.folded_start_frames, fold ? 2u : 0u);
    // The stacks keep every frame (advise and the runtime's rules read them).
    for (std::size_t i = 0; i < a.stacks.size(); ++i) {
      if (a.stacks[i].totals.allocations == 0) continue;
      const auto frames = a.stack_frames(i);
      EXPECT_EQ(frames.size(), frames[0].address == 0x400100 ? 5u : 3u);
    }
  }
}

TEST(Analyze, UnmatchedFrees) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  w.free(1, 0x9000);                                      // allocated before tracing started
  w.alloc(2, 8, 0x100, 1).free(3, 0x100).free(4, 0x100);  // double free: the second is unmatched
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.frees, 1u);
  EXPECT_EQ(a.unmatched_frees, 2u);
}

TEST(Analyze, HistogramBoundaries) {
  EXPECT_EQ(histogram::bucket_of(0), 0u);
  EXPECT_EQ(histogram::bucket_of(256), 256u);
  EXPECT_EQ(histogram::bucket_of(257), 257u);
  EXPECT_EQ(histogram::bucket_of(512), 257u);
  EXPECT_EQ(histogram::bucket_of(513), 258u);
  EXPECT_EQ(histogram::bucket_of(1024), 258u);
  EXPECT_EQ(histogram::bucket_of(1025), 259u);
  EXPECT_EQ(histogram::bucket_min(257), 257u);
  EXPECT_EQ(histogram::bucket_max(257), 512u);
  EXPECT_EQ(histogram::bucket_min(258), 513u);
  EXPECT_EQ(histogram::bucket_max(258), 1024u);
  const std::size_t last = histogram::bucket_of(~std::uint64_t{0});
  EXPECT_EQ(last, histogram{}.counts.size() - 1);
  EXPECT_EQ(histogram::bucket_max(last), ~std::uint64_t{0});
  EXPECT_EQ(histogram::bucket_min(last), (std::uint64_t{1} << 63) + 1);
  for (std::size_t b = 1; b < histogram{}.counts.size(); ++b)
    EXPECT_EQ(histogram::bucket_min(b), histogram::bucket_max(b - 1) + 1) << b;

  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  std::uint64_t t = 1;
  std::uint64_t addr = 0x100;
  for (std::uint64_t size : {256u, 257u, 512u, 513u, 0u, 256u})
    w.alloc(t++, size, addr += 0x1000, 1);
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.sizes.counts[0], 1u);
  EXPECT_EQ(a.sizes.counts[256], 2u);
  EXPECT_EQ(a.sizes.counts[257], 2u);
  EXPECT_EQ(a.sizes.counts[258], 1u);
  EXPECT_EQ(a.sites[0].sizes.count(256), 2u);
  EXPECT_EQ(a.sites[0].sizes.count(257), 2u);
}

TEST(Analyze, StreamsMergeByTimestampNotFileOrder) {
  // Thread A (stream 1) allocates and frees X; thread B (stream 2) gets X later. B's block is
  // first in the file: in file order B's block would be live when A allocates X.
  trace_writer w;
  w.block(2, 15).stack(1, {0x2000}).alloc(20, 64, 0x7000, 1).end_block();
  w.block(1, 1).stack(1, {0x1000}).alloc(5, 32, 0x7000, 1).end_block();
  w.block(1, 8).free(10, 0x7000).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 2u);
  EXPECT_EQ(a.totals.frees, 1u);
  EXPECT_EQ(a.unmatched_frees, 0u);
  EXPECT_EQ(a.totals.temporary, 1u);
  EXPECT_EQ(a.totals.leaked_allocations, 1u);
  EXPECT_EQ(a.totals.leaked_bytes, 64u);
  EXPECT_EQ(site_at(a, 0x2000).totals.leaked_bytes, 64u);
  EXPECT_EQ(site_at(a, 0x1000).totals.temporary, 1u);
  EXPECT_EQ(a.totals.peak_bytes, 64u);
}

TEST(Analyze, ManyBlocksPerStreamKeepStackIdsAndResetAddressDeltas) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x5000, 1).end_block();
  w.block(2, 0).stack(1, {0x2000}).alloc(2, 8, 0x6000, 1).end_block();
  w.block(1, 3).alloc(3, 8, 0x5010, 1).free(4, 0x5000).end_block();
  w.block(2, 5).alloc(5, 8, 0x6010, 1).free(6, 0x5010).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 4u);
  EXPECT_EQ(a.totals.frees, 2u);
  EXPECT_EQ(site_at(a, 0x1000).totals.allocations, 2u);
  EXPECT_EQ(site_at(a, 0x2000).totals.allocations, 2u);
  EXPECT_EQ(a.sites.size(), 2u);
}

TEST(Analyze, EqualStacksOfDifferentStreamsAreOneSite) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000, 0x1100}).alloc(1, 8, 0x5000, 1).end_block();
  w.block(2, 0).stack(7, {0x1000, 0x1100}).alloc(2, 8, 0x6000, 7).end_block();
  w.block(3, 0).stack(1, {0x1000, 0x1200}).alloc(3, 8, 0x7000, 1).end_block();
  const analysis a = run(w);
  ASSERT_EQ(a.sites.size(), 2u);
  EXPECT_EQ(a.sites[0].totals.allocations, 2u);  // sorted by allocations
  EXPECT_EQ(a.sites[1].totals.allocations, 1u);
}

// Sites in order of allocations, then bytes, descending, and sites equal in both in the order
// they were first seen: counts and byte totals on both sides of a byte boundary (255/256,
// 65535/65536), so that a sort that looks at some bytes of the keys only would misplace them.
TEST(Analyze, SitesAreSortedByAllocationsThenBytesThenFirstSeen) {
  trace_writer w;
  w.block(1, 0);
  std::uint64_t time = 1;
  std::uint64_t addr = 0x100000;
  const auto allocs = [&](std::uint64_t stack, std::uint64_t ip, std::uint64_t n,
                          std::uint64_t size) {
    w.stack(stack, {ip, 0x9000});
    for (std::uint64_t k = 0; k < n; ++k) {
      w.alloc(time++, size, addr, stack);
      addr += 0x20000;
    }
  };
  allocs(1, 0x1000, 2, 8);      // 2 allocations, 16 bytes
  allocs(2, 0x2000, 255, 1);    // 255, 255
  allocs(3, 0x3000, 2, 32768);  // 2, 65536
  allocs(4, 0x4000, 2, 8);      // 2, 16: as the first, seen after it
  allocs(5, 0x5000, 256, 1);    // 256, 256
  allocs(6, 0x6000, 2, 32767);  // 2, 65534
  allocs(7, 0x7000, 1, 70000);  // 1, 70000
  allocs(8, 0x8000, 2, 128);    // 2, 256
  w.end_block();
  const analysis a = run(w);
  const std::uint64_t expected[] = {0x5000, 0x2000, 0x3000, 0x6000, 0x8000, 0x1000, 0x4000, 0x7000};
  ASSERT_EQ(a.sites.size(), std::size(expected));
  for (std::size_t i = 0; i < a.sites.size(); ++i)
    EXPECT_EQ(a.sites[i].stack[0].address, expected[i]) << "site " << i;
}

// A call-tree node lists its first children and keeps more in a table (merge.cpp): 20 calls
// from one frame, made by two streams in opposite orders, are 20 sites of two allocations each.
TEST(Analyze, ANodeWithManyChildrenFindsEachOfThemAgain) {
  trace_writer w;
  constexpr std::uint64_t calls = 20;
  for (std::uint32_t stream = 1; stream <= 2; ++stream) {
    w.block(stream, 0);
    for (std::uint64_t k = 0; k < calls; ++k) {
      const std::uint64_t call = stream == 1 ? k : calls - 1 - k;
      w.stack(k + 1, {0x2000 + 16 * call, 0x9000});
      w.alloc(1 + k, 8 + call, 0x10000 * stream + 0x100 * k, k + 1);
    }
    w.end_block();
  }
  const analysis a = run(w);
  EXPECT_EQ(a.stacks.size(), calls);  // each stack interned once, not once per stream
  ASSERT_EQ(a.sites.size(), calls);
  for (std::uint64_t call = 0; call < calls; ++call) {
    const site& s = site_at(a, 0x2000 + 16 * call);
    EXPECT_EQ(s.totals.allocations, 2u) << call;
    EXPECT_EQ(s.totals.bytes_allocated, 2 * (8 + call)) << call;
  }
}

// Stacks share their outer frames as nodes of one call tree, and a stack through a node whose
// frames an earlier stack wrote copies them from there (sites.cpp): each still lists exactly its
// own frames, whether it ends at a node of another stack, joins one halfway, shares nothing, or
// comes after a stack that was defined and never used.
TEST(Analyze, StacksThatShareOuterFramesKeepEachTheirOwnFrames) {
  const std::vector<std::vector<std::uint64_t>> stacks = {
      {0x10, 0x20, 0x30, 0x40, 0x50},  // the deepest, written first
      {0x11, 0x30, 0x40, 0x50},        // joins it at 0x30
      {0x30, 0x40, 0x50},              // one of its nodes
      {0x12, 0x13, 0x20, 0x30, 0x40, 0x50},
      {0x60, 0x70},  // nothing shared
      {0x14, 0x13, 0x20, 0x30, 0x40, 0x50},
      {0x15, 0x70},
      {0x50},
  };
  trace_writer w;
  w.block(1, 0);
  w.stack(100, {0x99, 0x20, 0x30, 0x40, 0x50});  // defined, never used
  for (std::size_t i = 0; i < stacks.size(); ++i) w.stack(i + 1, stacks[i]);
  std::uint64_t t = 1;
  std::uint64_t address = 0x100000;
  // Stack i allocates i + 1 times: its site is told apart by its count.
  for (std::size_t i = 0; i < stacks.size(); ++i)
    for (std::size_t k = 0; k <= i; ++k) w.alloc(t++, 8, address += 0x100, i + 1);
  w.end_block();
  const analysis a = run(w);
  ASSERT_EQ(a.sites.size(), stacks.size());
  for (const site& s : a.sites) {
    const std::size_t i = s.totals.allocations - 1;
    ASSERT_LT(i, stacks.size());
    std::vector<std::uint64_t> shown;
    for (const lowalloc::analyze::frame& f : s.stack) shown.push_back(f.address);
    EXPECT_EQ(shown, stacks[i]) << i;
    for (const std::uint32_t st : a.site_stacks(static_cast<std::size_t>(&s - a.sites.data()))) {
      std::vector<std::uint64_t> frames;
      for (const lowalloc::analyze::frame& f : a.stack_frames(st)) frames.push_back(f.address);
      EXPECT_EQ(frames, stacks[i]) << i;
    }
  }
}

TEST(Analyze, StackIdZeroIsNoStack) {
  trace_writer w;
  w.block(1, 0).alloc(1, 8, 0x5000, 0).end_block();
  const analysis a = run(w);
  ASSERT_EQ(a.sites.size(), 1u);
  EXPECT_TRUE(a.sites[0].stack.empty());
  EXPECT_EQ(a.sites[0].totals.allocations, 1u);
}

TEST(Analyze, ResetVoidsStackIds) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x5000, 1);
  w.reset(2).stack(1, {0x2000}).alloc(3, 8, 0x6000, 1).end_block();
  const analysis a = run(w);
  EXPECT_EQ(site_at(a, 0x1000).totals.allocations, 1u);
  EXPECT_EQ(site_at(a, 0x2000).totals.allocations, 1u);
}

TEST(Analyze, RunTimeFromTimePairs) {
  // Ticks at 0.5 ns: TIME (1000 ticks, 0 ns) and (3000 ticks, 1000 ns); events up to 5000.
  trace_writer w;
  w.block(1, 1000, 0).stack(1, {0x1000}).alloc(1500, 8, 0x10, 1).end_block();
  w.block(1, 3000, 1000).free(5000, 0x10).end_block();
  const analysis a = run(w);
  EXPECT_DOUBLE_EQ(a.run_time_seconds, 4000 * 0.5 / 1e9);

  // One pair only: ticks cannot be converted, and the nanoseconds span nothing.
  trace_writer same;
  same.block(1, 1000, 77).stack(1, {0x1000}).alloc(3000, 8, 0x10, 1).end_block();
  EXPECT_DOUBLE_EQ(run(same).run_time_seconds, 0.0);

  // A program shorter than a tick: every event in tick 1000, the TIME written before END 2 ms
  // after the first. The nanoseconds give the run time.
  trace_writer short_run;
  short_run.block(1, 1000, 5000000).stack(1, {0x1000}).alloc(1000, 8, 0x10, 1);
  short_run.time(1000, 7000000).end(1000).end_block();
  EXPECT_DOUBLE_EQ(run(short_run).run_time_seconds, 0.002);

  // Both: the longer span wins (here the ticks: 4000 ticks at 0.5 ns against 1 us of TIME records).
  EXPECT_GT(a.run_time_seconds, 1000 / 1e9);
}

TEST(Analyze, TemporaryAcrossABlockBoundaryAfterALocalFree) {
  // B is the thread's latest allocation, listed at the end of its block because it is freed in
  // the next one; A, allocated before it, is freed in between (a FREE_LOCAL). Freeing another
  // block does not change which allocation is the latest: B is temporary.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  w.alloc(1, 8, 0xA0, 1).alloc(2, 16, 0xB0, 1).free(3, 0xA0);
  w.end_block();
  w.block(1, 4).free(4, 0xB0).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.frees, 2u);
  EXPECT_EQ(a.totals.temporary, 1u);
}

// Blocks of a one-thread process that outlive their block are kept by the recorder (KEPT) and
// freed by stream ordinal (FREE_KEPT): no address in the trace.
TEST(Analyze, KeptAllocationsAreFreedByStreamOrdinal) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  w.alloc(1, 100, 0xA0, 1).alloc(2, 50, 0xB0, 1).alloc(3, 30, 0xC0, 1).free(4, 0xC0);
  w.kept().end_block(false);
  w.block(1, 5).alloc(5, 20, 0xD0, 1);  // stream ordinal 3
  w.free_kept(6, 1).free_kept(7, 0);
  w.end_block();  // D is listed in ADDRESSES
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 4u);
  EXPECT_EQ(a.totals.frees, 3u);
  EXPECT_EQ(a.totals.temporary, 1u);  // C: A and B had allocations after them
  EXPECT_EQ(a.totals.leaked_allocations, 1u);
  EXPECT_EQ(a.totals.leaked_bytes, 20u);
  EXPECT_EQ(a.totals.peak_bytes, 180u);
  EXPECT_EQ(a.unmatched_frees, 0u);
  EXPECT_EQ(a.lost_events, 0u);
}

TEST(Analyze, TheLatestAllocationKeptAndFreedNextIsTemporary) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0xA0, 1).alloc(2, 8, 0xB0, 1);
  w.kept().end_block(false);
  w.block(1, 3).free_kept(3, 1).free_kept(4, 0).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.frees, 2u);
  EXPECT_EQ(a.totals.temporary, 1u);  // B, the latest: nothing allocated before its free
}

TEST(Analyze, FreeKeptOfNoKeptAllocationIsUnmatched) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0xA0, 1).kept().end_block(false);
  w.block(1, 2).free_kept(2, 5).free_kept(3, 0).free_kept(4, 0).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.frees, 1u);
  EXPECT_EQ(a.unmatched_frees, 2u);  // ordinal 5 was never made; 0 is freed twice
}

TEST(Analyze, KeptDropsTheAllocationWhoseAddressWasHandedOutAgain) {
  // Its free was not recorded: the later allocation got its address. It is released uncounted
  // (neither freed nor leaked), when the later one is made.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 100, 0xA0, 1).kept().end_block(false);
  w.block(1, 2).alloc(2, 40, 0xA0, 1).kept({{0, 0}}).end_block(false);
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 2u);
  EXPECT_EQ(a.totals.frees, 0u);
  EXPECT_EQ(a.totals.leaked_allocations, 1u);
  EXPECT_EQ(a.totals.leaked_bytes, 40u);
  EXPECT_EQ(a.totals.peak_bytes, 100u);
  EXPECT_EQ(a.lost_events, 0u);
}

TEST(Analyze, LiveHandsKeptAllocationsToTheirAddresses) {
  // A second thread starts: the recorder lists the kept allocations' addresses (LIVE), and the
  // other thread's FREEs match them; so does a later FREE of the first thread.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x500, 1).alloc(2, 16, 0x600, 1);
  w.alloc(3, 32, 0x700, 1).kept().end_block(false);
  w.block(1, 4).live(4, {{0, 0x500}, {1, 0x600}, {2, 0x700}}).end_block();
  w.block(2, 5).free(5, 0x500).free(6, 0x600).end_block();
  w.block(1, 7).free(7, 0x700).end_block();
  const analysis a = run(w);
  EXPECT_EQ(a.totals.frees, 3u);
  EXPECT_EQ(a.unmatched_frees, 0u);
  EXPECT_EQ(a.totals.leaked_allocations, 0u);
  EXPECT_EQ(a.totals.temporary, 1u);  // 0x700, the latest, freed by its own thread
}

TEST(Analyze, BlocksOfATerabyteOrMoreKeepTheirSizesThroughEveryPath) {
  // The merge packs a live block's size with its stream in one word up to 2^40 bytes; larger
  // blocks keep theirs on the side, whichever way the trace names them: by address (listed and
  // freed in a later block), by ordinal (kept), by ordinal then address (LIVE), or forgotten.
  constexpr std::uint64_t tb = std::uint64_t{1} << 40;
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  w.alloc(1, 3 * tb, 0xA0, 1).alloc(2, 5 * tb, 0xB0, 1).alloc(3, 7 * tb, 0xC0, 1);
  w.alloc(4, tb + 1, 0xD0, 1).kept().end_block(false);
  w.block(1, 5).free_kept(5, 0).live(6, {{1, 0xB0}, {3, 0xD0}}).end_block();
  w.block(2, 7).free(7, 0xB0).end_block();
  w.block(1, 8).alloc(8, 16, 0xD0, 1).end_block();  // 0xD0 again: tb + 1 is forgotten
  const analysis a = run(w);
  EXPECT_EQ(a.totals.allocations, 5u);
  EXPECT_EQ(a.totals.bytes_allocated, 16 * tb + 1 + 16);
  EXPECT_EQ(a.totals.frees, 2u);
  EXPECT_EQ(a.unmatched_frees, 0u);
  // Left: 7 TB kept by ordinal, and the 16 bytes at 0xD0; tb + 1 was released uncounted.
  EXPECT_EQ(a.totals.leaked_allocations, 2u);
  EXPECT_EQ(a.totals.leaked_bytes, 7 * tb + 16);
  EXPECT_EQ(a.totals.peak_bytes, 16 * tb + 1);
}

TEST(Analyze, StackSharedTakesTheOuterFramesOfThePreviousStack) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000, 0x2000, 0x3000}).alloc(1, 8, 0x500, 1);
  w.stack_shared(2, 2, {0x1100, 0x1200}).alloc(2, 16, 0x600, 2);  // 0x1100 0x1200 0x2000 0x3000
  w.end_block();
  w.block(1, 3).stack_shared(3, 3, {0x1300}).alloc(3, 32, 0x700, 3);  // ... 0x1200 0x2000 0x3000
  w.stack_shared(4, 1, {}).alloc(4, 64, 0x800, 4);                    // 0x3000 alone
  w.end_block();
  const analysis a = run(w);
  ASSERT_EQ(a.sites.size(), 4u);
  const auto frames = [&](std::uint64_t ip) {
    std::vector<std::uint64_t> out;
    for (const auto& f : site_at(a, ip).stack) out.push_back(f.address);
    return out;
  };
  EXPECT_EQ(frames(0x1000), (std::vector<std::uint64_t>{0x1000, 0x2000, 0x3000}));
  EXPECT_EQ(frames(0x1100), (std::vector<std::uint64_t>{0x1100, 0x1200, 0x2000, 0x3000}));
  EXPECT_EQ(frames(0x1300), (std::vector<std::uint64_t>{0x1300, 0x1200, 0x2000, 0x3000}));
  EXPECT_EQ(frames(0x3000), (std::vector<std::uint64_t>{0x3000}));
  EXPECT_EQ(site_at(a, 0x1300).totals.bytes_allocated, 32u);
}

TEST(Analyze, StackSharedOfMoreFramesThanThePreviousStackIsDamage) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000, 0x2000}).alloc(1, 8, 0x500, 1).end_block();
  w.block(1, 2).stack_shared(2, 3, {0x1100}).alloc(2, 8, 0x600, 2).end_block();
  const analysis a = run(w);
  EXPECT_NE(a.truncation.find("STACK_SHARED shares 3 frames of a previous stack of 2"),
            std::string::npos)
      << a.truncation;
  EXPECT_EQ(a.totals.allocations, 1u);
}

TEST(Analyze, CompleteOnlyWithEndAndLostEvents) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x10, 1).end_block();
  EXPECT_FALSE(run(w).complete);
  w.block(1, 5).lost(12).end(6).end_block();
  const analysis a = run(w);
  EXPECT_TRUE(a.complete);
  EXPECT_EQ(a.lost_events, 12u);
  EXPECT_TRUE(a.truncation.empty());
}

// SHADOWED records reach the analysis as function names and the object, once each however many
// files of the process repeat them (a fork child's file starts with its parent's).
TEST(Analyze, ShadowedFunctionsAreNamedOnce) {
  trace_writer w(8);
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x10, 1).end_block();
  EXPECT_TRUE(run(w).shadowed.empty());
  w.block(1, 2).shadowed(0x23, "/opt/app/server").shadowed(0x23, "/opt/app/server");
  w.shadowed(0x200, "/opt/lib/libmine.so").end(3).end_block();
  const analysis a = run(w);
  ASSERT_EQ(a.shadowed.size(), 2u);
  EXPECT_EQ(a.shadowed[0].module, "/opt/app/server");
  EXPECT_EQ(a.shadowed[0].functions,
            (std::vector<std::string>{"malloc", "free", "posix_memalign"}));
  EXPECT_EQ(a.shadowed[1].module, "/opt/lib/libmine.so");
  EXPECT_EQ(a.shadowed[1].functions, std::vector<std::string>{"pvalloc"});
  EXPECT_EQ(a.totals.allocations, 1u);
  EXPECT_TRUE(a.complete);
}

TEST(Analyze, CrashRecordSaysWhichSignalWhichThreadAndWhatWasNotWritten) {
  trace_writer w;
  w.block(1, 0).thread(100).stack(1, {0x1000}).alloc(1, 8, 0x10, 1).end_block();
  EXPECT_FALSE(run(w).crash.has_value());
  w.block(1, 2)
      .crash(3, 11, 100, lowalloc::trace_format::crash_flag_thread_written, {{101, 7, 90}})
      .end_block();
  const analysis a = run(w);
  EXPECT_FALSE(a.complete) << "a crash is not a normal end";
  ASSERT_TRUE(a.crash.has_value());
  EXPECT_EQ(a.crash->signal, 11);
  EXPECT_EQ(a.crash->signal_name(), "SIGSEGV");
  EXPECT_EQ(a.crash->tid, 100u);
  EXPECT_TRUE(a.crash->thread_written);
  EXPECT_FALSE(a.crash->writer_late);
  EXPECT_FALSE(a.crash->more_threads);
  ASSERT_EQ(a.crash->unwritten.size(), 1u);
  EXPECT_EQ(a.crash->unwritten[0].tid, 101u);
  EXPECT_EQ(a.crash->unwritten[0].allocations, 7u);
  EXPECT_EQ(a.crash->unwritten[0].bytes, 90u);
  // At least 3 bytes an ALLOC and 2 a free from version 4 (the dt is not in the record); 4 and 3
  // before.
  EXPECT_EQ(a.crash->format_version, 5u);
  EXPECT_EQ(a.crash->max_frees(a.crash->unwritten[0]), (90u - 21u) / 2u);
  EXPECT_EQ(a.totals.allocations, 1u);

  trace_writer v3(3);
  v3.block(1, 0).thread(100).stack(1, {0x1000}).alloc(1, 8, 0x10, 1).end_block();
  v3.block(1, 2)
      .crash(3, 11, 100, lowalloc::trace_format::crash_flag_thread_written, {{101, 7, 90}})
      .end_block();
  const analysis old = run(v3);
  ASSERT_TRUE(old.crash.has_value());
  EXPECT_EQ(old.crash->format_version, 3u);
  EXPECT_EQ(old.crash->max_frees(old.crash->unwritten[0]), (90u - 28u) / 3u);
  EXPECT_EQ(old.totals.allocations, 1u);
}

TEST(Analyze, ModulesMapAddressesAtTheStacksTime) {
  trace_writer w;
  w.block(1, 0);
  w.module(1, 1, 0x400000, "/nonexistent/app", {{0x400000, 0x1000}});
  w.module(2, 2, 0x7f0000000000, "/nonexistent/libgone.so", {{0x7f0000001000, 0x2000}});
  w.stack(1, {0x400123, 0x7f0000001500, 0x9999});
  w.alloc(3, 8, 0x10, 1);
  w.unmodule(4, 2).reset(4);
  w.module(5, 3, 0x7f0000000000, "/nonexistent/libother.so", {{0x7f0000001000, 0x100}});
  w.stack(1, {0x400123, 0x7f0000001500});  // now outside any module's segment
  w.alloc(6, 8, 0x20, 1);
  w.end_block();
  for (bool symbolize : {false, true}) {
    const analysis a = run(w, symbolize);  // missing files: module and offset, never an error
    ASSERT_EQ(a.sites.size(), 2u);
    const site& first = a.sites[0].stack.size() == 3 ? a.sites[0] : a.sites[1];
    const site& second = a.sites[0].stack.size() == 3 ? a.sites[1] : a.sites[0];
    ASSERT_EQ(first.stack.size(), 3u);
    EXPECT_EQ(first.stack[0].module, "/nonexistent/app");
    EXPECT_EQ(first.stack[0].offset, 0x123u);
    EXPECT_EQ(first.stack[0].address, 0x400123u);
    EXPECT_TRUE(first.stack[0].function.empty());
    EXPECT_EQ(first.stack[1].module, "/nonexistent/libgone.so");
    EXPECT_EQ(first.stack[1].offset, 0x1500u);
    EXPECT_TRUE(first.stack[2].module.empty());
    ASSERT_EQ(second.stack.size(), 2u);
    EXPECT_EQ(second.stack[0].module, "/nonexistent/app");
    EXPECT_TRUE(second.stack[1].module.empty());
  }
}

// A STACK merges at its stream's clock, the time of the stream's event before it. Thread 2 last
// allocated at 2; thread 1 loads a plugin at 50; thread 2's next allocation, at 100, is from the
// plugin: its stack merges before the MODULE, and its frame in the plugin takes the plugin's
// module when the MODULE merges. So does one of the MODULE's own tick (thread 4, at 50). Thread
// 3's stack, walked at 40, before the load, has a frame at an address the plugin covers later:
// it stays in no module, as does an address the plugin does not cover (thread 2's 0x7f0000009000).
TEST(Analyze, AStackMergedBeforeTheModuleOfItsFramesTakesIt) {
  trace_writer w;
  w.block(1, 0);
  w.module(0, 1, 0x400000, "/nonexistent/app", {{0x400000, 0x1000}});
  w.stack(1, {0x400100});
  w.alloc(1, 8, 0xA0, 1);
  w.module(50, 2, 0x7f0000000000, "/nonexistent/libplugin.so", {{0x7f0000001000, 0x1000}});
  w.end_block();
  w.block(2, 0);
  w.stack(1, {0x400200});
  w.alloc(2, 8, 0xB0, 1);
  w.stack(2, {0x7f0000001100, 0x7f0000009000, 0x400210});
  w.alloc(100, 16, 0xB1, 2);
  w.end_block();
  w.block(3, 0);
  w.stack(1, {0x7f0000001200, 0x400300});
  w.alloc(40, 24, 0xC0, 1);
  w.end_block();
  w.block(4, 0);
  w.stack(1, {0x7f0000001300, 0x400400});
  w.alloc(50, 32, 0xD0, 1);
  w.end_block();
  // Thread 5's second stack, walked after the load, shares its outer frame in the plugin with
  // its first, walked before: a stack whose outer frames are the previous stack's is merged from
  // that one's path, but not through a frame that was in no module.
  w.block(5, 0);
  w.stack(1, {0x400500, 0x7f0000001800});
  w.alloc(10, 8, 0xE0, 1);
  w.stack(2, {0x400600, 0x7f0000001800});
  w.alloc(100, 8, 0xE1, 2);
  w.end_block();
  const analysis a = run(w);
  EXPECT_EQ(site_at(a, 0x400600).stack[1].module, "/nonexistent/libplugin.so");
  const site& after = site_at(a, 0x7f0000001100);
  ASSERT_EQ(after.stack.size(), 3u);
  EXPECT_EQ(after.stack[0].module, "/nonexistent/libplugin.so");
  EXPECT_EQ(after.stack[0].offset, 0x1100u);
  EXPECT_TRUE(after.stack[1].module.empty());
  EXPECT_EQ(after.stack[2].module, "/nonexistent/app");
  EXPECT_EQ(site_at(a, 0x7f0000001300).stack[0].module, "/nonexistent/libplugin.so");
  EXPECT_TRUE(site_at(a, 0x7f0000001200).stack[0].module.empty());
}

TEST(FlatMap, InsertFindEraseAgainstUnorderedMap) {
  lowalloc::analyze::detail::u64_map<std::uint64_t> m;
  std::unordered_map<std::uint64_t, std::uint64_t> ref;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t key = (rng() % 5000) * 16;
    if (i % 1000 == 0) key = ~std::uint64_t{0};  // the empty-slot marker is a valid key too
    const int op = static_cast<int>(rng() % 3);
    if (op < 2) {
      bool inserted = false;
      std::uint64_t& v = m.get(key, inserted);
      EXPECT_EQ(inserted, ref.count(key) == 0);
      v = static_cast<std::uint64_t>(i);
      ref[key] = v;
    } else {
      std::uint64_t out = 0;
      const bool had = m.erase(key, out);
      ASSERT_EQ(had, ref.count(key) == 1);
      if (had) {
        EXPECT_EQ(out, ref[key]);
      }
      ref.erase(key);
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  for (const auto& [k, v] : ref) {
    const std::uint64_t* p = m.find(k);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(*p, v);
  }
  std::size_t n = 0;
  m.for_each([&](std::uint64_t k, std::uint64_t v) {
    ++n;
    EXPECT_EQ(ref.at(k), v);
  });
  EXPECT_EQ(n, ref.size());
}

// A second analysis beside the accounting, through the event seam.
struct event_log final : lowalloc::analyze::event_sink {
  int begins = 0;
  std::vector<lowalloc::analyze::alloc_event> allocs;
  std::vector<lowalloc::analyze::free_event> frees;
  std::vector<std::uint32_t> new_stacks;
  std::uint64_t tid = 0;
  bool ended = false;
  void on_begin() override {
    ++begins;
    allocs.clear();
    frees.clear();
    new_stacks.clear();
  }
  void on_thread(std::uint32_t, std::uint64_t t) override { tid = t; }
  void on_end(std::uint32_t, bool, std::string_view) override { ended = true; }
  void on_stack(std::uint32_t s) override { new_stacks.push_back(s); }
  void on_alloc(const lowalloc::analyze::alloc_event& e) override { allocs.push_back(e); }
  void on_free(const lowalloc::analyze::free_event& e) override { frees.push_back(e); }
};

TEST(Events, AnotherAnalysisSeesEveryEventWithItsAllocation) {
  trace_writer w;
  w.block(1, 0).thread(11).stack(1, {0x1000}).stack(2, {0x2000});
  w.alloc(1, 10, 0xA0, 1).free(2, 0xA0);                        // local, temporary
  w.alloc(3, 20, 0xB0, 2).alloc(4, 30, 0xC0, 1).free(5, 0xB0);  // local, not temporary
  w.end_block();                                                // 0xC0 listed
  w.block(2, 6).stack(1, {0x3000});
  w.free(7, 0xC0).free(8, 0xDEAD).alloc(9, 40, 0xD0, 1).end(10);
  w.end_block();
  event_log log;
  const analysis a =
      lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), {false, true}, {&log});
  EXPECT_EQ(log.begins, 1);
  EXPECT_EQ(log.tid, 11u);
  EXPECT_TRUE(log.ended);
  ASSERT_EQ(log.allocs.size(), a.totals.allocations);
  ASSERT_EQ(log.allocs.size(), 4u);
  EXPECT_EQ(log.allocs[0].address, 0u);  // freed in its block: the trace never says where
  EXPECT_EQ(log.allocs[2].address, 0xC0u);
  EXPECT_EQ(log.allocs[3].thread, 1u);
  ASSERT_EQ(log.frees.size(), 4u);
  EXPECT_TRUE(log.frees[0].temporary);
  EXPECT_EQ(log.frees[0].size, 10u);
  EXPECT_FALSE(log.frees[1].temporary);
  EXPECT_EQ(log.frees[1].size, 20u);
  EXPECT_EQ(log.frees[1].stack, log.allocs[1].stack);
  EXPECT_EQ(log.frees[2].address, 0xC0u);  // freed by the other thread
  EXPECT_EQ(log.frees[2].alloc_thread, 0u);
  EXPECT_EQ(log.frees[2].thread, 1u);
  EXPECT_EQ(log.frees[2].size, 30u);
  EXPECT_FALSE(log.frees[3].matched);
  EXPECT_EQ(a.unmatched_frees, 1u);
  // Stacks are numbered as the analysis numbers them, and each is announced before its use.
  EXPECT_EQ(log.new_stacks, (std::vector<std::uint32_t>{0, 1, 2}));
  ASSERT_EQ(a.stacks.size(), 3u);
  std::uint64_t per_stack[3] = {};
  for (const auto& e : log.allocs) ++per_stack[e.stack];
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(per_stack[i], a.stacks[i].totals.allocations);
  ASSERT_EQ(a.stack_frames(log.allocs[3].stack).size(), 1u);
  EXPECT_EQ(a.stack_frames(log.allocs[3].stack)[0].address, 0x3000u);
}

TEST(Events, FreesOfOneAddressInOneTickGoByTheirOrders) {
  // Format version 7, all in tick 10: stream 3 allocates X (8 bytes, order 0), stream 2 frees it
  // (order 0: between the ALLOCs that read 0 and 1), stream 3 allocates X again (16 bytes, order 1)
  // and stream 1 frees that one (order 1). By what is live alone, stream 1's free (first in the
  // file) took the 8-byte block and stream 2's the 16-byte one.
  trace_writer w(7);
  w.block(1, 10).order(1).free_address(10, 0x700).end_block();
  w.block(2, 10).order(0).free_address(10, 0x700).end_block();
  w.block(3, 10).stack(1, {0x1000}).alloc_untracked(10, 8, 1).alloc_untracked(10, 16, 1);
  w.addresses({{0, 0x700}, {1, 0x700}}).listed_orders({0, 1}).end_block();
  event_log log;
  const analysis a =
      lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), {false, true}, {&log});
  EXPECT_EQ(a.unmatched_frees, 0u);
  EXPECT_EQ(a.frees_not_seen, 0u);
  ASSERT_EQ(log.frees.size(), 2u);
  ASSERT_EQ(log.allocs.size(), 2u);
  EXPECT_EQ(log.allocs[0].size, 8u);
  EXPECT_EQ(log.frees[0].thread, 1u);  // stream 2, the second in the file
  EXPECT_EQ(log.frees[0].size, 8u);
  EXPECT_EQ(log.frees[1].thread, 0u);
  EXPECT_EQ(log.frees[1].size, 16u);
  EXPECT_EQ(a.totals.peak_bytes, 16u);
}

TEST(Events, OnDamageTheSinksStartAgain) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0xA0, 1).end_block();
  w.block(1, 2).alloc(2, 8, 0xB0, 1).raw("\x7f").end_block();
  event_log log;
  const analysis a =
      lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), {false, true}, {&log});
  EXPECT_FALSE(a.truncation.empty());
  EXPECT_EQ(log.begins, 2);  // the first run met the damage; the second reads up to it
  EXPECT_EQ(log.allocs.size(), 1u);
  EXPECT_EQ(a.totals.allocations, 1u);
}

}  // namespace
