// From recorded stacks to what a user reads: each distinct stack symbolized with every frame
// kept (the allocator's included, with full demangled names), then the sites, a view that shows
// the stacks which look the same once allocator frames are folded as one.
#ifndef LOWALLOC_SRC_ANALYZE_SITES_HPP
#define LOWALLOC_SRC_ANALYZE_SITES_HPP

#include "analyze/accounting.hpp"
#include "analyze/analysis.hpp"
#include "analyze/events.hpp"

#include <vector>

namespace lowalloc::analyze {

/// Fills a.frames, a.stacks and a.stack_sizes from the merge's stacks and the accounting's
/// counters (symbolized unless opts.symbolize is false), and frees the accounting's per-stack
/// state once copied. Stacks keep the merge's numbering.
void build_stacks(const recorded_stacks& recorded, const std::vector<recorded_module>& modules,
                  accounting& acc, const options& opts, analysis& a);

/// Fills a.sites from a.stacks: folded (allocator frames hidden) or not, sorted by allocations,
/// then bytes, descending; sets each stack's `site`.
void build_sites(analysis& a, bool fold);

/// Names the standard-library operation of each stack and gives each site its operations
/// (a.operations, a.site_operations, site::op); build_sites calls it.
void name_operations(analysis& a);

}  // namespace lowalloc::analyze

#endif
