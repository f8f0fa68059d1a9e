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
    out << ", " << top.size() - shown << " more sizes: " << thousands(rest) << " ("
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
  if (top.size() > shown) out << ", " << top.size() - shown << " more sizes";
  out << '\n';
}

// The site's best advice (the items are ranked), if one is not `none`.
void write_site_advice(std::ostream& out, const std::vector<analyze::advice_item>& advice,
                       std::size_t site) {
  for (const analyze::advice_item& it : advice) {
    if (it.site != site || it.kind == "none") continue;
    out << "    advice: " << it.chosen.suggestion << " (" << it.kind << ", " << it.confidence
        << " confidence): " << thousands(it.allocations) << " -> "
        << thousands(it.chosen.allocations_after) << " allocations (lowalloc advise)\n";
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

// Why the trace has no END: the program still runs (analysis::running), or it was killed or
// crashed.
void write_unfinished(std::ostream& out, const analysis& a) {
  if (a.running)
    out << "\nthe program is still running (pid " << a.process.pid
        << "); the trace so far: counts are up to the last block written\n";
  else
    out << "\nthe process did not finish (killed or crashed): counts are up to the last block "
           "written\n";
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
      for (std::size_t i = 0; i < p.argv.size(); ++i) out << (i == 0 ? "" : " ") << p.argv[i];
    } else {
      out << p.exe;
    }
    out << '\n';
    if (!p.argv.empty() && !p.exe.empty() && p.argv[0] != p.exe)
      out << "executable " << p.exe << '\n';
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
  line(
      out, "leaked", thousands(t.leaked_allocations),
      "allocations, " + thousands(t.leaked_bytes) + " bytes (" + human_bytes(t.leaked_bytes) + ")");
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
         "allocations, " + thousands(rt.leaked_bytes) + " bytes of them: " + parts);
  }
  line(out, "peak", thousands(t.peak_bytes), "bytes live (" + human_bytes(t.peak_bytes) + ")");
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
         "frees of memory not allocated while tracing");
  if (a.lost_events != 0)
    line(out, "lost events", thousands(a.lost_events),
         "events the recorder could not record: counts are low");
  if (!a.exec_path.empty())
    out << "\nthe process image ended by exec of " << a.exec_path
        << " (traced on its own only with lowalloc run --follow-exec)\n";
  if (!a.complete && a.truncation.empty()) write_unfinished(out, a);
  if (!a.truncation.empty())
    out << "\nthe trace is damaged; counts are up to the damage: " << a.truncation << '\n';

  const std::vector<const site*> sites = ranked_sites(a, ro.sort, ro.top);
  if (sites.empty()) {
    out << "\nno sites with " << sort_key_name(ro.sort) << '\n';
    return;
  }
  std::size_t with_metric = 0;
  for (const site& s : a.sites) with_metric += metric(s.totals, ro.sort) != 0 ? 1u : 0u;
  out << '\n';
  if (sites.size() < with_metric)
    out << "top " << sites.size() << " of " << thousands(with_metric) << " sites";
  else
    out << thousands(sites.size()) << (sites.size() == 1 ? " site" : " sites");
  out << " by " << sort_key_name(ro.sort) << '\n';
  const auto runtime = analyze::runtime_by_site(a);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const site& s = *sites[i];
    const counters& c = s.totals;
    const auto index = static_cast<std::size_t>(&s - a.sites.data());
    out << "\n#" << i + 1 << "  " << thousands(c.allocations) << " allocations ("
        << percent(c.allocations, t.allocations) << "), " << thousands(c.bytes_allocated)
        << " bytes, " << thousands(c.temporary) << " temporary ("
        << percent(c.temporary, c.allocations) << "), peak " << thousands(c.peak_bytes) << " bytes";
    if (c.leaked_allocations != 0) {
      out << ", leaked " << thousands(c.leaked_allocations) << " (" << thousands(c.leaked_bytes)
          << " bytes";
      const auto rt = runtime.find(static_cast<std::uint32_t>(index));
      if (rt != runtime.end() && rt->second.totals.leaked_allocations != 0) {
        const bool all = rt->second.totals.leaked_bytes == c.leaked_bytes;
        out << ", " << (all ? std::string("all") : thousands(rt->second.totals.leaked_bytes))
            << " the runtime's: " << analyze::runtime_reason_text(rt->second.reason);
      }
      out << ")";
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
