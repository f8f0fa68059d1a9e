// The report formats (text, JSON, folded) and `lowalloc report`'s command line: options, exit
// status, messages. The JSON output is parsed by a small strict parser below.
#include "report/report.hpp"
#include "analyze/analysis.hpp"
#include "analyze/objects.hpp"
#include "analyze/words.hpp"
#include "cli/commands.hpp"
#include "report/advice.hpp"
#include "report/common.hpp"
#include "support/cli.hpp"
#include "support/json.hpp"
#include "support/trace_writer.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using lowalloc::analyze::analysis;
using lowalloc::analyze::frame;
using lowalloc::analyze::frame_list;
using lowalloc::analyze::site;
using lowalloc::report::report_options;
using lowalloc::report::sort_key;
using lowalloc_test::cli_result;
using lowalloc_test::run_report;
using lowalloc_test::trace_writer;

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

using lowalloc_test::json;
using lowalloc_test::parse_json;

// --- fixtures
// -------------------------------------------------------------------------------------

frame make_frame(std::uint64_t address, const std::string& function, const std::string& file,
                 unsigned line, bool inlined = false) {
  frame f;
  f.address = address;
  f.module = "/usr/bin/app";
  f.offset = address - 0x400000;
  f.function = function;
  f.file = file;
  f.line = line;
  f.inlined = inlined;
  return f;
}

// An analysis with three sites, written by hand.
analysis sample() {
  analysis a;
  a.process.pid = 1234;
  a.process.ppid = 1;
  a.process.exe = "/usr/bin/app";
  a.process.argv = {"app", "--in", "data \"1\".txt"};
  a.complete = true;
  a.run_time_seconds = 2.0;
  a.threads = 2;
  a.allocations_by_kind = {1500000, 0, 12345, 0, 0, 0, 0, 0};
  a.unmatched_frees = 3;

  site s1;
  s1.stack =
      frame_list({make_frame(0x401000, "tokenize(std::string_view)", "/src/tok.hpp", 12, true),
                  make_frame(0x401000, "parse_line(std::string_view)", "/src/parser.cpp", 42),
                  make_frame(0x402000, "main", "/src/main.cpp", 10)});
  s1.folded_frames = 4;
  s1.totals = {1000000, 32000000, 999999, 990000, 1, 32, 3200};
  s1.sizes.add(32, 1000000);
  site s2;
  frame bad = make_frame(0x403000, "weird;name\x01\xff", "", 0);
  bad.module = "/usr/lib/libweird.so";
  bad.offset = 0x3000;
  s2.stack = frame_list({bad, make_frame(0x402010, "main", "/src/main.cpp", 11)});
  s2.totals = {512345, 600000000, 500000, 10, 12345, 6000000, 7000000};
  s2.sizes.add(lowalloc::analyze::histogram::bucket_of(1000), 2);
  s2.sizes.add(lowalloc::analyze::histogram::bucket_of(300), 512343);
  site s3;  // no stack
  s3.totals = {1, 8, 1, 1, 0, 0, 8};
  s3.sizes.add(8, 1);
  a.sites = {s1, s2, s3};
  for (const site& s : a.sites) {
    a.totals.allocations += s.totals.allocations;
    a.totals.bytes_allocated += s.totals.bytes_allocated;
    a.totals.frees += s.totals.frees;
    a.totals.temporary += s.totals.temporary;
    a.totals.leaked_allocations += s.totals.leaked_allocations;
    a.totals.leaked_bytes += s.totals.leaked_bytes;
    for (const auto& b : s.sizes.buckets) a.sizes.counts[b.bucket] += b.count;
  }
  a.totals.peak_bytes = 7003208;
  return a;
}

std::string text_of(const analysis& a, report_options ro = {}) {
  std::ostringstream out;
  lowalloc::report::write_text(out, a, ro);
  return out.str();
}

TEST(Report, ThousandsSeparators) {
  using lowalloc::report::thousands;
  EXPECT_EQ(thousands(0), "0");
  EXPECT_EQ(thousands(999), "999");
  EXPECT_EQ(thousands(1000), "1,000");
  EXPECT_EQ(thousands(1234567), "1,234,567");
  EXPECT_EQ(thousands(~std::uint64_t{0}), "18,446,744,073,709,551,615");
}

TEST(Report, APercentageOfNotAllIsNever100) {
  // advise said "100 % never exceed 16 elements" of 340,471 vectors some of which did.
  using lowalloc::report::percent;
  EXPECT_EQ(percent(0, 10), "0.0 %");
  EXPECT_EQ(percent(1, 100000), "0.0 %");
  EXPECT_EQ(percent(5, 100), "5.0 %");
  EXPECT_EQ(percent(66, 100), "66 %");
  EXPECT_EQ(percent(994, 1000), "99 %");
  EXPECT_EQ(percent(997, 1000), "99.7 %");
  EXPECT_EQ(percent(9994, 10000), "99.9 %");
  EXPECT_EQ(percent(9995, 10000), "> 99.9 %");
  EXPECT_EQ(percent(340423, 340471), "> 99.9 %");
  EXPECT_EQ(percent(7, 7), "100 %");
  using lowalloc::analyze::percent_text;  // advise's shares
  EXPECT_EQ(percent_text(0), "0 %");
  EXPECT_EQ(percent_text(0.25), "25 %");
  EXPECT_EQ(percent_text(0.9999), "> 99.9 %");
  EXPECT_EQ(percent_text(0.997), "99.7 %");
  EXPECT_EQ(percent_text(1), "100 %");
}

