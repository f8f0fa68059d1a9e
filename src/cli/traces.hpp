// Reading the traces a command compares (`lowalloc diff`, `lowalloc check --baseline`): each on
// a thread of its own, so that two cost about the time of one on a machine with two cores.
#ifndef LOWALLOC_SRC_CLI_TRACES_HPP
#define LOWALLOC_SRC_CLI_TRACES_HPP

#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"

#include <string>
#include <vector>

namespace lowalloc::cli {

struct read_trace {
  analyze::analysis a;
  analyze::site_places places;  // with `places`: its sites' places, for compare_sites()
  std::string error;            // why the file could not be read; empty if it was
};

/// The analyses of `paths`, in their order; with `places`, each one's places too.
std::vector<read_trace> read_traces(const std::vector<std::string>& paths,
                                    const analyze::options& opts, bool places = false);

}  // namespace lowalloc::cli

#endif
