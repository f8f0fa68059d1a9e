// `lowalloc report FILE [--format NAME] [-o OUT] [--top N] [--sort KEY] [--inuse end|peak]
// [--lines] [--no-symbols] [--no-fold] [--objects] [--debug-path DIR]`:
// reads a trace and prints it in one of the formats of src/report (formats()), on standard
// output or into OUT. `lowalloc report --processes FILE... [--format text|json] [-o OUT] [--top N]
// [--sort KEY]`: the processes of a run, one row each (processes.hpp). After `--` each argument
// is a FILE, even one that starts with '-'. Exit status: 0, 2 a usage error, a file that cannot
// be read or is damaged (then what could be read is printed first) or an output that cannot be
// written.
#include "cli/commands.hpp"
#include "cli/notes.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "cli/processes.hpp"

#include "analyze/advice.hpp"
#include "analyze/analysis.hpp"
#include "analyze/objects.hpp"
#include "analyze/thread_stacks.hpp"
#include "analyze/timeline.hpp"
#include "report/common.hpp"
#include "report/report.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace lowalloc::cli {

bool process_ends_after_command = false;

namespace {

// The last analysis left to the exit, reachable from here: not a leak to a leak checker. Volatile:
// a store to a variable never read would be dropped, and the analysis with it.
analyze::analysis* volatile left_to_exit = nullptr;

// The format names joined by `sep`: "text|json|folded".
std::string format_names(const char* sep) {
  std::string names;
  for (const report::format& f : report::formats()) {
    if (!names.empty()) names += sep;
    names += f.name;
  }
  return names;
}

std::string usage_text() {
  std::string text =
      "usage: lowalloc report FILE [options]\n"
      "       lowalloc report --processes FILE... [options]\n"
      "\n"
      "Reads a trace written by `lowalloc run` and prints where the program allocates.\n"
      "\n"
      "options:\n"
      "  --format NAME      one of:\n";
  // The help texts in one column, two spaces at least after the longest name.
  std::size_t column = 32;
  for (const report::format& f : report::formats())
    column = std::max<std::size_t>(column, 23 + f.name.size() + 2);
  for (const report::format& f : report::formats()) {
    std::string row = "                       " + std::string(f.name);
    row.resize(column, ' ');
    text += row + std::string(f.help) + "\n";
  }
  text +=
      "  -o, --output FILE  write the report to FILE instead of standard output (FILE\n"
      "                     is replaced only once the report is complete)\n"
      "  --top N            show the N first sites (default: text 10, the others all;\n"
      "                     0: none, only the summary)\n"
      "  --sort KEY         rank sites by allocations (default), bytes, temporary,\n"
      "                     leaked (bytes) or peak (live bytes at the peak); the value\n"
      "                     of a folded line\n"
      "  --inuse WHEN       pprof's in-use values: the blocks live at the end (default)\n"
      "                     or at the peak (WHEN: end or peak)\n"
      "  --no-symbols       addresses and modules only (no debug info is read)\n"
      "  --debug-path DIR   look in DIR for a copy of a binary that changed or was\n"
      "                     deleted since the trace was written (by its name, or its\n"
      "                     debug file DIR/.build-id/xx/rest.debug) and for the debug\n"
      "                     files of stripped binaries; repeatable\n"
      "  --no-fold          keep allocator-internal frames (malloc, operator new,\n"
      "                     std::allocator, container growth functions)\n"
      "  --lines            folded and speedscope: frames as function:line, so two\n"
      "                     calls of a function from different lines stay apart\n"
      "  --objects          follow each object through its allocations (a vector's\n"
      "                     growth is one object): per site, allocations per object,\n"
      "                     lifetimes (in allocations and in time), last block sizes,\n"
      "                     objects alive at once and at the peak, and the top\n"
      "                     advice of lowalloc advise\n"
      "  --processes        one row per process of a run (allocations, bytes, temporary,\n"
      "                     leaked, peak, how it ended), most allocating first, after\n"
      "                     the totals of each program (executable): of\n"
      "                     FILE and the FILE.PID files of the processes it started\n"
      "                     (--follow-exec, fork), or of each FILE named; with\n"
      "                     --format text or json, -o, --top and --sort\n"
      "  --                 end of the options: each argument after it is a trace\n"
      "                     file, even one whose name starts with -\n"
      "  -h, --help         this help\n";
  return text;
}

int usage_error(const std::string& message) {
  std::cerr << "lowalloc report: " << message << "\n\n" << usage_text();
  return 2;
}

// Opens -o's FILE, if given (before the traces are read, which can take long); false: it cannot
// be written, or it is one of the traces read, said on stderr.
bool open_output(const std::string& output, const std::vector<std::string>& inputs,
                 output_file& out_file) {
  if (output.empty()) return true;
  std::string error = output_names_an_input(output, inputs);
  if (error.empty() && out_file.open(output, error)) return true;
  std::cerr << "lowalloc report: " << error << '\n';
  return false;
}

// Flushes standard output, or replaces -o's FILE with what was written; false: the report could
// not be written, said on stderr.
bool finish_output(const std::string& output, output_file& out_file) {
  if (output.empty()) return flush_stdout("report", "the report");
  std::string error;
  if (out_file.commit(error)) return true;
  std::cerr << "lowalloc report: " << error << '\n';
  return false;
}

// `lowalloc report --processes`: the table of the processes of `files`' run.
int report_processes(const std::vector<std::string>& files, const report::format& format,
                     const std::string& output, const report::report_options& ro, bool top_given) {
  if (format.name != "text" && format.name != "json")
    return usage_error("--processes is for --format text or json, not " + std::string(format.name));
  output_file out_file;
  if (!open_output(output, files, out_file)) return 2;
  std::ostream& out = output.empty() ? std::cout : out_file.stream();
  std::vector<std::string> left_out;
  std::vector<process_row> rows =
      files.size() == 1 ? run_processes(files[0], left_out) : read_processes(files);
  rank_processes(rows, ro.sort);
  if (rows.empty() || !rows.front().error.empty()) {  // none could be read: no table to show
    for (const process_row& r : rows)
      std::cerr << "lowalloc report: " << r.file << ": " << r.error << '\n';
    return 2;
  }
  const std::size_t top = top_given ? ro.top : rows.size();
  const std::string first = files.size() == 1 ? files[0] : std::string();
  if (format.name == "json")
    write_processes_json(out, first, rows, left_out, ro.sort, top);
  else
    write_processes_text(out, first, rows, left_out, ro.sort, top);
  int status = finish_output(output, out_file) ? 0 : 2;
  for (const process_row& r : rows) {
    if (!r.error.empty()) {
      std::cerr << "lowalloc report: " << r.file << ": " << r.error << '\n';
      status = 2;
    } else if (!r.truncation.empty()) {
      std::cerr << "lowalloc report: " << r.file
                << ": warning: the trace is damaged, read up to: " << r.truncation << '\n';
      status = 2;
    }
  }
  return status;
}

}  // namespace