TEST(Report, JsonStringEscaping) {
  using lowalloc::report::json_string;
  EXPECT_EQ(json_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_string(std::string("\n\t\x01\x1f\x7f", 5)), "\"\\n\\t\\u0001\\u001f\\u007f\"");
  EXPECT_EQ(json_string("\xc3\xa9"), "\"\xc3\xa9\"");  // é stays
  EXPECT_EQ(json_string("\xe2\x82\xac"), "\"\xe2\x82\xac\"");
  EXPECT_EQ(json_string("\xff"), "\"\\ufffd\"");
  EXPECT_EQ(json_string("\xc3"), "\"\\ufffd\"");                        // cut sequence
  EXPECT_EQ(json_string("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // overlong
  EXPECT_EQ(json_string("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
  EXPECT_EQ(json_string(std::string("\0", 1)), "\"\\u0000\"");
}

TEST(Report, TextSummaryAndSites) {
  const analysis a = sample();
  report_options ro;
  ro.top = 10;
  ro.trace_name = "app.trace";
  const std::string t = text_of(a, ro);
  EXPECT_TRUE(contains(t, "lowalloc report: app.trace"));
  EXPECT_TRUE(contains(t, "process 1234 (parent 1): app --in data \"1\".txt"));
  EXPECT_TRUE(contains(t, "\nallocations            1,512,346  756,173 per second\n"));
  EXPECT_TRUE(contains(t, "frees"));
  EXPECT_TRUE(contains(t, "bytes allocated"));
  EXPECT_TRUE(contains(t, "632,000,008"));
  EXPECT_TRUE(contains(t, "temporary"));
  EXPECT_TRUE(contains(t, "990,011"));
  EXPECT_TRUE(contains(t, "leaked"));
  EXPECT_TRUE(contains(t, "peak"));
  EXPECT_TRUE(contains(t, "7,003,208"));
  EXPECT_TRUE(contains(t, "\nrun time                 2.000 s\n"));
  EXPECT_TRUE(contains(t, "threads"));
  EXPECT_TRUE(contains(t, "by function       malloc 1,500,000, realloc 12,345"));
  EXPECT_TRUE(contains(t, "unmatched frees"));
  EXPECT_FALSE(contains(t, "lost events"));
  EXPECT_FALSE(contains(t, "did not finish"));
  EXPECT_TRUE(contains(t, "3 sites by allocations"));
  EXPECT_TRUE(contains(t, "#1  1,000,000 allocations (66 %)"));
  EXPECT_TRUE(contains(t, "sizes 32: 1,000,000 (100 %)"));
  EXPECT_TRUE(contains(t, "[inlined] tokenize(std::string_view) (/src/tok.hpp:12)"));
  EXPECT_TRUE(contains(t, "parse_line(std::string_view) (/src/parser.cpp:42)"));
  EXPECT_TRUE(contains(t, "(libweird.so+0x3000)"));
  // 512,343 of 512,345 is not all: not "100 %" (the same rule for advise's shares).
  EXPECT_TRUE(contains(t, "sizes 257..512: 512,343 (> 99.9 %), 513..1024: 2 (0.0 %)"));
  EXPECT_TRUE(contains(t, "weird;name?\xff (libweird.so+0x3000)"));  // control characters
  EXPECT_TRUE(contains(t, "(no stack"));
  // Sites in order of the key.
  EXPECT_LT(t.find("tokenize"), t.find("weird"));
  ro.sort = sort_key::bytes;
  ro.top = 1;
  const std::string by_bytes = text_of(a, ro);
  EXPECT_TRUE(contains(by_bytes, "top 1 of 3 sites by bytes"));
  EXPECT_TRUE(contains(by_bytes, "weird"));
  EXPECT_FALSE(contains(by_bytes, "tokenize"));
}

TEST(Report, TextSaysWhenTheProcessDidNotFinish) {
  analysis a = sample();
  a.complete = false;
  a.lost_events = 5;
  const std::string t = text_of(a);
  EXPECT_TRUE(contains(t,
                       "the process did not finish (killed, crashed, or ended by the "
                       "exit_group system call): counts are up to the last block written"));
  EXPECT_TRUE(contains(t, "lost events"));
  EXPECT_FALSE(contains(t, "stacks lost"));
  a.stacks_lost = 3;
  EXPECT_TRUE(
      contains(text_of(a), "stacks lost                    3  allocations shown without a stack"));
  EXPECT_FALSE(contains(text_of(a), "frees not seen"));
  a.frees_not_seen = 7;
  EXPECT_TRUE(
      contains(text_of(a), "frees not seen                 7  blocks dropped: an allocation"));
  a.truncation = "bad block magic (at byte 99)";
  EXPECT_TRUE(contains(text_of(a), "bad block magic (at byte 99)"));
}

TEST(Report, StdStringIsShortenedInTextAndFolded) {
  analysis a;
  site s;
  s.stack =
      frame_list({make_frame(0x401000,
                             "std::__cxx11::basic_string<char, std::char_traits<char>, "
                             "std::allocator<char> >::_M_create(unsigned long&, unsigned long)",
                             "", 0)});
  s.totals.allocations = 1;
  a.sites = {s};
  a.totals.allocations = 1;
  EXPECT_TRUE(contains(text_of(a), "std::string::_M_create(unsigned long&, unsigned long)"));
  std::ostringstream folded;
  lowalloc::report::write_folded(folded, a, report_options{});
  EXPECT_EQ(folded.str(), "std::string::_M_create(unsigned long&, unsigned long) 1\n");
  std::ostringstream js;
  lowalloc::report::write_json(js, a, report_options{});
  EXPECT_TRUE(contains(js.str(), "std::__cxx11::basic_string<char"));
}

// The names `nm -C` prints for a program built with lowalloc's types: g++ 12 with libstdc++, and
// clang's mangling with libc++ (std::__1::) demangled by the same demangler.
TEST(Report, LowallocTypesAreShortenedAsTheUserWroteThem) {
  using lowalloc::report::readable;
  // libstdc++
  EXPECT_EQ(readable("lowalloc::basic_string<char, lowalloc::small_storage<char, 32ul, "
                     "std::allocator<char> >, std::char_traits<char> >::grow_keep(unsigned long)"),
            "lowalloc::small_string<32>::grow_keep(unsigned long)");
  EXPECT_EQ(readable("use_f(lowalloc::basic_string<char, lowalloc::fixed_storage<char, 16ul>, "
                     "std::char_traits<char> >&)"),
            "use_f(lowalloc::fixed_string<16>&)");
  EXPECT_EQ(readable("use_w(lowalloc::basic_string<wchar_t, lowalloc::small_storage<wchar_t, 8ul, "
                     "std::allocator<wchar_t> >, std::char_traits<wchar_t> >&)"),
            "use_w(lowalloc::small_wstring<8>&)");
  EXPECT_EQ(readable("use_p(lowalloc::basic_string<char, lowalloc::small_storage<char, 32ul, "
                     "std::pmr::polymorphic_allocator<char> >, std::char_traits<char> >&)"),
            "use_p(lowalloc::pmr::small_string<32>&)");
  EXPECT_EQ(readable("use_v(lowalloc::small_vector<int, 8ul, std::allocator<int> >&)"),
            "use_v(lowalloc::small_vector<int, 8>&)");
  EXPECT_EQ(readable("use_b(lowalloc::small_vector_base<int, std::allocator<int> >&)"),
            "use_b(lowalloc::small_vector_base<int>&)");
  EXPECT_EQ(readable("use_i(lowalloc::inplace_vector<int, 4ul>&)"),
            "use_i(lowalloc::inplace_vector<int, 4>&)");
  EXPECT_EQ(readable("use_vs(lowalloc::small_vector<std::__cxx11::basic_string<char, "
                     "std::char_traits<char>, std::allocator<char> >, 4ul, "
                     "std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, "
                     "std::allocator<char> > > >&)"),
            "use_vs(lowalloc::small_vector<std::string, 4>&)");
  EXPECT_EQ(
      readable("use_vv(std::vector<lowalloc::basic_string<char, lowalloc::small_storage<char, "
               "32ul, std::allocator<char> >, std::char_traits<char> >, "
               "std::allocator<lowalloc::basic_string<char, lowalloc::small_storage<char, "
               "32ul, std::allocator<char> >, std::char_traits<char> > > >&)"),
      "use_vv(std::vector<lowalloc::small_string<32>, "
      "std::allocator<lowalloc::small_string<32>> >&)");
  // libc++
  EXPECT_EQ(readable("use_s(lowalloc::basic_string<char, lowalloc::small_storage<char, 32ul, "
                     "std::__1::allocator<char> >, std::__1::char_traits<char> >&)"),
            "use_s(lowalloc::small_string<32>&)");
  EXPECT_EQ(readable("use_f(lowalloc::basic_string<char, lowalloc::fixed_storage<char, 16ul>, "
                     "std::__1::char_traits<char> >&)"),
            "use_f(lowalloc::fixed_string<16>&)");
  EXPECT_EQ(readable("use_v(lowalloc::small_vector<int, 8ul, std::__1::allocator<int> >&)"),
            "use_v(lowalloc::small_vector<int, 8>&)");
  EXPECT_EQ(readable("use_b(lowalloc::small_vector_base<int, std::__1::allocator<int> >&)"),
            "use_b(lowalloc::small_vector_base<int>&)");
  // Arguments that are not the defaults stay; so do names that are not lowalloc's templates.
  EXPECT_EQ(readable("lowalloc::small_vector<int, 8ul, my_alloc<int> >::push_back(int&&)"),
            "lowalloc::small_vector<int, 8, my_alloc<int>>::push_back(int&&)");
  EXPECT_EQ(readable("lowalloc::basic_string<char, lowalloc::small_storage<char, 24ul, "
                     "arena_allocator<char> >, std::char_traits<char> >::append(char const*)"),
            "lowalloc::small_string<24, arena_allocator<char>>::append(char const*)");
  EXPECT_EQ(readable("lowalloc::basic_string<char, lowalloc::fixed_storage<char, 8ul>, "
                     "ci_traits>::assign(char const*)"),
            "lowalloc::basic_string<char, lowalloc::fixed_storage<char, 8>, ci_traits>::assign("
            "char const*)");
  EXPECT_EQ(readable("mylowalloc::small_vector<int, 8ul>::f()"),
            "mylowalloc::small_vector<int, 8ul>::f()");
  EXPECT_EQ(readable("lowalloc::analyze::build_sites(analysis&, bool)"),
            "lowalloc::analyze::build_sites(analysis&, bool)");
}

TEST(Report, CountsAgreeWithTheirNouns) {
  using lowalloc::report::counted;
  using lowalloc::report::noun;
  EXPECT_EQ(counted(0, "allocation"), "0 allocations");
  EXPECT_EQ(counted(1, "allocation"), "1 allocation");
  EXPECT_EQ(counted(2, "byte"), "2 bytes");
  EXPECT_EQ(counted(1234, "byte"), "1,234 bytes");
  EXPECT_EQ(counted(1, "more size"), "1 more size");
  EXPECT_EQ(noun(1, "child", "children"), "child");
  EXPECT_EQ(noun(3, "child", "children"), "children");
}

// A trace of one allocation of one byte, leaked, from one site: every count of the text is 1.
TEST(Report, TextOfCountsOfOne) {
  analysis a;
  site s;
  s.stack = frame_list({make_frame(0x401000, "main", "/src/main.cpp", 3)});
  s.totals = {1, 1, 0, 0, 1, 1, 1, 1};
  s.max_live_at_least = 1;
  s.sizes.add(1, 1);
  a.sites = {s};
  a.totals = s.totals;
  a.threads = 1;
  const std::string t = text_of(a);
  EXPECT_TRUE(contains(t, "\nleaked                         1  allocation, 1 byte (1 B)\n")) << t;
  EXPECT_TRUE(contains(t, "\npeak                           1  byte live (1 B)\n")) << t;
  EXPECT_TRUE(contains(t, "\n1 site by allocations\n")) << t;
  EXPECT_TRUE(contains(t,
                       "\n#1  1 allocation (100 %), 1 byte, 0 temporary (0.0 %), max live 1 byte, "
                       "at peak 1 byte, leaked 1 (1 byte)\n"))
      << t;
  EXPECT_FALSE(contains(t, " 1 allocations")) << t;
  EXPECT_FALSE(contains(t, " 1 bytes")) << t;
}

// A site's own maximum and its share of the process's peak are two figures, each labelled, in the
// text and the JSON; a maximum its stacks do not say exactly is a range.
TEST(Report, MaxLiveAndAtPeakOfASite) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).stack(2, {0x2000});
  w.alloc(1, 100, 0xA1, 1).alloc(2, 100, 0xA2, 1).alloc(3, 100, 0xA3, 1);
  w.free(4, 0xA1).free(5, 0xA2).free(6, 0xA3);
  w.alloc(7, 500, 0xB1, 2).free(8, 0xB1);
  w.end_block();
  lowalloc::analyze::options o;
  o.symbolize = false;
  const analysis a = lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), o);
  const std::string t = text_of(a);
  EXPECT_TRUE(contains(t,
                       "\n#1  3 allocations (75 %), 300 bytes, 1 temporary (33 %), max live 300 "
                       "bytes, at peak 0 bytes\n"))
      << t;
  EXPECT_TRUE(contains(t,
                       "\n#2  1 allocation (25 %), 500 bytes, 1 temporary (100 %), max live 500 "
                       "bytes, at peak 500 bytes\n"))
      << t;
  std::ostringstream js;
  lowalloc::report::write_json(js, a, report_options{});
  const json j = parse_json(js.str());
  EXPECT_EQ(j["format_version"].n, 2);
  EXPECT_EQ(j["sites"][0u]["peak"]["bytes"].n, 0);
  EXPECT_EQ(j["sites"][0u]["max_live"]["bytes"].n, 300);
  EXPECT_EQ(j["sites"][0u]["max_live"]["at_least"].n, 300);
  EXPECT_EQ(j["sites"][1u]["peak"]["bytes"].n, 500);
  EXPECT_EQ(j["sites"][1u]["max_live"]["bytes"].n, 500);
  // Two stacks of one site that peak apart: 200..300.
  analysis b = a;
  b.sites[0].max_live_at_least = 200;
  EXPECT_TRUE(contains(text_of(b), ", max live 200..300 bytes, at peak 0 bytes\n"));
}

