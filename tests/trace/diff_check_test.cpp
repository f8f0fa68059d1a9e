// Tests of `lowalloc diff` and `lowalloc check` on programs/diff_program.cpp, whose allocations
// are known by construction, built twice: as written, and with 20 lines added above a site and 3
// inside a function above another (diff_program_edited).
#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"
#include "analyze/runtime.hpp"

#include "command.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace analyze = lowalloc::analyze;
using lowalloc::test::command_result;
using lowalloc::test::contains;
using lowalloc::test::program;
using lowalloc::test::read_text;
using lowalloc::test::run_command;

const std::string cli = LOWALLOC_TEST_CLI;

// Allocations through words() with N = 100: 10 x (100 strings + 8 growths) + 50 + 7.
constexpr std::uint64_t words_allocations = 1137;
// Map nodes of counts(100), ten times.
constexpr std::uint64_t counts_allocations = 1000;

class diff_check_test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "lowalloc-diff-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    if (std::getenv("LOWALLOC_TEST_KEEP") == nullptr) fs::remove_all(dir_, ignored);
  }

  // `lowalloc run` of a diff_program build; the trace's path.
  std::string trace(const std::string& build, const std::vector<std::string>& args) {
    std::string name = std::to_string(++traces_);  // not "t" + ...: GCC 12 -Wrestrict, c++20
    name += ".trace";
    const std::string file = (dir_ / name).string();
    std::vector<std::string> command = {cli, "run", "-q", "-o", file, "--", program(build)};
    command.insert(command.end(), args.begin(), args.end());
    const command_result r = run_command(command, dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    return file;
  }

  command_result lowalloc(std::vector<std::string> args) {
    args.insert(args.begin(), cli);
    return run_command(args, dir_);
  }

  static analyze::analysis read(const std::string& file) {
    analyze::analysis a = analyze::analyze_file(file);
    EXPECT_TRUE(a.complete);
    EXPECT_EQ(a.lost_events, 0u);
    return a;
  }

  // The allocations of the sites whose innermost frame's function contains `name`, and that
  // frame's line.
  static std::pair<std::uint64_t, unsigned> site_of(const analyze::analysis& a,
                                                    const std::string& name) {
    std::uint64_t n = 0;
    unsigned line = 0;
    for (const analyze::site& s : a.sites) {
      if (s.stack.empty() || s.stack[0].function.find(name) == std::string::npos) continue;
      n += s.totals.allocations;
      line = s.stack[0].line;
    }
    return {n, line};
  }

  fs::path dir_;
  int traces_ = 0;
};

TEST_F(diff_check_test, program_allocates_as_described) {
  const analyze::analysis a = read(trace("diff_program", {"100"}));
  EXPECT_EQ(site_of(a, "words").first, words_allocations);
  EXPECT_EQ(site_of(a, "counts").first, counts_allocations);
}

TEST_F(diff_check_test, repeated_runs_show_no_change) {
  std::vector<std::string> traces;
  for (int i = 0; i < 10; ++i) traces.push_back(trace("diff_program", {"100"}));
  for (std::size_t i = 1; i < traces.size(); ++i) {
    const command_result r = lowalloc({"diff", traces[0], traces[i]});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "0 of them changed; 0 new, 0 gone")) << r.out;
    const command_result j = lowalloc({"diff", "--format", "json", traces[0], traces[i]});
    EXPECT_EQ(j.status, 0) << j.err;
    EXPECT_TRUE(contains(j.out, "\"sites\": []")) << j.out;
  }
}

TEST_F(diff_check_test, an_edit_above_the_sites_keeps_them_matched) {
  const analyze::analysis before = read(trace("diff_program", {"100"}));
  const analyze::analysis after = read(trace("diff_program_edited", {"100"}));
  const analyze::comparison c = analyze::compare_sites(before, after);
  ASSERT_FALSE(c.matches.empty());
  std::map<std::string, analyze::match_kind> how;
  for (const analyze::place_match& m : c.matches) {
    ASSERT_NE(m.before, analyze::place_match::none) << "a site is new";
    ASSERT_NE(m.after, analyze::place_match::none) << "a site is gone";
    const analyze::counters& b = c.before[m.before].totals;
    const analyze::counters& a = c.after[m.after].totals;
    const analyze::site& s = before.sites[c.before[m.before].sites.front()];
    const analyze::site& t = after.sites[c.after[m.after].sites.front()];
    ASSERT_FALSE(s.stack.empty());
    EXPECT_EQ(s.stack[0].function, t.stack[0].function);
    EXPECT_EQ(b.allocations, a.allocations) << s.stack[0].function;
    EXPECT_EQ(b.bytes_allocated, a.bytes_allocated) << s.stack[0].function;
    if (s.stack[0].function.find("words") != std::string::npos) {
      EXPECT_EQ(t.stack[0].line, s.stack[0].line + 20);
      how[s.stack[0].function] = m.how;
    }
    if (s.stack[0].function.find("counts") != std::string::npos) {
      EXPECT_EQ(t.stack[0].line, s.stack[0].line + 23);
      how[s.stack[0].function] = m.how;
    }
  }
  ASSERT_EQ(how.size(), 2u);
  for (const auto& [function, kind] : how) {
    // words() moved as a whole; in counts() the lines above the site moved it in its function.
    if (function.find("words") != std::string::npos)
      EXPECT_EQ(kind, analyze::match_kind::relative_line);
    else
      EXPECT_EQ(kind, analyze::match_kind::function);
  }
}

