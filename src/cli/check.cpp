// `lowalloc check TRACE [limits...]`: a gate for CI. Limits on the totals, on the allocations
// that pass through one place (--site), and against a baseline trace (--max-increase), each
// checked and printed; the first exceeded one makes the exit status 1. The C and C++ runtimes'
// own leaks (analyze/runtime.hpp) are left out of the leak limits unless --include-runtime. After
// `--` the argument is the TRACE, even one that starts with '-'.
#include "cli/commands.hpp"
#include "cli/options.hpp"

#include "analyze/compare.hpp"
#include "analyze/fold.hpp"
#include "analyze/runtime.hpp"
#include "cli/notes.hpp"
#include "cli/output_file.hpp"
#include "cli/traces.hpp"
#include "report/common.hpp"
#include "report/diff.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lowalloc::cli {

namespace {

constexpr const char* usage =
    "usage: lowalloc check TRACE [limits...] [options]\n"
    "\n"
    "Checks a trace written by `lowalloc run` against limits: exit status 0 when every limit\n"
    "holds, 1 when one is exceeded (each on stderr, with the site that contributes most),\n"
    "2 when the check cannot be made (a trace cannot be read or is incomplete, a bad option).\n"
    "\n"
    "limits on the totals, or on the allocations through one place after --site:\n"
    "  --max-allocations N   allocations\n"
    "  --max-bytes N         bytes allocated\n"
    "  --max-temporary N     temporary allocations (freed before the next one)\n"
    "  --max-leaked-bytes N  bytes never freed, the C and C++ runtimes' own left out\n"
    "  --max-peak-bytes N    live bytes at the peak\n"
    "  N is a count, or with a suffix k, M, G (x1000) or KiB, MiB, GiB (x1024)\n"
    "  --site PLACE          the limits after it apply to the allocations whose stack passes\n"
    "                        through PLACE: FUNCTION, FILE:LINE or FUNCTION:LINE (a file by its\n"
    "                        name or the end of its path; a function by its name, qualified or\n"
    "                        not, without parameters; LINE from 1 to 4294967295); each\n"
    "                        --site needs a limit after it\n"
    "\n"
    "against an earlier trace:\n"
    "  --baseline OLD        the trace to compare with (sites matched as by lowalloc diff)\n"
    "  --max-increase P%     allocations, bytes, temporary, leaked and peak bytes may grow by\n"
    "                        at most P percent, in total and at each site found in both\n"
    "                        (P: a decimal number from 0 to 1000000, at most 9 digits\n"
    "                        after the point; a growth of exactly P percent holds)\n"
    "\n"
    "options:\n"
    "  --include-runtime     count the runtimes' own leaks (stdio buffers, locale, loader...)\n"
    "  --allow-incomplete    check a trace whose process did not finish (killed, crashed, a\n"
    "                        file cut short) on the events it holds; without it such a trace\n"
    "                        makes the check fail with status 2\n"
    "  --junit FILE          also write the results as a JUnit XML report\n"
    "  --no-symbols          addresses and modules only (no debug info is read; --site then\n"
    "                        matches nothing)\n"
    "  --debug-path DIR      look in DIR for a copy of a binary that changed or was deleted\n"
    "                        since the trace was written (by its name, or its debug file\n"
    "                        DIR/.build-id/xx/rest.debug) and for the debug files of\n"
    "                        stripped binaries; repeatable\n"
    "  -q, --quiet           print only what fails\n"
    "  --                    end of the options: the argument after it is the trace, even\n"
    "                        one whose name starts with -\n"
    "  -h, --help            this help\n";

int usage_error(const std::string& message) {
  std::cerr << "lowalloc check: " << message << "\n\n" << usage;
  return 2;
}

enum class metric { allocations, bytes, temporary, leaked_bytes, peak_bytes };
constexpr std::string_view metric_names[] = {"allocations", "bytes allocated", "temporary",
                                             "leaked bytes", "peak bytes"};
constexpr std::string_view metric_options[] = {"--max-allocations", "--max-bytes",
                                               "--max-temporary", "--max-leaked-bytes",
                                               "--max-peak-bytes"};

// A --site PLACE: a name (function or file) and maybe a line.
struct place_spec {
  std::string name;
  unsigned line = 0;  // 0: any

