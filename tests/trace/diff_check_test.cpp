// Tests of `lowalloc diff` and `lowalloc check` on programs/diff_program.cpp, whose allocations
// are known by construction, built twice: as written, and with 20 lines added above a site and 3
// inside a function above another (diff_program_edited).
#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"
#include "analyze/runtime.hpp"

#include "command.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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

  // `lowalloc ARGS...` run in the test's directory, where a trace can be named "-x.trace".
  command_result lowalloc_in_dir(std::vector<std::string> args) {
    args.insert(args.begin(), {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir_.string(), cli});
    return run_command(args, dir_);
  }

  // `lowalloc ARGS... >/dev/full` (with REDIRECT: another redirection of standard output).
  command_result lowalloc_to(const std::string& redirect, std::vector<std::string> args) {
    args.insert(args.begin(), {"/bin/sh", "-c", "exec \"$0\" \"$@\" " + redirect, cli});
    return run_command(args, dir_);
  }

  // `lowalloc run -q -o DIR/NAME -- PROGRAM ARGS...`, which is to exit with `status`; the trace.
  std::string run_program(const std::string& name, const std::vector<std::string>& args,
                          int status) {
    const std::string file = (dir_ / name).string();
    std::vector<std::string> command = {cli, "run", "-q", "-o", file, "--"};
    command.insert(command.end(), args.begin(), args.end());
    const command_result r = run_command(command, dir_);
    EXPECT_EQ(r.status, status) << r.err;
    return file;
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
  // counts(), inlined into main, is in an anonymous namespace: qualified, as --site allows, it
  // names the same allocations (before, an inlined function of internal linkage had its bare
  // DWARF name, and the qualified place matched nothing: any limit held).
  r = lowalloc({"check", file, "--site", "(anonymous namespace)::counts", "--max-allocations",
                std::to_string(counts_allocations - 1)});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "(anonymous namespace)::counts: allocations 1,000 > the limit"))
      << r.err;
  const command_result text = lowalloc({"report", file});
  EXPECT_TRUE(contains(text.out, "at [inlined] (anonymous namespace)::counts (")) << text.out;
  // A frame the sites fold away: the vector's growth in words(), 8 allocations a call for 100
  // strings and 7 for 50 (before, such a place matched nothing, and any limit held).
  constexpr int growth = 10 * 8 + 7;
  for (const char* growing : {"_M_realloc_insert", "std::vector::_M_realloc_insert",
                              "std::vector<std::string>::_M_realloc_insert"}) {
    SCOPED_TRACE(growing);
    r = lowalloc({"check", file, "--site", growing, "--max-allocations", std::to_string(growth)});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "ok: " + std::string(growing) + ": allocations 87 <= 87")) << r.out;
    r = lowalloc(
        {"check", file, "--site", growing, "--max-allocations", std::to_string(growth - 1)});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(contains(r.err, std::string(growing) +
                                    ": allocations 87 > the limit 86; largest site: "
                                    "(anonymous namespace)::words(int) (") &&
                contains(r.err, "diff_program.cpp:" + std::to_string(line) + "): 80\n"))
        << r.err;
  }
  // Names as the report prints them: template arguments left out as the frame's are, and
  // std::string for the standard library's spelling (before, "std::string::basic_string" and
  // "std::map<int, long>::operator[]" matched nothing). The strings of words(): 10 x 100 + 50.
  for (const auto& [printed, n] :
       {std::pair<std::string, std::uint64_t>{"std::string::basic_string", 10 * 100 + 50},
        {"std::map<int, long>::operator[]", counts_allocations}}) {
    SCOPED_TRACE(printed);
    EXPECT_EQ(
        lowalloc({"check", file, "--site", printed, "--max-allocations", std::to_string(n)}).status,
        0);
    r = lowalloc({"check", file, "--site", printed, "--max-allocations", std::to_string(n - 1)});
    EXPECT_EQ(r.status, 1) << r.err;
  }
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
  EXPECT_TRUE(contains(r.err, "1,080 -> 1,180 (+9.3 %, 1.09x more), more than +5 %")) << r.err;
  EXPECT_TRUE(contains(r.err, "diff_program.cpp:")) << r.err;
  r = lowalloc({"check", grown, "--baseline", base, "--max-increase", "20%"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(diff_check_test, check_holds_a_growth_of_exactly_the_increase_given) {
  // malloc_loop N: N allocations of 24 bytes, all temporary, at one site. From 100 to 129 is
  // exactly +29 %, in total and at the site. Before, P was the binary fraction 0.28999...: the
  // allowed growth of 100 came to 28, and 29% failed.
  const std::string base = run_program("100.trace", {program("malloc_loop"), "100"}, 0);
  const std::string grown = run_program("129.trace", {program("malloc_loop"), "129"}, 0);
  command_result r = lowalloc({"check", grown, "--baseline", base, "--max-increase", "29%"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "ok: allocations 100 -> 129 (+29.0 %, 1.29x more), within +29 %\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "ok: 1 site found in both, 0 over the limit")) << r.out;
  EXPECT_EQ(lowalloc({"check", grown, "--baseline", base, "--max-increase", "29.000000001"}).status,
            0);
  // Just under it, every figure that grew fails; the limit is said as given, not rounded to one
  // the figure is within ("+159.8 %, more than +160 %" for 159.76%).
  r = lowalloc({"check", grown, "--baseline", base, "--max-increase", "28.999999999%"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "FAILED: allocations 100 -> 129 (+29.0 %, 1.29x more), more than "
                       "+28.999999999 %"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "FAILED: temporary 100 -> 129")) << r.err;
  EXPECT_TRUE(contains(r.err, "FAILED: bytes allocated 2,400 -> 3,096")) << r.err;
  EXPECT_TRUE(contains(r.err, "FAILED: 1 site found in both, 1 over the limit")) << r.err;
  r = lowalloc({"check", grown, "--baseline", base, "--max-increase", "1.0000000001%"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err,
                       "--max-increase needs a percentage from 0 to 1000000% with at most 9 "
                       "digits after the point, not '1.0000000001%'"))
      << r.err;
  // The runtimes' leaks left out are said where leaks are checked, not after every check.
  const std::string cxx = trace("diff_program", {"10"});
  r = lowalloc({"check", cxx, "--max-allocations", "1G"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(contains(r.out, "left out of the leaks")) << r.out;
  r = lowalloc({"check", cxx, "--max-leaked-bytes", "1G"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(left out of the leaks: ")) << r.out;
}

TEST_F(diff_check_test, diff_and_check_warn_of_traces_of_two_programs) {
  // Before, a wrong file given as the baseline was compared without a word: every site gone,
  // every site new.
  const std::string base = trace("diff_program", {"100"});
  const std::string edited = trace("diff_program_edited", {"100"});
  const std::string other = run_program("other.trace", {program("malloc_loop"), "100"}, 0);
  const std::string warning = "warning: the traces are of two programs (" +
                              program("diff_program") + " and " + program("malloc_loop") +
                              "), no site of one found in the other: is one the wrong file?\n";
  command_result r = lowalloc({"diff", base, other});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "lowalloc diff: " + warning)) << r.err;
  r = lowalloc({"check", other, "--baseline", base, "--max-increase", "1000000%"});
  EXPECT_TRUE(contains(r.err, "lowalloc check: warning: the traces are of two programs (" +
                                  program("diff_program") + " and " + program("malloc_loop")))
      << r.err;
  // A program renamed (diff_program_edited) keeps sites of the other: no warning.
  r = lowalloc({"diff", base, edited});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(contains(r.err, "two programs")) << r.err;
  // diff_program's sites are new: its printf's stdout buffer, which the C library keeps until
  // exit, is kept by the runtime there as in the report, not leaked (before: "leaked 4,096
  // bytes").
  r = lowalloc({"diff", other, base});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "new: 1 allocation, 4,096 bytes, kept by the runtime 4,096 bytes\n"))
      << r.out;
  EXPECT_FALSE(contains(r.out, "leaked 4,096 bytes")) << r.out;
}

TEST_F(diff_check_test, diff_says_an_operation_that_left_a_site) {
  // words()'s site makes the strings and grows the vector; reserved, it makes only the strings.
  // Its largest operation stays: before, the diff said "via std::string constructor" alone, and
  // the growth it removed was not seen at the site.
  const std::string base = trace("diff_program", {"100"});
  const std::string reserved = trace("diff_program_reserved", {"100"});
  const command_result r = lowalloc({"diff", base, reserved});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out,
                       "    via std::string constructor 93 %, "
                       "std::vector<std::string>::push_back (growth) 7.4 % -> "
                       "std::string constructor\n"))
      << r.out;
  // The same operations on both sides: the largest only, as before.
  const command_result same = lowalloc({"diff", base, trace("diff_program", {"110"})});
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_FALSE(contains(same.out, " -> std::string constructor")) << same.out;
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

// ---------------------------------------------------------------------------------------------
// A trace that misses the end of its process: `check` fails with status 2 (unless
// --allow-incomplete), `diff` and `advise` warn and go on.

// The first `blocks` blocks of `trace` (a file cut at a block boundary, as a full disk leaves
// it): the 16-byte file header, then blocks of a 16-byte header whose bytes 4..7 are the size of
// the payload after it.
std::string cut_after_blocks(const std::string& trace, int blocks) {
  const std::string bytes = read_text(trace);
  std::size_t offset = 16;
  for (int i = 0; i < blocks; ++i) {
    if (offset + 16 > bytes.size()) {
      ADD_FAILURE() << trace << " has fewer than " << blocks << " blocks";
      return {};
    }
    std::uint32_t size = 0;
    for (int b = 3; b >= 0; --b)
      size = size << 8 | static_cast<unsigned char>(bytes[offset + 4 + static_cast<unsigned>(b)]);
    offset += 16 + size;
  }
  EXPECT_LT(offset, bytes.size()) << "the cut leaves the whole file";
  const std::string cut = trace + ".cut";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, offset);
  return cut;
}

TEST_F(diff_check_test, check_fails_on_a_trace_whose_process_did_not_finish) {
  const std::string killed =
      run_program("killed.trace", {program("self_kill"), "400000"}, 128 + SIGKILL);
  const std::string whole = run_program("whole.trace", {program("malloc_loop"), "400000"}, 0);
  const std::string cut = cut_after_blocks(whole, 1);
  const std::string xml = (dir_ / "check.xml").string();
  for (const std::string& t : {killed, cut}) {
    SCOPED_TRACE(t);
    command_result r = lowalloc({"check", t, "--max-allocations", "1G", "--junit", xml});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err, "lowalloc check: " + t +
                         ": the trace is incomplete: the process did not finish (killed, ended "
                         "by the exit_group system call, or the file was cut short): it has no "
                         "end, and the events after its last block are missing "
                         "(--allow-incomplete checks the events it holds)\n");
    EXPECT_TRUE(contains(read_text(xml), "errors=\"1\"")) << read_text(xml);
    // As the baseline too.
    r = lowalloc({"check", whole, "--baseline", t, "--max-increase", "1000000%"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(r.err, t + ": the trace is incomplete: ")) << r.err;
    // Accepted when asked for, with a warning.
    r = lowalloc({"check", t, "--max-allocations", "1G", "--allow-incomplete"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "lowalloc check: " + t +
                                    ": warning: the trace is incomplete: the process did not "
                                    "finish"))
        << r.err;
    r = lowalloc({"check", t, "--max-allocations", "1", "--allow-incomplete"});
    EXPECT_EQ(r.status, 1) << r.err;
    // diff and advise say it and go on.
    r = lowalloc({"diff", "--no-symbols", t, whole});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "lowalloc diff: " + t + ": warning: the trace is incomplete: "))
        << r.err;
    EXPECT_FALSE(contains(r.err, whole + ": warning")) << r.err;
    r = lowalloc({"advise", "--no-measure", t});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "lowalloc advise: " + t + ": warning: the trace is incomplete: "))
        << r.err;
  }
  // The whole trace passes without a word.
  command_result r = lowalloc({"check", "-q", whole, "--max-allocations", "1G"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(diff_check_test, check_passes_a_trace_whose_program_a_signal_ended_with_every_event) {
  // SIGTERM: the recorder writes every thread's events, a CRASH record marked ended, and END.
  const std::string ended =
      run_program("ended.trace", {program("crash"), "1000", "term"}, 128 + SIGTERM);
  const command_result r = lowalloc({"check", ended, "--no-symbols", "--max-allocations", "1G"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(contains(r.err, "incomplete")) << r.err;
  const command_result d = lowalloc({"diff", "--no-symbols", ended, ended});
  EXPECT_EQ(d.status, 0) << d.err;
  EXPECT_FALSE(contains(d.err, "incomplete")) << d.err;
}

TEST_F(diff_check_test, check_takes_a_max_increase_in_range_and_computes_it_without_overflow) {
  const std::string base = trace("diff_program", {"100"});
  const std::string grown = trace("diff_program", {"110"});
  // Any increase up to 10,000 times passes a 10 % growth: the allowed figures are not cut down
  // to a small number by an overflow.
  for (const char* p : {"20%", "1000%", "1000000%", "1000000", "12.5%"}) {
    const command_result r =
        lowalloc({"check", "-q", grown, "--baseline", base, "--max-increase", p});
    EXPECT_EQ(r.status, 0) << p << ": " << r.err;
  }
  for (const char* p : {"1e17%", "99999999999999999999%", "1e400", "inf", "nan", "0x10", "1000001%",
                        "-5%", "5.%", "%", "5%%", "1,5%"}) {
    const command_result r =
        lowalloc({"check", "-q", grown, "--baseline", base, "--max-increase", p});
    EXPECT_EQ(r.status, 2) << p << ": " << r.err;
    EXPECT_TRUE(contains(r.err,
                         "lowalloc check: --max-increase needs a percentage from 0 to "
                         "1000000%, not '" +
                             std::string(p) + "'\n"))
        << r.err;
  }
}

TEST_F(diff_check_test, check_refuses_a_site_with_no_limit_after_it) {
  const std::string file = trace("diff_program", {"10"});
  command_result r = lowalloc(
      {"check", file, "--site", "no_such_function", "--site", "main", "--max-allocations", "5000"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "lowalloc check: --site no_such_function has no limit after it\n"))
      << r.err;
  // Each --site with limits of its own.
  r = lowalloc({"check", "-q", file, "--site", "no_such_function", "--max-allocations", "0",
                "--site", "main", "--max-allocations", "5000"});
  EXPECT_EQ(r.status, 0) << r.err;
}

// "--" ends the options of diff, check and advise, as of run and report: a trace whose name starts
// with '-', or is an option's, is read after it.
TEST_F(diff_check_test, double_dash_ends_the_options_of_diff_check_and_advise) {
  const std::string file = trace("diff_program", {"10"});
  fs::copy_file(file, dir_ / "-before.trace");
  fs::copy_file(file, dir_ / "--top");
  command_result r = lowalloc_in_dir({"diff", "--no-symbols", "--", "-before.trace", "--top"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "lowalloc diff: -before.trace -> --top\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "0 of them changed; 0 new, 0 gone")) << r.out;
  r = lowalloc_in_dir({"check", "--no-symbols", "--max-allocations", "1G", "--", "-before.trace"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "ok: allocations ")) << r.out;
  // After "--" a limit is a file: a second trace, which check does not take.
  r = lowalloc_in_dir({"check", "--max-allocations", "1G", "--", "-before.trace", "--max-bytes"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "lowalloc check: one trace file only ('-before.trace' and "
                       "'--max-bytes')\n"))
      << r.err;
  r = lowalloc_in_dir({"advise", "--no-measure", "--", "--top"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("lowalloc advise: ", 0), 0u) << r.out;
  // Without "--", such a name is an option.
  r = lowalloc_in_dir({"diff", "-before.trace", "-before.trace"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "lowalloc diff: unknown option '-before.trace'\n")) << r.err;
}

// A number on the command line is decimal digits and nothing else, in every command: no space (the
// strtoull that read advise's --top skipped leading ones), no sign, no suffix where none is
// documented (diff's --top took "1k" as 1000), and nothing too large to hold. Only the limits of
// check take a suffix after the digits. The values are refused before any trace is read.
TEST_F(diff_check_test, numbers_are_decimal_digits_only) {
  const std::string largest = "18446744073709551615";
  for (const std::string value : {" 5", "5 ", "+5", "-5", "", "0x10", "1k", "5.0"}) {
    SCOPED_TRACE("'" + value + "'");
    command_result r = lowalloc({"diff", "a.trace", "b.trace", "--top", value});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(
        r.err, "lowalloc diff: --top needs a number (decimal digits only), not '" + value + "'\n"))
        << r.err;
    r = lowalloc({"advise", "a.trace", "--top=" + value});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(
        r.err,
        "lowalloc advise: --top needs a number (decimal digits only), not '" + value + "'\n"))
        << r.err;
  }
  for (const char* command : {"diff", "advise"}) {
    const command_result r = lowalloc({command, "a.trace", "--top", largest + "0"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "lowalloc " + std::string(command) +
                                    ": --top needs a number from 0 to " + largest + ", not '" +
                                    largest + "0'\n"))
        << r.err;
  }
  for (const std::string value : {" 5", "5 ", "+5", "-5", "", "0x10", "5kB", "1.5k", "k"}) {
    SCOPED_TRACE("'" + value + "'");
    const command_result r = lowalloc({"check", "a.trace", "--max-allocations", value});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(r.err,
                         "lowalloc check: --max-allocations needs a count (decimal digits, then k, "
                         "M, G, KiB, MiB or GiB if any), not '" +
                             value + "'\n"))
        << r.err;
  }
  for (const std::string& value : {largest + "0", largest + "k", std::string("20000000000G")}) {
    const command_result r = lowalloc({"check", "a.trace", "--max-bytes", value});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "lowalloc check: --max-bytes needs a count of at most " + largest +
                                    ", not '" + value + "'\n"))
        << r.err;
  }
}

// --site FILE:LINE: a line of 0 matched any line, and one past 2^32 - 1 was cut down to another
// line (4294967296 to 0): both are refused now. A name with a colon and no number after it
// ("to_string[abi:cxx11]") is still a name.
TEST_F(diff_check_test, check_refuses_a_site_line_that_is_no_line) {
  const std::string file = trace("diff_program", {"10"});
  for (const char* place :
       {"diff_program.cpp:0", "diff_program.cpp:4294967296", "main:99999999999999999999999"}) {
    const command_result r = lowalloc({"check", file, "--site", place, "--max-allocations", "1"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(r.err,
                         "lowalloc check: --site needs a line from 1 to 4294967295 after the "
                         "colon, not '" +
                             std::string(place) + "'\n"))
        << r.err;
  }
  const command_result r = lowalloc(
      {"check", "--no-symbols", file, "--site", "to_string[abi:cxx11]", "--max-allocations", "0"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(no allocation passes through to_string[abi:cxx11])")) << r.out;
}

// check's --baseline and --junit with an empty name: taken before for no baseline and no report,
// so the comparison or the report asked for was left out without a word.
TEST_F(diff_check_test, check_refuses_an_empty_baseline_or_junit) {
  const std::string file = trace("diff_program", {"10"});
  for (const char* option : {"--baseline", "--junit"}) {
    command_result r = lowalloc({"check", "--no-symbols", file, "--max-allocations", "1G",
                                 "--max-increase", "5%", option, ""});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "lowalloc check: " + std::string(option) + " needs a file name\n"))
        << r.err;
    r = lowalloc(
        {"check", "--no-symbols", file, "--max-allocations", "1G", std::string(option) + "="});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "lowalloc check: " + std::string(option) + " needs a file name\n"))
        << r.err;
  }
}

// An empty --debug-path names no directory, and a --site of a line alone names no place: both were
// taken (a directory "" searched for copies of binaries; a site that matched nothing, whose limit
// then always held).
TEST_F(diff_check_test, an_empty_debug_path_and_a_site_of_a_line_alone_are_refused) {
  const std::string file = trace("diff_program", {"10"});
  for (const char* command : {"report", "advise", "diff", "check"}) {
    SCOPED_TRACE(command);
    for (const std::vector<std::string>& path :
         std::vector<std::vector<std::string>>{{"--debug-path", ""}, {"--debug-path="}}) {
      std::vector<std::string> args = {command, file};
      if (std::string(command) == "diff") args.push_back(file);
      if (std::string(command) == "check") args.insert(args.end(), {"--max-allocations", "1G"});
      args.insert(args.end(), path.begin(), path.end());
      const command_result r = lowalloc(args);
      EXPECT_EQ(r.status, 2) << r.err;
      EXPECT_TRUE(contains(
          r.err, "lowalloc " + std::string(command) + ": --debug-path needs a directory\n"))
          << r.err;
    }
  }
  const command_result r =
      lowalloc({"check", "--no-symbols", file, "--site", ":12", "--max-allocations", "0"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "lowalloc check: --site needs a file or function name before the "
                       "line, not ':12'\n"))
      << r.err;
}

// An option that takes a value, last on the command line, is a usage error that names it, in
// each command; one given twice takes its last value.
TEST_F(diff_check_test, options_without_their_value_and_options_given_twice) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> value_options = {
      {"diff", {"--format", "--top", "--debug-path"}},
      {"advise", {"--format", "--top", "--debug-path"}},
      {"check",
       {"--max-allocations", "--max-bytes", "--max-temporary", "--max-leaked-bytes",
        "--max-peak-bytes", "--site", "--baseline", "--max-increase", "--junit", "--debug-path"}}};
  for (const auto& [command, options] : value_options) {
    for (const std::string& option : options) {
      const command_result r = lowalloc({command, "a.trace", option});
      EXPECT_EQ(r.status, 2) << command << " " << option;
      EXPECT_TRUE(contains(r.err, "lowalloc " + command + ": " + option + " needs a value\n"))
          << r.err;
    }
  }
  const std::string file = trace("diff_program", {"10"});
  command_result r =
      lowalloc({"diff", "--no-symbols", "--format", "json", "--format", "text", file, file});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("lowalloc diff: ", 0), 0u) << r.out;
  r = lowalloc({"advise", "--no-measure", "--top", "5", "--top", "0", file});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "no sites looked at (--top 0)")) << r.out;
  const std::string first = (dir_ / "first.xml").string();
  const std::string last = (dir_ / "last.xml").string();
  r = lowalloc({"check", "-q", "--no-symbols", file, "--max-allocations", "1G", "--junit", first,
                "--junit", last});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(first));
  EXPECT_TRUE(fs::exists(last));
}

