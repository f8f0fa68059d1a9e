// A trace file is read with little of it resident: the analyzer maps the file and releases each
// part once read, so the report of a trace larger than memory fits in memory. Its own
// executable, so that the peak RSS is this test's alone.
#include "analyze/analysis.hpp"
#include "support/sanitized.hpp"
#include "support/synthetic_trace.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

// 12 M allocations: a 37 MB file. Under a sanitizer, fewer, and the bound is not checked.
constexpr std::uint64_t allocations = LOWALLOC_TEST_SANITIZED ? 1000000 : 12000000;

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(FileMemory, ATraceFileIsNotKeptResidentWhileItIsRead) {
  std::string path = "/tmp/lowalloc-file-memory-XXXXXX";
  const int fd = mkstemp(path.data());
  ASSERT_GE(fd, 0);
  std::FILE* out = fdopen(fd, "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_TRUE(lowalloc_test::write_synthetic_trace(out, allocations, 1000, 10000));
  ASSERT_EQ(std::fclose(out), 0);
  const long before = peak_rss_kb();
  lowalloc::analyze::options opts;
  opts.symbolize = false;
  const lowalloc::analyze::analysis a = lowalloc::analyze::analyze_file(path, opts);
  const long grew = peak_rss_kb() - before;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 0, SEEK_END);
  const long file_kb = std::ftell(f) / 1024;
  std::fclose(f);
  std::remove(path.c_str());

  // 9 in 10 temporary; the others freed when the ring of 10,000 comes round, but the last 10,000.
  EXPECT_EQ(a.totals.allocations, allocations);
  EXPECT_EQ(a.totals.temporary, allocations / 10 * 9);
  EXPECT_EQ(a.totals.frees, allocations - 10000);
  EXPECT_EQ(a.totals.leaked_allocations, 10000u);
  EXPECT_TRUE(a.complete);
  RecordProperty("file_kb", std::to_string(file_kb));
  RecordProperty("rss_growth_kb", std::to_string(grew));
  if (LOWALLOC_TEST_SANITIZED) GTEST_SKIP() << "RSS is not meaningful under a sanitizer";
  // The whole file resident would be 37 MB (so was the peak before the analyzer released the
  // pages it had read); the analysis itself takes a few MB.
  EXPECT_LT(grew, file_kb / 3) << "peak RSS grew by " << grew << " KB reading a " << file_kb
                               << " KB trace";
}

}  // namespace
