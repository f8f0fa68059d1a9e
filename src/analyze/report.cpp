// Text, JSON and folded-stack output of an analysis.
#include "analyze/report.hpp"

#include "trace/format.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <utility>

namespace lowalloc::analyze {

namespace {

constexpr const char* kind_names[8] = {"malloc",       "calloc",         "realloc",
                                       "reallocarray", "posix_memalign", "aligned_alloc",
                                       "memalign",     "valloc"};

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "0 %";
  const double p = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  if (part == whole) return "100 %";
  if (p >= 10) return fixed(p, 0) + " %";
  return fixed(p, 1) + " %";
}

std::string human_bytes(std::uint64_t n) {
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024) return std::to_string(n) + " B";
  double v = static_cast<double>(n) / 1024;
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fixed(v, v >= 100 ? 0 : 1) + " " + units[u];
}

std::string duration(double s) {
  if (s <= 0) return "0 s";
  if (s < 1e-3) return fixed(s * 1e6, 1) + " us";
  if (s < 1) return fixed(s * 1e3, 1) + " ms";
  if (s < 100) return fixed(s, 3) + " s";
  return fixed(s, 0) + " s";
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string_view basename(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string bucket_label(std::size_t b) {
  const std::uint64_t lo = histogram::bucket_min(b);
  const std::uint64_t hi = histogram::bucket_max(b);
  if (lo == hi) return std::to_string(lo);
  return std::to_string(lo) + ".." + std::to_string(hi);
}

// The common spellings of std::string shortened, for text and flame graphs (JSON keeps the
// demangler's names).
std::string readable(std::string name) {
  static constexpr std::string_view long_names[] = {
      "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
      "std::basic_string<char, std::char_traits<char>, std::allocator<char> >"};
  for (std::string_view l : long_names) {
    for (std::size_t at = name.find(l); at != std::string::npos; at = name.find(l, at))
      name.replace(at, l.size(), "std::string");
  }
  for (std::size_t at = name.find("std::string >"); at != std::string::npos;
       at = name.find("std::string >", at))
    name.erase(at + 11, 1);
  return name;
}

// "fn (file:line)", "fn (module+0xoff)", "module+0xoff", "0xaddr".
std::string frame_text(const frame& f) {
  std::string where;
  if (!f.file.empty()) {
    where = f.file;
    if (f.line != 0) where += ":" + std::to_string(f.line);
  } else if (!f.module.empty()) {
    where = std::string(basename(f.module)) + "+" + hex(f.offset);
  }
  std::string text;
  if (f.function.empty())
    text = where.empty() ? hex(f.address) : where;
  else
    text = where.empty() ? readable(f.function) : readable(f.function) + " (" + where + ")";
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';  // keep the terminal sane
  return text;
}

void write_site_sizes(std::ostream& out, const site& s) {
  std::vector<std::pair<std::uint64_t, std::size_t>> top;
  for (std::size_t b = 0; b < s.sizes.counts.size(); ++b)
    if (s.sizes.counts[b] != 0) top.emplace_back(s.sizes.counts[b], b);
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

}  // namespace

bool parse_sort_key(std::string_view name, sort_key& out) noexcept {
  static constexpr std::pair<std::string_view, sort_key> keys[] = {
      {"allocations", sort_key::allocations},
      {"bytes", sort_key::bytes},
      {"temporary", sort_key::temporary},
      {"leaked", sort_key::leaked},
      {"peak", sort_key::peak}};
  for (const auto& [n, k] : keys) {
    if (n == name) {
      out = k;
      return true;
    }
  }
  return false;
}

std::string_view sort_key_name(sort_key key) noexcept {
  switch (key) {
    case sort_key::allocations:
      return "allocations";
    case sort_key::bytes:
      return "bytes";
    case sort_key::temporary:
      return "temporary";
    case sort_key::leaked:
      return "leaked";
    case sort_key::peak:
      return "peak";
  }
  return "allocations";
}

std::uint64_t metric(const counters& c, sort_key key) noexcept {
  switch (key) {
    case sort_key::allocations:
      return c.allocations;
    case sort_key::bytes:
      return c.bytes_allocated;
    case sort_key::temporary:
      return c.temporary;
    case sort_key::leaked:
      return c.leaked_bytes;
    case sort_key::peak:
      return c.peak_bytes;
  }
  return c.allocations;
}

std::vector<const site*> ranked_sites(const analysis& a, sort_key key, std::size_t top) {
  std::vector<const site*> v;
  for (const site& s : a.sites)
    if (metric(s.totals, key) != 0) v.push_back(&s);
  const auto before = [key](const site* x, const site* y) {
    const std::uint64_t mx = metric(x->totals, key);
    const std::uint64_t my = metric(y->totals, key);
    if (mx != my) return mx > my;
    return x->totals.allocations > y->totals.allocations;
  };
  if (top < v.size()) {
    std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(top), v.end(),
                      [&](const site* x, const site* y) {
                        // partial_sort is not stable: break ties by position in a.sites.
                        if (before(x, y)) return true;
                        if (before(y, x)) return false;
                        return x < y;
                      });
    v.resize(top);
  } else {
    std::stable_sort(v.begin(), v.end(), before);
  }
  return v;
}

std::string thousands(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string json_string(std::string_view s) {
  static const char hexdigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (c < 0x20 || c == 0x7F) {
            out += "\\u00";
            out += hexdigits[c >> 4];
            out += hexdigits[c & 15];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++p;
      continue;
    }
    // A well-formed UTF-8 sequence is copied; anything else becomes U+FFFD, one byte at a time.
    std::size_t len = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool ok = len != 0 && static_cast<std::size_t>(end - p) >= len;
    for (std::size_t i = 1; ok && i < len; ++i) {
      const unsigned char cc = p[i];
      ok = i == 1 ? (cc >= lo && cc <= hi) : (cc >= 0x80 && cc <= 0xBF);
    }
    if (ok) {
      out.append(reinterpret_cast<const char*>(p), len);
      p += len;
    } else {
      out += "\\ufffd";
      ++p;
    }
  }
  out += '"';
  return out;
}

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
  if (!a.complete && a.truncation.empty())
    out << "\nthe process did not finish (killed or crashed): counts are up to the last block "
           "written\n";
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
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const site& s = *sites[i];
    const counters& c = s.totals;
    out << "\n#" << i + 1 << "  " << thousands(c.allocations) << " allocations ("
        << percent(c.allocations, t.allocations) << "), " << thousands(c.bytes_allocated)
        << " bytes, " << thousands(c.temporary) << " temporary ("
        << percent(c.temporary, c.allocations) << "), peak " << thousands(c.peak_bytes) << " bytes";
    if (c.leaked_allocations != 0)
      out << ", leaked " << thousands(c.leaked_allocations) << " (" << thousands(c.leaked_bytes)
          << " bytes)";
    out << '\n';
    write_site_sizes(out, s);
    write_stack(out, s);
  }
}

