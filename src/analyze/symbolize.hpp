// Return addresses to functions, source lines and inlined calls, with elfutils libdw (Dwfl).
// Not part of lowalloc's API.
#ifndef LOWALLOC_SRC_ANALYZE_SYMBOLIZE_HPP
#define LOWALLOC_SRC_ANALYZE_SYMBOLIZE_HPP

#include "analyze/model.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lowalloc::analyze::detail {

class symbolizer {
 public:
  symbolizer();
  ~symbolizer();
  symbolizer(const symbolizer&) = delete;
  symbolizer& operator=(const symbolizer&) = delete;

  /// Appends the frames of the return address `address` that lies in module `m` (`key`
  /// identifies the module for caching its ELF and DWARF): the calls inlined at that address
  /// first (inlined = true, innermost first), then the function containing them. Always appends
  /// at least one frame, with module and offset only when the file or its symbols are missing.
  void resolve(std::size_t key, const module_desc& m, std::uint64_t address,
               std::vector<frame>& out);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// `name` demangled if it is a mangled C++ name, else unchanged.
std::string demangle(const char* name);

}  // namespace lowalloc::analyze::detail

#endif