TEST_F(diff_check_test, diff_shows_the_change_of_each_site) {
  const std::string before = trace("diff_program", {"100"});
  const std::string after = trace("diff_program_edited", {"110"});
  const command_result r = lowalloc({"diff", before, after});
  ASSERT_EQ(r.status, 0) << r.err;
  // words from main's loop: 10 x (110 + 8); counts: 1,100.
  EXPECT_TRUE(contains(r.out, "allocations 1,080 -> 1,180 (+9.3 %, 1.09x more)")) << r.out;
  EXPECT_TRUE(contains(r.out, "allocations 1,000 -> 1,100 (+10.0 %, 1.10x more)")) << r.out;
  EXPECT_TRUE(contains(r.out, "matched by same lines in their functions (line ")) << r.out;
  const command_result j = lowalloc({"diff", "--format", "json", before, after});
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_TRUE(contains(j.out, "\"matched_by\": \"relative_line\"")) << j.out;
  EXPECT_TRUE(contains(j.out, "\"matched_by\": \"function\"")) << j.out;
  EXPECT_TRUE(contains(j.out, "\"before\": {\"allocations\": 1080,")) << j.out;
  EXPECT_TRUE(contains(j.out, "\"after\": {\"allocations\": 1180,")) << j.out;
}

TEST_F(diff_check_test, diff_of_an_unreadable_trace_fails) {
  const std::string good = trace("diff_program", {"10"});
  const std::string bad = (dir_ / "bad.trace").string();
  std::FILE* f = std::fopen(bad.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("not a trace\n", f);
  std::fclose(f);
  const command_result r = lowalloc({"diff", good, bad});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, bad)) << r.err;
  EXPECT_EQ(lowalloc({"diff", good}).status, 2);
}

TEST_F(diff_check_test, check_limits_on_the_totals) {
  const std::string file = trace("diff_program", {"100"});
  const analyze::analysis a = read(file);
  const std::uint64_t n = a.totals.allocations;
  command_result r = lowalloc({"check", file, "--max-allocations", std::to_string(n)});
  EXPECT_EQ(r.status, 0) << r.err;
  r = lowalloc({"check", file, "--max-allocations=" + std::to_string(n - 1)});
  EXPECT_EQ(r.status, 1) << r.out;
  // The limit, the figure, and the site with the most allocations (words, from main's loop:
  // 1,080).
  EXPECT_TRUE(contains(r.err, "FAILED: allocations")) << r.err;
  EXPECT_TRUE(contains(r.err, "the limit")) << r.err;
  const unsigned line = site_of(a, "words").second;
  EXPECT_TRUE(contains(r.err, "diff_program.cpp:" + std::to_string(line) + "): 1,080")) << r.err;
  r = lowalloc({"check", file, "--max-bytes", std::to_string(a.totals.bytes_allocated),
                "--max-temporary", std::to_string(a.totals.temporary), "--max-peak-bytes",
                std::to_string(a.totals.peak_bytes)});
  EXPECT_EQ(r.status, 0) << r.err;
  r = lowalloc({"check", file, "--max-peak-bytes", std::to_string(a.totals.peak_bytes - 1)});
  EXPECT_EQ(r.status, 1) << r.err;
}

TEST_F(diff_check_test, check_limits_on_a_site) {
  const std::string file = trace("diff_program", {"100"});
  const analyze::analysis a = read(file);
  const unsigned line = site_of(a, "words").second;
  const std::string words = std::to_string(words_allocations);
  const std::string fewer = std::to_string(words_allocations - 1);
  EXPECT_EQ(lowalloc({"check", file, "--site", "words", "--max-allocations", words}).status, 0);
  command_result r = lowalloc({"check", file, "--site", "words", "--max-allocations", fewer});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "diff_program.cpp:" + std::to_string(line))) << r.err;
  const std::string place = "diff_program.cpp:" + std::to_string(line);
  EXPECT_EQ(lowalloc({"check", file, "--site", place, "--max-allocations", words}).status, 0);
  EXPECT_EQ(lowalloc({"check", file, "--site", place, "--max-allocations", fewer}).status, 1);
  // A limit on the totals before --site, on the site after it.
  r = lowalloc({"check", file, "--max-allocations", "1M", "--site", "counts", "--max-allocations",
                std::to_string(counts_allocations)});
  EXPECT_EQ(r.status, 0) << r.err;
  r = lowalloc({"check", file, "--site", "counts", "--max-allocations",
                std::to_string(counts_allocations - 1)});
  EXPECT_EQ(r.status, 1) << r.err;
}

