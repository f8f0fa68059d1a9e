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

/// Whether the frame, at the outer end of a stack, is the C runtime's start-up: the functions
/// that call main (__libc_start_call_main, __libc_start_main and its internal names) or a
/// thread's function (start_thread, clone3), the loader's and the C library's calls of static
/// initializers (_dl_init, call_init); a frame without a name: any of the C library or the
/// dynamic loader.
bool is_start_frame(const frame& f);

/// How many frames to fold off the outermost end of a stack of `count` frames (frame i is
/// `at(i)`, innermost first; `is_start(i)` is is_start_frame(at(i)), which a caller may
/// remember per frame) whose first `folded` frames are folded off its innermost end: the
/// program's entry point (`_start`: by name, or a frame without a name that calls into the C
/// library's start frames) and the start frames inside it, never the last frame left.
template <class At, class IsStart>
std::size_t start_fold_count(std::size_t count, std::size_t folded, At&& at, IsStart&& is_start) {
  if (count <= folded + 1) return 0;
  const std::size_t left = count - folded;
  std::size_t n = 0;
  const frame& outermost = at(count - 1);
  if (outermost.function == "_start" ||
      (outermost.function.empty() && is_start(count - 2) && !is_start(count - 1)))
    n = 1;
  while (n + 1 < left && is_start(count - 1 - n)) ++n;
  return n;
}

/// The same for a vector of frames with nothing folded off its innermost end.
std::size_t start_fold_count(const std::vector<frame>& stack);

}  // namespace lowalloc::analyze::detail

#endif
