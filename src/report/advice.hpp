// The output of `lowalloc advise`: text, one block per advice item, and JSON ({"advice": [...]}).
// docs/advise.md describes both.
#ifndef LOWALLOC_SRC_REPORT_ADVICE_HPP
#define LOWALLOC_SRC_REPORT_ADVICE_HPP

#include "analyze/advice.hpp"

#include <cstddef>
#include <iosfwd>
#include <vector>

namespace lowalloc::report {

/// `top_sites`: how many sites advise looked at (0: none, --top 0, said so instead of advice).
void write_advice_text(std::ostream& out, const analyze::analysis& a,
                       const std::vector<analyze::advice_item>& advice,
                       const analyze::cost_model& costs, std::size_t top_sites = 1);
void write_advice_json(std::ostream& out, const analyze::analysis& a,
                       const std::vector<analyze::advice_item>& advice,
                       const analyze::cost_model& costs);

}  // namespace lowalloc::report

#endif
