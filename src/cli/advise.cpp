// `lowalloc advise FILE [--format text|json] [--top N] [--debug-path DIR]`: per hot call
// site, which change removes how many allocations (docs/advise.md). After `--` the argument is
// the FILE, even one that starts with '-'. Exit status: 0, 2 a usage error, a file that cannot
// be read or is damaged (then the advice on what could be read is printed first) or an output
// that cannot be written.
#include "cli/commands.hpp"
#include "cli/notes.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"

#include "analyze/advice.hpp"
#include "analyze/analysis.hpp"
#include "analyze/objects.hpp"
#include "report/advice.hpp"

#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <string_view>

namespace lowalloc::cli {

namespace {

constexpr const char* advise_usage =
    "usage: lowalloc advise FILE [options]\n"
    "\n"
    "Reads a trace written by `lowalloc run` and says, per hot call site, which lowalloc type\n"
    "(small_vector, small_string, inplace_vector) or code change (hoist and reuse) removes how\n"
    "many allocations, predicted from the objects the site made.\n"
    "\n"
    "options:\n"
    "  --format NAME      text (default) or json\n"
    "  --top N            look at the N sites with the most allocations (default 20;\n"
    "                     0: none, only the summary line)\n"
    "  --no-measure       assume the costs of an allocation and a cache line instead of\n"
    "                     measuring them (a few milliseconds), for reproducible output\n"
    "  --debug-path DIR   look in DIR for a copy of a binary that changed or was\n"
    "                     deleted since the trace was written (by its name, or its\n"
    "                     debug file DIR/.build-id/xx/rest.debug) and for the debug\n"
    "                     files of stripped binaries; repeatable\n"
    "  --                 end of the options: the argument after it is the trace,\n"
    "                     even one whose name starts with -\n"
    "  -h, --help         this help\n";

int advise_usage_error(const std::string& message) {
  std::cerr << "lowalloc advise: " << message << "\n\n" << advise_usage;
  return 2;
}

}  // namespace

int advise_main(int argc, char** argv) {
  std::string file;
  bool json = false;
  bool measure = true;
  analyze::advise_options ao;
  analyze::options opts;
  std::string path_error;  // an empty --debug-path
  argument_kinds kinds;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    const auto take_value = [&](std::string_view name) {
      return option_value(argc, argv, i, name, value);
    };
    const argument_kinds::kind kind = kinds.of(arg);
    if (kind == argument_kinds::end_of_options) continue;
    if (kind == argument_kinds::operand) {  // the trace
      if (!file.empty())
        return advise_usage_error("one trace file only ('" + file + "' and '" + std::string(arg) +
                                  "')");
      file = std::string(arg);
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::cout << advise_usage;
      return 0;
    }
    if (take_value("--format")) {
      if (value == "json")
        json = true;
      else if (value == "text")
        json = false;
      else
        return advise_usage_error("unknown format '" + std::string(value) + "' (text, json)");
    } else if (take_value("--top")) {
      std::uint64_t n = 0;
      const std::string error =
          read_count("--top", value, std::numeric_limits<std::size_t>::max(), n);
      if (!error.empty()) return advise_usage_error(error);
      ao.top_sites = static_cast<std::size_t>(n);
    } else if (debug_path_option(argc, argv, i, opts.debug_paths, path_error)) {
      if (!path_error.empty()) return advise_usage_error(path_error);
    } else if (arg == "--no-measure") {
      measure = false;
    } else if (arg == "--format" || arg == "--top" || arg == "--debug-path") {
      return advise_usage_error(std::string(arg) + " needs a value");
    } else {
      return advise_usage_error("unknown option '" + std::string(arg) + "'");
    }
  }
  if (file.empty()) return advise_usage_error("no trace file given");

  analyze::analysis a;
  analyze::object_tracker tracker;
  analyze::burst_tracker bursts;
  try {
    a = analyze::analyze_file(file, opts, {&tracker, &bursts});
    tracker.finish();
    bursts.finish();
    ao.bursts = &bursts;
  } catch (const analyze::trace_error& e) {
    std::cerr << "lowalloc advise: " << file << ": " << e.what() << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "lowalloc advise: " << file << ": out of memory\n";
    return 2;
  }
  print_module_notes("advise", a);
  if (const std::string missing = incomplete_text(a); !missing.empty())
    std::cerr << "lowalloc advise: " << file << ": warning: the trace is incomplete: " << missing
              << '\n';
  const analyze::cost_model costs =
      measure ? analyze::cost_model::measure() : analyze::cost_model{};
  const std::vector<analyze::advice_item> advice = analyze::advise(a, tracker, costs, ao);
  if (json)
    report::write_advice_json(std::cout, a, advice, costs);
  else
    report::write_advice_text(std::cout, a, advice, costs, ao.top_sites);
  const bool written = flush_stdout("advise", "the advice");
  if (!a.truncation.empty()) {
    std::cerr << "lowalloc advise: " << file
              << ": warning: the trace is damaged, read up to: " << a.truncation << '\n';
    return 2;
  }
  return written ? 0 : 2;
}

}  // namespace lowalloc::cli
