// lowalloc diff: the summaries side by side, then the places that changed, largest change first.
#include "report/diff.hpp"

#include "analyze/operation.hpp"
#include "analyze/runtime.hpp"
#include "report/common.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <unordered_map>

namespace lowalloc::report {

namespace {

using analyze::analysis;
using analyze::comparison;
using analyze::match_kind;
using analyze::place;
using analyze::place_match;

constexpr std::uint32_t none = place_match::none;

double ratio(double big, double small) { return big / small; }

// "1.09x", "56.0x", "4,023x".
std::string times(double r) {
  if (r < 10) return fixed(r, 2) + "x";
  if (r < 100) return fixed(r, 1) + "x";
  return thousands(static_cast<std::uint64_t>(std::llround(r))) + "x";
}

// "-94.2 %", "+9.3 %", "-99.997 %" (never rounded to 100 when it is not).
std::string signed_percent(double pct) {
  int decimals = 1;
  while (decimals < 6 && std::fabs(pct) < 100 &&
         fixed(std::fabs(pct), decimals) == fixed(100, decimals))
    ++decimals;
  // Appended, not `"+" + fixed(...)`: GCC 12 -std=c++20 warns on that (-Wrestrict, a false
  // positive).
  std::string text = pct > 0 ? "+" : "";
  text += fixed(pct, decimals);
  text += " %";
  return text;
}

// The change of a figure in words: "same", "new", "-100 %, none left", "-94.2 %, 17.2x fewer".
std::string change_words(double before, double after, const char* fewer, const char* more) {
  if (before == after) return "same";
  if (before == 0) return "from none";
  if (after == 0) return "-100 %, none left";
  std::string s = signed_percent((after - before) / before * 100) + ", ";
  if (after < before)
    s += times(ratio(before, after)) + " " + fewer;
  else
    s += times(ratio(after, before)) + " " + more;
  return s;
}

std::uint64_t diff_magnitude(std::uint64_t x, std::uint64_t y) { return x > y ? x - y : y - x; }

const counters& totals_of(const std::vector<place>& places, std::uint32_t p) {
  static const counters zero{};
  return p == none ? zero : places[p].totals;
}

// A row of the summary: label, before, after, change.
void row(std::ostream& out, std::string_view label, const std::string& before,
         const std::string& after, const std::string& change) {
  std::string l(label);
  l.resize(std::max<std::size_t>(l.size(), 24), ' ');
  std::string b = before;
  if (b.size() < 15) b.insert(0, 15 - b.size(), ' ');
  std::string a = after;
  if (a.size() < 15) a.insert(0, 15 - a.size(), ' ');
  out << l << b << ' ' << a << "  " << change << '\n';
}

void count_row(std::ostream& out, std::string_view label, std::uint64_t before, std::uint64_t after,
               const char* fewer = "fewer", const char* more = "more") {
  row(out, label, thousands(before), thousands(after),
      change_words(static_cast<double>(before), static_cast<double>(after), fewer, more));
}

double per_second(const analysis& a) {
  return a.run_time_seconds > 0 ? static_cast<double>(a.totals.allocations) / a.run_time_seconds
                                : 0;
}

// The frames a place shows, the innermost first: the after trace's when it has it.
const analyze::site& shown_site(const analysis& before, const analysis& after, const comparison& c,
                                const place_match& m) {
  if (m.after != none) return after.sites[c.after[m.after].sites.front()];
  return before.sites[c.before[m.before].sites.front()];
}

std::string via(const analysis& a, const analyze::site& s) {
  const std::string text = analyze::operation_text(a.operation_of(s));
  return text.empty() ? "other" : text;
}

// A site's operations, most allocating first, each with its share when there are several
// ("std::string constructor 99 %, std::vector<std::string>::push_back (growth) 1.1 %"), and the
// set of them, sorted, to tell whether an operation came or went.
struct operation_mix {
  std::string text;
  std::vector<std::string> kinds;
};
operation_mix mix_of(const analysis& a, const analyze::site& s) {
  operation_mix mix;
  const std::size_t i = static_cast<std::size_t>(&s - a.sites.data());
  if (i + 1 >= a.site_operation_first.size()) return mix;
  const std::size_t begin = a.site_operation_first[i];
  const std::size_t end = a.site_operation_first[i + 1];
  for (std::size_t k = begin; k < end; ++k) {
    const analyze::site_operation& so = a.site_operations[k];
    std::string text = analyze::operation_text(a.operations[so.op]);
    if (text.empty()) text = "other";
    // (Appended piece by piece: GCC 12 at -std=c++20 saw an overlapping copy in
    // `" " + std::string` that is not there, -Wrestrict.)
    if (k < begin + 3) {
      if (k != begin) mix.text += ", ";
      mix.text += text;
      if (end - begin > 1) {
        mix.text += ' ';
        mix.text += percent(so.allocations, s.totals.allocations);
      }
    }
    mix.kinds.push_back(std::move(text));
  }
  if (end - begin > 3) {
    mix.text += ", ";
    mix.text += std::to_string(end - begin - 3);
    mix.text += " more";
  }
  std::sort(mix.kinds.begin(), mix.kinds.end());
  return mix;
}

// The bytes a place leaks that the C and C++ runtimes keep until exit (a stdout buffer made by
// the program's printf): not the program's leak, as the report says.
using runtime_sites = std::unordered_map<std::uint32_t, analyze::site_runtime>;
std::uint64_t runtime_leaked_bytes(const runtime_sites& runtime, const std::vector<place>& places,
                                   std::size_t p) {
  if (p == none) return 0;
  std::uint64_t bytes = 0;
  for (std::uint32_t s : places[p].sites)
    if (const auto it = runtime.find(s); it != runtime.end())
      bytes += it->second.totals.leaked_bytes;
  return bytes;
}

// ", leaked N bytes, kept by the runtime M bytes": each when not 0.
std::string leaks_text(std::uint64_t leaked, std::uint64_t kept) {
  std::string text;
  if (leaked != kept) text += ", leaked " + counted(leaked - kept, "byte");
  if (kept != 0) text += ", kept by the runtime " + counted(kept, "byte");
  return text;
}

void write_place(std::ostream& out, std::size_t rank, const analysis& before, const analysis& after,
                 const comparison& c, const place_match& m, const runtime_sites& runtime_before,
                 const runtime_sites& runtime_after) {
  const counters& b = totals_of(c.before, m.before);
  const counters& a = totals_of(c.after, m.after);
  const std::uint64_t kept_b = runtime_leaked_bytes(runtime_before, c.before, m.before);
  const std::uint64_t kept_a = runtime_leaked_bytes(runtime_after, c.after, m.after);
  out << "\n#" << rank << "  ";
  if (m.before == none) {
    out << "new: " << counted(a.allocations, "allocation") << ", "
        << counted(a.bytes_allocated, "byte") << leaks_text(a.leaked_bytes, kept_a) << '\n';
  } else if (m.after == none) {
    out << "gone: " << counted(b.allocations, "allocation") << ", "
        << counted(b.bytes_allocated, "byte") << leaks_text(b.leaked_bytes, kept_b) << '\n';
  } else {
    out << "allocations " << thousands(b.allocations) << " -> " << thousands(a.allocations) << " ("
        << change_words(static_cast<double>(b.allocations), static_cast<double>(a.allocations),
                        "fewer", "more")
        << "), bytes " << thousands(b.bytes_allocated) << " -> " << thousands(a.bytes_allocated)
        << '\n';
    std::string more;
    // "leaked 1 -> 2 bytes": the unit agrees with the number next to it.
    const auto add = [&](const char* name, std::uint64_t x, std::uint64_t y, const char* unit) {
      if (x == y) return;
      more += (more.empty() ? "" : ", ") + std::string(name) + " " + thousands(x) + " -> " +
              (*unit == '\0' ? thousands(y) : counted(y, unit));
    };
    add("temporary", b.temporary, a.temporary, "");
    add("leaked", b.leaked_bytes - kept_b, a.leaked_bytes - kept_a, "byte");
    add("kept by the runtime", kept_b, kept_a, "byte");
    add("max live", b.max_live_bytes, a.max_live_bytes, "byte");
    // A place of several sites, or a site whose stacks peak apart, has a bound, not its maximum.
    const auto exact = [](const analysis& t, const place& p) {
      return p.sites.size() == 1 && t.sites[p.sites.front()].max_live_exact();
    };
    if (b.max_live_bytes != a.max_live_bytes &&
        !(exact(before, c.before[m.before]) && exact(after, c.after[m.after])))
      more += " (at most)";
    add("at peak", b.peak_bytes, a.peak_bytes, "byte");
    if (!more.empty()) out << "    " << more << '\n';
    const analyze::site& sb = before.sites[c.before[m.before].sites.front()];
    const analyze::site& sa = after.sites[c.after[m.after].sites.front()];
    const std::string vb = via(before, sb);
    const std::string va = via(after, sa);
    // An operation that came or went is said even when the largest stayed (a vector's growth
    // gone from a site of string constructors, once the vector is reserved).
    const operation_mix mb = mix_of(before, sb);
    const operation_mix ma = mix_of(after, sa);
    if (mb.kinds != ma.kinds && c.before[m.before].sites.size() == 1 &&
        c.after[m.after].sites.size() == 1)
      out << "    via " << mb.text << " -> " << ma.text << '\n';
    else if (vb != va)
      out << "    via " << vb << " -> " << va << '\n';
    else if (vb != "other")
      out << "    via " << vb << '\n';
  }
  const analyze::site& s = shown_site(before, after, c, m);
  constexpr std::size_t shown = 6;
  if (s.stack.empty()) out << "    (no stack)\n";
  for (std::size_t i = 0; i < s.stack.size() && i < shown; ++i) {
    const analyze::frame& f = s.stack[i];
    out << (i == 0 ? "    at " : "       ") << (f.inlined ? "[inlined] " : "") << frame_text(f)
        << '\n';
  }
  if (s.stack.size() > shown) out << "       ... " << s.stack.size() - shown << " more\n";
  if (m.before != none && m.after != none && m.how != match_kind::same) {
    const analyze::site& sb = before.sites[c.before[m.before].sites.front()];
    out << "    matched by " << analyze::match_kind_text(m.how);
    if (!sb.stack.empty() && !s.stack.empty() && sb.stack[0].line != s.stack[0].line)
      out << " (line " << sb.stack[0].line << " before)";
    out << '\n';
  }
}

void json_counters(std::ostream& out, const std::vector<place>& places, std::uint32_t p) {
  if (p == none) {
    out << "null";
    return;
  }
  const counters& t = places[p].totals;
  out << "{\"allocations\": " << t.allocations << ", \"bytes_allocated\": " << t.bytes_allocated
      << ", \"frees\": " << t.frees << ", \"temporary\": " << t.temporary
      << ", \"leaked\": {\"allocations\": " << t.leaked_allocations
      << ", \"bytes\": " << t.leaked_bytes << "}, \"peak\": {\"bytes\": " << t.peak_bytes
      << "}, \"max_live\": {\"bytes\": " << t.max_live_bytes << "}}";
}

void json_summary(std::ostream& out, const analysis& a, const std::string& name) {
  const counters& t = a.totals;
  const counters rt = a.runtime_totals();
  out << "{\"trace\": " << json_string(name) << ", \"exe\": " << json_string(a.process.exe)
      << ", \"complete\": " << (a.complete ? "true" : "false")
      << ", \"truncation\": " << (a.truncation.empty() ? "null" : json_string(a.truncation))
      << ",\n    \"run_time_seconds\": " << fixed(a.run_time_seconds, 9)
      << ", \"allocations\": " << t.allocations << ", \"frees\": " << t.frees
      << ", \"bytes_allocated\": " << t.bytes_allocated << ", \"temporary\": " << t.temporary
      << ",\n    \"leaked\": {\"allocations\": " << t.leaked_allocations
      << ", \"bytes\": " << t.leaked_bytes << "}, \"peak\": {\"bytes\": " << t.peak_bytes
      << "}, \"runtime\": {\"allocations\": " << rt.allocations
      << ", \"leaked\": {\"allocations\": " << rt.leaked_allocations
      << ", \"bytes\": " << rt.leaked_bytes << "}}"
      << ",\n    \"allocations_per_second\": " << fixed(per_second(a), 1)
      << ", \"unmatched_frees\": " << a.unmatched_frees << ", \"lost_events\": " << a.lost_events
      << ", \"threads\": " << a.threads << "}";
}

}  // namespace

std::string change_text(std::uint64_t before, std::uint64_t after, const char* fewer,
                        const char* more) {
  return thousands(before) + " -> " + thousands(after) + " (" +
         change_words(static_cast<double>(before), static_cast<double>(after), fewer, more) + ")";
}

bool changed(const comparison& c, const place_match& m) {
  if (m.before == none || m.after == none) return true;
  const counters& b = c.before[m.before].totals;
  const counters& a = c.after[m.after].totals;
  return b.allocations != a.allocations || b.bytes_allocated != a.bytes_allocated ||
         b.frees != a.frees || b.temporary != a.temporary ||
         b.leaked_allocations != a.leaked_allocations || b.leaked_bytes != a.leaked_bytes ||
         b.peak_bytes != a.peak_bytes;
}

std::vector<place_match> ranked_changes(const comparison& c) {
  struct ranked {
    place_match m;
    bool changed;
    std::uint64_t allocations;
    std::uint64_t bytes;
  };
  std::vector<ranked> r;
  r.reserve(c.matches.size());
  for (const place_match& m : c.matches) {
    const counters& b = totals_of(c.before, m.before);
    const counters& a = totals_of(c.after, m.after);
    r.push_back(ranked{m, changed(c, m), diff_magnitude(b.allocations, a.allocations),
                       diff_magnitude(b.bytes_allocated, a.bytes_allocated)});
  }
  std::stable_sort(r.begin(), r.end(), [](const ranked& x, const ranked& y) {
    if (x.changed != y.changed) return x.changed;
    if (x.allocations != y.allocations) return x.allocations > y.allocations;
    return x.bytes > y.bytes;
  });
  std::vector<place_match> out;
  out.reserve(r.size());
  for (const ranked& x : r) out.push_back(x.m);
  return out;
}

void write_diff_text(std::ostream& out, const analysis& before, const analysis& after,
                     const comparison& c, const diff_options& o) {
  out << "lowalloc diff: " << o.before_name << " -> " << o.after_name << "\n\n";
  row(out, "", "before", "after", "change");
  const counters& b = before.totals;
  const counters& a = after.totals;
  count_row(out, "allocations", b.allocations, a.allocations);
  count_row(out, "frees", b.frees, a.frees);
  count_row(out, "bytes allocated", b.bytes_allocated, a.bytes_allocated, "less", "more");
  count_row(out, "temporary", b.temporary, a.temporary);
  count_row(out, "leaked allocations", b.leaked_allocations, a.leaked_allocations);
  count_row(out, "leaked bytes", b.leaked_bytes, a.leaked_bytes, "less", "more");
  const counters rb = before.runtime_totals();
  const counters ra = after.runtime_totals();
  if (rb.leaked_bytes != 0 || ra.leaked_bytes != 0)
    count_row(out, "  the runtime's", rb.leaked_bytes, ra.leaked_bytes, "less", "more");
  count_row(out, "peak bytes", b.peak_bytes, a.peak_bytes, "less", "more");
  row(out, "run time", duration(before.run_time_seconds), duration(after.run_time_seconds),
      change_words(before.run_time_seconds, after.run_time_seconds, "less", "more"));
  row(out, "allocations per second", thousands(static_cast<std::uint64_t>(per_second(before))),
      thousands(static_cast<std::uint64_t>(per_second(after))),
      change_words(per_second(before), per_second(after), "lower", "higher"));
  for (const analysis* t : {&before, &after}) {
    if (t->truncation.empty() && t->complete) continue;
    out << '\n'
        << (t == &before ? "before" : "after") << ": the trace is "
        << (!t->truncation.empty() ? "damaged"
            : t->stopped ? "one the recorder stopped writing (" + terminal_text(*t->stopped) + ")"
                         : std::string("of a process that did not finish"))
        << ": counts are up to its last good block\n";
  }

  // How the sites were matched, and how many changed.
  std::array<std::size_t, 5> by_kind{};
  std::size_t changes = 0;
  std::size_t added = 0;
  std::size_t gone = 0;
  for (const place_match& m : c.matches) {
    ++by_kind[static_cast<std::size_t>(m.how)];
    if (m.before == none)
      ++added;
    else if (m.after == none)
      ++gone;
    else if (changed(c, m))
      ++changes;
  }
  const std::size_t matched = c.matches.size() - added - gone;
  out << "\nsites: " << thousands(matched) << " in both";
  std::string kinds;
  for (std::size_t k = 0; k < 4; ++k)
    if (by_kind[k] != 0)
      kinds += (kinds.empty() ? "" : ", ") + thousands(by_kind[k]) + " " +
               std::string(analyze::match_kind_text(static_cast<match_kind>(k)));
  if (!kinds.empty()) out << " (" << kinds << ")";
  out << ", " << thousands(changes) << " of them changed; " << thousands(added) << " new, "
      << thousands(gone) << " gone\n";

  const std::size_t total = changes + added + gone;
  if (o.top == 0) {  // the summary only
    if (total != 0) out << '\n' << counted(total, "changed site") << ", none shown (--top 0)\n";
    return;
  }
  const std::vector<place_match> ranked = ranked_changes(c);
  const runtime_sites runtime_before = analyze::runtime_by_site(before);
  const runtime_sites runtime_after = analyze::runtime_by_site(after);
  std::size_t shown = 0;
  for (const place_match& m : ranked) {
    if (!changed(c, m) || shown >= o.top) break;
    write_place(out, ++shown, before, after, c, m, runtime_before, runtime_after);
  }
  if (total > shown) out << "\n... " << counted(total - shown, "more changed site") << " (--top)\n";
}

void write_diff_json(std::ostream& out, const analysis& before, const analysis& after,
                     const comparison& c, const diff_options& o) {
  out << "{\n  \"format_version\": 1,\n  \"before\": ";
  json_summary(out, before, o.before_name);
  out << ",\n  \"after\": ";
  json_summary(out, after, o.after_name);
  out << ",\n  \"sites\": [";
  std::size_t shown = 0;
  std::size_t unchanged = 0;
  bool first = true;
  for (const place_match& m : ranked_changes(c)) {
    const bool differs = changed(c, m);
    if (!differs) ++unchanged;
    if ((!differs && !o.unchanged) || shown >= o.top) continue;
    ++shown;
    const analyze::site& s = shown_site(before, after, c, m);
    const analyze::frame* f = s.stack.empty() ? nullptr : &s.stack[0];
    const auto line_of = [&](const analysis& a, const std::vector<place>& places,
                             std::uint32_t p) -> std::string {
      if (p == none) return "null";
      const analyze::site& site = a.sites[places[p].sites.front()];
      if (site.stack.empty() || site.stack[0].line == 0) return "null";
      return std::to_string(site.stack[0].line);
    };
    out << (first ? "\n" : ",\n") << "    {\"function\": "
        << (f == nullptr || f->function.empty() ? "null" : json_string(f->function))
        << ", \"file\": " << (f == nullptr || f->file.empty() ? "null" : json_string(f->file))
        << ", \"line_before\": " << line_of(before, c.before, m.before)
        << ", \"line_after\": " << line_of(after, c.after, m.after) << ", \"matched_by\": \""
        << analyze::match_kind_key(m.how) << "\",\n     \"before\": ";
    json_counters(out, c.before, m.before);
    out << ",\n     \"after\": ";
    json_counters(out, c.after, m.after);
    out << ",\n     \"stack\": [";
    for (std::size_t i = 0; i < s.stack.size(); ++i)
      out << (i == 0 ? "" : ", ") << json_string(frame_text(s.stack[i]));
    out << "]}";
    first = false;
  }
  out << (first ? "]" : "\n  ]") << ",\n  \"unchanged_sites\": " << unchanged << "\n}\n";
}

}  // namespace lowalloc::report