  bool matches(const analyze::frame& f) const;
};

struct limit {
  metric what;
  std::uint64_t max;
  std::string site;  // empty: the totals
  place_spec place;  // the site's
};

// One checked limit: a test case of the JUnit report.
struct result {
  std::string name;  // "allocations <= 300,000", "split_words: allocations <= 1,000"
  bool ok = true;
  std::string detail;  // the figure, and where the most of it is
};

std::uint64_t value(const analyze::counters& c, metric m) {
  switch (m) {
    case metric::allocations:
      return c.allocations;
    case metric::bytes:
      return c.bytes_allocated;
    case metric::temporary:
      return c.temporary;
    case metric::leaked_bytes:
      return c.leaked_bytes;
    case metric::peak_bytes:
      return c.peak_bytes;
  }
  return 0;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool place_spec::matches(const analyze::frame& f) const {
  if (line != 0 && f.line != line) return false;
  if (!f.file.empty() && (f.file == name || ends_with(f.file, "/" + name))) return true;
  if (f.function.empty()) return false;
  if (f.function == name) return true;
  // A name as the report prints it matches too: its template arguments are left out as the
  // frame's are ("std::map<int, long>::operator[]"), and std::string stands for the standard
  // library's spelling of it ("std::string::_M_mutate").
  const std::string key =
      name.find('<') != std::string::npos ? analyze::detail::base_name(name) : name;
  for (const std::string& function : {f.function, report::readable(f.function)}) {
    const std::string base = analyze::detail::base_name(function);
    if (base == key || ends_with(base, "::" + key)) return true;
  }
  return false;
}

// --site's PLACE into `place`: NAME:LINE when digits follow its last colon that is not one of a
// "::" (a qualified function's), else a NAME alone; a name may hold other colons ("[abi:cxx11]").
// Empty if it is one, else the usage error: a LINE of 0 would match any line, and one past what a
// line number holds would be cut down to another line, so both are refused.
std::string parse_place(const std::string& text, place_spec& place) {
  place = place_spec{text, 0};
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size() ||
      text.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
      (colon != 0 && text[colon - 1] == ':'))
    return {};
  std::uint64_t line = 0;
  if (parse_count(std::string_view(text).substr(colon + 1), line) != count_status::ok ||
      line == 0 || line > std::numeric_limits<unsigned>::max())
    return "--site needs a line from 1 to " + std::to_string(std::numeric_limits<unsigned>::max()) +
           " after the colon, not '" + text + "'";
  // ":12" would match no site: no function or file has an empty name.
  if (colon == 0) return "--site needs a file or function name before the line, not '" + text + "'";
  place = place_spec{text.substr(0, colon), static_cast<unsigned>(line)};
  return {};
}

// A site's counters with the runtime's leaks left out (unless they count).
analyze::counters program_part(const analyze::counters& c, const analyze::counters* runtime) {
  analyze::counters out = c;
  if (runtime != nullptr) {
    out.leaked_allocations -= runtime->leaked_allocations;
    out.leaked_bytes -= runtime->leaked_bytes;
  }
  return out;
}

std::string where(const analyze::site& s) {
  return s.stack.empty() ? std::string("(no stack)") : report::frame_text(s.stack[0]);
}

class checker {
 public:
  checker(const analyze::analysis& a, bool include_runtime)
      : a_(a), include_runtime_(include_runtime) {
    if (!include_runtime) runtime_ = analyze::runtime_by_site(a);
    if (!include_runtime) runtime_total_ = a.runtime_totals();
  }