// advise on a trace of one allocation, at one site: every count in the singular; --top 0 looks at
// no site and says so.
TEST(Report, AdviseTextOfCountsOfOneAndTopZero) {
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 1, 0xA1, 1).end(2).end_block();
  lowalloc::analyze::object_tracker tracker;
  const analysis a = lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(),
                                                       lowalloc::analyze::options{}, {&tracker});
  tracker.finish();
  const lowalloc::analyze::cost_model costs{};
  lowalloc::analyze::advise_options opts;
  const std::vector<lowalloc::analyze::advice_item> advice =
      lowalloc::analyze::advise(a, tracker, costs, opts);
  std::ostringstream text;
  lowalloc::report::write_advice_text(text, a, advice, costs, opts.top_sites);
  const std::string t = text.str();
  EXPECT_EQ(t.rfind("lowalloc advise: 1 allocation; costs ", 0), 0u) << t;
  EXPECT_TRUE(contains(t, "\n    1 allocation\n")) << t;
  EXPECT_TRUE(contains(t, "nothing worth changing: rare: 1 allocation\n")) << t;
  EXPECT_FALSE(contains(t, "1 allocations")) << t;
  std::ostringstream none;
  lowalloc::report::write_advice_text(none, a, {}, costs, 0);
  EXPECT_TRUE(contains(none.str(), "\n\nno sites looked at (--top 0)\n")) << none.str();
  EXPECT_FALSE(contains(none.str(), "no sites to advise on")) << none.str();
}

