// `lowalloc advise` output: per item the kind and confidence, the site and two callers, what
// allocates there, the change as code, before and after, and the alternatives.
#include "report/advice.hpp"

#include "report/common.hpp"

#include "analyze/words.hpp"

#include <ostream>

namespace lowalloc::report {

namespace {

using analyze::advice_item;
using analyze::advice_option;

std::string share(double v) { return analyze::percent_text(v); }

std::string seconds(double s) { return s <= 0 ? "nothing" : "about " + duration(s); }

// "+260,448", "-1,024".
std::string signed_bytes(std::int64_t b) {
  std::string out(1, b > 0 ? '+' : '-');
  out += thousands(static_cast<std::uint64_t>(b > 0 ? b : -b));
  return out;
}

}  // namespace

void write_advice_text(std::ostream& out, const analysis& a, const std::vector<advice_item>& advice,
                       const analyze::cost_model& costs, std::size_t top_sites) {
  out << "lowalloc advise: " << counted(a.totals.allocations, "allocation") << "; costs "
      << costs.source << ": " << fixed(costs.malloc_free_seconds * 1e9, 1)
      << " ns per malloc + free, " << fixed(costs.cache_line_seconds * 1e9, 1)
      << " ns per cache line, " << fixed(costs.pool_seconds * 1e9, 1) << " ns per pool slot\n";
  if (top_sites == 0) {
    out << "\nno sites looked at (--top 0)\n";
    return;
  }
  if (advice.empty()) {
    out << "\nno sites to advise on\n";
    return;
  }
  for (std::size_t i = 0; i < advice.size(); ++i) {
    const advice_item& it = advice[i];
    const site& s = a.sites[it.site];
    out << "\n#" << i + 1 << "  " << it.kind << " (" << it.confidence << " confidence)";
    if (it.kind != "none") out << ": saves " << seconds(it.chosen.estimated_seconds_saved);
    out << '\n';
    if (s.stack.empty()) {
      out << "    at (no stack)\n";
    } else {
      out << "    at " << frame_text(s.stack[0]) << '\n';
      for (std::size_t k = 1; k < s.stack.size() && k < 3; ++k)
        out << "       " << frame_text(s.stack[k]) << '\n';
    }
    out << "    " << it.what << '\n';
    if (it.kind == "none") {
      out << (it.confidence == "low" ? "    no advice: " : "    nothing worth changing: ")
          << it.evidence << '\n';
      continue;
    }
    const advice_option& c = it.chosen;
    out << "    change: " << c.suggestion;
    if (!it.container.empty() && (it.kind == "small_vector" || it.kind == "small_string" ||
                                  it.kind == "pool" || it.kind == "flat_map" || it.kind == "arena"))
      out << "  (instead of " << it.container << ")";
    out << '\n';
    out << "    allocations " << thousands(it.allocations) << " -> "
        << thousands(c.allocations_after);
    if (c.sizeof_before != 0)
      out << (it.kind == "pool" ? ", node " : ", object ") << c.sizeof_before << " -> "
          << counted(c.sizeof_after, "byte");
    out << ", at most " << thousands(it.max_alive) << " alive at once, "
        << thousands(it.alive_at_peak) << " at the peak";
    if (c.peak_bytes_added != 0)
      out << " (" << signed_bytes(c.peak_bytes_added) << ' '
          << noun(static_cast<std::uint64_t>(c.peak_bytes_added < 0 ? -c.peak_bytes_added
                                                                    : c.peak_bytes_added),
                  "byte")
          << " then)";
    out << '\n';
    out << "    evidence: " << it.evidence << '\n';
    if (it.options.size() > 1) {
      out << "    options:  N  allocations after  objects without  sizeof  at the peak  saves\n";
      for (const advice_option& o : it.options) {
        std::string n = std::to_string(o.reserve != 0      ? o.reserve
                                       : o.slot_size != 0  ? o.slot_size
                                       : o.arena_size != 0 ? o.arena_size
                                                           : o.inline_capacity);
        n.insert(0, n.size() < 4 ? 4 - n.size() : 0, ' ');
        std::string after = thousands(o.allocations_after);
        after.insert(0, after.size() < 17 ? 17 - after.size() : 0, ' ');
        std::string cover = share(o.coverage);
        cover.insert(0, cover.size() < 15 ? 15 - cover.size() : 0, ' ');
        std::string size = std::to_string(o.sizeof_after);
        size.insert(0, size.size() < 6 ? 6 - size.size() : 0, ' ');
        // An arena lives for its phase, on the stack or in the phase's scope: what it adds at
        // the peak is not counted (its sizeof is the column before).
        std::string peak = it.kind == "arena"        ? "-"
                           : o.peak_bytes_added == 0 ? "0"
                                                     : signed_bytes(o.peak_bytes_added);
        peak.insert(0, peak.size() < 11 ? 11 - peak.size() : 0, ' ');
        out << "           " << n << "  " << after << "  " << cover << "  " << size << "  " << peak
            << "  " << seconds(o.estimated_seconds_saved)
            << (o.suggestion == c.suggestion ? "  <- chosen" : "")
            << (o.suggestion.find("inplace_vector") != std::string::npos ||
                        o.suggestion.find("fixed_string") != std::string::npos
                    ? "  a fixed bound: it must hold for every object"
                    : "")
            << '\n';
      }
    }
  }
}

namespace {

void json_option(std::ostream& out, const advice_option& o) {
  out << "{\"suggestion\": " << json_string(o.suggestion) << ", \"inline_capacity\": ";
  if (o.inline_capacity == 0)
    out << "null";
  else
    out << o.inline_capacity;
  out << ", \"reserve\": ";
  if (o.reserve == 0)
    out << "null";
  else
    out << o.reserve;
  out << ", \"slot_size\": ";
  if (o.slot_size == 0)
    out << "null";
  else
    out << o.slot_size;
  out << ", \"arena_size\": ";
  if (o.arena_size == 0)
    out << "null";
  else
    out << o.arena_size;
  out << ", \"allocations_after\": " << o.allocations_after
      << ", \"coverage\": " << fixed(o.coverage, 4) << ", \"sizeof_before\": " << o.sizeof_before
      << ", \"sizeof_after\": " << o.sizeof_after
      << ", \"estimated_seconds_saved\": " << fixed(o.estimated_seconds_saved, 9)
      << ", \"peak_bytes_added\": " << o.peak_bytes_added << "}";
}

}  // namespace

void write_advice_json(std::ostream& out, const analysis& a, const std::vector<advice_item>& advice,
                       const analyze::cost_model& costs) {
  out << "{\n  \"format_version\": 1,\n  \"allocations\": " << a.totals.allocations
      << ",\n  \"costs\": {\"source\": " << json_string(costs.source)
      << ", \"malloc_free_seconds\": " << fixed(costs.malloc_free_seconds, 12)
      << ", \"cache_line_seconds\": " << fixed(costs.cache_line_seconds, 12)
      << ", \"pool_seconds\": " << fixed(costs.pool_seconds, 12) << "},\n  \"advice\": [";
  for (std::size_t i = 0; i < advice.size(); ++i) {
    const advice_item& it = advice[i];
    const site& s = a.sites[it.site];
    out << (i == 0 ? "\n" : ",\n") << "    {\"kind\": " << json_string(it.kind)
        << ", \"confidence\": " << json_string(it.confidence)
        << ",\n     \"site\": {\"rank\": " << it.site + 1 << ", \"function\": ";
    const frame* f = s.stack.empty() ? nullptr : &s.stack[0];
    out << (f == nullptr || f->function.empty() ? "null" : json_string(f->function))
        << ", \"file\": " << (f == nullptr || f->file.empty() ? "null" : json_string(f->file))
        << ", \"line\": ";
    if (f == nullptr || f->line == 0)
      out << "null";
    else
      out << f->line;
    out << ", \"stack\": [";
    for (std::size_t k = 0; k < s.stack.size(); ++k)
      out << (k == 0 ? "" : ", ") << json_string(frame_text(s.stack[k]));
    out << "]},\n     \"container\": "
        << (it.container.empty() ? "null" : json_string(it.container))
        << ", \"operation\": " << json_string(it.operation)
        << ", \"member\": " << (it.member.empty() ? "null" : json_string(it.member))
        << ", \"element\": " << (it.element.empty() ? "null" : json_string(it.element))
        << ", \"element_size\": ";
    if (it.element_size == 0)
      out << "null";
    else
      out << it.element_size;
    const advice_option& c = it.chosen;
    out << ",\n     \"suggestion\": " << (it.kind == "none" ? "null" : json_string(c.suggestion))
        << ", \"inline_capacity\": ";
    if (c.inline_capacity == 0)
      out << "null";
    else
      out << c.inline_capacity;
    out << ", \"reserve\": ";
    if (c.reserve == 0)
      out << "null";
    else
      out << c.reserve;
    out << ", \"slot_size\": ";
    if (c.slot_size == 0)
      out << "null";
    else
      out << c.slot_size;
    out << ", \"arena_size\": ";
    if (c.arena_size == 0)
      out << "null";
    else
      out << c.arena_size;
    out << ", \"allocations\": " << it.allocations
        << ", \"allocations_after\": " << c.allocations_after << ", \"objects\": " << it.objects
        << ", \"max_alive\": " << it.max_alive << ", \"alive_at_peak\": " << it.alive_at_peak
        << ", \"peak_bytes_added\": " << c.peak_bytes_added
        << ", \"coverage\": " << fixed(c.coverage, 4) << ", \"sizeof_before\": " << c.sizeof_before
        << ", \"sizeof_after\": " << c.sizeof_after
        << ", \"estimated_seconds_saved\": " << fixed(c.estimated_seconds_saved, 9)
        << ",\n     \"what\": " << json_string(it.what)
        << ", \"evidence\": " << json_string(it.evidence) << ",\n     \"options\": [";
    for (std::size_t k = 0; k < it.options.size(); ++k) {
      out << (k == 0 ? "" : ", ");
      json_option(out, it.options[k]);
    }
    out << "]}";
  }
  out << (advice.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace lowalloc::report