  analyze::counters site_counters(std::size_t i) const {
    const auto it = runtime_.find(static_cast<std::uint32_t>(i));
    return program_part(a_.sites[i].totals, it == runtime_.end() ? nullptr : &it->second.totals);
  }
  analyze::counters totals() const { return program_part(a_.totals, &runtime_total_); }

  // The allocations whose stack passes through `spec`, by the site each is shown under, in the
  // order of the sites. Every frame of a stack counts, the allocator and start frames folded out
  // of its site too: `--site _M_realloc_insert` is a vector's growth wherever it is, and a site
  // whose stacks pass through the place by only some of their paths counts those alone.
  std::vector<std::pair<std::size_t, analyze::counters>> through(const place_spec& spec) const {
    std::vector<std::pair<std::size_t, analyze::counters>> out;
    if (a_.frames == nullptr) return out;
    const analyze::frame_table& table = *a_.frames;
    std::vector<char> hit(table.frames.size());
    bool any = false;
    for (std::size_t f = 0; f < hit.size(); ++f)
      any |= (hit[f] = spec.matches(table.frames[f])) != 0;
    if (!any) return out;
    std::map<std::size_t, analyze::counters> by_site;
    for (std::size_t s = 0; s < a_.stacks.size(); ++s) {
      const analyze::stack& st = a_.stacks[s];
      bool passes = false;
      for (std::uint32_t k = 0; k < st.frame_count && !passes; ++k)
        passes = hit[table.ids[st.first_frame + k]] != 0;
      if (!passes) continue;
      analyze::counters c = st.totals;
      if (!include_runtime_ && s < a_.stack_runtime.size() && a_.stack_runtime[s] != 0) {
        c.leaked_allocations = 0;  // the runtime's: not the program's leak
        c.leaked_bytes = 0;
      }
      analyze::add_counters(by_site[st.site], c);
    }
    out.assign(by_site.begin(), by_site.end());
    return out;
  }

  // The site of `hits` with the most of `m`, as "fn (file:line): N".
  std::string largest(const std::vector<std::pair<std::size_t, analyze::counters>>& hits,
                      metric m) const {
    const std::pair<std::size_t, analyze::counters>* best = nullptr;
    std::uint64_t most = 0;
    for (const auto& h : hits) {
      if (value(h.second, m) > most) {
        most = value(h.second, m);
        best = &h;
      }
    }
    if (best == nullptr) return {};
    return "largest site: " + where(a_.sites[best->first]) + ": " + report::thousands(most);
  }

