// The text report: a summary for people, then the top sites with their sizes and stacks.
#include "report/common.hpp"

#include "analyze/operation.hpp"
#include "analyze/runtime.hpp"

#include <algorithm>
#include <ostream>
#include <utility>

namespace lowalloc::report {

namespace {

using analyze::process_info;

// The crash the recorder's handler saw (a CRASH record) and what it could not write.
void write_crash(std::ostream& out, const analyze::crash_info& c, std::uint64_t lost_events) {
  if (c.ended) {
    out << "\nthe program was ended by signal " << c.signal << " (" << c.signal_name()
        << "), received by thread " << c.tid;
    if (lost_events == 0)
      out << "; no event is missing: the recorder wrote every thread's events up to the signal\n";
    else
      out << "; the recorder wrote the threads' events up to the signal but for "
          << thousands(lost_events) << " it could not record (lost events)\n";
    return;
  }
  out << "\nthe program was killed by signal " << c.signal << " (" << c.signal_name()
      << ") in thread " << c.tid;
  if (c.unwritten.empty() && !c.more_threads) {
    out << "; no event is missing: the recorder wrote every thread's events up to the crash";
  } else {
    std::uint64_t allocations = 0, frees = 0;
    std::string threads;
    for (const analyze::crash_info::thread& t : c.unwritten) {
      allocations += t.allocations;
      frees += c.max_frees(t);
      if (!threads.empty()) threads += ", ";
      threads += std::to_string(t.tid);
    }
    out << "; the last events of thread" << (c.unwritten.size() == 1 ? " " : "s ") << threads
        << (c.more_threads ? " and more" : "") << " were not written: up to "
        << thousands(allocations + frees) << " events (" << thousands(allocations)
        << (allocations == 1 ? " allocation" : " allocations") << " and up to " << thousands(frees)
        << (frees == 1 ? " free" : " frees") << ")";
  }
  out << '\n';
  if (!c.thread_written)
    out << "the crashing thread's last events were not written (it crashed inside the "
           "recorder)\n";
  if (c.writer_late)
    out << "blocks handed to the recorder's writer before the crash may be missing too\n";
}

void write_site_sizes(std::ostream& out, const site& s) {
  std::vector<std::pair<std::uint64_t, std::size_t>> top;
  for (const auto& b : s.sizes.buckets) top.emplace_back(b.count, b.bucket);
  std::stable_sort(top.begin(), top.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  constexpr std::size_t shown = 4;
  out << "    sizes ";
  std::uint64_t rest = s.totals.allocations;
  for (std::size_t i = 0; i < top.size() && i < shown; ++i) {
    if (i != 0) out << ", ";
    out << bucket_label(top[i].second) << ": " << thousands(top[i].first) << " ("
        << percent(top[i].first, s.totals.allocations) << ")";
    rest -= top[i].first;
  }
  if (top.size() > shown)
    out << ", " << counted(top.size() - shown, "more size") << ": " << thousands(rest) << " ("
        << percent(rest, s.totals.allocations) << ")";
  out << '\n';
}

// "via OPERATION" when one made the site's allocations; several: each with its share, most
// first, at most three ("other": no standard-library operation).
void write_site_operations(std::ostream& out, const analysis& a, const site& s) {
  const std::size_t i = static_cast<std::size_t>(&s - a.sites.data());
  if (i + 1 >= a.site_operation_first.size()) return;
  const std::size_t begin = a.site_operation_first[i];
  const std::size_t end = a.site_operation_first[i + 1];
  if (end - begin == 1) {
    if (const std::string via = analyze::operation_text(a.operations[a.site_operations[begin].op]);
        !via.empty())
      out << "    via " << via << '\n';
    return;
  }
  constexpr std::size_t shown = 3;
  out << "    via ";
  std::uint64_t rest = s.totals.allocations;
  for (std::size_t k = begin; k < end && k < begin + shown; ++k) {
    const analyze::site_operation& so = a.site_operations[k];
    const std::string text = analyze::operation_text(a.operations[so.op]);
    out << (k == begin ? "" : ", ") << (text.empty() ? "other" : text) << ' '
        << percent(so.allocations, s.totals.allocations);
    rest -= so.allocations;
  }
  if (end - begin > shown)
    out << ", " << end - begin - shown << " more " << percent(rest, s.totals.allocations);
  out << '\n';
}

// "objects N, A allocations each (1: x %, ...)", how many alive at once and at the peak, and
// their lifetimes (report --objects).
void write_site_objects(std::ostream& out, const analyze::object_counts& o) {
  using analyze::object_counts;
  if (o.objects == 0) return;
  out << "    objects " << thousands(o.objects) << ", "
      << fixed(static_cast<double>(o.allocations) / static_cast<double>(o.objects), 2)
      << " allocations each (";
  bool first = true;
  for (std::size_t k = 0; k < object_counts::allocation_classes; ++k) {
    if (o.by_allocations[k] == 0) continue;
    const std::uint64_t lo = object_counts::allocation_class_min(k);
    const std::uint64_t hi = object_counts::allocation_class_max(k);
    out << (first ? "" : ", ") << lo
        << (hi == lo  ? ""
            : hi == 0 ? "+"
                      : ".." + std::to_string(hi))
        << ": " << percent(o.by_allocations[k], o.objects);
    first = false;
  }
  out << "), at most " << thousands(o.max_alive) << " alive at once, " << thousands(o.alive_at_peak)
      << " at the peak\n";
  static constexpr const char* lifetimes[object_counts::lifetime_classes] = {
      "temporary", "1..15", "16..255", "256..4095", "4096+", "alive at the end"};
  out << "    lifetime in allocations of their thread: ";
  first = true;
  for (std::size_t k = 0; k < object_counts::lifetime_classes; ++k) {
    if (o.by_lifetime[k] == 0) continue;
    out << (first ? "" : ", ") << lifetimes[k] << ' ' << percent(o.by_lifetime[k], o.objects);
    first = false;
  }
  // In time: the objects that ended (the ones alive at the end are in the list before).
  static constexpr const char* durations[object_counts::duration_classes - 1] = {
      "within a tick", "<1 ms", "1..10 ms", "10..100 ms", "0.1..1 s", "1 s+"};
  first = true;
  for (std::size_t k = 0; k + 1 < object_counts::duration_classes; ++k) {
    if (o.by_duration[k] == 0) continue;
    out << (first ? "; in time: " : ", ") << durations[k] << ' '
        << percent(o.by_duration[k], o.objects);
    first = false;
  }
  out << "; last block ";
  std::vector<std::pair<std::uint64_t, std::size_t>> top;
  for (const auto& b : o.final_sizes.buckets) top.emplace_back(b.count, b.bucket);
  std::stable_sort(top.begin(), top.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  constexpr std::size_t shown = 3;
  for (std::size_t i = 0; i < top.size() && i < shown; ++i)
    out << (i == 0 ? "" : ", ") << bucket_label(top[i].second) << ": "
        << percent(top[i].first, o.objects);
  if (top.size() > shown) out << ", " << counted(top.size() - shown, "more size");
  out << '\n';
}

// The site's best advice (the items are ranked), if one is not `none`.
void write_site_advice(std::ostream& out, const std::vector<analyze::advice_item>& advice,
                       std::size_t site) {
  for (const analyze::advice_item& it : advice) {
    if (it.site != site || it.kind == "none") continue;
    out << "    advice: " << it.chosen.suggestion << " (" << it.kind << ", " << it.confidence
        << " confidence): " << thousands(it.allocations) << " -> "
        << counted(it.chosen.allocations_after, "allocation") << " (lowalloc advise)\n";
    return;
  }
}

void write_stack(std::ostream& out, const site& s) {
  constexpr std::size_t shown = 8;
  if (s.stack.empty()) {
    out << "    (no stack: unwinding failed at the first frame)\n";
    return;
  }
  for (std::size_t i = 0; i < s.stack.size() && i < shown; ++i) {
    const frame& f = s.stack[i];
    out << (i == 0 ? "    at " : "       ") << (f.inlined ? "[inlined] " : "") << frame_text(f)
        << '\n';
  }
  if (s.stack.size() > shown) out << "       ... " << s.stack.size() - shown << " more\n";
}

// "max live 300 bytes": the most bytes of the site live at once; "max live 200..300 bytes" when
// its stacks' maxima do not say it exactly (model.hpp, site::max_live_at_least).
std::string max_live_text(const site& s) {
  std::string text = "max live ";
  if (!s.max_live_exact()) {
    text += thousands(s.max_live_at_least);
    text += "..";
  }
  text += counted(s.totals.max_live_bytes, "byte");
  return text;
}

// A summary line: label left, number right-aligned in a column, then a comment.
void line(std::ostream& out, std::string_view label, const std::string& value,
          const std::string& comment = {}) {
  std::string l(label);
  l.resize(std::max<std::size_t>(l.size(), 18), ' ');
  std::string v = value;
  if (v.size() < 14) v.insert(0, 14 - v.size(), ' ');
  out << l << v;
  if (!comment.empty()) out << "  " << comment;
  out << '\n';
}

// Why the trace has no END: the program still runs (analysis::running), or it was killed,
// crashed, or left by the exit_group system call (Go's runtime ends a program so), which runs
// nothing the recorder sees.
void write_unfinished(std::ostream& out, const analysis& a) {
  if (a.stopped)
    out << "\nthe recorder stopped: it could not write the trace (" << terminal_text(*a.stopped)
        << "), and the program ran on untraced: counts are up to the last block written, and "
           "the blocks live then count as leaked\n";
  else if (a.running)
    out << "\nthe program is still running (pid " << a.process.pid
        << "); the trace so far: counts are up to the last block written\n";
  else
    out << "\nthe process did not finish (killed, crashed, or ended by the exit_group system "
           "call): counts are up to the last block written\n";
}

}  // namespace

void write_text(std::ostream& out, const analysis& a, const report_options& ro) {
  const counters& t = a.totals;
  out << "lowalloc report";
  if (!ro.trace_name.empty()) out << ": " << ro.trace_name;
  out << '\n';
  const process_info& p = a.process;
  if (p.pid != 0 || !p.exe.empty()) {
    out << "process " << p.pid;
    if (p.ppid != 0) out << " (parent " << p.ppid << ")";
    out << ": ";
    if (!p.argv.empty()) {
      for (std::size_t i = 0; i < p.argv.size(); ++i)
        out << (i == 0 ? "" : " ") << terminal_text(p.argv[i]);
    } else {
      out << terminal_text(p.exe);
    }
    out << '\n';
    if (!p.argv.empty() && !p.exe.empty() && p.argv[0] != p.exe)
      out << "executable " << terminal_text(p.exe) << '\n';
    if (p.fork_child) out << "a fork child of process " << p.ppid << '\n';
    if (p.exec_child) out << "started by exec from a traced process\n";
  }
  out << '\n';

  std::string per_second;
  if (a.run_time_seconds > 0)
    per_second = thousands(static_cast<std::uint64_t>(static_cast<double>(t.allocations) /
                                                      a.run_time_seconds)) +
                 " per second";
  line(out, "allocations", thousands(t.allocations), per_second);
  line(out, "frees", thousands(t.frees));
  std::string avg;
  if (t.allocations != 0)
    avg = human_bytes(t.bytes_allocated) + ", " + thousands(t.bytes_allocated / t.allocations) +
          " per allocation on average";
  line(out, "bytes allocated", thousands(t.bytes_allocated), avg);
  line(out, "temporary", thousands(t.temporary),
       percent(t.temporary, t.allocations) + " of allocations, freed before the next one");
  line(out, "leaked", thousands(t.leaked_allocations),
       noun(t.leaked_allocations, "allocation") + ", " + counted(t.leaked_bytes, "byte") + " (" +
           human_bytes(t.leaked_bytes) + ")");
  if (const counters rt = a.runtime_totals(); rt.leaked_allocations != 0) {
    // Which of the leaks are the runtime's own: the largest reasons first.
    std::vector<std::size_t> reasons;
    for (std::size_t r = 1; r < a.runtime.size(); ++r)
      if (a.runtime[r].leaked_allocations != 0) reasons.push_back(r);
    std::stable_sort(reasons.begin(), reasons.end(), [&](std::size_t x, std::size_t y) {
      return a.runtime[x].leaked_bytes > a.runtime[y].leaked_bytes;
    });
    std::string parts;
    for (std::size_t r : reasons)
      parts += (parts.empty() ? "" : ", ") +
               std::string(analyze::runtime_reason_text(static_cast<analyze::runtime_reason>(r))) +
               " " + thousands(a.runtime[r].leaked_bytes);
    line(out, "  the runtime's", thousands(rt.leaked_allocations),
         noun(rt.leaked_allocations, "allocation") + ", " + counted(rt.leaked_bytes, "byte") +
             " of them: " + parts);
  }
  line(out, "peak", thousands(t.peak_bytes),
       noun(t.peak_bytes, "byte") + " live (" + human_bytes(t.peak_bytes) + ")");
  line(out, "run time", duration(a.run_time_seconds));
  line(out, "threads", thousands(a.threads));
  std::string by;
  for (std::size_t k = 0; k < a.allocations_by_kind.size(); ++k) {
    if (a.allocations_by_kind[k] == 0) continue;
    if (!by.empty()) by += ", ";
    by += std::string(kind_names[k]) + " " + thousands(a.allocations_by_kind[k]);
  }
  if (!by.empty()) out << "by function       " << by << '\n';
  if (a.unmatched_frees != 0)
    line(out, "unmatched frees", thousands(a.unmatched_frees),
         noun(a.unmatched_frees, "free") + " of memory not allocated while tracing");
  if (a.stacks_lost != 0)
    line(out, "stacks lost", thousands(a.stacks_lost),
         noun(a.stacks_lost, "allocation") +
             " shown without a stack: its thread's last block, which defined it, was lost");
  if (a.frees_not_seen != 0)
    line(out, "frees not seen", thousands(a.frees_not_seen),
         noun(a.frees_not_seen, "block") +
             " dropped: an allocation received the address before the free was seen");
  if (a.lost_events != 0)
    line(out, "lost events", thousands(a.lost_events),
         noun(a.lost_events, "event") + " the recorder could not record: counts are low");
  for (const analyze::shadowed_functions& s : a.shadowed) out << '\n' << shadowed_text(s) << '\n';
  if (!a.exec_path.empty()) {
    out << "\nthe process image ended by exec of " << a.exec_path;
    if (!ro.exec_trace.empty())
      out << "; its trace: " << ro.exec_trace << '\n';
    else
      out << "; no trace of it next to this one (lowalloc run --follow-exec traces it into its own"
             " FILE.PID)\n";
  }
  if (a.crash) write_crash(out, *a.crash, a.lost_events);
  if (!a.complete && a.truncation.empty() && (!a.crash || a.crash->ended)) write_unfinished(out, a);
  if (!a.truncation.empty())
    out << "\nthe trace is damaged; counts are up to the damage: " << a.truncation << '\n';

  std::size_t with_metric = 0;
  for (const site& s : a.sites) with_metric += metric(s.totals, ro.sort) != 0 ? 1u : 0u;
  if (with_metric == 0) {
    out << "\nno sites with " << sort_key_name(ro.sort) << '\n';
    return;
  }
  if (ro.top == 0) {  // the summary only
    out << '\n'
        << counted(with_metric, "site") << " by " << sort_key_name(ro.sort)
        << ", none shown (--top 0)\n";
    return;
  }
  const std::vector<const site*> sites = ranked_sites(a, ro.sort, ro.top);
  out << '\n';
  if (sites.size() < with_metric)
    out << "top " << sites.size() << " of " << counted(with_metric, "site");
  else
    out << counted(sites.size(), "site");
  out << " by " << sort_key_name(ro.sort) << '\n';
  const auto runtime = analyze::runtime_by_site(a);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const site& s = *sites[i];
    const counters& c = s.totals;
    const auto index = static_cast<std::size_t>(&s - a.sites.data());
    out << "\n#" << i + 1 << "  " << counted(c.allocations, "allocation") << " ("
        << percent(c.allocations, t.allocations) << "), " << counted(c.bytes_allocated, "byte")
        << ", " << thousands(c.temporary) << " temporary (" << percent(c.temporary, c.allocations)
        << "), " << max_live_text(s) << ", at peak " << counted(c.peak_bytes, "byte");
    if (c.leaked_allocations != 0) {
      // The program's leaks, then apart what the C and C++ runtimes keep until exit (a stdout
      // buffer made by the program's printf is the C library's, not a leak of that line).
      const auto rt = runtime.find(static_cast<std::uint32_t>(index));
      const counters kept = rt == runtime.end() ? counters{} : rt->second.totals;
      if (c.leaked_allocations != kept.leaked_allocations)
        out << ", leaked " << thousands(c.leaked_allocations - kept.leaked_allocations) << " ("
            << counted(c.leaked_bytes - kept.leaked_bytes, "byte") << ")";
      if (kept.leaked_allocations != 0)
        out << ", kept by the runtime " << thousands(kept.leaked_allocations) << " ("
            << counted(kept.leaked_bytes, "byte") << ": "
            << analyze::runtime_reason_text(rt->second.reason) << ")";
    }
    out << '\n';
    write_site_sizes(out, s);
    write_site_operations(out, a, s);
    if (ro.objects != nullptr) write_site_objects(out, (*ro.objects)[index]);
    if (ro.advice != nullptr) write_site_advice(out, *ro.advice, index);
    write_stack(out, s);
  }
}

}  // namespace lowalloc::report