// --top 0: the summary and how many sites there are, no site.
TEST(Report, TopZeroPrintsTheSummaryOnly) {
  report_options ro;
  ro.top = 0;
  const std::string t = text_of(sample(), ro);
  EXPECT_TRUE(contains(t, "\n\n3 sites by allocations, none shown (--top 0)\n")) << t;
  EXPECT_FALSE(contains(t, "#1")) << t;
  EXPECT_FALSE(contains(t, "no sites")) << t;
  EXPECT_TRUE(contains(t, "\nallocations            1,512,346")) << t;
  std::ostringstream js;
  lowalloc::report::write_json(js, sample(), ro);
  EXPECT_TRUE(parse_json(js.str())["sites"].items.empty());
}

TEST(Report, LongStacksAreCut) {
  analysis a;
  site s;
  std::vector<frame> frames;
  for (unsigned i = 0; i < 20; ++i)
    frames.push_back(
        make_frame(0x401000 + i, std::string("f").append(std::to_string(i)), "/src/f.cpp", i + 1));
  s.stack = frame_list(std::move(frames));
  s.totals.allocations = 1;
  a.sites = {s};
  a.totals.allocations = 1;
  const std::string t = text_of(a);
  EXPECT_TRUE(contains(t, "f7 ("));
  EXPECT_FALSE(contains(t, "f8 ("));
  EXPECT_TRUE(contains(t, "... 12 more"));
}

