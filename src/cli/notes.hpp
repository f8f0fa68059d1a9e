// What the analysis found wrong with the traced binaries, on stderr (report, advise, diff, check),
// and what a trace misses of its process.
#ifndef LOWALLOC_SRC_CLI_NOTES_HPP
#define LOWALLOC_SRC_CLI_NOTES_HPP

#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"
#include "report/common.hpp"

#include <cstdint>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace lowalloc::cli {

/// Prints on stderr, as "lowalloc COMMAND: warning: ...", which allocation functions the
/// recorder could not hook (analysis::shadowed: the counts leave their calls out) and which
/// traced files changed or are missing (analysis::module_warnings), and with `lines`, as "lowalloc
/// COMMAND: note: ...", which modules have no line information (analysis::line_notes: `report`,
/// which shows the lines, says it); each once per run of the command however many traces say it.
inline void print_module_notes(std::string_view command, const analyze::analysis& a,
                               bool lines = false) {
  static std::mutex mutex;
  static std::set<std::string> said;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const analyze::shadowed_functions& s : a.shadowed) {
    const std::string note = "warning: " + report::shadowed_text(s);
    if (said.insert(note).second) std::cerr << "lowalloc " << command << ": " << note << '\n';
  }
  for (const auto* list : {&a.module_warnings, &a.line_notes}) {
    if (list == &a.line_notes && !lines) break;
    for (const std::string& note : *list) {
      if (!said.insert(note).second) continue;
      std::cerr << "lowalloc " << command << ": " << note << '\n';
    }
  }
}

/// Empty when the trace holds every event of its process up to its end; otherwise what it
/// misses, as "the process did not finish ...", for `check` (which refuses such a trace unless
/// --allow-incomplete) and the warnings of `diff` and `advise`. A process ended by a signal whose
/// recorder wrote every thread's events (a CRASH record with `ended`, then END) is complete.
inline std::string incomplete_text(const analyze::analysis& a) {
  std::string text;
  if (a.running) {
    text = "the program is still running (pid " + std::to_string(a.process.pid) +
           "): its events after the last block written are missing";
  } else if (a.stopped) {
    text = "the recorder stopped writing the trace (" + *a.stopped +
           "), and the program ran on untraced: its events after the last block written are "
           "missing";
  } else if (a.crash && !a.crash->ended) {
    const analyze::crash_info& c = *a.crash;
    text = "the program was killed by signal " + std::to_string(c.signal) + " (" + c.signal_name() +
           "): the counts are of the run up to the crash";
    if (!c.unwritten.empty() || c.more_threads) {
      std::uint64_t allocations = 0;
      for (const analyze::crash_info::thread& t : c.unwritten) allocations += t.allocations;
      text += ", and up to " + report::counted(allocations, "allocation") + " of " +
              report::counted(c.unwritten.size(), "other thread") +
              (c.more_threads ? " and more" : "") + " were not written";
    }
    if (!c.thread_written) text += ", and the crashing thread's last events were not written";
  } else if (!a.complete) {
    text =
        "the process did not finish (killed, ended by the exit_group system call, or the file "
        "was cut short): it has no end, and the events after its last block are missing";
  }
  if (a.lost_events != 0) {
    if (!text.empty()) text += "; ";
    text += report::counted(a.lost_events, "event") + " the recorder could not record " +
            (a.lost_events == 1 ? "is" : "are") + " missing";
  }
  return text;
}

/// A warning for `diff` and `check --baseline` when the two traces look like two programs' (a
/// wrong file given): their executables' file names differ and no site of one was found in the
/// other (c: their comparison). A program rebuilt elsewhere keeps its name; one renamed keeps
/// most of its sites. Empty otherwise.
inline std::string different_programs_text(const analyze::analysis& before,
                                           const analyze::analysis& after,
                                           const analyze::comparison& c) {
  const auto name = [](const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  };
  if (name(before.process.exe) == name(after.process.exe)) return "";
  for (const analyze::place_match& m : c.matches)
    if (m.before != analyze::place_match::none && m.after != analyze::place_match::none) return "";
  return "warning: the traces are of two programs (" + before.process.exe + " and " +
         after.process.exe + "), no site of one found in the other: is one the wrong file?";
}

}  // namespace lowalloc::cli

#endif