TEST_F(diff_check_test, an_output_that_is_an_input_is_refused) {
  const std::string file = trace("diff_program", {"10"});
  const std::string before = read_text(file);
  fs::create_symlink(file, dir_ / "link.trace");
  const std::string link = (dir_ / "link.trace").string();
  const std::string dotted = (dir_ / "." / fs::path(file).filename()).string();
  const std::vector<std::vector<std::string>> commands = {
      {"report", file, "-o", file},
      {"report", link, "--format", "json", "-o", dotted},
      {"report", file, "--output=" + link},
      {"report", "--processes", file, "-o", file},
      {"check", file, "--max-allocations", "1G", "--junit", link},
      {"check", file, "--baseline", file, "--max-increase", "5%", "--junit", dotted},
  };
  for (const std::vector<std::string>& c : commands) {
    SCOPED_TRACE(c[0] + " " + c[1] + " ... " + c.back());
    const command_result r = lowalloc(c);
    EXPECT_EQ(r.status, 2) << r.err;
    const std::string& output = c.back().rfind("--output=", 0) == 0 ? link : c.back();
    EXPECT_TRUE(
        contains(r.err, "lowalloc " + c[0] + ": cannot write " + output + ": it is the input "))
        << r.err;
    EXPECT_EQ(read_text(file), before) << "the trace was replaced";
  }
  EXPECT_EQ(lowalloc({"report", file}).status, 0);
}

