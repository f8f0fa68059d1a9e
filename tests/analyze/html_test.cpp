// The HTML report's writer (src/report/html.cpp) and the analyses it runs (analyze/timeline.hpp,
// analyze/thread_stacks.hpp): the page's data element is decoded here (base64, gunzip) and its
// JSON checked against the analysis of a known trace.
#include "analyze/analysis.hpp"
#include "analyze/thread_stacks.hpp"
#include "analyze/timeline.hpp"
#include "cli/commands.hpp"
#include "report/common.hpp"
#include "report/report.hpp"
#include "support/cli.hpp"
#include "support/json.hpp"
#include "support/trace_writer.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using lowalloc::analyze::analysis;
using lowalloc::report::report_options;
using lowalloc_test::cli_result;
using lowalloc_test::gunzip;
using lowalloc_test::json;
using lowalloc_test::parse_json;
using lowalloc_test::run_report;
using lowalloc_test::trace_writer;

// --- decoding the page --------------------------------------------------------------------------

std::string unbase64(const std::string& in) {
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (char c : in) {
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    if (c >= '0' && c <= '9') v = c - '0' + 52;
    if (c == '+') v = 62;
    if (c == '/') v = 63;
    if (c == '=') break;
    EXPECT_GE(v, 0) << "not base64: " << c;
    bits = bits << 6 | static_cast<std::uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xff);
    }
  }
  return out;
}

const std::string element_start = "<script id=\"lowalloc-data\" type=\"application/octet-stream\" ";

// The data element's encoding and its contents.
struct data_element {
  std::string encoding;
  std::string text;
};

data_element element_of(const std::string& page) {
  const std::size_t at = page.find(element_start);
  if (at == std::string::npos) return {};
  const std::size_t enc = page.find("data-encoding=\"", at) + 15;
  const std::size_t enc_end = page.find('"', enc);
  const std::size_t end = page.find("</script>", enc_end);
  return {page.substr(enc, enc_end - enc), page.substr(enc_end + 2, end - enc_end - 2)};
}

json decoded(const std::string& page) {
  const data_element e = element_of(page);
  EXPECT_EQ(e.encoding, "gzip-base64");
  return parse_json(gunzip(unbase64(e.text)));
}

// --- the known trace ----------------------------------------------------------------------------

// Two threads (tids 101, 202) over ticks 0..60000, a tick 2 ns (TIME records). Stacks, innermost
// first: A {0x1000, 0x2000, 0x3000}, B {0x1100, 0x2000, 0x3000}, C {0x4000} and D {0x5000,
// 0x2000, 0x3000}, D once with 1 byte (under 0.01 % of every metric: pruned). Thread 1 builds up
// 4000 live blocks of A then frees them, allocates and frees B pairs (temporary); thread 2
// allocates and frees from A, then leaks 10 blocks of C before thread 1's peak.
std::string known_trace(bool two_threads = true) {
  trace_writer w;
  w.block(1, 0, 0).process(7, 1, 0, "/bin/app", {"app", "--in", "x"}).thread(101);
  w.stack(1, {0x1000, 0x2000, 0x3000}).stack(2, {0x1100, 0x2000, 0x3000});
  w.stack(4, {0x5000, 0x2000, 0x3000});
  std::uint64_t t = 1;
  for (std::uint64_t i = 0; i < 4000; ++i, t += 2) w.alloc(t, 64, 0x100000 + 64 * i, 1);
  for (std::uint64_t i = 0; i < 4000; ++i, t += 2) w.free(t, 0x100000 + 64 * i);
  w.end_block();
  w.block(1, t, 2 * t);
  for (std::uint64_t i = 0; i < 6000; ++i, t += 4)
    w.alloc(t, 24, 0x900000, 2).free(t + 1, 0x900000);
  w.alloc(t, 1, 0xa00000, 4).alloc(t + 1, 8, 0xa00010, 2).free(t + 2, 0xa00000);
  t += 3;
  w.end_block();
  const std::uint64_t end = 60000;
  if (two_threads) {
    w.block(2, 100, 200).thread(202).stack(1, {0x1000, 0x2000, 0x3000}).stack(3, {0x4000});
    std::uint64_t u = 101;
    for (std::uint64_t i = 0; i < 2000; ++i, u += 3)
      w.alloc(u, 32, 0x500000, 1).free(u + 1, 0x500000);
    for (std::uint64_t i = 0; i < 10; ++i, u += 3) w.alloc(u, 1000, 0x600000 + 1024 * i, 3);
    w.end_block();
  }
  w.block(1, end, 2 * end).end(end).end_block();
  return w.file();
}

