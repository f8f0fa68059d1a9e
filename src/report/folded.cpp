// Folded stacks, one line per site, for flamegraph.pl, inferno and speedscope.
#include "report/common.hpp"

#include <ostream>

namespace lowalloc::report {

void write_folded(std::ostream& out, const analysis& a, const report_options& ro) {
  const std::vector<const site*> sites = ranked_sites(a, ro.sort, ro.top);
  std::string text;
  for (const site* s : sites) {
    text.clear();
    if (s->stack.empty()) text = "[no stack]";
    for (std::size_t k = s->stack.size(); k-- > 0;) {
      const frame& f = s->stack[k];
      std::string name = flame_frame_name(f, ro.lines);
      for (char& c : name)
        if (c == ';' || c == '\n' || c == '\r') c = c == ';' ? ',' : ' ';
      if (f.inlined) name += "_[i]";  // the inlined-frame annotation of flamegraph.pl and inferno
      if (!text.empty()) text += ';';
      text += name;
    }
    out << text << ' ' << metric(s->totals, ro.sort) << '\n';
  }
}

}  // namespace lowalloc::report
