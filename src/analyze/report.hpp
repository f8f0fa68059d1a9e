// The report formats of `lowalloc report`: text for people, JSON for programs, folded stacks
// for flame graphs. docs/tracer.md describes each.
//
//   lowalloc::analyze::analysis a = lowalloc::analyze::analyze_file("app.trace");
//   lowalloc::analyze::report_options ro;
//   ro.sort = lowalloc::analyze::sort_key::bytes;
//   lowalloc::analyze::write_text(std::cout, a, ro);
#ifndef LOWALLOC_SRC_ANALYZE_REPORT_HPP
#define LOWALLOC_SRC_ANALYZE_REPORT_HPP

#include "analyze/analysis.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace lowalloc::analyze {

/// What sites are ranked by, and the value of a folded line.
enum class sort_key { allocations, bytes, temporary, leaked, peak };

/// "allocations", "bytes", "temporary", "leaked" or "peak"; false for anything else.
bool parse_sort_key(std::string_view name, sort_key& out) noexcept;
std::string_view sort_key_name(sort_key key) noexcept;

/// The ranked value of a site: allocations, bytes allocated, temporary allocations, leaked
/// bytes, or live bytes at the peak.
std::uint64_t metric(const counters& c, sort_key key) noexcept;

struct report_options {
  sort_key sort = sort_key::allocations;
  std::size_t top = std::numeric_limits<std::size_t>::max();  // sites shown; max: all
  std::string trace_name;  // the file name printed in the text report's first line
};

/// The sites with a non-zero `key` metric, largest first (ties: more allocations first, then
/// the order of `a.sites`), at most `top`.
std::vector<const site*> ranked_sites(const analysis& a, sort_key key, std::size_t top);

/// A summary block then the top sites with their sizes and stacks.
void write_text(std::ostream& out, const analysis& a, const report_options& ro);
/// One JSON object (schema in docs/tracer.md).
void write_json(std::ostream& out, const analysis& a, const report_options& ro);
/// One line per site: "outermost;...;innermost VALUE", VALUE the `ro.sort` metric.
void write_folded(std::ostream& out, const analysis& a, const report_options& ro);

/// `s` as a JSON string literal, quotes included: control characters escaped, invalid UTF-8
/// bytes replaced by U+FFFD.
std::string json_string(std::string_view s);

/// 1234567 as "1,234,567".
std::string thousands(std::uint64_t n);

}  // namespace lowalloc::analyze

#endif
