// The table of report formats: the command line parses --format and prints its help from it.
#include "report/report.hpp"

namespace lowalloc::report {

namespace {

constexpr std::size_t all = std::numeric_limits<std::size_t>::max();

}  // namespace

const std::vector<format>& formats() {
  static const std::vector<format> table = {
      {"text", "a summary and the top sites (default)", 10, write_text},
      {"json", "everything, for programs", all, write_json},
      {"folded", "one line per site for flamegraph.pl, inferno or speedscope", all, write_folded},
      {"pprof", "gzip-compressed profile.proto for go tool pprof (binary: use -o)", all,
       write_pprof, true},
      {"speedscope", "JSON for speedscope, a profile per metric", all, write_speedscope},
      {"html", "one offline page: flame graph, charts, sites (-o FILE)", all, write_html, false,
       needs_objects | needs_timeline | needs_threads},
  };
  return table;
}

const format* find_format(std::string_view name) {
  for (const format& f : formats())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace lowalloc::report