namespace {

void json_histogram(std::ostream& out, const histogram& h) {
  out << '[';
  bool first = true;
  for (std::size_t b = 0; b < h.counts.size(); ++b) {
    if (h.counts[b] == 0) continue;
    out << (first ? "" : ", ") << "{\"min\": " << histogram::bucket_min(b)
        << ", \"max\": " << histogram::bucket_max(b) << ", \"count\": " << h.counts[b] << '}';
    first = false;
  }
  out << ']';
}

}  // namespace

void write_json(std::ostream& out, const analysis& a, const report_options& ro) {
  const counters& t = a.totals;
  const process_info& p = a.process;
  out << "{\n  \"format_version\": 1,\n";
  out << "  \"process\": {\"pid\": " << p.pid << ", \"ppid\": " << p.ppid
      << ", \"fork_child\": " << (p.fork_child ? "true" : "false")
      << ", \"exec_child\": " << (p.exec_child ? "true" : "false")
      << ", \"exe\": " << json_string(p.exe) << ", \"argv\": [";
  for (std::size_t i = 0; i < p.argv.size(); ++i)
    out << (i == 0 ? "" : ", ") << json_string(p.argv[i]);
  out << "]},\n";
  out << "  \"complete\": " << (a.complete ? "true" : "false") << ",\n";
  out << "  \"truncation\": " << (a.truncation.empty() ? "null" : json_string(a.truncation))
      << ",\n";
  out << "  \"run_time_seconds\": " << fixed(a.run_time_seconds, 9) << ",\n";
  out << "  \"allocations\": " << t.allocations << ",\n";
  out << "  \"frees\": " << t.frees << ",\n";
  out << "  \"bytes_allocated\": " << t.bytes_allocated << ",\n";
  out << "  \"temporary\": " << t.temporary << ",\n";
  out << "  \"leaked\": {\"allocations\": " << t.leaked_allocations
      << ", \"bytes\": " << t.leaked_bytes << "},\n";
  out << "  \"peak\": {\"bytes\": " << t.peak_bytes << "},\n";
  out << "  \"unmatched_frees\": " << a.unmatched_frees << ",\n";
  out << "  \"lost_events\": " << a.lost_events << ",\n";
  out << "  \"threads\": " << a.threads << ",\n";
  out << "  \"by_function\": {";
  for (std::size_t k = 0; k < a.allocations_by_kind.size(); ++k)
    out << (k == 0 ? "" : ", ") << '"' << kind_names[k] << "\": " << a.allocations_by_kind[k];
  out << "},\n";
  out << "  \"histogram\": ";
  json_histogram(out, a.sizes);
  out << ",\n";
  out << "  \"sort\": " << json_string(sort_key_name(ro.sort)) << ",\n";
  out << "  \"sites\": [";
  const std::vector<const site*> sites = ranked_sites(a, ro.sort, ro.top);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const site& s = *sites[i];
    const counters& c = s.totals;
    out << (i == 0 ? "\n" : ",\n") << "    {\"allocations\": " << c.allocations
        << ", \"bytes_allocated\": " << c.bytes_allocated << ", \"frees\": " << c.frees
        << ", \"temporary\": " << c.temporary
        << ", \"leaked\": {\"allocations\": " << c.leaked_allocations
        << ", \"bytes\": " << c.leaked_bytes << "}, \"peak\": {\"bytes\": " << c.peak_bytes
        << "},\n     \"histogram\": ";
    json_histogram(out, s.sizes);
    out << ",\n     \"folded_frames\": " << s.folded_frames << ",\n     \"stack\": [";
    for (std::size_t k = 0; k < s.stack.size(); ++k) {
      const frame& f = s.stack[k];
      out << (k == 0 ? "\n" : ",\n") << "      {\"address\": \"" << hex(f.address)
          << "\", \"module\": " << (f.module.empty() ? "null" : json_string(f.module))
          << ", \"offset\": " << f.offset
          << ", \"function\": " << (f.function.empty() ? "null" : json_string(f.function))
          << ", \"file\": " << (f.file.empty() ? "null" : json_string(f.file)) << ", \"line\": ";
      if (f.line == 0)
        out << "null";
      else
        out << f.line;
      out << ", \"inlined\": " << (f.inlined ? "true" : "false") << '}';
    }
    out << (s.stack.empty() ? "]}" : "\n     ]}");
  }
  out << (sites.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

void write_folded(std::ostream& out, const analysis& a, const report_options& ro) {
  const std::vector<const site*> sites = ranked_sites(a, ro.sort, ro.top);
  std::string text;
  for (const site* s : sites) {
    text.clear();
    if (s->stack.empty()) text = "[no stack]";
    for (std::size_t k = s->stack.size(); k-- > 0;) {
      const frame& f = s->stack[k];
      std::string name;
      if (!f.function.empty())
        name = readable(f.function);
      else if (!f.module.empty())
        name = std::string(basename(f.module)) + "+" + hex(f.offset);
      else
        name = hex(f.address);
      for (char& c : name)
        if (c == ';' || c == '\n' || c == '\r') c = c == ';' ? ',' : ' ';
      if (f.inlined) name += "_[i]";  // the inlined-frame annotation of flamegraph.pl and inferno
      if (!text.empty()) text += ';';
      text += name;
    }
    out << text << ' ' << metric(s->totals, ro.sort) << '\n';
  }
}

}  // namespace lowalloc::analyze
