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

/// Fills a.frames, a.stacks (each stack's operation too, a.operations, and why it is the
/// runtime's, a.stack_runtime and a.runtime) and a.stack_sizes from
/// the merge's stacks and the accounting's stacks and sizes (symbolized unless opts.symbolize
/// is false), and frees the accounting's per-stack state once taken. Stacks keep the merge's
/// numbering.
void build_stacks(const recorded_stacks& recorded, const std::vector<recorded_module>& modules,
                  accounting& acc, const options& opts, analysis& a);

/// Fills a.sites from a.stacks: folded (allocator frames hidden) or not, sorted by allocations,
/// then bytes, descending, each with its operations (a.site_operations, site::op); sets each
/// stack's `site`.
void build_sites(analysis& a, bool fold);

}  // namespace lowalloc::analyze

#endif