  // Every site, with its counters.
  std::vector<std::pair<std::size_t, analyze::counters>> all_sites() const {
    std::vector<std::pair<std::size_t, analyze::counters>> out(a_.sites.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = {i, site_counters(i)};
    return out;
  }

 private:
  const analyze::analysis& a_;
  bool include_runtime_;
  std::unordered_map<std::uint32_t, analyze::site_runtime> runtime_;
  analyze::counters runtime_total_;
};

// `s` for an XML attribute or text. The report declares UTF-8: what is not well-formed UTF-8 (a
// path's bytes in another encoding) becomes U+FFFD, one byte at a time, as in the JSON reports
// (report::json_string); so do U+FFFE and U+FFFF, which XML 1.0 does not allow.
std::string xml_escape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      const std::size_t len = report::utf8_length(s, i);
      const std::string_view seq = s.substr(i, len);
      if (len == 0 || seq == "\xEF\xBF\xBE" || seq == "\xEF\xBF\xBF") {
        out += "\xEF\xBF\xBD";
      } else {
        out += seq;
        i += len - 1;
      }
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters but tab and newlines.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

// The results as JUnit XML (the schema Jenkins, GitLab and GitHub's test reporters read); an
// `error` instead when the trace could not be read. Written next to `path` and put in its place
// once complete (output_file): a full disk leaves no truncated report for CI to read. False, with
// the reason said on stderr, when it cannot be written.
bool write_junit(const std::string& path, const std::string& trace,
                 const std::vector<result>& results, const std::string& error, double seconds) {
  output_file file;
  std::string why;
  if (!file.open(path, why)) {
    std::cerr << "lowalloc check: " << why << '\n';
    return false;
  }
  std::ostream& out = file.stream();
  std::size_t failures = 0;
  for (const result& r : results) failures += r.ok ? 0 : 1;
  const std::size_t tests = results.size() + (error.empty() ? 0 : 1);
  const std::string counts = "tests=\"" + std::to_string(tests) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" +
                             std::to_string(error.empty() ? 0 : 1) + "\"";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"lowalloc check\" " << counts << ">\n"
      << "  <testsuite name=\"lowalloc check " << xml_escape(trace) << "\" " << counts << " time=\""
      << report::fixed(seconds, 3) << "\">\n";
  if (!error.empty())
    out << "    <testcase classname=\"lowalloc.check\" name=\"read " << xml_escape(trace)
        << "\" time=\"0\">\n      <error message=\"" << xml_escape(error)
        << "\" type=\"trace\"/>\n    </testcase>\n";
  for (const result& r : results) {
    out << "    <testcase classname=\"lowalloc.check\" name=\"" << xml_escape(r.name)
        << "\" time=\"0\">";
    if (r.ok)
      out << "<system-out>" << xml_escape(r.detail) << "</system-out>";
    else
      out << "\n      <failure message=\"" << xml_escape(r.detail) << "\" type=\"limit\">"
          << xml_escape(r.detail) << "</failure>\n    ";
    out << "</testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  if (file.commit(why)) return true;
  std::cerr << "lowalloc check: " << why << '\n';
  return false;
}

// The largest --max-increase: 10,000 times the baseline. More is a typo rather than a limit.
constexpr std::uint64_t max_increase_percent = 1000000;
// Digits after the point: a percentage is exact to a billionth of a percent.
constexpr std::size_t max_percent_decimals = 9;

// --max-increase's P, kept exact: P percent is digits / scale percent. A growth of exactly P %
// passes, whatever P (as a binary fraction, 29% was 0.28999...: 100 -> 129 failed).
struct percent_limit {
  std::uint64_t digits = 0;
  std::uint64_t scale = 1;  // a power of ten
  std::string text;         // as given, for the messages: "29", "12.5"
};

// "P%" or "P": P in decimal digits, with a fraction after a point, from 0 to
// max_increase_percent.
bool parse_percent(std::string text, percent_limit& out) {
  if (!text.empty() && text.back() == '%') text.pop_back();
  const std::size_t point = text.find('.');
  std::string whole = text.substr(0, point);
  const std::string fraction = point == std::string::npos ? "" : text.substr(point + 1);
  const auto digits = [](const std::string& d) {
    return d.find_first_not_of("0123456789") == std::string::npos;
  };
  if (whole.empty() || !digits(whole) || !digits(fraction) ||
      (point != std::string::npos && fraction.empty()) || fraction.size() > max_percent_decimals)
    return false;
  whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size() - 1));
  if (whole.size() > 7) return false;  // past max_increase_percent, and past 64 bits below
  percent_limit p;
  p.digits = std::stoull(whole);
  if (p.digits > max_increase_percent) return false;
  for (const char c : fraction) {
    p.digits = p.digits * 10 + static_cast<std::uint64_t>(c - '0');
    p.scale *= 10;
  }
  if (p.digits > max_increase_percent * p.scale) return false;
  p.text = fraction.empty() ? whole : whole + "." + fraction;
  out = p;
  return true;
}

__extension__ typedef unsigned __int128 uint128;  // GCC's and clang's, on 64-bit targets

// Whether y is at most x grown by `p` percent: y * 100 * scale <= x * (100 * scale + digits), in
// 128 bits (x and y below 2^64, the factors below 2^51).
bool within(std::uint64_t x, std::uint64_t y, const percent_limit& p) {
  const uint128 hundred = uint128{100} * p.scale;
  return uint128{y} * hundred <= uint128{x} * (hundred + p.digits);
}

}  // namespace

