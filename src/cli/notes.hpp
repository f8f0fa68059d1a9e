// What the analysis found wrong with the traced binaries, on stderr (report, advise, diff, check).
#ifndef LOWALLOC_SRC_CLI_NOTES_HPP
#define LOWALLOC_SRC_CLI_NOTES_HPP

#include "analyze/analysis.hpp"
#include "report/common.hpp"

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

}  // namespace lowalloc::cli

#endif