TEST_F(diff_check_test, the_runtime_does_not_break_a_leak_limit) {
  const std::string clean = trace("diff_program", {"10"});
  const std::string leaky = trace("diff_program", {"10", "leak"});
  const analyze::analysis a = read(clean);
  // The stdout buffer, the locale, libstdc++'s emergency exception pool: leaked, the runtime's.
  const auto& rt = a.runtime;
  EXPECT_EQ(rt[static_cast<std::size_t>(analyze::runtime_reason::stdio_buffer)].leaked_allocations,
            1u);
  EXPECT_GT(rt[static_cast<std::size_t>(analyze::runtime_reason::locale)].leaked_allocations, 0u);
  EXPECT_EQ(rt[static_cast<std::size_t>(analyze::runtime_reason::start_up)].leaked_allocations, 1u);
  EXPECT_EQ(a.runtime_totals().leaked_bytes, a.totals.leaked_bytes);
  const analyze::analysis b = read(leaky);
  EXPECT_EQ(b.totals.leaked_bytes - b.runtime_totals().leaked_bytes, 1000u);

  EXPECT_EQ(lowalloc({"check", clean, "--max-leaked-bytes", "0"}).status, 0);
  EXPECT_EQ(lowalloc({"check", leaky, "--max-leaked-bytes", "1000"}).status, 0);
  const command_result r = lowalloc({"check", leaky, "--max-leaked-bytes", "999"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "leaked bytes 1,000 > the limit 999")) << r.err;
  EXPECT_TRUE(contains(r.err, "main (")) << r.err;
  EXPECT_EQ(lowalloc({"check", clean, "--include-runtime", "--max-leaked-bytes", "0"}).status, 1);
  const command_result report = lowalloc({"report", clean});
  EXPECT_TRUE(contains(report.out, "the runtime's")) << report.out;
}

