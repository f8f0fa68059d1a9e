// Folding allocator-internal frames off the innermost end of a stack, so that a site starts at
// the user's code. Not part of lowalloc's API; docs/tracer.md lists what is folded.
#ifndef LOWALLOC_SRC_ANALYZE_FOLD_HPP
#define LOWALLOC_SRC_ANALYZE_FOLD_HPP

#include "analyze/model.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lowalloc::analyze::detail {

/// The qualified name of a demangled function without return type, template arguments,
/// parameters and qualifiers: "void std::vector<int>::_M_realloc_insert<int>(...)" gives
/// "std::vector::_M_realloc_insert", "operator new[](unsigned long)" gives "operator new[]".
std::string base_name(std::string_view demangled);

/// Whether `base_name` (as base_name() gives it) is a C or C++ allocation or deallocation
/// function: malloc and its glibc-internal names, strdup, operator new and delete.
bool is_allocation_function(std::string_view base_name) noexcept;

/// Whether the frame is allocator plumbing (malloc and friends, operator new, std::allocator,
/// the growth functions of the standard containers, lowalloc's own growth functions).
bool is_allocator_frame(const frame& f);

/// How many frames to fold off the innermost end of `stack`: the leading allocator frames, but
/// never the last one.
std::size_t fold_count(const std::vector<frame>& stack);

}  // namespace lowalloc::analyze::detail

#endif
