// Ranking, frame text and number formatting for every report format.
#include "report/common.hpp"

#include "analyze/type_names.hpp"
#include "analyze/words.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <utility>

namespace lowalloc::report {

const char* const kind_names[8] = {"malloc",         "calloc",        "realloc",  "reallocarray",
                                   "posix_memalign", "aligned_alloc", "memalign", "valloc"};

std::string shadowed_text(const analyze::shadowed_functions& s) {
  std::string names;
  for (std::size_t i = 0; i < s.functions.size(); ++i)
    names += (i == 0 ? "" : i + 1 == s.functions.size() ? " and " : ", ") + s.functions[i];
  const bool one = s.functions.size() == 1;
  return "the program's calls to " + names + " were not recorded: " + s.module + " defines " +
         (one ? "it" : "them") +
         ", and the dynamic loader binds the calls to that definition, which the recorder does "
         "not see (an allocator linked into the program, such as tcmalloc or jemalloc); the "
         "counts are of the calls that reached the recorder only. Trace a build of the program "
         "that allocates with the C library's malloc";
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "0 %";
  if (part == whole) return "100 %";
  return analyze::percent_text(static_cast<double>(part) / static_cast<double>(whole), "0.0 %");
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

// The common spellings of std::string shortened, and lowalloc's types as their users write them
// (analyze/type_names.hpp), for text and flame graphs (JSON keeps the demangler's names).
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
  if (name.find("lowalloc::") != std::string::npos) name = analyze::abbreviate_lowalloc_types(name);
  return name;
}

std::string flame_frame_name(const frame& f, bool line) {
  if (f.function.empty())
    return f.module.empty() ? hex(f.address)
                            : std::string(basename(f.module)) + "+" + hex(f.offset);
  std::string name = readable(f.function);
  if (line && f.line != 0) {
    name += ':';
    name += std::to_string(f.line);
  }
  return name;
}

// "fn (file:line)", "fn (module+0xoff)", "module+0xoff", "0xaddr".
std::string frame_text(const frame& f) {
  std::string where;
  if (!f.file.empty()) {
    where = f.file;
    if (f.line != 0) {
      // Not `":" + std::to_string(...)`: GCC 12 -std=c++20 warns on its inlined insert
      // (-Wrestrict, a false positive).
      where += ':';
      where += std::to_string(f.line);
    }
  } else if (!f.module.empty()) {
    where = std::string(basename(f.module)) + "+" + hex(f.offset);
  }
  std::string text;
  if (f.function.empty())
    text = where.empty() ? hex(f.address) : where;
  else
    text = where.empty() ? readable(f.function) : readable(f.function) + " (" + where + ")";
  return terminal_text(text);
}

std::string terminal_text(std::string_view s) {
  std::string text(s);
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';  // keep the terminal sane
  return text;
}

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
  } else if (!std::is_sorted(v.begin(), v.end(), before)) {
    // (By allocations, the order the sites are in: 10^6 sites are not sorted again.)
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

std::string noun(std::uint64_t n, std::string_view singular, std::string_view plural) {
  return analyze::noun(n, singular, plural);
}

std::string counted(std::uint64_t n, std::string_view singular, std::string_view plural) {
  std::string out = thousands(n);
  out += ' ';
  out += noun(n, singular, plural);
  return out;
}

std::size_t utf8_length(std::string_view s, std::size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + at;
  const unsigned char c = *p;
  if (c < 0x80) return 1;
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
  if (len == 0 || s.size() - at < len) return 0;
  for (std::size_t i = 1; i < len; ++i) {
    const unsigned char cc = p[i];
    if (i == 1 ? (cc < lo || cc > hi) : (cc < 0x80 || cc > 0xBF)) return 0;
  }
  return len;
}

std::string json_string(std::string_view s) {
  static const char hexdigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  const auto* begin = reinterpret_cast<const unsigned char*>(s.data());
  const auto* p = begin;
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
    const std::size_t len = utf8_length(s, static_cast<std::size_t>(p - begin));
    if (len != 0) {
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

}  // namespace lowalloc::report
