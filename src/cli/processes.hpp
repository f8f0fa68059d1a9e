// `lowalloc report --processes`: the processes of one run (`lowalloc run` traces each process a
// program starts into FILE.PID next to FILE), one row each, to find the ones that allocate.
#ifndef LOWALLOC_SRC_CLI_PROCESSES_HPP
#define LOWALLOC_SRC_CLI_PROCESSES_HPP

#include "analyze/model.hpp"
#include "report/common.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace lowalloc::cli {

/// What the table shows of one trace file.
struct process_row {
  std::string file;
  std::string error;  // the file could not be read (nothing else is set)
  analyze::process_info process;
  analyze::counters totals;
  std::uint64_t threads = 0;
  std::uint64_t lost_events = 0;
  std::uint64_t unmatched_frees = 0;
  double run_time_seconds = 0;
  bool complete = false;
  bool running = false;
  std::string exec_path;               // the image ended by exec
  int signal = 0;                      // the recorder's crash handler saw this signal
  bool signal_ended = false;           // a signal sent to end it (SIGTERM, ...): the trace is whole
  std::string truncation;              // damaged: read up to here
  std::optional<std::string> stopped;  // the recorder stopped writing, for this reason
  /// "exit", "exec", "crash", "signal", "killed", "running", "stopped", "damaged", "unreadable".
  std::string ended() const;
};

/// The files of the run whose first process wrote `first`: `first`, then the files named
/// `first`.PID or `first`.PID.K in its directory whose process descends from it (its parent's pid
/// is one of theirs, or it is an image started by exec with one of their pids), each read; files
/// of that name whose process does not (another run's, with the same -o) go to `left_out`. Files
/// that cannot be read are kept, with their error.
std::vector<process_row> run_processes(const std::string& first,
                                       std::vector<std::string>& left_out);

/// Each of `files` read, in their order.
std::vector<process_row> read_processes(const std::vector<std::string>& files);

/// The trace of the image that process `p` (the process of trace `file`) started by exec, when
/// `lowalloc run --follow-exec` wrote it next to `file`: of the files named RUN.PID or RUN.PID.K
/// after `file` (RUN: the run's first file, `file` itself or what `file` adds ".PID[.K]" to, PID
/// p's pid), the first whose PROCESS record is an image started by exec with p's pid. Empty when
/// there is none.
std::string exec_image_trace(const std::string& file, const analyze::process_info& p);

/// The processes of one executable (their rows' `process.exe`, or argv[0] without one).
struct program_group {
  std::string exe;
  std::size_t processes = 0;
  analyze::counters totals;  // added up, but peak_bytes: the largest peak of one of them
};

/// The readable rows grouped by executable, sorted by `key` (the peak: the largest of one
/// process), largest first; ties: in the order of the rows' first process of each.
std::vector<program_group> group_by_program(const std::vector<process_row>& rows,
                                            report::sort_key key);

/// The rows sorted by `key`, largest first (ties: the given order), unreadable ones last.
void rank_processes(std::vector<process_row>& rows, report::sort_key key);

/// The table as text, or as JSON, with the programs' (group_by_program) first when there is more
/// than one process; `first`: the run's first file (run_processes' argument), empty for files
/// named one by one; `top`: the processes shown (the totals and the programs are of all).
void write_processes_text(std::ostream& out, const std::string& first,
                          const std::vector<process_row>& rows,
                          const std::vector<std::string>& left_out, report::sort_key key,
                          std::size_t top);
void write_processes_json(std::ostream& out, const std::string& first,
                          const std::vector<process_row>& rows,
                          const std::vector<std::string>& left_out, report::sort_key key,
                          std::size_t top);

}  // namespace lowalloc::cli

#endif
