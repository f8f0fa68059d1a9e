// Which standard-library operation made an allocation, read off the frames between the
// allocation function and the user's code: vector growth, a string copy, a map node... Both
// libstdc++ (its exported symbols and the DWARF inline frames of its headers) and libc++ (whose
// names live in std::__1). Not part of lowalloc's API; docs/tracer.md lists the kinds.
#ifndef LOWALLOC_SRC_ANALYZE_OPERATION_HPP
#define LOWALLOC_SRC_ANALYZE_OPERATION_HPP

#include "analyze/model.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lowalloc::analyze {

/// Every kind, with what it means in a few words ("vector_growth": "growth").
struct operation_kind_info {
  std::string_view kind;
  std::string_view description;
};
const std::vector<operation_kind_info>& operation_kinds();

/// "std::vector<std::string>::push_back (growth)", "std::map<int, int>::operator[] (node)"; empty
/// for "other".
std::string operation_text(const operation& op);

/// Classifies the stacks of one frame table, each distinct frame's name read once: most stacks
/// have no standard-library frame at all, and those are "other" after a lookup per frame.
class operation_classifier {
 public:
  explicit operation_classifier(const frame_table& table);
  /// The operation of the stack whose frames are ids[0, n), innermost first: its allocator
  /// frames and the frame after them.
  operation classify(const std::uint32_t* ids, std::size_t n);

 private:
  const frame_table& table_;
  std::vector<std::uint8_t>
      known_;  // per frame: 0 not read yet, 1 no part in any operation, 2 some
  std::vector<const frame*> frames_;
};

namespace detail {

/// The type a frame's member function belongs to, as the user would write it: the qualifier of
/// "std::vector<int, std::allocator<int> >::push_back(int const&)" is "std::vector<int>":
/// inline namespaces (__cxx11, __1) and default template arguments (allocators, std::less,
/// std::hash, std::equal_to, std::char_traits) removed, std::basic_string<char> spelled
/// std::string. Empty for a free function.
std::string container_type(std::string_view function);

/// Classifies a stack from its frames, innermost first: the allocator frames and the first
/// frame after them (whose name may be a standard-library member the user called).
operation classify(const std::vector<const frame*>& frames);

}  // namespace detail

}  // namespace lowalloc::analyze

#endif
