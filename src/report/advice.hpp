// The output of `lowalloc advise`: text, one block per advice item, and JSON ({"advice": [...]}).
// docs/advise.md describes both.
#ifndef LOWALLOC_SRC_REPORT_ADVICE_HPP
#define LOWALLOC_SRC_REPORT_ADVICE_HPP

#include "analyze/advice.hpp"

#include <iosfwd>
#include <vector>

namespace lowalloc::report {

void write_advice_text(std::ostream& out, const analyze::analysis& a,
                       const std::vector<analyze::advice_item>& advice,
                       const analyze::cost_model& costs);
void write_advice_json(std::ostream& out, const analyze::analysis& a,
                       const std::vector<analyze::advice_item>& advice,
                       const analyze::cost_model& costs);

}  // namespace lowalloc::report

#endif