int check_main(int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now();
  std::string file;
  std::string baseline;
  std::string junit;
  std::vector<limit> limits;
  std::string site;  // the --site the next limits apply to
  place_spec place;  // and what it names
  percent_limit increase;
  bool has_increase = false;
  bool include_runtime = false;
  bool allow_incomplete = false;
  bool quiet = false;
  analyze::options opts;
  std::string path_error;  // an empty --debug-path
  argument_kinds kinds;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    std::string v;
    const auto take = [&](std::string_view name) {
      std::string_view found;
      if (!option_value(argc, argv, i, name, found)) return false;
      v = std::string(found);
      return true;
    };
    const argument_kinds::kind kind = kinds.of(arg);
    if (kind == argument_kinds::end_of_options) continue;
    if (kind == argument_kinds::operand) {  // the trace
      if (!file.empty())
        return usage_error("one trace file only ('" + file + "' and '" + std::string(arg) + "')");
      file = std::string(arg);
      continue;
    }
    bool is_limit = false;
    for (std::size_t m = 0; m < std::size(metric_options); ++m) {
      if (!take(metric_options[m])) continue;
      std::uint64_t n = 0;
      if (const std::string error = read_count_with_suffix(metric_options[m], v, n); !error.empty())
        return usage_error(error);
      limits.push_back(limit{static_cast<metric>(m), n, site, place});
      is_limit = true;
      break;
    }
    if (is_limit) continue;
    if (arg == "-h" || arg == "--help") {
      std::cout << usage;
      return 0;
    }
    if (take("--site")) {
      if (v.empty()) return usage_error("--site needs a place");
      // A --site applies to the limits after it, until the next one: one with none would be
      // dropped without a word, as the last one would (below).
      if (!site.empty() && (limits.empty() || limits.back().site != site))
        return usage_error("--site " + site + " has no limit after it");
      if (const std::string error = parse_place(v, place); !error.empty())
        return usage_error(error);
      site = v;
    } else if (take("--baseline")) {
      // An empty name would be taken for no baseline at all: the comparison asked for would be
      // left out without a word.
      if (v.empty()) return usage_error("--baseline needs a file name");
      baseline = v;
    } else if (take("--max-increase")) {
      if (!parse_percent(v, increase))
        return usage_error("--max-increase needs a percentage from 0 to 1000000%" +
                           std::string(v.find('.') != std::string::npos &&
                                               v.size() - v.find('.') > max_percent_decimals + 1
                                           ? " with at most 9 digits after the point"
                                           : "") +
                           ", not '" + v + "'");
      has_increase = true;
    } else if (take("--junit")) {
      if (v.empty()) return usage_error("--junit needs a file name");  // else: no report
      junit = v;
    } else if (arg == "--include-runtime") {
      include_runtime = true;
    } else if (arg == "--allow-incomplete") {
      allow_incomplete = true;
    } else if (debug_path_option(argc, argv, i, opts.debug_paths, path_error)) {
      if (!path_error.empty()) return usage_error(path_error);
    } else if (arg == "--no-symbols") {
      opts.symbolize = false;
    } else if (arg == "-q" || arg == "--quiet") {
      quiet = true;
    } else {
      return usage_error(std::find(std::begin(metric_options), std::end(metric_options), arg) !=
                                     std::end(metric_options) ||
                                 arg == "--site" || arg == "--baseline" ||
                                 arg == "--max-increase" || arg == "--junit" ||
                                 arg == "--debug-path"
                             ? std::string(arg) + " needs a value"
                             : "unknown option '" + std::string(arg) + "'");
    }
  }
  if (file.empty()) return usage_error("no trace file given");
  if (!site.empty() && (limits.empty() || limits.back().site != site))
    return usage_error("--site " + site + " has no limit after it");
  if (baseline.empty() == has_increase)
    return usage_error(baseline.empty() ? "--max-increase needs --baseline OLD.trace"
                                        : "--baseline needs --max-increase P%");
  if (limits.empty() && baseline.empty())
    return usage_error("no limit given (--max-allocations N, --baseline OLD --max-increase P%...)");
  if (const std::string error = output_names_an_input(junit, {file, baseline}); !error.empty()) {
    std::cerr << "lowalloc check: " << error << '\n';
    return 2;
  }

  std::vector<std::string> files{file};
  if (!baseline.empty()) files.push_back(baseline);
  std::vector<read_trace> traces = read_traces(files, opts, !baseline.empty());
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  for (std::size_t i = 0; i < traces.size(); ++i) {
    std::string error = traces[i].error;
    if (error.empty() && !traces[i].a.truncation.empty())
      error = "the trace is damaged: " + traces[i].a.truncation;
    // The counts of a process that did not finish are low: a limit that holds on them says
    // nothing about the program's run.
    if (error.empty() && !allow_incomplete) {
      if (const std::string missing = incomplete_text(traces[i].a); !missing.empty())
        error = "the trace is incomplete: " + missing +
                " (--allow-incomplete checks the events it holds)";
    }
    if (error.empty()) {
      if (const std::string missing = incomplete_text(traces[i].a); !missing.empty())
        std::cerr << "lowalloc check: " << files[i]
                  << ": warning: the trace is incomplete: " << missing << '\n';
      continue;
    }
    std::cerr << "lowalloc check: " << files[i] << ": " << error << '\n';
    if (!junit.empty()) write_junit(junit, files[i], {}, error, seconds());
    return 2;
  }
  for (const read_trace& t : traces) print_module_notes("check", t.a);

  const analyze::analysis& a = traces[0].a;
  const checker now(a, include_runtime);
  std::vector<result> results;
  const auto add = [&](std::string name, bool ok, std::string detail) {
    results.push_back(result{std::move(name), ok, std::move(detail)});
  };

  for (const limit& l : limits) {
    const std::string_view metric_name = metric_names[static_cast<std::size_t>(l.what)];
    std::uint64_t figure = 0;
    std::vector<std::pair<std::size_t, analyze::counters>> sites;
    if (l.site.empty()) {
      figure = value(now.totals(), l.what);
      sites = now.all_sites();
    } else {
      sites = now.through(l.place);
      for (const auto& s : sites) figure += value(s.second, l.what);
      // A binary that changed or is missing since the trace was written has frames without
      // names: a place that matches none may be in it, and any limit would hold.
      if (sites.empty() && !a.module_warnings.empty()) {
        const std::string error =
            "cannot check --site " + l.site +
            ": no allocation passes through it, and the frames of a binary that changed or is "
            "missing since the trace was written have no names (the warning above); pass "
            "--debug-path DIR with a copy of the traced binary";
        std::cerr << "lowalloc check: " << error << '\n';
        if (!junit.empty()) write_junit(junit, file, {}, error, seconds());
        return 2;
      }
    }
    const std::string scope = l.site.empty() ? "" : l.site + ": ";
    const bool ok = figure <= l.max;
    std::string detail = scope + std::string(metric_name) + " " + report::thousands(figure) +
                         (ok ? " <= " : " > the limit ") + report::thousands(l.max);
    if (!l.site.empty() && sites.empty())
      detail += " (no allocation passes through " + l.site + ")";
    if (!ok) detail += "; " + now.largest(sites, l.what);
    add(scope + std::string(metric_name) + " <= " + report::thousands(l.max), ok, detail);
  }

  if (!baseline.empty()) {
    const analyze::analysis& old = traces[1].a;
    const checker before(old, include_runtime);
    const analyze::comparison c =
        analyze::compare_sites(old, std::move(traces[1].places), a, std::move(traces[0].places));
    if (const std::string other = different_programs_text(old, a, c); !other.empty())
      std::cerr << "lowalloc check: " << other << '\n';
    const std::string pct = increase.text + " %";
    for (std::size_t m = 0; m < std::size(metric_names); ++m) {
      const auto what = static_cast<metric>(m);
      const std::uint64_t x = value(before.totals(), what);
      const std::uint64_t y = value(now.totals(), what);
      const bool ok = within(x, y, increase);
      std::string detail = std::string(metric_names[m]) + " " + report::change_text(x, y) +
                           (ok ? ", within +" : ", more than +") + pct;
      if (!ok) {
        // The matched site that grew most.
        std::uint64_t most = 0;
        std::string grew;
        for (const analyze::place_match& pm : c.matches) {
          if (pm.after == analyze::place_match::none) continue;
          std::uint64_t b = 0;
          if (pm.before != analyze::place_match::none)
            for (std::uint32_t s : c.before[pm.before].sites)
              b += value(before.site_counters(s), what);
          std::uint64_t n = 0;
          for (std::uint32_t s : c.after[pm.after].sites) n += value(now.site_counters(s), what);
          if (n > b && n - b > most) {
            most = n - b;
            grew = (pm.before == analyze::place_match::none ? "new site " : "grew most: ") +
                   where(a.sites[c.after[pm.after].sites.front()]) + ": " +
                   report::change_text(b, n);
          }
        }
        if (!grew.empty()) detail += "; " + grew;
      }
      add(std::string(metric_names[m]) + " at most +" + pct + " on the baseline", ok, detail);
    }
    // Each site found in both: its allocations and bytes.
    std::size_t sites_checked = 0;
    std::size_t sites_failed = 0;
    std::size_t added = 0;
    for (const analyze::place_match& pm : c.matches) {
      if (pm.before == analyze::place_match::none) {
        ++added;
        continue;
      }
      if (pm.after == analyze::place_match::none) continue;
      ++sites_checked;
      const analyze::counters& x = c.before[pm.before].totals;
      const analyze::counters& y = c.after[pm.after].totals;
      bool failed = false;  // a site over on both counts is one site over the limit
      for (metric what : {metric::allocations, metric::bytes}) {
        if (within(value(x, what), value(y, what), increase)) continue;
        sites_failed += failed ? 0 : 1;
        failed = true;
        const std::string at = where(a.sites[c.after[pm.after].sites.front()]);
        add(at + ": " + std::string(metric_names[static_cast<std::size_t>(what)]) + " at most +" +
                pct,
            false,
            at + ": " + std::string(metric_names[static_cast<std::size_t>(what)]) + " " +
                report::change_text(value(x, what), value(y, what)) + ", more than +" + pct +
                " (matched by " + std::string(analyze::match_kind_text(pm.how)) + ")");
      }
    }
    add("sites found in both at most +" + pct, sites_failed == 0,
        report::counted(sites_checked, "site") + " found in both, " +
            report::thousands(sites_failed) + " over the limit; " +
            report::counted(added, "new site") + " (in the totals only)");
  }

  bool all_ok = true;
  for (const result& r : results) {
    all_ok = all_ok && r.ok;
    if (!r.ok)
      std::cerr << "lowalloc check: FAILED: " << r.detail << '\n';
    else if (!quiet)
      std::cout << "ok: " << r.detail << '\n';
  }
  // Said where leaks are checked: a --max-leaked-bytes limit, or the baseline's.
  const bool leaks_checked =
      has_increase || std::any_of(limits.begin(), limits.end(),
                                  [](const limit& l) { return l.what == metric::leaked_bytes; });
  if (!include_runtime && !quiet && leaks_checked) {
    const analyze::counters rt = a.runtime_totals();
    if (rt.leaked_bytes != 0)
      std::cout << "(left out of the leaks: " << report::counted(rt.leaked_bytes, "byte")
                << " the C and C++ runtimes keep until exit; --include-runtime counts "
                   "them)\n";
  }
  if (!junit.empty() && !write_junit(junit, file, results, {}, seconds())) return 2;
  if (!flush_stdout("check", "the results")) return 2;
  return all_ok ? 0 : 1;
}

}  // namespace lowalloc::cli
