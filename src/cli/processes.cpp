// The processes of a run, one row each (processes.hpp). Only the totals of each trace are kept:
// a build traces hundreds of processes, read a few at a time, without symbols.
#include "cli/processes.hpp"
#include "cli/options.hpp"

#include "analyze/analysis.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <new>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace lowalloc::cli {

namespace fs = std::filesystem;

namespace {

process_row row_of(const std::string& file) {
  process_row r;
  r.file = file;
  try {
    analyze::options opts;
    opts.symbolize = false;  // totals only: no debug information is read
    const analyze::analysis a = analyze::analyze_file(file, opts);
    r.process = a.process;
    r.totals = a.totals;
    r.threads = a.threads;
    r.lost_events = a.lost_events;
    r.unmatched_frees = a.unmatched_frees;
    r.run_time_seconds = a.run_time_seconds;
    r.complete = a.complete;
    r.running = a.running;
    r.exec_path = a.exec_path;
    if (a.stopped) r.stopped = *a.stopped;
    if (a.crash) {
      r.signal = a.crash->signal;
      r.signal_ended = a.crash->ended;
    }
    r.truncation = a.truncation;
  } catch (const analyze::trace_error& e) {
    r.error = e.what();
  } catch (const std::bad_alloc&) {
    r.error = "out of memory";
  }
  return r;
}

// "N" or "N.K", each of 1 to 18 digits: the suffix lowalloc run's recorder gives a process's
// file (longer numbers are no pid, and would not fit suffix_key's).
bool is_pid_suffix(const std::string& s) {
  std::size_t digits = 0, dots = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9') {
      if (++digits > 18) return false;
    } else if (s[i] == '.' && digits != 0 && dots == 0 && i + 1 < s.size()) {
      ++dots;
      digits = 0;
    } else {
      return false;
    }
  }
  return digits != 0;
}

// (pid, k) of a suffix "N" or "N.K", for the order of the files. is_pid_suffix() let through
// only 1 to 18 digits on each side of the dot: parse_count() takes each whole, and has nothing to
// refuse (std::stoull would throw on what it could not read, and end the command).
std::pair<std::uint64_t, std::uint64_t> suffix_key(const std::string& s) {
  const std::size_t dot = s.find('.');
  std::uint64_t pid = 0;
  std::uint64_t k = 0;
  parse_count(std::string_view(s).substr(0, dot), pid);
  if (dot != std::string::npos) parse_count(std::string_view(s).substr(dot + 1), k);
  return {pid, k};
}

std::string signal_text(int sig) {
  analyze::crash_info c;
  c.signal = sig;
  return c.signal_name();
}

// The command line shown: the program's file name and its arguments, at most `width` characters.
std::string program_text(const analyze::process_info& p, std::size_t width) {
  std::string text(report::basename(p.exe));
  if (text.empty() && !p.argv.empty()) text = p.argv[0];
  for (std::size_t i = 1; i < p.argv.size(); ++i) text += " " + p.argv[i];
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  if (text.size() > width) text = text.substr(0, width - 3) + "...";
  return text;
}

std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::string process_row::ended() const {
  if (!error.empty()) return "unreadable";
  if (signal != 0) return signal_text(signal);
  if (complete) return exec_path.empty() ? "exit" : "exec";
  // Read up to damage before any end: whether the process finished cannot be told.
  if (!truncation.empty()) return "damaged";
  if (stopped) return "stopped";
  return running ? "running" : "killed";
}

std::vector<process_row> read_processes(const std::vector<std::string>& files) {
  std::vector<process_row> rows(files.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < files.size();) rows[i] = row_of(files[i]);
  };
  // A few at a time: each reading holds its trace's analysis until its row is taken.
  const std::size_t helpers =
      std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, files.size()});
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < helpers; ++i) {
    try {
      threads.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads, or this one alone
    }
  }
  work();
  for (std::thread& t : threads) t.join();
  return rows;
}

