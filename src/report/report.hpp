// The report formats of `lowalloc report`, over the analysis of a trace: one file per format, a
// table of them (formats()), and the helpers they share (common.hpp). docs/tracer.md describes
// each format.
//
//   lowalloc::analyze::analysis a = lowalloc::analyze::analyze_file("app.trace");
//   lowalloc::report::report_options ro;
//   ro.sort = lowalloc::report::sort_key::bytes;
//   lowalloc::report::find_format("text")->write(std::cout, a, ro);
//
// A new format: a file with its writer, its declaration below, and a row in formats.cpp.
#ifndef LOWALLOC_SRC_REPORT_REPORT_HPP
#define LOWALLOC_SRC_REPORT_REPORT_HPP

#include "analyze/advice.hpp"
#include "analyze/analysis.hpp"
#include "analyze/objects.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace lowalloc::analyze {
class timeline;
class thread_stacks;
}  // namespace lowalloc::analyze

namespace lowalloc::report {

using analyze::analysis;

/// What sites are ranked by, and the value of a folded line.
enum class sort_key { allocations, bytes, temporary, leaked, peak };

/// What the in-use values of a format that has them (pprof's inuse_objects, inuse_space) count:
/// the blocks live at the end (leaked), or live at the moment of the peak.
enum class inuse_at { end, peak };

struct report_options {
  sort_key sort = sort_key::allocations;
  std::size_t top = std::numeric_limits<std::size_t>::max();  // sites shown; max: all
  std::string trace_name;  // the file name printed in the text report's first line
  /// The trace of the image the process started by exec, found next to this one (`lowalloc run
  /// --follow-exec` writes it); empty: none found, or the image did not end by exec.
  std::string exec_trace;
  /// Per site (analysis::sites), its objects (`report --objects`); nullptr: not shown.
  const std::vector<analyze::object_counts>* objects = nullptr;
  /// lowalloc advise's items (analyze/advice.hpp): the top one of a site is shown under it.
  const std::vector<analyze::advice_item>* advice = nullptr;
  inuse_at inuse = inuse_at::end;  // `report --inuse`
  /// Frames named "function:line" (`report --lines`; folded and speedscope): two calls of one
  /// function from different lines stay apart in a flame graph.
  bool lines = false;
  /// Live bytes and allocations over time (analyze/timeline.hpp); nullptr: none.
  const analyze::timeline* timeline = nullptr;
  /// The counters per thread and stack (analyze/thread_stacks.hpp); nullptr: none.
  const analyze::thread_stacks* threads = nullptr;
};

/// The analyses of the event stream a format needs besides the analysis (format::needs): the
/// command runs them and hands them over in report_options.
enum format_needs : unsigned {
  needs_objects = 1,   // objects and advice, as `--objects` (report_options::objects, advice)
  needs_timeline = 2,  // report_options::timeline
  needs_threads = 4,   // report_options::threads
};

/// The sites the HTML report lists (the top ones by allocations), with their advice.
constexpr std::size_t html_sites = 500;

using writer = void (*)(std::ostream& out, const analysis& a, const report_options& ro);

/// One output format of `lowalloc report --format NAME`.
struct format {
  std::string_view name;
  std::string_view help;    // for --help, one or two short lines
  std::size_t default_top;  // sites shown without --top
  writer write;
  bool binary = false;  // not text: never written to a terminal
  unsigned needs = 0;   // format_needs
};

/// Every format, the default first.
const std::vector<format>& formats();
/// The format called `name`, or nullptr.
const format* find_format(std::string_view name);

/// A summary block then the top sites with their sizes and stacks.
void write_text(std::ostream& out, const analysis& a, const report_options& ro);
/// One JSON object (schema in docs/tracer.md).
void write_json(std::ostream& out, const analysis& a, const report_options& ro);
/// One line per site: "outermost;...;innermost VALUE", VALUE the `ro.sort` metric.
void write_folded(std::ostream& out, const analysis& a, const report_options& ro);
/// pprof's profile.proto, gzip-compressed: one sample per stack with alloc_objects,
/// alloc_space, inuse_objects and inuse_space (`ro.inuse`). Throws std::runtime_error if zlib
/// fails.
void write_pprof(std::ostream& out, const analysis& a, const report_options& ro);
/// speedscope's JSON file format: one sampled profile per metric over one table of frames.
void write_speedscope(std::ostream& out, const analysis& a, const report_options& ro);
/// A self-contained page (src/report/html/) with the data as gzip+base64 JSON in it
/// (LOWALLOC_HTML_PLAIN=1 in the environment: the JSON text). `ro.top` and `ro.sort` do not
/// apply: the call tree is complete but pruned, the sites are the html_sites first by
/// allocations.
void write_html(std::ostream& out, const analysis& a, const report_options& ro);
/// The JSON write_html embeds (docs/tracer.md, "The HTML report").
std::string html_data_json(const analysis& a, const report_options& ro);

}  // namespace lowalloc::report

#endif
