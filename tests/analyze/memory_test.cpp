// The analyzer's memory is bounded by what is distinct in a trace, with little per stack: a
// trace of 1,000,000 distinct stacks (each its own site, unsymbolized) is read and reported
// within a peak RSS bound. Its own executable, so that the peak is this test's alone.
#include "analyze/analysis.hpp"
#include "report/common.hpp"
#include "report/report.hpp"
#include "support/sanitized.hpp"
#include "support/trace_writer.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace {

using lowalloc_test::trace_writer;

// A sanitizer's allocator and shadow memory make RSS meaningless, and its speed would make a
// million stacks slow: there the code runs on fewer stacks and the bound is not checked.
constexpr std::uint32_t stacks = LOWALLOC_TEST_SANITIZED ? 100000 : 1000000;
constexpr std::uint32_t per_block = 250;  // the writer scans a block's allocations per event

// Stack i: 4 to 8 frames from small pools of addresses (2,000-odd distinct in all), distinct by
// its two innermost frames. Each stack allocates once; every 8th allocation is never freed.
std::vector<std::uint64_t> frames_of(std::uint32_t i) {
  std::vector<std::uint64_t> ips = {0x400000u + (i & 1023u) * 16u,
                                    0x500000u + ((i >> 10) & 1023u) * 16u};
  for (std::uint32_t k = 2; k < 4 + i % 5; ++k) ips.push_back(0x600000u + k * 0x100u + i % 3 * 16u);
  return ips;
}

std::string million_stack_trace() {
  trace_writer w;
  std::uint64_t t = 1;
  for (std::uint32_t first = 0; first < stacks; first += per_block) {
    w.block(1, t);
    for (std::uint32_t i = first; i < first + per_block && i < stacks; ++i) {
      const std::uint64_t addr = 0x10000000u + std::uint64_t{i} * 64u;
      w.stack(i + 1, frames_of(i)).alloc(++t, 8 + i % 97 * 8, addr, i + 1);
      if (i % 8 != 0) w.free(++t, addr);
    }
    w.end_block();
  }
  ++t;
  w.block(1, t).end(t).end_block();
  return w.file();
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(Memory, MillionDistinctStacksStayWithinTheBound) {
  lowalloc::analyze::analysis a;
  {
    const std::string trace = million_stack_trace();
    lowalloc::analyze::options opts;
    opts.symbolize = false;
    a = lowalloc::analyze::analyze_buffer(trace.data(), trace.size(), opts);
  }
  ASSERT_EQ(a.stacks.size(), stacks);
  ASSERT_EQ(a.sites.size(), stacks);  // no two stacks look the same
  EXPECT_EQ(a.totals.allocations, stacks);
  EXPECT_EQ(a.totals.leaked_allocations, (stacks + 7) / 8);
  EXPECT_EQ(a.stack_frames(stacks - 1).size(), frames_of(stacks - 1).size());
  std::ostringstream out;
  lowalloc::report::report_options ro;
  ro.top = 10;
  lowalloc::report::write_text(out, a, ro);
  const std::string heading = "top 10 of " + lowalloc::report::thousands(stacks) + " sites";
  EXPECT_NE(out.str().find(heading), std::string::npos) << out.str().substr(0, 2000);
  const long peak = peak_rss_kb();
  RecordProperty("peak_rss_kb", std::to_string(peak));
  if (LOWALLOC_TEST_SANITIZED) GTEST_SKIP() << "RSS is not meaningful under a sanitizer";
  // 310 MB on this design (the trace in memory, and the analysis: per stack its counters and
  // frame ids, per site its counters and sizes); 5.3 GB on the one before it (a full size
  // histogram and a copy of the frames per site, a vector of frame ids per stack).
  EXPECT_LT(peak, 512 * 1024) << "peak RSS " << peak << " KB";
}

}  // namespace
