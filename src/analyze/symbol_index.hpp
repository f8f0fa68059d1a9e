// The name dwfl_module_addrinfo gives an address, from an index of the module's ELF symbol
// table built once: libdwfl scans the whole table on every call, and a large program has 10^5
// symbols and its stacks 10^5 return addresses. Not part of lowalloc's API.
#ifndef LOWALLOC_SRC_ANALYZE_SYMBOL_INDEX_HPP
#define LOWALLOC_SRC_ANALYZE_SYMBOL_INDEX_HPP

#include <elfutils/libdwfl.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lowalloc::analyze::detail {

// The ELF symbol containing an address, as dwfl_module_addrinfo chooses it (elfutils'
// __libdwfl_addrsym): among the symbols with a size that contain the address, the global part
// of the table first, then the local part if none does, each in table order: a later one
// replaces the chosen one if it starts later or binds more strongly, or if it starts at the
// same place, is smaller and binds the same. Symbols without a size only matter when no sized
// symbol contains the address (code between exported functions of a stripped program): then
// there is no name if a symbol below the address ends above the highest start below it (no
// label can be chosen), and otherwise libdwfl decides, once per interval between symbol and
// section boundaries: its answer depends on the address only through comparisons with those,
// so it is the same strictly inside one.
class symbol_index {
 public:
  explicit symbol_index(Dwfl_Module* mod);

  /// The name dwfl_module_addrinfo gives pc (nullptr: none), as libdwfl keeps it.
  const char* name(Dwfl_Module* mod, Dwarf_Addr pc);

 private:
  // Symbol extents by start: whether the highest start at or below an address is overlapped by
  // an earlier symbol (or its own size), i.e. no label (symbol without a size) can win there.
  class extents {
   public:
    void add(Dwarf_Addr start, Dwarf_Addr end) { by_start_.emplace_back(start, end); }
    void finish();
    bool overlapped_at(Dwarf_Addr pc) const;

   private:
    std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> by_start_;  // (start, highest end so far)
  };

  struct entry {
    Dwarf_Addr value;
    Dwarf_Addr end;
    std::uint32_t index;  // in the table: the order libdwfl tries them in
    int binding;
    const char* name;
  };

  static const char* addrinfo(Dwfl_Module* mod, Dwarf_Addr pc);
  // The choice among the sized symbols containing pc; `decided` false if there is none.
  const char* sized_name(Dwarf_Addr pc, bool& decided);
  // libdwfl's choice among the containing symbols of one part of the table.
  const entry* choose(bool global) const;

  bool usable_ = false;
  std::uint32_t global_start_ = 1;
  bool search_locals_ = false;
  std::vector<entry> sized_;                 // by start
  std::vector<Dwarf_Addr> reach_;            // the highest end of sized_[0..k]
  std::vector<Dwarf_Addr> sizeless_global_;  // starts of the global symbols without a size
  std::vector<const entry*> containing_;     // scratch of sized_name()
  extents globals_;                          // the symbols libdwfl considers, global part
  extents all_;                              // and both parts
  std::vector<Dwarf_Addr> boundaries_;       // every symbol's start and end, every section's
  std::unordered_map<std::size_t, const char*> by_interval_;  // libdwfl's answers
};

}  // namespace lowalloc::analyze::detail

#endif