analysis analyzed(const std::string& trace,
                  std::vector<lowalloc::analyze::event_sink*> sinks = {}) {
  lowalloc::analyze::options o;
  o.symbolize = false;
  return lowalloc::analyze::analyze_buffer(trace.data(), trace.size(), o, sinks);
}

// The analysis of the known trace with the HTML report's analyses, and its page.
struct known_page {
  lowalloc::analyze::timeline timeline;
  lowalloc::analyze::thread_stacks threads;
  analysis a;
  std::string page;
  json data;

  explicit known_page(bool two_threads = true) {
    a = analyzed(known_trace(two_threads), {&timeline, &threads});
    threads.finish();
    report_options ro;
    ro.trace_name = "/tmp/known.trace";
    ro.timeline = &timeline;
    ro.threads = &threads;
    std::ostringstream out;
    lowalloc::report::write_html(out, a, ro);
    page = out.str();
    data = decoded(page);
  }
};

std::vector<double> numbers(const json& array) {
  std::vector<double> v;
  for (const json& n : array.items) v.push_back(n.n);
  return v;
}

// The node whose frame's function is `name` (the first), or -1.
int node_named(const json& d, const std::string& name) {
  const json& frames = d["frames"];
  const json& tree = d["tree"];
  for (std::size_t i = 0; i < tree["frame"].items.size(); ++i) {
    const json& f = frames[static_cast<std::size_t>(tree["frame"][i].n)];
    if (d["strings"][static_cast<std::size_t>(f[0].n)].s == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<double> totals_of(const json& d) {
  const json& t = d["totals"];
  return {t["allocations"].n, t["bytes"].n, t["temporary"].n, t["leaked_bytes"].n,
          t["peak_bytes"].n};
}

// --- the tests ----------------------------------------------------------------------------------

TEST(HtmlReport, PageIsSelfContainedWithTheDataElement) {
  const known_page k;
  for (const char* marker : {"/*LOWALLOC_CSS*/", "/*LOWALLOC_JS*/", "<!--LOWALLOC_DATA-->"})
    EXPECT_EQ(k.page.find(marker), std::string::npos) << marker;
  EXPECT_EQ(k.page.find(element_start), k.page.rfind(element_start));
  EXPECT_NE(k.page.find(element_start), std::string::npos);
  EXPECT_EQ(k.page.find("http://"), std::string::npos);
  EXPECT_EQ(k.page.find("https://"), std::string::npos);
  EXPECT_EQ(k.page.rfind("<!DOCTYPE html>", 0), 0u);
  const json& d = k.data;
  EXPECT_EQ(d["version"].n, 1);
  EXPECT_EQ(d["title"].s, "lowalloc report: known.trace");
  EXPECT_EQ(d["command"].s, "app --in x");
  EXPECT_EQ(d["strings"][0u].s, "");
  EXPECT_EQ(d["totals"]["allocations"].n, 4000 + 6000 + 2 + 2000 + 10);
  EXPECT_EQ(d["totals"]["threads"].n, 2);
  EXPECT_EQ(d["process"]["pid"].n, 7);
  EXPECT_EQ(d["process"]["exe"].s, "/bin/app");
  // The summary is the text report's with --top 0.
  report_options top0;
  top0.trace_name = "/tmp/known.trace";
  top0.top = 0;
  std::ostringstream text;
  lowalloc::report::write_text(text, k.a, top0);
  EXPECT_EQ(d["summary_text"].s, text.str());
  // The overall histogram: 24, 64, 1, 8, 32 and 1000 bytes.
  ASSERT_EQ(d["sizes"].items.size(), 6u);
  EXPECT_EQ(d["sizes"][0u][0u].s, "1");
  EXPECT_EQ(d["sizes"][5u][0u].s, "513..1024");
  EXPECT_EQ(d["sizes"][5u][1u].n, 10);
}

TEST(HtmlReport, EmptyAnalysis) {
  // No stack, no event, no analysis of the stream: a page all the same, with the root alone.
  lowalloc::analyze::timeline tl;
  report_options ro;
  ro.timeline = &tl;
  std::ostringstream out;
  lowalloc::report::write_html(out, analysis{}, ro);
  const json d = decoded(out.str());
  EXPECT_EQ(numbers(d["tree"]["parent"]), std::vector<double>{0});
  EXPECT_EQ(numbers(d["tree"]["self"]), std::vector<double>(5, 0));
  EXPECT_EQ(d["frames"].items.size(), 1u);
  EXPECT_TRUE(d["timeline"]["t"].items.empty());
  EXPECT_EQ(d["timeline"]["peak"]["bytes"].n, 0);
  EXPECT_TRUE(d["sites"].items.empty());
  EXPECT_TRUE(d["threads"].items.empty());
  EXPECT_EQ(d["title"].s, "lowalloc report");
}

// Functions the recorder could not hook are a warning among the page's notes, and in its summary.
TEST(HtmlReport, ShadowedFunctionsAreAWarning) {
  lowalloc::analyze::timeline tl;
  report_options ro;
  ro.timeline = &tl;
  analysis a;
  a.shadowed.push_back({{"malloc"}, "/opt/app/server"});
  std::ostringstream out;
  lowalloc::report::write_html(out, a, ro);
  const json d = decoded(out.str());
  ASSERT_EQ(d["notes"].items.size(), 1u);
  EXPECT_EQ(d["notes"][0u].s.rfind("warning: the program's calls to malloc were not recorded: "
                                   "/opt/app/server defines it, and the dynamic loader binds the "
                                   "calls to that definition, which the recorder does not see",
                                   0),
            0u)
      << d["notes"][0u].s;
  EXPECT_NE(d["summary_text"].s.find("\nthe program's calls to malloc were not recorded"),
            std::string::npos);
}

TEST(HtmlReport, TreeSelfValuesSumToTheTotalsAndParentsComeFirst) {
  const known_page k;
  const json& d = k.data;
  const json& tree = d["tree"];
  const std::size_t n = tree["parent"].items.size();
  ASSERT_EQ(tree["frame"].items.size(), n);
  ASSERT_EQ(tree["self"].items.size(), 5 * n);
  EXPECT_EQ(tree["parent"][0u].n, 0);
  EXPECT_EQ(tree["frame"][0u].n, 0);
  for (std::size_t i = 1; i < n; ++i) EXPECT_LT(tree["parent"][i].n, static_cast<double>(i));
  std::vector<double> sum(5, 0);
  for (std::size_t i = 0; i < 5 * n; ++i) sum[i % 5] += tree["self"][i].n;
  EXPECT_EQ(sum, totals_of(d));
  // root, 0x3000, 0x2000, 0x1000, 0x1100, 0x4000 (0x5000 pruned): outermost frame first.
  EXPECT_EQ(n, 6u);
  const int outer = node_named(d, "0x3000");
  const int mid = node_named(d, "0x2000");
  const int inner = node_named(d, "0x1000");
  ASSERT_GT(outer, 0);
  EXPECT_EQ(tree["parent"][static_cast<std::size_t>(outer)].n, 0);
  EXPECT_EQ(tree["parent"][static_cast<std::size_t>(mid)].n, outer);
  EXPECT_EQ(tree["parent"][static_cast<std::size_t>(inner)].n, mid);
  // Both threads' allocations of stack A end at one node.
  EXPECT_EQ(tree["self"][5 * static_cast<std::size_t>(inner)].n, 6000);
  EXPECT_EQ(node_named(d, "0x5000"), -1);
  // The frames' fields: [function, file, line, module, flags].
  EXPECT_EQ(d["frames"][0u].items.size(), 5u);
  EXPECT_EQ(d["strings"][static_cast<std::size_t>(d["frames"][0u][0u].n)].s, "all");
  EXPECT_EQ(d["frames"].items.size(), 6u);
}

TEST(HtmlReport, PrunedNodesAreAddedToTheirCaller) {
  const known_page k;
  const json& d = k.data;
  const json& pruned = d["pruned"];
  EXPECT_EQ(pruned["share"].n, 0.0001);
  EXPECT_EQ(pruned["nodes"].n, 1);
  EXPECT_EQ(pruned["nodes_before"].n, 7);
  // D's one allocation of 1 byte, freed after B's next one: not temporary.
  EXPECT_EQ(numbers(pruned["self"]), (std::vector<double>{1, 1, 0, 0, 0}));
  const std::size_t mid = static_cast<std::size_t>(node_named(d, "0x2000"));
  EXPECT_EQ(d["tree"]["self"][5 * mid].n, 1);
  EXPECT_EQ(d["tree"]["self"][5 * mid + 1].n, 1);
}

TEST(HtmlReport, FrameFlagsSayAllocatorAndStartFrames) {
  lowalloc::analyze::timeline tl;
  analysis a = analyzed(known_trace(false), {&tl});
  // Stack A's innermost frame marked as allocator plumbing and its outermost as a C runtime
  // start frame, as folding does for symbolized stacks.
  for (lowalloc::analyze::stack& s : a.stacks)
    if (s.frame_count == 3 && s.totals.allocations == 4000) {
      s.allocator_frames = 1;
      s.start_frames = 1;
    }
  const json d = parse_json(lowalloc::report::html_data_json(a, report_options{}));
  const auto flags = [&](const std::string& name) {
    const int node = node_named(d, name);
    EXPECT_GE(node, 0) << name;
    return d["frames"]
            [static_cast<std::size_t>(d["tree"]["frame"][static_cast<std::size_t>(node)].n)][4u]
                .n;
  };
  EXPECT_EQ(flags("0x1000"), 1);
  EXPECT_EQ(flags("0x3000"), 4);
  EXPECT_EQ(flags("0x2000"), 0);
  EXPECT_EQ(flags("0x1100"), 0);
}

TEST(HtmlReport, TimelineHoldsThePeakAndEveryAllocation) {
  const known_page k;
  const json& d = k.data;
  const json& tl = d["timeline"];
  const std::size_t n = tl["t"].items.size();
  EXPECT_GT(n, 1000u);
  EXPECT_LE(n, 2000u);
  for (const char* column : {"live", "live_max", "allocs", "allocs_per_s"})
    EXPECT_EQ(tl[column].items.size(), n) << column;
  const std::vector<double> live_max = numbers(tl["live_max"]);
  EXPECT_EQ(*std::max_element(live_max.begin(), live_max.end()), d["totals"]["peak_bytes"].n);
  EXPECT_EQ(tl["peak"]["bytes"].n, d["totals"]["peak_bytes"].n);
  EXPECT_EQ(d["totals"]["peak_bytes"].n, 4000 * 64 + 10 * 1000);
  double allocations = 0;
  for (const json& c : tl["allocs"].items) allocations += c.n;
  EXPECT_EQ(allocations, d["totals"]["allocations"].n);
  // Time goes on; the end is the last event (tick 40003, the first at tick 1), a tick 2 ns.
  for (std::size_t i = 1; i < n; ++i) EXPECT_LT(tl["t"][i - 1].n, tl["t"][i].n);
  EXPECT_NEAR(tl["t"][n - 1].n, (40004 - 1) * 2e-9, 1e-12);
  // The peak: the 4000th block of A, at tick 7999, with thread 2's leaks (by tick 6128) live.
  EXPECT_NEAR(tl["peak"]["t"].n, (7999 - 1) * 2e-9, 1e-12);
  // The leaked blocks are live at the end.
  EXPECT_EQ(tl["live"][n - 1].n, d["totals"]["leaked_bytes"].n);
}

TEST(HtmlReport, TimelineMergesIntervalsWithoutLosingThePeak) {
  // At most 4 intervals over ticks 0..99: widths double until they fit, sums and maximum exact.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000});
  std::uint64_t max_live = 0;
  std::uint64_t live = 0;
  for (std::uint64_t t = 0; t < 100; t += 2) {
    const std::uint64_t size = 10 + (t * 7919) % 97;
    w.alloc(t, size, 0x100, 1).free(t + 1, 0x100);
    max_live = std::max(max_live, live + size);
  }
  w.end_block();
  lowalloc::analyze::timeline tl(4);
  const analysis a = analyzed(w.file(), {&tl});
  const std::vector<lowalloc::analyze::timeline::point> points = tl.points();
  ASSERT_EQ(points.size(), 4u);  // 100 ticks: 4 intervals of 32
  std::uint64_t allocations = 0;
  std::uint64_t most = 0;
  for (const auto& p : points) {
    allocations += p.allocations;
    most = std::max(most, p.max_live_bytes);
    EXPECT_EQ(p.live_bytes, 0u);
  }
  EXPECT_EQ(allocations, 50u);
  EXPECT_EQ(points[0].allocations, 16u);
  EXPECT_EQ(most, max_live);
  EXPECT_EQ(tl.peak_bytes(), a.totals.peak_bytes);
}

TEST(HtmlReport, ThreadsSumToTheTotals) {
  const known_page k;
  const json& d = k.data;
  const json& threads = d["threads"];
  ASSERT_EQ(threads.items.size(), 2u);
  EXPECT_EQ(threads[0u]["tid"].n, 101);
  EXPECT_EQ(threads[1u]["tid"].n, 202);
  EXPECT_EQ(threads[0u]["allocations"].n, 4000 + 6000 + 2);
  EXPECT_EQ(threads[1u]["allocations"].n, 2010);
  EXPECT_EQ(threads[1u]["bytes"].n, 2000 * 32 + 10 * 1000);
  EXPECT_EQ(d["thread_metrics"].items.size(), 5u);
  std::vector<double> sum(5, 0);
  const std::size_t nodes = d["tree"]["parent"].items.size();
  for (const json& t : threads.items) {
    const json& self = t["self"];
    ASSERT_EQ(self["values"].items.size(), 5 * self["nodes"].items.size());
    for (std::size_t i = 0; i < self["values"].items.size(); ++i) sum[i % 5] += self["values"][i].n;
    for (const json& node : self["nodes"].items) EXPECT_LT(node.n, static_cast<double>(nodes));
  }
  EXPECT_EQ(sum, totals_of(d));
  // Thread 2's leaks at C's node, live at the peak too.
  const json& t2 = threads[1u]["self"];
  const double c_node = node_named(d, "0x4000");
  bool found = false;
  for (std::size_t i = 0; i < t2["nodes"].items.size(); ++i) {
    if (t2["nodes"][i].n != c_node) continue;
    found = true;
    EXPECT_EQ(t2["values"][5 * i + 3].n, 10000);
  }
  EXPECT_TRUE(found);
  double t2_peak = 0;
  for (std::size_t i = 0; i < t2["nodes"].items.size(); ++i) t2_peak += t2["values"][5 * i + 4].n;
  EXPECT_EQ(t2_peak, 10000);

  const known_page one(false);
  EXPECT_EQ(one.data["threads"].kind, json::array);
  EXPECT_TRUE(one.data["threads"].items.empty());
}

TEST(HtmlReport, AThreadsForgottenBlockIsNotLeaked) {
  // Thread 2 allocates 0x700 in two trace blocks without a free in between: the first block's
  // free was not recorded (forgotten), it is neither leaked nor live any more, for the thread as
  // in total.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 10, 0x100, 1).free(2, 0x100).end_block();
  w.block(2, 0).stack(1, {0x2000}).alloc(3, 100, 0x700, 1).end_block();
  w.block(2, 4).alloc(4, 100, 0x700, 1).end_block();
  lowalloc::analyze::thread_stacks ts;
  const analysis a = analyzed(w.file(), {&ts});
  ts.finish();
  ASSERT_EQ(a.totals.leaked_bytes, 100u);
  report_options ro;
  ro.threads = &ts;
  const json d = parse_json(lowalloc::report::html_data_json(a, ro));
  ASSERT_EQ(d["threads"].items.size(), 2u);
  std::vector<double> sum(5, 0);
  for (const json& t : d["threads"].items)
    for (std::size_t i = 0; i < t["self"]["values"].items.size(); ++i)
      sum[i % 5] += t["self"]["values"][i].n;
  EXPECT_EQ(sum, totals_of(d));
  EXPECT_EQ(sum[3], 100);
}

TEST(HtmlReport, SitesAreTheTextReportsWithTheirAdvice) {
  lowalloc::analyze::timeline tl;
  const analysis a = analyzed(known_trace(), {&tl});
  // The site of B (6001 allocations) first, as the text report ranks it.
  report_options top1;
  top1.top = 1;
  std::ostringstream text;
  lowalloc::report::write_text(text, a, top1);
  const std::vector<const lowalloc::analyze::site*> ranked =
      lowalloc::report::ranked_sites(a, lowalloc::report::sort_key::allocations, 1);
  const std::size_t first = static_cast<std::size_t>(ranked[0] - a.sites.data());
  std::vector<lowalloc::analyze::advice_item> advice(2);
  advice[0].kind = "none";
  advice[0].site = first;
  advice[1].kind = "reserve";
  advice[1].confidence = "high";
  advice[1].site = first;
  advice[1].allocations = 6001;
  advice[1].chosen.suggestion = "reserve(6001) before the loop";
  advice[1].chosen.allocations_after = 1;
  report_options ro;
  ro.advice = &advice;
  const json d = parse_json(lowalloc::report::html_data_json(a, ro));
  const json& s = d["sites"][0u];
  EXPECT_EQ(s["allocations"].n, 6001);
  const std::string function = d["strings"][static_cast<std::size_t>(s["function"].n)].s;
  EXPECT_NE(text.str().find("#1  6,001 allocations"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("    at " + function + "\n"), std::string::npos) << function;
  EXPECT_EQ(s["id"].n, static_cast<double>(first));
  EXPECT_EQ(s["advice"].s,
            "reserve(6001) before the loop (reserve, high confidence): 6,001 -> 1 allocation");
  EXPECT_EQ(s["op"].s, "");
  EXPECT_EQ(s["bytes"].n, 6000 * 24 + 8);
  EXPECT_EQ(s["temporary"].n, 6000);
  ASSERT_EQ(s["sizes"].items.size(), 2u);
  EXPECT_EQ(s["sizes"][0u][0u].s, "8");
  EXPECT_EQ(s["sizes"][1u][1u].n, 6000);
  ASSERT_EQ(s["nodes"].items.size(), 1u);
  EXPECT_EQ(s["nodes"][0u].n, node_named(d, "0x1100"));
  EXPECT_EQ(d["sites"].items.size(), a.sites.size());  // 4 sites, under the 500 listed
  EXPECT_EQ(d["sites"][1u]["advice"].s, "");
}

TEST(HtmlReport, PlainJsonForDebugging) {
  lowalloc::analyze::timeline tl;
  analysis a = analyzed(known_trace(false), {&tl});
  // A function name with '<' in it: escaped, so that no "</script>" can end the element.
  auto table = std::make_shared<lowalloc::analyze::frame_table>(*a.frames);
  for (lowalloc::analyze::frame& f : table->frames)
    if (f.address == 0x1000) f.function = "std::vector<int>::push_back</script>";
  a.frames = table;
  report_options ro;
  ro.timeline = &tl;
  ASSERT_EQ(::setenv("LOWALLOC_HTML_PLAIN", "1", 1), 0);
  std::ostringstream out;
  lowalloc::report::write_html(out, a, ro);
  ::unsetenv("LOWALLOC_HTML_PLAIN");
  const data_element e = element_of(out.str());
  EXPECT_EQ(e.encoding, "json");
  EXPECT_EQ(e.text.find('<'), std::string::npos);
  const json d = parse_json(e.text);
  EXPECT_NE(node_named(d, "std::vector\\u003cint>::push_back\\u003c/script>"), -1);
  std::string expected = lowalloc::report::html_data_json(a, ro);
  for (std::size_t at = 0; (at = expected.find('<', at)) != std::string::npos;)
    expected.replace(at, 1, "\\u003c");
  EXPECT_EQ(e.text, expected);
  // Without the variable: compressed, the same JSON.
  std::ostringstream packed;
  lowalloc::report::write_html(packed, a, ro);
  EXPECT_EQ(gunzip(unbase64(element_of(packed.str()).text)),
            lowalloc::report::html_data_json(a, ro));
}

// `lowalloc report --format html` runs the objects, advice, timeline and threads analyses.
TEST(HtmlReport, CommandLine) {
  const std::string path = ::testing::TempDir() + "/lowalloc_html_" + std::to_string(::getpid());
  trace_writer w;
  w.file() = known_trace();
  w.save(path);
  const cli_result r = run_report({path, "--format", "html", "--no-symbols"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");  // not a terminal: no hint
  const json d = decoded(r.out);
  EXPECT_EQ(d["totals"]["allocations"].n, 12012);
  EXPECT_EQ(d["threads"].items.size(), 2u);
  EXPECT_EQ(d["timeline"]["peak"]["bytes"].n, d["totals"]["peak_bytes"].n);
  EXPECT_EQ(d["sites"].items.size(), 4u);
  // To a terminal: the page all the same, and a hint.
  const lowalloc_test::pseudo_terminal pty;
  ASSERT_TRUE(pty.ok());
  const cli_result t = run_report({path, "--format=html", "--no-symbols"}, pty.fd());
  EXPECT_EQ(t.status, 0);
  EXPECT_EQ(t.out, r.out);
  EXPECT_EQ(t.err,
            "lowalloc report: the HTML report is a page: write it to a file: -o report.html\n");
  // --help lists the format.
  EXPECT_NE(run_report({"--help"}).out.find("\n                       html  "), std::string::npos);
  ::unlink(path.c_str());
}

}  // namespace
