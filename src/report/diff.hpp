// `lowalloc diff`'s output: two traces' summaries side by side and the change of each site,
// in text for people and JSON for programs (docs/tracer.md#diff).
#ifndef LOWALLOC_SRC_REPORT_DIFF_HPP
#define LOWALLOC_SRC_REPORT_DIFF_HPP

#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

namespace lowalloc::report {

struct diff_options {
  std::string before_name;  // the trace files, as given
  std::string after_name;
  std::size_t top = std::numeric_limits<std::size_t>::max();  // changed sites shown
  bool unchanged = false;  // JSON: list the sites whose counters did not change too
};

/// The places of a comparison in the order a diff shows them: the largest change of
/// allocations first (then of bytes), new and gone sites by their size, unchanged ones last.
std::vector<analyze::place_match> ranked_changes(const analyze::comparison& c);

/// Whether a matched place's counters differ (a new or gone place always does).
bool changed(const analyze::comparison& c, const analyze::place_match& m);

void write_diff_text(std::ostream& out, const analyze::analysis& before,
                     const analyze::analysis& after, const analyze::comparison& c,
                     const diff_options& o);
void write_diff_json(std::ostream& out, const analyze::analysis& before,
                     const analyze::analysis& after, const analyze::comparison& c,
                     const diff_options& o);

/// "4,171,408 -> 242,862 (-94.2 %, 17.2x fewer)": a figure's change, `fewer`/`more` the words
/// for the ratio ("fewer"/"more" for counts, "less"/"more" for bytes and time).
std::string change_text(std::uint64_t before, std::uint64_t after, const char* fewer = "fewer",
                        const char* more = "more");

}  // namespace lowalloc::report

#endif