int report_main(int argc, char** argv) {
  std::string file;
  std::vector<std::string> files;
  bool processes = false;
  bool inuse_given = false;
  const report::format* format = &report::formats().front();
  report::report_options ro;
  bool top_given = false;
  analyze::options opts;
  bool objects = false;
  std::string output;

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
    if (kind == argument_kinds::operand) {  // a trace file
      files.emplace_back(arg);
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::cout << usage_text();
      return 0;
    }
    if (take_value("--format")) {
      format = report::find_format(value);
      if (format == nullptr)
        return usage_error("unknown format '" + std::string(value) + "' (" + format_names(", ") +
                           ")");
    } else if (take_value("-o") || take_value("--output")) {
      if (value.empty()) return usage_error(std::string(arg) + " needs a file name");
      output = std::string(value);
    } else if (take_value("--top")) {
      std::uint64_t n = 0;
      const std::string error =
          read_count("--top", value, std::numeric_limits<std::size_t>::max(), n);
      if (!error.empty()) return usage_error(error);
      ro.top = static_cast<std::size_t>(n);
      top_given = true;
    } else if (take_value("--sort")) {
      if (!report::parse_sort_key(value, ro.sort))
        return usage_error("unknown sort key '" + std::string(value) +
                           "' (allocations, bytes, temporary, leaked, peak)");
    } else if (take_value("--inuse")) {
      if (value == "end")
        ro.inuse = report::inuse_at::end;
      else if (value == "peak")
        ro.inuse = report::inuse_at::peak;
      else
        return usage_error("--inuse is end or peak, not '" + std::string(value) + "'");
      inuse_given = true;
    } else if (debug_path_option(argc, argv, i, opts.debug_paths, path_error)) {
      if (!path_error.empty()) return usage_error(path_error);
    } else if (arg == "--no-symbols") {
      opts.symbolize = false;
    } else if (arg == "--no-fold") {
      opts.fold_allocator = false;
    } else if (arg == "--lines") {
      ro.lines = true;
    } else if (arg == "--objects") {
      objects = true;
    } else if (arg == "--processes") {
      processes = true;
    } else if (arg == "--format" || arg == "-o" || arg == "--output" || arg == "--top" ||
               arg == "--sort" || arg == "--inuse" || arg == "--debug-path") {
      return usage_error(std::string(arg) + " needs a value");
    } else {
      return usage_error("unknown option '" + std::string(arg) + "'");
    }
  }
  if (files.empty()) return usage_error("no trace file given");
  if (processes) {
    if (objects || ro.lines || inuse_given)
      return usage_error(std::string(objects    ? "--objects"
                                     : ro.lines ? "--lines"
                                                : "--inuse") +
                         " is not for --processes");
    return report_processes(files, *format, output, ro, top_given);
  }
  if (files.size() > 1)
    return usage_error("one trace file only ('" + files[0] + "' and '" + files[1] +
                       "'; --processes lists several)");
  file = files[0];
  if (ro.lines && format->name != "folded" && format->name != "speedscope")
    return usage_error("--lines is for --format folded or speedscope (" +
                       std::string(format->name) + " shows lines already)");
  if (!top_given) ro.top = format->default_top;
  ro.trace_name = file;
  if (format->binary && output.empty() && ::isatty(STDOUT_FILENO) == 1) {
    std::cerr << "lowalloc report: --format " << format->name
              << " is binary: not written to a terminal (write it to a file: -o FILE)\n";
    return 2;
  }

  // An output that cannot be written is said before the trace is read, which can take long.
  output_file out_file;
  if (!open_output(output, files, out_file)) return 2;
  std::ostream& out = output.empty() ? std::cout : out_file.stream();

  analyze::analysis a;
  analyze::object_tracker tracker;
  analyze::burst_tracker bursts;
  analyze::timeline timeline;
  analyze::thread_stacks threads;
  std::vector<analyze::object_counts> by_site;
  std::vector<analyze::advice_item> advice;
  // The format's own analyses (report::format_needs) run with --objects' in the same pass.
  objects = objects || (format->needs & report::needs_objects) != 0;
  std::vector<analyze::event_sink*> sinks;
  if (objects) sinks = {&tracker, &bursts};
  if ((format->needs & report::needs_timeline) != 0) sinks.push_back(&timeline);
  if ((format->needs & report::needs_threads) != 0) sinks.push_back(&threads);
  try {
    a = analyze::analyze_file(file, opts, sinks);
    if (objects) {
      tracker.finish();
      bursts.finish();
      // The sites the report shows (the HTML report: its html_sites first by allocations).
      const bool html_sites = (format->needs & report::needs_objects) != 0;
      const std::vector<const analyze::site*> shown_sites =
          html_sites ? report::ranked_sites(a, report::sort_key::allocations, report::html_sites)
                     : report::ranked_sites(a, ro.sort, ro.top);
      // The objects of the sites the report shows, the last of them in the analysis' order.
      std::size_t shown = 0;
      for (const analyze::site* s : shown_sites)
        shown = std::max(shown, static_cast<std::size_t>(s - a.sites.data()) + 1);
      by_site = tracker.by_site(a, shown);
      ro.objects = &by_site;
      // The top advice under each site it applies to (assumed costs: the report stays the same
      // from one run to the next).
      analyze::advise_options ao;
      ao.top_sites =
          std::min<std::size_t>(html_sites ? report::html_sites : ro.top, a.sites.size());
      ao.bursts = &bursts;
      advice = analyze::advise(a, tracker, analyze::cost_model{}, ao);
      ro.advice = &advice;
    }
    if ((format->needs & report::needs_timeline) != 0) ro.timeline = &timeline;
    if ((format->needs & report::needs_threads) != 0) {
      threads.finish();
      ro.threads = &threads;
    }
  } catch (const analyze::trace_error& e) {
    std::cerr << "lowalloc report: " << file << ": " << e.what() << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "lowalloc report: " << file << ": out of memory\n";
    return 2;
  }

  if (!a.exec_path.empty()) ro.exec_trace = exec_image_trace(file, a.process);
  print_module_notes("report", a, true);
  if (format->name == "html" && output.empty() && isatty(STDOUT_FILENO) != 0)
    std::cerr << "lowalloc report: the HTML report is a page: write it to a file: -o report.html\n";
  format->write(out, a, ro);
  int status = finish_output(output, out_file) ? 0 : 2;
  if (!a.truncation.empty()) {
    std::cerr << "lowalloc report: " << file
              << ": warning: the trace is damaged, read up to: " << a.truncation << '\n';
    status = 2;
  }
  // The analysis of 10^6 stacks is as many sites, each with vectors of its own: freeing them one
  // by one was 3% of the report, which the exit does at once.
  if (process_ends_after_command) left_to_exit = new analyze::analysis(std::move(a));
  return status;
}

}  // namespace lowalloc::cli