std::string exec_image_trace(const std::string& file, const analyze::process_info& p) {
  const fs::path path(file);
  const std::string name = path.filename().string();
  // The run's first file, and where `file` is among the files of p's pid: RUN.PID is the first
  // of them, (pid, 0); RUN itself comes before all.
  std::string run = name;
  bool is_run = true;
  std::pair<std::uint64_t, std::uint64_t> at{0, 0};
  for (std::size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
    const std::string suffix = name.substr(dot + 1);
    if (dot != 0 && is_pid_suffix(suffix) && suffix_key(suffix).first == p.pid) {
      run = name.substr(0, dot);
      is_run = false;
      at = suffix_key(suffix);
      break;
    }
  }
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::vector<std::pair<std::pair<std::uint64_t, std::uint64_t>, std::string>> later;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string other = it->path().filename().string();
    if (other.size() <= run.size() + 1 || other.compare(0, run.size(), run) != 0 ||
        other[run.size()] != '.')
      continue;
    const std::string suffix = other.substr(run.size() + 1);
    if (!is_pid_suffix(suffix)) continue;
    const auto key = suffix_key(suffix);
    if (key.first == p.pid && (is_run || key > at)) later.emplace_back(key, other);
  }
  std::sort(later.begin(), later.end());
  for (const auto& candidate : later) {
    const std::string found = path.has_parent_path()
                                  ? (path.parent_path() / candidate.second).string()
                                  : candidate.second;
    const std::optional<analyze::process_info> q = analyze::read_process(found);
    // Not by its parent too: a process whose parent ended before it called exec has another.
    if (q && q->exec_child && q->pid == p.pid) return found;
  }
  return {};
}

std::vector<process_row> run_processes(const std::string& first,
                                       std::vector<std::string>& left_out) {
  const fs::path path(first);
  const std::string base = path.filename().string();
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::vector<std::string> suffixes;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > base.size() + 1 && name.compare(0, base.size(), base) == 0 &&
        name[base.size()] == '.' && is_pid_suffix(name.substr(base.size() + 1)))
      suffixes.push_back(name.substr(base.size() + 1));
  }
  std::sort(suffixes.begin(), suffixes.end(), [](const std::string& a, const std::string& b) {
    return suffix_key(a) < suffix_key(b);
  });
  std::vector<std::string> files{first};
  for (const std::string& s : suffixes) files.push_back(first + "." + s);
  std::vector<process_row> all = read_processes(files);

  // The run's processes: the first, then each whose parent's pid is one of theirs (a fork child,
  // or its image after an exec), or an exec'd image whose pid is (exec keeps the pid), until no
  // more join. Not a fork child by its pid alone: another run's, whose pid was used again.
  std::vector<bool> in(all.size(), false);
  in[0] = true;
  std::set<std::uint64_t> pids;
  if (all[0].error.empty()) {
    pids.insert(all[0].process.pid);
  } else {
    std::fill(in.begin(), in.end(), true);  // nothing to tell the run's from others'
  }
  // A file whose process is not the pid its name gives is not one the recorder wrote for it (a
  // copy, or a file renamed): it would count a process twice.
  std::vector<bool> misnamed(all.size(), false);
  for (std::size_t i = 1; i < all.size(); ++i)
    misnamed[i] = all[i].error.empty() && suffix_key(suffixes[i - 1]).first != all[i].process.pid;
  for (bool joined = true; joined;) {
    joined = false;
    for (std::size_t i = 1; i < all.size(); ++i) {
      if (in[i] || misnamed[i]) continue;
      const analyze::process_info& p = all[i].process;
      if (!all[i].error.empty() || pids.count(p.ppid) != 0 ||
          (p.exec_child && pids.count(p.pid) != 0)) {
        in[i] = true;
        joined = true;
        if (all[i].error.empty()) pids.insert(all[i].process.pid);
      }
    }
  }
  std::vector<process_row> rows;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (in[i])
      rows.push_back(std::move(all[i]));
    else
      left_out.push_back(all[i].file);
  }
  return rows;
}