TEST_F(diff_check_test, a_report_ended_by_a_signal_leaves_no_temporary_file) {
  // `report -o` writes next to its output and renames at the end: Ctrl-C or SIGTERM in between
  // left FILE.tmp.PID behind. The report waits here on its input, a FIFO no one writes, after it
  // made its temporary file.
  const fs::path fifo = dir_ / "in.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const fs::path out = dir_ / "out.txt";
  for (const int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      signal(SIGINT, SIG_DFL);  // (a test run in the background starts with it ignored)
      execl(cli.c_str(), "lowalloc", "report", fifo.c_str(), "-o", out.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    const fs::path temporary = dir_ / ("out.txt.tmp." + std::to_string(pid));
    for (int i = 0; i < 10000 && !fs::exists(temporary); ++i) usleep(1000);
    EXPECT_TRUE(fs::exists(temporary));
    kill(pid, sig);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
    EXPECT_FALSE(fs::exists(temporary));
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST_F(diff_check_test, check_writes_junit_whole_or_not_at_all) {
  const std::string file = trace("diff_program", {"10"});
  // A directory that cannot exist: its parent is a file.
  std::ofstream(dir_ / "plain") << "a file\n";
  const std::string in_file = (dir_ / "plain" / "j.xml").string();
  command_result r = lowalloc({"check", "-q", file, "--max-allocations", "1G", "--junit", in_file});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err,
            "lowalloc check: cannot write " + in_file + ": " + std::strerror(ENOTDIR) + "\n");

  // A write that fails half way (a file size limit: EFBIG, as ENOSPC on a full disk) leaves the
  // report that was there, and no temporary file.
  const std::string xml = (dir_ / "j.xml").string();
  std::ofstream(xml) << "the previous report\n";
  std::vector<std::string> args = {"check", "-q", file};
  for (int i = 1; i <= 200; ++i) {
    args.push_back("--max-allocations");
    args.push_back(std::to_string(i * 1000));
  }
  args.push_back("--junit");
  args.push_back(xml);
  struct rlimit old_limit {};
  getrlimit(RLIMIT_FSIZE, &old_limit);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  const sighandler_t old_xfsz = signal(SIGXFSZ, SIG_IGN);  // inherited: a write fails instead
  setrlimit(RLIMIT_FSIZE, &small);
  r = lowalloc(args);
  setrlimit(RLIMIT_FSIZE, &old_limit);
  signal(SIGXFSZ, old_xfsz);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err, "lowalloc check: cannot write " + xml + ": " + std::strerror(EFBIG) + "\n");
  EXPECT_EQ(read_text(xml), "the previous report\n");
  for (const fs::directory_entry& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find("j.xml.tmp"), std::string::npos) << e.path();
}

TEST_F(diff_check_test, junit_of_a_trace_path_that_is_not_utf8_is_valid_xml) {
  const std::string file = trace("diff_program", {"10"});
  const std::string odd = (dir_ / "t\xfe\xc3.trace").string();
  fs::copy_file(file, odd);
  const std::string xml = (dir_ / "j.xml").string();
  const command_result r = lowalloc({"check", "-q", odd, "--max-allocations", "1", "--junit", xml});
  EXPECT_EQ(r.status, 1) << r.err;
  const std::string text = read_text(xml);
  EXPECT_TRUE(contains(text, "t\xEF\xBF\xBD\xEF\xBF\xBD.trace")) << text;
  EXPECT_FALSE(contains(text, "\xfe")) << text;
  // The well-formed sequences stay: U+00E9 and U+20AC.
  const std::string accented = (dir_ / "\xC3\xA9\xE2\x82\xAC.trace").string();
  fs::copy_file(file, accented);
  ASSERT_EQ(lowalloc({"check", "-q", accented, "--max-allocations", "1", "--junit", xml}).status,
            1);
  EXPECT_TRUE(contains(read_text(xml), "\xC3\xA9\xE2\x82\xAC.trace")) << read_text(xml);
}

TEST_F(diff_check_test, a_standard_output_that_cannot_be_written_is_said) {
  const std::string file = trace("diff_program", {"10"});
  const std::string full = std::strerror(ENOSPC);
  const struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"report", "--no-symbols", file}, "lowalloc report: cannot write the report"},
      {{"report", "--no-symbols", "--processes", file}, "lowalloc report: cannot write the report"},
      {{"advise", "--no-measure", file}, "lowalloc advise: cannot write the advice"},
      {{"diff", "--no-symbols", file, file}, "lowalloc diff: cannot write the diff"},
      {{"check", "--no-symbols", file, "--max-allocations", "1G"},
       "lowalloc check: cannot write the results"},
      {{"--version"}, "lowalloc: cannot write the version"},
      {{"help"}, "lowalloc help: cannot write the help"},
      {{"help", "check"}, "lowalloc help: cannot write the help"},
      {{"report", "--help"}, "lowalloc report: cannot write the output"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args[0]);
    command_result r = lowalloc_to(">/dev/full", c.args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(r.err, c.message + " to standard output: " + full + "\n")) << r.err;
    r = lowalloc_to(">&-", c.args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(contains(r.err, c.message + " to standard output: " + std::strerror(EBADF) + "\n"))
        << r.err;
  }
  // A reader that went away is no news: nothing is said (SIGPIPE ignored, so the write fails
  // with EPIPE instead of ending the command).
  const command_result r = run_command(
      {"/bin/sh", "-c", "trap '' PIPE; \"$0\" report --format json \"$1\" | true", cli, file},
      dir_);
  EXPECT_FALSE(contains(r.err, "cannot write")) << r.err;
}

}  // namespace
