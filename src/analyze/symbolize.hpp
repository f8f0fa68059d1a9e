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
  /// `debug_paths`: directories searched, before the system's, for a copy of a module whose
  /// file changed or is missing (by its base name, or as .build-id/xx/rest.debug) and for the
  /// separate debug files of stripped modules (.build-id/xx/rest.debug).
  explicit symbolizer(std::vector<std::string> debug_paths = {});
  ~symbolizer();
  symbolizer(const symbolizer&) = delete;
  symbolizer& operator=(const symbolizer&) = delete;

  /// Appends the frames of the return address `address` that lies in module `m` (`key`
  /// identifies the module for caching its ELF and DWARF): the calls inlined at that address
  /// first (inlined = true, innermost first), then the function containing them. Always appends
  /// at least one frame, with module and offset only when the file or its symbols are missing.
  /// A module whose file is not the one traced (changed or missing, and no copy of it found)
  /// is never read: its frames have module and offset only.
  void resolve(std::size_t key, const module_desc& m, std::uint64_t address,
               std::vector<frame>& out);

  /// What the user should know about the modules resolved so far, each said once: a file that
  /// changed or is missing since the trace was written ("warning: ..."), ...
  const std::vector<std::string>& warnings() const noexcept;
  /// ... a module of the user's without line information ("note: ...").
  const std::vector<std::string>& notes() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// `name` demangled if it is a mangled C++ name, else unchanged.
std::string demangle(const char* name);

}  // namespace lowalloc::analyze::detail

#endif