TEST(Report, JsonSchema) {
  analysis a = sample();
  a.truncation = "unknown record tag 0x7f (at byte 1234)";
  std::ostringstream out;
  report_options ro;
  lowalloc::report::write_json(out, a, ro);
  const json j = parse_json(out.str());
  EXPECT_EQ(j["format_version"].n, 2);
  EXPECT_EQ(j["process"]["pid"].n, 1234);
  EXPECT_EQ(j["process"]["ppid"].n, 1);
  EXPECT_EQ(j["process"]["exe"].s, "/usr/bin/app");
  EXPECT_EQ(j["process"]["argv"][2].s, "data \"1\".txt");
  EXPECT_TRUE(j["complete"].b);
  EXPECT_EQ(j["truncation"].s, a.truncation);
  EXPECT_EQ(j["run_time_seconds"].n, 2.0);
  EXPECT_EQ(j["allocations"].n, 1512346);
  EXPECT_EQ(j["frees"].n, 1499999 + 1);
  EXPECT_EQ(j["bytes_allocated"].n, 632000008);
  EXPECT_EQ(j["temporary"].n, 990011);
  EXPECT_EQ(j["leaked"]["allocations"].n, 12346);
  EXPECT_EQ(j["leaked"]["bytes"].n, 6000032);
  EXPECT_EQ(j["peak"]["bytes"].n, 7003208);
  EXPECT_EQ(j["unmatched_frees"].n, 3);
  EXPECT_EQ(j["lost_events"].n, 0);
  EXPECT_EQ(j["stacks_lost"].n, 0);
  EXPECT_EQ(j["frees_not_seen"].n, 0);
  EXPECT_EQ(j["threads"].n, 2);
  EXPECT_EQ(j["by_function"]["malloc"].n, 1500000);
  EXPECT_EQ(j["by_function"]["realloc"].n, 12345);
  EXPECT_TRUE(j["by_function"].has("valloc"));
  ASSERT_EQ(j["histogram"].kind, json::array);
  ASSERT_EQ(j["histogram"].items.size(), 4u);
  EXPECT_EQ(j["histogram"][0]["min"].n, 8);
  EXPECT_EQ(j["histogram"][2]["min"].n, 257);
  EXPECT_EQ(j["histogram"][2]["max"].n, 512);
  EXPECT_EQ(j["histogram"][2]["count"].n, 512343);
  EXPECT_EQ(j["histogram"][3]["min"].n, 513);
  EXPECT_EQ(j["histogram"][3]["max"].n, 1024);
  const json& sites = j["sites"];
  ASSERT_EQ(sites.items.size(), 3u);  // all sites by default
  const json& s0 = sites[0];
  EXPECT_EQ(s0["allocations"].n, 1000000);
  EXPECT_EQ(s0["bytes_allocated"].n, 32000000);
  EXPECT_EQ(s0["frees"].n, 999999);
  EXPECT_EQ(s0["temporary"].n, 990000);
  EXPECT_EQ(s0["leaked"]["allocations"].n, 1);
  EXPECT_EQ(s0["leaked"]["bytes"].n, 32);
  EXPECT_EQ(s0["peak"]["bytes"].n, 3200);
  EXPECT_EQ(s0["folded_frames"].n, 4);
  EXPECT_EQ(s0["histogram"][0]["min"].n, 32);
  // Stacks are numbers in the table of frames, each frame once, numbered as the ranked sites
  // first use them.
  const json& frames = j["frames"];
  ASSERT_EQ(frames.kind, json::array);
  ASSERT_EQ(frames.items.size(), 5u);  // the site of no stack has no frames
  ASSERT_EQ(s0["stack"].items.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(s0["stack"][k].n, static_cast<double>(k));
  const auto frame_of = [&](const json& site, std::size_t k) -> const json& {
    return frames[static_cast<std::size_t>(site["stack"][k].n)];
  };
  const json& f0 = frame_of(s0, 0);
  EXPECT_EQ(f0["address"].s, "0x401000");
  EXPECT_EQ(f0["module"].s, "/usr/bin/app");
  EXPECT_EQ(f0["offset"].n, 0x1000);
  EXPECT_EQ(f0["function"].s, "tokenize(std::string_view)");
  EXPECT_EQ(f0["file"].s, "/src/tok.hpp");
  EXPECT_EQ(f0["line"].n, 12);
  EXPECT_TRUE(f0["inlined"].b);
  EXPECT_FALSE(frame_of(s0, 1)["inlined"].b);
  // The control and invalid bytes of a name are escaped.
  ASSERT_EQ(sites[1]["stack"].items.size(), 2u);
  EXPECT_EQ(sites[1]["stack"][0].n, 3);  // a new frame
  EXPECT_EQ(frame_of(sites[1], 0)["function"].s, "weird;name\\u0001\\ufffd");
  EXPECT_EQ(frame_of(sites[1], 0)["file"].kind, json::null);
  EXPECT_EQ(frame_of(sites[1], 0)["line"].kind, json::null);
  EXPECT_EQ(sites[1]["stack"][1].n, 4);  // another main (line 11)
  EXPECT_EQ(frames[4]["line"].n, 11);
  EXPECT_EQ(sites[2]["stack"].items.size(), 0u);

  ro.top = 1;
  ro.sort = sort_key::leaked;
  std::ostringstream top;
  lowalloc::report::write_json(top, a, ro);
  const json t = parse_json(top.str());
  ASSERT_EQ(t["sites"].items.size(), 1u);
  EXPECT_EQ(t["sites"][0]["leaked"]["bytes"].n, 6000000);

  std::ostringstream none;
  lowalloc::report::write_json(none, analysis{}, report_options{});
  const json e = parse_json(none.str());
  EXPECT_EQ(e["truncation"].kind, json::null);
  EXPECT_EQ(e["sites"].items.size(), 0u);
}

TEST(Report, Folded) {
  const analysis a = sample();
  std::ostringstream out;
  report_options ro;
  lowalloc::report::write_folded(out, a, ro);
  EXPECT_EQ(out.str(),
            "main;parse_line(std::string_view);tokenize(std::string_view)_[i] 1000000\n"
            "main;weird,name\x01\xff 512345\n"
            "[no stack] 1\n");
  std::ostringstream bytes;
  ro.sort = sort_key::temporary;
  lowalloc::report::write_folded(bytes, a, ro);
  EXPECT_EQ(bytes.str(),
            "main;parse_line(std::string_view);tokenize(std::string_view)_[i] 990000\n"
            "main;weird,name\x01\xff 10\n"
            "[no stack] 1\n");
  // Every line is "frames VALUE": one space before a number at the end.
  std::istringstream lines(bytes.str());
  for (std::string l; std::getline(lines, l);) {
    const std::size_t sp = l.rfind(' ');
    ASSERT_NE(sp, std::string::npos);
    EXPECT_EQ(l.find_first_not_of("0123456789", sp + 1), std::string::npos) << l;
  }
}

// --lines: a frame is function:line, the line before the inlined-frame mark; a frame without a
// line keeps its name.
TEST(Report, FoldedLines) {
  const analysis a = sample();
  std::ostringstream out;
  report_options ro;
  ro.lines = true;
  lowalloc::report::write_folded(out, a, ro);
  EXPECT_EQ(out.str(),
            "main:10;parse_line(std::string_view):42;tokenize(std::string_view):12_[i] 1000000\n"
            "main:11;weird,name\x01\xff 512345\n"
            "[no stack] 1\n");
}

// speedscope's file of the three sites: one profile per metric of the sites it is not 0 for, each
// frame once (main of two lines is one frame), the site of no stack a frame "[no stack]".
TEST(Report, Speedscope) {
  analysis a = sample();
  // main declared at line 9: its frames of lines 10 and 11 are one frame without --lines.
  for (site& s : a.sites) {
    std::vector<frame> frames;
    for (const frame& f : s.stack) {
      frames.push_back(f);
      if (f.function == "main") frames.back().function_line = 9;
    }
    s.stack = frame_list(std::move(frames));
  }
  std::ostringstream out;
  report_options ro;
  ro.trace_name = "/tmp/app.trace";
  lowalloc::report::write_speedscope(out, a, ro);
  // The version in "exporter" is the project's.
  std::string text = out.str();
  const std::string exporter = "\"exporter\": \"lowalloc ";
  const std::size_t at = text.find(exporter);
  ASSERT_NE(at, std::string::npos) << text;
  const std::size_t version = at + exporter.size();
  const std::size_t end = text.find('"', version);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(text.find_first_not_of("0123456789.", version), end) << text;
  text.replace(version, end - version, "VERSION");
  EXPECT_EQ(
      text,
      "{\n"
      "  \"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
      "  \"exporter\": \"lowalloc VERSION\",\n"
      "  \"name\": \"app.trace\",\n"
      "  \"activeProfileIndex\": 0,\n"
      "  \"profiles\": [\n"
      "    {\"type\": \"sampled\", \"name\": \"allocations\", \"unit\": \"none\", "
      "\"startValue\": 0, \"endValue\": 1512346,\n"
      "     \"samples\": [[0, 1, 2], [0, 3], [4]],\n"
      "     \"weights\": [1000000, 512345, 1]},\n"
      "    {\"type\": \"sampled\", \"name\": \"bytes allocated\", \"unit\": \"bytes\", "
      "\"startValue\": 0, \"endValue\": 632000008,\n"
      "     \"samples\": [[0, 3], [0, 1, 2], [4]],\n"
      "     \"weights\": [600000000, 32000000, 8]},\n"
      "    {\"type\": \"sampled\", \"name\": \"temporary allocations\", \"unit\": \"none\", "
      "\"startValue\": 0, \"endValue\": 990011,\n"
      "     \"samples\": [[0, 1, 2], [0, 3], [4]],\n"
      "     \"weights\": [990000, 10, 1]},\n"
      "    {\"type\": \"sampled\", \"name\": \"leaked bytes\", \"unit\": \"bytes\", "
      "\"startValue\": 0, \"endValue\": 6000032,\n"
      "     \"samples\": [[0, 3], [0, 1, 2]],\n"
      "     \"weights\": [6000000, 32]},\n"
      "    {\"type\": \"sampled\", \"name\": \"live bytes at the peak\", \"unit\": \"bytes\", "
      "\"startValue\": 0, \"endValue\": 7003208,\n"
      "     \"samples\": [[0, 3], [0, 1, 2], [4]],\n"
      "     \"weights\": [7000000, 3200, 8]}\n"
      "  ],\n"
      "  \"shared\": {\"frames\": [\n"
      "    {\"name\": \"main\", \"file\": \"/src/main.cpp\", \"line\": 9},\n"
      "    {\"name\": \"parse_line(std::string_view)\", \"file\": \"/src/parser.cpp\"},\n"
      "    {\"name\": \"tokenize(std::string_view)\", \"file\": \"/src/tok.hpp\"},\n"
      "    {\"name\": \"weird;name\\u0001\\ufffd\"},\n"
      "    {\"name\": \"[no stack]\"}\n"
      "  ]}\n"
      "}\n");

  // --lines: a frame per line of a call; --sort picks the profile shown first; --top N keeps the
  // first N sites of each profile.
  ro.lines = true;
  ro.sort = sort_key::bytes;
  ro.top = 1;
  std::ostringstream lines;
  lowalloc::report::write_speedscope(lines, a, ro);
  const std::string l = lines.str();
  EXPECT_TRUE(contains(l, "\"activeProfileIndex\": 1,")) << l;
  EXPECT_TRUE(contains(l,
                       "\"endValue\": 1000000,\n     \"samples\": [[0, 1, 2]],\n"
                       "     \"weights\": [1000000]}"))
      << l;
  EXPECT_TRUE(contains(l, "\"endValue\": 600000000,\n     \"samples\": [[3, 4]],\n")) << l;
  EXPECT_TRUE(
      contains(l,
               "  \"shared\": {\"frames\": [\n"
               "    {\"name\": \"main:10\", \"file\": \"/src/main.cpp\", \"line\": 10},\n"
               "    {\"name\": \"parse_line(std::string_view):42\", \"file\": "
               "\"/src/parser.cpp\", \"line\": 42},\n"
               "    {\"name\": \"tokenize(std::string_view):12\", \"file\": \"/src/tok.hpp\", "
               "\"line\": 12},\n"
               "    {\"name\": \"main:11\", \"file\": \"/src/main.cpp\", \"line\": 11},\n"
               "    {\"name\": \"weird;name\\u0001\\ufffd\"}\n"
               "  ]}\n"))
      << l;
}

// The analysis of a synthetic trace, and its JSON report.
analysis analyzed_without_symbols(trace_writer& w) {
  lowalloc::analyze::options o;
  o.symbolize = false;
  return lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), o);
}