// The report of a program that leaks 1,000 bytes and calls printf: stdout's buffer, made at the
// printf line, is the C library's, apart from the program's leak; main's callers in the C
// runtime (__libc_start_call_main, __libc_start_main, _start) are folded off every stack.
TEST_F(diff_check_test, report_shows_the_runtimes_blocks_apart_and_folds_the_start_frames) {
  const std::string leaky = trace("diff_program", {"10", "leak"});
  const command_result r = lowalloc({"report", leaky, "--top", "100"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Each site's block: its header line and its "at" line.
  const auto site_block = [&](const std::string& at) {
    const std::size_t where = r.out.find(at);
    if (where == std::string::npos) return std::string();
    const std::size_t begin = r.out.rfind("\n#", where);
    return r.out.substr(begin + 1, where - begin - 1);
  };
  // The lines of the two sites: the stdout buffer's (main's printf) and the 1,000 bytes'.
  const analyze::analysis a = read(leaky);
  unsigned printf_line = 0;
  unsigned leak_line = 0;
  for (const auto& [index, part] : analyze::runtime_by_site(a))
    if (part.reason == analyze::runtime_reason::stdio_buffer)
      printf_line = a.sites[index].stack[0].line;
  for (const analyze::site& s : a.sites)
    if (s.totals.allocations == 1 && s.totals.bytes_allocated == 1000) leak_line = s.stack[0].line;
  ASSERT_NE(printf_line, 0u);
  ASSERT_NE(leak_line, 0u);
  const std::string printf_site =
      site_block("diff_program.cpp:" + std::to_string(printf_line) + ")\n");
  EXPECT_TRUE(contains(printf_site, "\n    at main (")) << r.out;  // the user's printf line
  EXPECT_TRUE(contains(printf_site, ", kept by the runtime 1 (")) << r.out;
  EXPECT_TRUE(contains(printf_site, " bytes: stdio buffers)\n")) << r.out;
  EXPECT_FALSE(contains(printf_site, "leaked")) << r.out;
  const std::string leak_site = site_block("diff_program.cpp:" + std::to_string(leak_line) + ")\n");
  EXPECT_TRUE(contains(leak_site, ", leaked 1 (1,000 bytes)\n")) << r.out;
  EXPECT_FALSE(contains(leak_site, "runtime")) << r.out;
  EXPECT_FALSE(contains(r.out, "__libc_start")) << r.out;
  EXPECT_FALSE(contains(r.out, "_start (")) << r.out;
  // Unfolded, the stacks have them.
  const command_result full = lowalloc({"report", leaky, "--no-fold", "--top", "100"});
  ASSERT_EQ(full.status, 0) << full.err;
  EXPECT_TRUE(contains(full.out, "__libc_start_main")) << full.out;
}

// One new site of one allocation: every count of 1 in the singular; --top 0 shows no site.
TEST_F(diff_check_test, diff_counts_of_one_and_top_zero) {
  const std::string clean = trace("diff_program", {"10"});
  const std::string leaky = trace("diff_program", {"10", "leak"});
  command_result r = lowalloc({"diff", clean, leaky});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "; 1 new, 0 gone\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\n#1  new: 1 allocation, 1,000 bytes, leaked 1,000 bytes\n"))
      << r.out;
  EXPECT_FALSE(contains(r.out, " 1 allocations")) << r.out;
  r = lowalloc({"diff", clean, leaky, "--top", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\n\n1 changed site, none shown (--top 0)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nleaked bytes ")) << r.out;
  EXPECT_FALSE(contains(r.out, "#1")) << r.out;
  EXPECT_FALSE(contains(r.out, "more changed")) << r.out;
  // report and advise agree: the summary, no site.
  r = lowalloc({"report", leaky, "--top", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, " sites by allocations, none shown (--top 0)\n")) << r.out;
  EXPECT_FALSE(contains(r.out, "#1")) << r.out;
}

// A site's own maximum and its value at the peak, in the diff's words: exact for the map's nodes
// (one stack), a bound for the strings of words() (several stacks, which peak apart).
TEST_F(diff_check_test, diff_says_max_live_and_at_peak) {
  const std::string base = trace("diff_program", {"100"});
  const std::string grown = trace("diff_program", {"110"});
  const command_result r = lowalloc({"diff", base, grown});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\n    max live 4,800 -> 5,280 bytes\n")) << r.out;
  EXPECT_TRUE(contains(r.out, " bytes (at most)\n")) << r.out;
  EXPECT_FALSE(contains(r.out, "    peak ")) << r.out;
}

TEST_F(diff_check_test, check_against_a_baseline) {
  const std::string base = trace("diff_program", {"100"});
  const std::string edited = trace("diff_program_edited", {"100"});
  const std::string grown = trace("diff_program_edited", {"110"});
  EXPECT_EQ(lowalloc({"check", edited, "--baseline", base, "--max-increase", "0%"}).status, 0);
  command_result r = lowalloc({"check", grown, "--baseline", base, "--max-increase", "5%"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "1,080 -> 1,180 (+9.3 %, 1.09x more), more than +5.0 %")) << r.err;
  EXPECT_TRUE(contains(r.err, "diff_program.cpp:")) << r.err;
  r = lowalloc({"check", grown, "--baseline", base, "--max-increase", "20%"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(diff_check_test, check_writes_junit) {
  const std::string file = trace("diff_program", {"10"});
  const std::string xml = (dir_ / "check.xml").string();
  command_result r = lowalloc(
      {"check", file, "--max-allocations", "1", "--max-leaked-bytes", "0", "--junit", xml});
  EXPECT_EQ(r.status, 1);
  std::string text = read_text(xml);
  EXPECT_TRUE(contains(text,
                       "<testsuites name=\"lowalloc check\" tests=\"2\" failures=\"1\" "
                       "errors=\"0\">"))
      << text;
  EXPECT_TRUE(contains(text, "<failure message=\"allocations ")) << text;
  EXPECT_TRUE(contains(text, "name=\"leaked bytes &lt;= 0\"")) << text;

  r = lowalloc({"check", file, "--max-allocations", "1M", "--junit", xml});
  EXPECT_EQ(r.status, 0) << r.err;
  text = read_text(xml);
  EXPECT_TRUE(contains(text, "failures=\"0\"")) << text;

  const std::string bad = (dir_ / "bad.trace").string();
  std::FILE* f = std::fopen(bad.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("LOWALLOC but not really\n", f);
  std::fclose(f);
  r = lowalloc({"check", bad, "--max-allocations", "1", "--junit", xml});
  EXPECT_EQ(r.status, 2);
  text = read_text(xml);
  EXPECT_TRUE(contains(text, "errors=\"1\"")) << text;
  EXPECT_TRUE(contains(text, "<error message=")) << text;
  // Usage errors: no limit, a limit without a number, --baseline without --max-increase.
  EXPECT_EQ(lowalloc({"check", file}).status, 2);
  EXPECT_EQ(lowalloc({"check", file, "--max-allocations", "many"}).status, 2);
  EXPECT_EQ(lowalloc({"check", file, "--baseline", file}).status, 2);
  EXPECT_EQ(
      lowalloc({"check", file, "--max-allocations", "1", "--junit", "/nonexistent/x.xml"}).status,
      2);
}

}  // namespace
