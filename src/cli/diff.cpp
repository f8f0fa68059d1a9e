// `lowalloc diff BEFORE AFTER [--format text|json] [--top N] [--all] [--no-symbols]
// [--debug-path DIR]`: the two traces' summaries side by side and each site's change
// (report/diff.hpp). After `--` each argument is a trace, even one that starts with '-'. Exit
// status: 0, 2 a usage error, a trace that cannot be read or is damaged (the diff is printed
// first if both were read) or an output that cannot be written.
#include "cli/commands.hpp"
#include "cli/options.hpp"

#include "analyze/compare.hpp"
#include "cli/notes.hpp"
#include "cli/output_file.hpp"
#include "cli/traces.hpp"
#include "report/diff.hpp"

#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lowalloc::cli {

namespace {

constexpr const char* usage =
    "usage: lowalloc diff BEFORE AFTER [options]\n"
    "\n"
    "Compares two traces written by `lowalloc run`, of one program before and after a change:\n"
    "the summaries side by side, then the sites whose counts changed, the largest change\n"
    "first. Sites are matched across two builds by their functions, files and lines (lines\n"
    "counted from the start of their function when code above them moved).\n"
    "\n"
    "options:\n"
    "  --format text|json  text (default) or one JSON object (docs/tracer.md#diff)\n"
    "  --top N             show the N largest changes (default: text 10, JSON all;\n"
    "                      0: none, only the summary)\n"
    "  --all               JSON: list the unchanged sites too\n"
    "  --no-symbols        addresses and modules only (no debug info is read)\n"
    "  --debug-path DIR    look in DIR for a copy of a binary that changed or was\n"
    "                      deleted since the trace was written (by its name, or its\n"
    "                      debug file DIR/.build-id/xx/rest.debug) and for the debug\n"
    "                      files of stripped binaries; repeatable\n"
    "  --                  end of the options: the two arguments after it are the\n"
    "                      traces, even ones whose names start with -\n"
    "  -h, --help          this help\n";

int usage_error(const std::string& message) {
  std::cerr << "lowalloc diff: " << message << "\n\n" << usage;
  return 2;
}

}  // namespace

int diff_main(int argc, char** argv) {
  std::vector<std::string> files;
  bool json = false;
  bool top_given = false;
  report::diff_options o;
  analyze::options opts;
  std::string path_error;  // an empty --debug-path
  argument_kinds kinds;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    std::string value;
    const auto take = [&](std::string_view name) {
      std::string_view found;
      if (!option_value(argc, argv, i, name, found)) return false;
      value = std::string(found);
      return true;
    };
    const argument_kinds::kind kind = kinds.of(arg);
    if (kind == argument_kinds::end_of_options) continue;
    if (kind == argument_kinds::operand) {  // a trace
      files.emplace_back(arg);
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::cout << usage;
      return 0;
    }
    if (take("--format")) {
      if (value != "text" && value != "json")
        return usage_error("unknown format '" + value + "' (text, json)");
      json = value == "json";
    } else if (take("--top")) {
      std::uint64_t n = 0;
      const std::string error =
          read_count("--top", value, std::numeric_limits<std::size_t>::max(), n);
      if (!error.empty()) return usage_error(error);
      o.top = static_cast<std::size_t>(n);
      top_given = true;
    } else if (arg == "--all") {
      o.unchanged = true;
    } else if (debug_path_option(argc, argv, i, opts.debug_paths, path_error)) {
      if (!path_error.empty()) return usage_error(path_error);
    } else if (arg == "--no-symbols") {
      opts.symbolize = false;
    } else if (arg == "--format" || arg == "--top" || arg == "--debug-path") {
      return usage_error(std::string(arg) + " needs a value");
    } else {
      return usage_error("unknown option '" + std::string(arg) + "'");
    }
  }
  if (files.size() != 2)
    return usage_error(files.size() < 2 ? "two trace files are needed, before and after"
                                        : "two trace files only");
  if (!top_given && !json) o.top = 10;
  o.before_name = files[0];
  o.after_name = files[1];

  std::vector<read_trace> traces = read_traces(files, opts, true);
  bool unreadable = false;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    if (traces[i].error.empty()) continue;
    std::cerr << "lowalloc diff: " << files[i] << ": " << traces[i].error << '\n';
    unreadable = true;
  }
  if (unreadable) return 2;
  for (const read_trace& t : traces) print_module_notes("diff", t.a);
  // The text says it too, under the summary; JSON has "complete": stderr is where a script's
  // reader sees it.
  for (std::size_t i = 0; i < traces.size(); ++i)
    if (const std::string missing = incomplete_text(traces[i].a); !missing.empty())
      std::cerr << "lowalloc diff: " << files[i]
                << ": warning: the trace is incomplete: " << missing << '\n';
  const analyze::comparison c = analyze::compare_sites(traces[0].a, std::move(traces[0].places),
                                                       traces[1].a, std::move(traces[1].places));
  if (const std::string other = different_programs_text(traces[0].a, traces[1].a, c);
      !other.empty())
    std::cerr << "lowalloc diff: " << other << '\n';
  if (json)
    report::write_diff_json(std::cout, traces[0].a, traces[1].a, c, o);
  else
    report::write_diff_text(std::cout, traces[0].a, traces[1].a, c, o);
  int status = flush_stdout("diff", "the diff") ? 0 : 2;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    if (traces[i].a.truncation.empty()) continue;
    std::cerr << "lowalloc diff: " << files[i]
              << ": warning: the trace is damaged, read up to: " << traces[i].a.truncation << '\n';
    status = 2;
  }
  return status;
}

}  // namespace lowalloc::cli