std::vector<program_group> group_by_program(const std::vector<process_row>& rows,
                                            report::sort_key key) {
  std::vector<program_group> groups;
  std::map<std::string, std::size_t> index;
  for (const process_row& r : rows) {
    if (!r.error.empty()) continue;
    std::string exe = r.process.exe;
    if (exe.empty() && !r.process.argv.empty()) exe = r.process.argv[0];
    const auto [at, added] = index.emplace(exe, groups.size());
    if (added) groups.push_back(program_group{exe, 0, {}});
    program_group& g = groups[at->second];
    const std::uint64_t peak = std::max(g.totals.peak_bytes, r.totals.peak_bytes);
    analyze::add_counters(g.totals, r.totals);
    g.totals.peak_bytes = peak;
    ++g.processes;
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [key](const program_group& a, const program_group& b) {
                     return report::metric(a.totals, key) > report::metric(b.totals, key);
                   });
  return groups;
}

void rank_processes(std::vector<process_row>& rows, report::sort_key key) {
  std::stable_sort(rows.begin(), rows.end(), [key](const process_row& a, const process_row& b) {
    if (a.error.empty() != b.error.empty()) return a.error.empty();
    return report::metric(a.totals, key) > report::metric(b.totals, key);
  });
}

void write_processes_text(std::ostream& out, const std::string& first,
                          const std::vector<process_row>& rows,
                          const std::vector<std::string>& left_out, report::sort_key key,
                          std::size_t top) {
  analyze::counters sum;
  std::size_t readable = 0;
  std::uint64_t largest_peak = 0;
  for (const process_row& r : rows) {
    if (!r.error.empty()) continue;
    ++readable;
    analyze::add_counters(sum, r.totals);
    largest_peak = std::max(largest_peak, r.totals.peak_bytes);
  }
  out << "lowalloc report: " << report::counted(rows.size(), "process", "processes");
  if (first.empty())
    out << ", one per file named";
  else
    out << " of the run traced into " << first;
  out << "\n\n";
  out << "allocations      " << pad_left(report::thousands(sum.allocations), 13) << "  in all\n";
  out << "bytes allocated  " << pad_left(report::thousands(sum.bytes_allocated), 13) << "  "
      << report::human_bytes(sum.bytes_allocated) << '\n';
  out << "temporary        " << pad_left(report::thousands(sum.temporary), 13) << "  "
      << report::percent(sum.temporary, sum.allocations) << " of allocations\n";
  out << "leaked           " << pad_left(report::thousands(sum.leaked_allocations), 13)
      << "  allocations, " << report::thousands(sum.leaked_bytes) << " bytes ("
      << report::human_bytes(sum.leaked_bytes) << ")\n";
  out << "largest peak     " << pad_left(report::thousands(largest_peak), 13)
      << "  bytes live in one process (" << report::human_bytes(largest_peak) << ")\n";
  if (readable != rows.size())
    out << "not read         " << pad_left(report::thousands(rows.size() - readable), 13)
        << "  files (their counts are not in these)\n";

  if (rows.size() > 1) {
    const std::vector<program_group> groups = group_by_program(rows, key);
    out << "\nprograms by " << report::sort_key_name(key)
        << " (peak: the largest of one process)\n\n";
    std::vector<std::vector<std::string>> table;
    table.push_back({"processes", "allocations", "allocated", "temporary", "leaked", "peak"});
    for (const program_group& g : groups)
      table.push_back({report::thousands(g.processes), report::thousands(g.totals.allocations),
                       report::human_bytes(g.totals.bytes_allocated),
                       report::thousands(g.totals.temporary),
                       report::thousands(g.totals.leaked_allocations),
                       report::human_bytes(g.totals.peak_bytes)});
    std::vector<std::size_t> w(table.front().size(), 0);
    for (const std::vector<std::string>& row : table)
      for (std::size_t k = 0; k < row.size(); ++k) w[k] = std::max(w[k], row[k].size());
    for (std::size_t i = 0; i < table.size(); ++i) {
      std::string line;
      for (std::size_t k = 0; k < table[i].size(); ++k)
        line += (k == 0 ? "" : "  ") + pad_left(table[i][k], w[k]);
      out << line << "  " << (i == 0 ? std::string("program") : groups[i - 1].exe) << '\n';
    }
  }

  const std::size_t shown = std::min(top, rows.size());
  out << '\n';
  if (shown < rows.size())
    out << "top " << shown << " of " << rows.size() << " processes by "
        << report::sort_key_name(key) << "\n\n";
  else
    out << "processes by " << report::sort_key_name(key) << "\n\n";
  if (shown != 0) {
    struct cells {
      std::string pid, parent, allocations, bytes, temporary, leaked, peak, ended, file, program;
    };
    std::vector<cells> table;
    table.push_back({"pid", "parent", "allocations", "allocated", "temporary", "leaked", "peak",
                     "ended", "file", "program"});
    for (std::size_t i = 0; i < shown; ++i) {
      const process_row& r = rows[i];
      if (!r.error.empty()) {
        table.push_back({"-", "-", "-", "-", "-", "-", "-", r.ended(), r.file, ""});
        continue;
      }
      std::string ended = r.ended();
      if (!r.truncation.empty() && ended != "damaged") ended += ", damaged";
      table.push_back(
          {std::to_string(r.process.pid), std::to_string(r.process.ppid),
           report::thousands(r.totals.allocations), report::human_bytes(r.totals.bytes_allocated),
           report::thousands(r.totals.temporary), report::thousands(r.totals.leaked_allocations),
           report::human_bytes(r.totals.peak_bytes), ended, r.file, program_text(r.process, 72)});
    }
    std::size_t w[9] = {};
    for (const cells& c : table) {
      const std::string* f[9] = {&c.pid,    &c.parent, &c.allocations, &c.bytes, &c.temporary,
                                 &c.leaked, &c.peak,   &c.ended,       &c.file};
      for (int k = 0; k < 9; ++k) w[k] = std::max(w[k], f[k]->size());
    }
    for (const cells& c : table) {
      std::string line = pad_left(c.pid, w[0]) + "  " + pad_left(c.parent, w[1]) + "  " +
                         pad_left(c.allocations, w[2]) + "  " + pad_left(c.bytes, w[3]) + "  " +
                         pad_left(c.temporary, w[4]) + "  " + pad_left(c.leaked, w[5]) + "  " +
                         pad_left(c.peak, w[6]) + "  " + pad_right(c.ended, w[7]) + "  " +
                         pad_right(c.file, w[8]) + "  " + c.program;
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << '\n';
    }
  }
  if (!left_out.empty()) {
    std::uint64_t first_pid = 0;
    for (const process_row& r : rows)
      if (r.file == first) first_pid = r.process.pid;
    out << "\nleft out: " << report::counted(left_out.size(), "file")
        << " of the same name whose process does not descend from process " << first_pid
        << " (another run's) or is not the pid of its name (a copy):";
    constexpr std::size_t named = 5;
    for (std::size_t i = 0; i < left_out.size() && i < named; ++i)
      out << (i == 0 ? " " : ", ") << left_out[i];
    if (left_out.size() > named) out << " and " << (left_out.size() - named) << " more";
    out << "; name the files to list them all\n";
  }
}