json json_report(const analysis& a, const report_options& ro) {
  std::ostringstream out;
  lowalloc::report::write_json(out, a, ro);
  return parse_json(out.str());
}

TEST(Report, AnalyzedTraceRoundTrip) {
  // The whole path on a synthetic trace: counts in JSON match the analysis.
  trace_writer w;
  w.block(1, 0).process(7, 1, 0, "/bin/x", {"x"}).stack(1, {0x1000}).stack(2, {0x2000});
  for (std::uint64_t i = 0; i < 100; ++i) w.alloc(1 + 2 * i, 16, 0x100, 1).free(2 + 2 * i, 0x100);
  w.alloc(300, 1000, 0x5000, 2).end(301).end_block();
  const analysis a = analyzed_without_symbols(w);
  const json j = json_report(a, report_options{});
  EXPECT_EQ(j["allocations"].n, 101);
  EXPECT_EQ(j["temporary"].n, 100);
  EXPECT_EQ(j["leaked"]["bytes"].n, 1000);
  ASSERT_EQ(j["sites"][0u]["stack"].items.size(), 1u);
  const json& f = j["frames"][static_cast<std::size_t>(j["sites"][0u]["stack"][0].n)];
  EXPECT_EQ(f["address"].s, "0x1000");
  EXPECT_EQ(f["module"].kind, json::null);
}

TEST(Report, JsonFramesAreWrittenOnceAndSitesNumberThem) {
  // Three stacks of one trace, two sharing their outer frame: that frame is written once, and
  // both sites name it by the same number; numbers follow the order of the ranked sites.
  trace_writer w;
  w.block(1, 0).process(7, 1, 0, "/bin/x", {"x"});
  w.stack(1, {0x1000, 0x2000}).stack(2, {0x3000, 0x2000}).stack(3, {0x4000});
  std::uint64_t t = 1;
  for (const auto& [count, stack] : {std::pair{30, 1}, std::pair{20, 3}, std::pair{10, 2}}) {
    for (int i = 0; i < count; ++i, t += 2)
      w.alloc(t, 16, 0x100, static_cast<std::uint64_t>(stack)).free(t + 1, 0x100);
  }
  w.end(t).end_block();
  const analysis a = analyzed_without_symbols(w);
  const json j = json_report(a, report_options{});
  EXPECT_EQ(j["format_version"].n, 2);
  const json& sites = j["sites"];
  ASSERT_EQ(sites.items.size(), 3u);
  const auto numbers = [&](std::size_t i) {
    std::vector<double> v;
    for (const json& n : sites[i]["stack"].items) v.push_back(n.n);
    return v;
  };
  EXPECT_EQ(sites[0]["allocations"].n, 30);
  EXPECT_EQ(numbers(0), (std::vector<double>{0, 1}));
  EXPECT_EQ(numbers(1), (std::vector<double>{2}));
  EXPECT_EQ(numbers(2), (std::vector<double>{3, 1}));
  const json& frames = j["frames"];
  ASSERT_EQ(frames.items.size(), 4u);
  EXPECT_EQ(frames[0]["address"].s, "0x1000");
  EXPECT_EQ(frames[1]["address"].s, "0x2000");
  EXPECT_EQ(frames[2]["address"].s, "0x4000");
  EXPECT_EQ(frames[3]["address"].s, "0x3000");

  // --top 1: the frames of the printed site only.
  report_options top;
  top.top = 1;
  const json k = json_report(a, top);
  ASSERT_EQ(k["sites"].items.size(), 1u);
  EXPECT_EQ(k["frames"].items.size(), 2u);
}