void write_processes_json(std::ostream& out, const std::string& first,
                          const std::vector<process_row>& rows,
                          const std::vector<std::string>& left_out, report::sort_key key,
                          std::size_t top) {
  analyze::counters sum;
  std::size_t readable = 0;
  for (const process_row& r : rows) {
    if (!r.error.empty()) continue;
    ++readable;
    analyze::add_counters(sum, r.totals);
  }
  out << "{\n  \"format_version\": 2,\n  \"first_file\": "
      << (first.empty() ? "null" : report::json_string(first)) << ",\n  \"processes\": [";
  const std::size_t shown = std::min(top, rows.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const process_row& r = rows[i];
    out << (i == 0 ? "\n" : ",\n") << "    {\"file\": " << report::json_string(r.file);
    if (!r.error.empty()) {
      out << ", \"error\": " << report::json_string(r.error) << "}";
      continue;
    }
    const analyze::process_info& p = r.process;
    out << ", \"pid\": " << p.pid << ", \"ppid\": " << p.ppid
        << ", \"fork_child\": " << (p.fork_child ? "true" : "false")
        << ", \"exec_child\": " << (p.exec_child ? "true" : "false")
        << ", \"exe\": " << report::json_string(p.exe) << ", \"argv\": [";
    for (std::size_t k = 0; k < p.argv.size(); ++k)
      out << (k == 0 ? "" : ", ") << report::json_string(p.argv[k]);
    out << "], \"ended\": \""
        << (r.signal != 0 ? (r.signal_ended ? "signal" : "crash")
            : r.complete  ? (r.exec_path.empty() ? "exit" : "exec")
                          : r.ended())
        << "\", \"exec_path\": "
        << (r.exec_path.empty() ? "null" : report::json_string(r.exec_path)) << ", \"signal\": "
        << (r.signal != 0 ? report::json_string(signal_text(r.signal)) : std::string("null"))
        << ", \"damaged\": " << (r.truncation.empty() ? "null" : report::json_string(r.truncation))
        << ", \"stopped\": " << (r.stopped ? report::json_string(*r.stopped) : std::string("null"))
        << ", \"threads\": " << r.threads
        << ", \"run_time_seconds\": " << report::fixed(r.run_time_seconds, 6)
        << ", \"allocations\": " << r.totals.allocations << ", \"frees\": " << r.totals.frees
        << ", \"bytes_allocated\": " << r.totals.bytes_allocated
        << ", \"temporary\": " << r.totals.temporary
        << ", \"leaked_allocations\": " << r.totals.leaked_allocations
        << ", \"leaked_bytes\": " << r.totals.leaked_bytes
        << ", \"peak_bytes\": " << r.totals.peak_bytes << ", \"lost_events\": " << r.lost_events
        << ", \"unmatched_frees\": " << r.unmatched_frees << "}";
  }
  out << (shown == 0 ? "],\n" : "\n  ],\n") << "  \"programs\": [";
  const std::vector<program_group> groups = group_by_program(rows, key);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const program_group& g = groups[i];
    out << (i == 0 ? "\n" : ",\n") << "    {\"exe\": " << report::json_string(g.exe)
        << ", \"processes\": " << g.processes << ", \"allocations\": " << g.totals.allocations
        << ", \"frees\": " << g.totals.frees
        << ", \"bytes_allocated\": " << g.totals.bytes_allocated
        << ", \"temporary\": " << g.totals.temporary
        << ", \"leaked_allocations\": " << g.totals.leaked_allocations
        << ", \"leaked_bytes\": " << g.totals.leaked_bytes
        << ", \"largest_peak_bytes\": " << g.totals.peak_bytes << "}";
  }
  out << (groups.empty() ? "],\n" : "\n  ],\n") << "  \"left_out\": [";
  for (std::size_t i = 0; i < left_out.size(); ++i)
    out << (i == 0 ? "" : ", ") << report::json_string(left_out[i]);
  out << "],\n  \"totals\": {\"processes\": " << rows.size() << ", \"read\": " << readable
      << ", \"allocations\": " << sum.allocations << ", \"frees\": " << sum.frees
      << ", \"bytes_allocated\": " << sum.bytes_allocated << ", \"temporary\": " << sum.temporary
      << ", \"leaked_allocations\": " << sum.leaked_allocations
      << ", \"leaked_bytes\": " << sum.leaked_bytes << "}\n}\n";
}

}  // namespace lowalloc::cli