// --- the command line
// -----------------------------------------------------------------------------

std::string temp_file(const std::string& name, const std::string& bytes) {
  const std::string path =
      ::testing::TempDir() + "/lowalloc_report_" + std::to_string(::getpid()) + "_" + name;
  trace_writer w;
  w.file() = bytes;
  w.save(path);
  return path;
}

std::string good_trace(bool end = true) {
  trace_writer w;
  w.block(1, 0).process(7, 1, 0, "/bin/x", {"x"}).stack(1, {0x1000});
  for (std::uint64_t i = 0; i < 1500; ++i) w.alloc(1 + 2 * i, 16, 0x100, 1).free(2 + 2 * i, 0x100);
  if (end) w.end(5000);
  w.end_block();
  return w.file();
}

TEST(Cli, FormatsAndOptions) {
  const std::string path = temp_file("good", good_trace());
  cli_result r = run_report({path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\nallocations                1,500"));
  EXPECT_TRUE(r.err.empty()) << r.err;
  r = run_report({path, "--format", "json", "--no-symbols"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(parse_json(r.out)["allocations"].n, 1500);
  r = run_report({"--format=folded", "--sort=temporary", path, "--no-fold"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "0x1000 1500\n");
  r = run_report({path, "--top", "0"});
  EXPECT_EQ(r.status, 0);
  r = run_report({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.out, "usage: lowalloc report FILE"));
  ::unlink(path.c_str());
}

TEST(Cli, UsageErrors) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{},
                                             {"a", "b"},
                                             {"a", "--format", "xml"},
                                             {"a", "--sort", "size"},
                                             {"a", "--top", "-1"},
                                             {"a", "--top", "x"},
                                             {"a", "--top"},
                                             {"a", "--bogus"}}) {
    const cli_result r = run_report(args);
    EXPECT_EQ(r.status, 2) << (args.empty() ? "" : args.back());
    EXPECT_TRUE(contains(r.err, "lowalloc report: "));
    EXPECT_TRUE(contains(r.err, "usage: lowalloc report"));
    EXPECT_TRUE(r.out.empty());
  }
}

// --top takes decimal digits and nothing else. strtoull, which read it before, skipped leading
// spaces and took a sign: " 5" and "+5" were 5, and a stray space in a script went unnoticed.
TEST(Cli, TopTakesDecimalDigitsOnly) {
  const std::string path = temp_file("top", good_trace());
  for (const std::string value : {" 5", "5 ", "+5", "-5", "", "0x10", "1k", "5.0", "\xd9\xa3"}) {
    const cli_result r = run_report({path, "--top", value});
    EXPECT_EQ(r.status, 2) << "'" << value << "'";
    EXPECT_TRUE(contains(
        r.err,
        "lowalloc report: --top needs a number (decimal digits only), not '" + value + "'\n"));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // One more than the largest count is refused, not cut down to the largest; the largest is taken.
  cli_result r = run_report({path, "--top=18446744073709551616"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err,
                       "lowalloc report: --top needs a number from 0 to 18446744073709551615, not "
                       "'18446744073709551616'\n"));
  r = run_report({path, "--format", "json", "--top", "18446744073709551615"});
  EXPECT_EQ(r.status, 0) << r.err;
  ::unlink(path.c_str());
}

// The working directory, changed for a scope: a file named "-x.trace" is named so on a command
// line only from its own directory (a path to it from elsewhere starts with '/' or '.').
class working_directory {
 public:
  explicit working_directory(const std::string& dir) : saved_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  working_directory(const working_directory&) = delete;
  working_directory& operator=(const working_directory&) = delete;
  ~working_directory() {
    std::error_code ignored;
    std::filesystem::current_path(saved_, ignored);
  }

 private:
  std::filesystem::path saved_;
};

// "--" ends the options, as in `lowalloc run`: a trace whose name starts with '-' is read after it
// instead of being taken for an unknown option, and so is one named as an option is.
TEST(Cli, DoubleDashEndsTheOptions) {
  const std::string dir =
      ::testing::TempDir() + "lowalloc_report_dash_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (const char* name : {"-x.trace", "--top"}) {
    trace_writer w;
    w.file() = good_trace();
    w.save(dir + "/" + name);
  }
  const working_directory in_dir(dir);
  cli_result r = run_report({"--format", "json", "--", "-x.trace"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(parse_json(r.out)["allocations"].n, 1500) << r.out;
  r = run_report({"--top", "0", "--", "--top"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "lowalloc report: --top\n")) << r.out;
  // After "--" an option's name is a file: "--help" is a second trace, not the help.
  r = run_report({"--", "-x.trace", "--help"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "lowalloc report: one trace file only ('-x.trace' and '--help'"))
      << r.err;
  // Before "--", a name that starts with '-' is still an option.
  r = run_report({"-x.trace"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "lowalloc report: unknown option '-x.trace'\n")) << r.err;
  // The processes of two traces named after "--".
  r = run_report({"--processes", "--format", "json", "--", "-x.trace", "--top"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(parse_json(r.out)["totals"]["allocations"].n, 3000) << r.out;
  std::filesystem::remove_all(dir);
}

// An option given twice takes its last value (in every command); one that takes a value, last on
// the command line without it, is a usage error that names it.
TEST(Cli, AnOptionGivenTwiceTakesItsLastValue) {
  const std::string path = temp_file("twice", good_trace());
  cli_result r = run_report({"--format", "text", "--format=folded", path, "--no-fold"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "0x1000 1500\n");
  r = run_report({path, "--format", "json", "--top", "0", "--top", "1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(parse_json(r.out)["sites"].items.size(), 1u) << r.out;
  for (const char* option :
       {"--format", "-o", "--output", "--top", "--sort", "--inuse", "--debug-path"}) {
    r = run_report({path, option});
    EXPECT_EQ(r.status, 2) << option;
    EXPECT_TRUE(contains(r.err, "lowalloc report: " + std::string(option) + " needs a value\n"))
        << r.err;
  }
  ::unlink(path.c_str());
}

// --processes FILE: the files FILE.PID[.K] next to FILE whose process descends from FILE's, by
// pid and parent: an exec'd image by its pid, a fork child by its parent's; another run's file of
// that name is left out, even one whose pid this run's processes have too (pids are reused).
TEST(Cli, ProcessesOfARunByPidAndParent) {
  namespace fmt = lowalloc::trace_format;
  const std::string dir = ::testing::TempDir() + "lowalloc_processes_" + std::to_string(::getpid());
  ASSERT_EQ(::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()), 0);
  const std::string first = dir + "/r.trace";
  // name suffix, pid, parent, flags, allocations (each file's own count names it below)
  struct file {
    std::string suffix;
    std::uint64_t pid, ppid, flags;
    std::string exe;
    std::uint64_t allocations;
  };
  const std::vector<file> files = {
      {"", 100, 1, 0, "/bin/sh", 1},                                 // the run's first process
      {".100", 100, 50, fmt::process_flag_fork_child, "/bin/x", 6},  // another run's, pid reused
      {".100.1", 100, 1, fmt::process_flag_exec, "/bin/make", 5},    // the first after an exec
      {".101", 101, 100, fmt::process_flag_fork_child, "/bin/make", 2},    // its child
      {".101.1", 101, 100, fmt::process_flag_exec, "/usr/bin/cc", 3},      // which exec'd
      {".102", 102, 101, fmt::process_flag_fork_child, "/usr/bin/cc", 8},  // a grandchild
      {".103", 103, 60, fmt::process_flag_fork_child, "/bin/x", 7},        // another run's
  };
  for (const file& f : files) {
    trace_writer w;
    w.block(1, 0).process(f.pid, f.ppid, f.flags, f.exe, {"x"}).stack(1, {0x1000});
    for (std::uint64_t i = 0; i < f.allocations; ++i) w.alloc(1 + i, 16, 0x100 + 16 * i, 1);
    w.end(100).end_block();
    w.save(first + f.suffix);
  }
  {  // Not a process's file: a number no pid has.
    trace_writer w;
    w.block(1, 0).process(104, 100, fmt::process_flag_fork_child, "/bin/x", {"x"}).end(1);
    w.end_block();
    w.save(first + ".123456789012345678901234567890");
  }
  cli_result r = run_report({"--processes", first, "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = parse_json(r.out);
  std::vector<double> counts;
  for (const json& p : doc["processes"].items) counts.push_back(p["allocations"].n);
  EXPECT_EQ(counts, (std::vector<double>{8, 5, 3, 2, 1})) << r.out;
  // By program: each one's processes added up, most allocating first.
  ASSERT_EQ(doc["programs"].items.size(), 3u) << r.out;
  const std::vector<std::pair<std::string, double>> programs = {
      {"/usr/bin/cc", 11}, {"/bin/make", 7}, {"/bin/sh", 1}};
  for (std::size_t i = 0; i < programs.size(); ++i) {
    EXPECT_EQ(doc["programs"][i]["exe"].s, programs[i].first);
    EXPECT_EQ(doc["programs"][i]["allocations"].n, programs[i].second);
    EXPECT_EQ(doc["programs"][i]["bytes_allocated"].n, 16 * programs[i].second);
    EXPECT_EQ(doc["programs"][i]["processes"].n, i < 2 ? 2 : 1);
  }
  EXPECT_EQ(doc["programs"][0]["largest_peak_bytes"].n, 16 * 8) << "the larger of 3 and 8 blocks";
  ASSERT_EQ(doc["left_out"].items.size(), 2u) << r.out;
  EXPECT_EQ(doc["left_out"][0].s, first + ".100");
  EXPECT_EQ(doc["left_out"][1].s, first + ".103");
  EXPECT_EQ(doc["totals"]["allocations"].n, 19);
  EXPECT_EQ(doc["totals"]["leaked_allocations"].n, 19);

  r = run_report({"--processes", first, "--sort", "leaked", "--top", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "lowalloc report: 5 processes of the run traced into " + first))
      << r.out;
  EXPECT_TRUE(contains(r.out, "top 2 of 5 processes by leaked\n")) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "programs by leaked (peak: the largest of one process)\n\n"
                       "processes  allocations  allocated  temporary  leaked   peak  "
                       "program\n"
                       "        2           11      176 B          0      11  128 B  "
                       "/usr/bin/cc\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out,
                       "left out: 2 files of the same name whose process does not descend "
                       "from process 100 (another run's) or is not the pid of its name (a "
                       "copy): " +
                           first + ".100, " + first +
                           ".103; name the files to list them "
                           "all\n"))
      << r.out;
  ::system(("rm -rf '" + dir + "'").c_str());
}

TEST(Cli, UnreadableAndDamagedFiles) {
  cli_result r = run_report({"/nonexistent/x.trace"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "lowalloc report: /nonexistent/x.trace: cannot open"));

  const std::string junk = temp_file("junk", "hello, world");
  r = run_report({junk});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, junk + ": not a lowalloc trace file"));
  EXPECT_TRUE(r.out.empty());

  // Damage after a good block: the report of what was read, then the warning, status 2.
  std::string bytes = good_trace(false);
  const std::size_t second = bytes.size();
  trace_writer w;
  w.block(1, 9000).raw("\x7f").end_block();
  bytes += w.file().substr(16);
  const std::string damaged = temp_file("damaged", bytes);
  r = run_report({damaged});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.out, "1,500"));
  EXPECT_TRUE(contains(r.err, "unknown record tag 0x7f"));
  EXPECT_TRUE(contains(r.err, "at byte " + std::to_string(second)));

  // No END, otherwise intact: not an error.
  const std::string killed = temp_file("killed", good_trace(false));
  r = run_report({killed});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.out,
                       "the process did not finish (killed, crashed, or ended by the "
                       "exit_group system call)"));
  for (const std::string& p : {junk, damaged, killed}) ::unlink(p.c_str());
}

TEST(Report, TheCommandLinesControlCharactersDoNotReachTheTerminal) {
  // A trace's command line is the traced program's: an escape sequence there would act on the
  // terminal the report is read on.
  analysis a = sample();
  a.process.argv = {"app", "\x1b]0;title\x07\x1b[2J", "tab\there"};
  a.process.exe = "/usr/bin/\x1b[31mapp";
  const std::string t = text_of(a);
  EXPECT_EQ(t.find('\x1b'), std::string::npos);
  EXPECT_TRUE(contains(t, "app ?]0;title??[2J tab?here\n"));
  EXPECT_TRUE(contains(t, "executable /usr/bin/?[31mapp\n"));
}

}  // namespace
