// The symbol index: libdwfl's choice (elfutils' __libdwfl_addrsym) replayed over the few
// symbols that contain an address, found by binary search instead of a scan of the table.
#include "analyze/symbol_index.hpp"

#include <elfutils/libdw.h>
#include <gelf.h>

#include <algorithm>

namespace lowalloc::analyze::detail {

namespace {

int binding_rank(const GElf_Sym& sym) noexcept {
  switch (GELF_ST_BIND(sym.st_info)) {
    case STB_GLOBAL:
      return 3;
    case STB_WEAK:
      return 2;
    case STB_LOCAL:
      return 1;
    default:
      return 0;
  }
}

// Whether section `shndx` of `elf` is loaded (SHN_ABS and the like are not sections).
bool in_allocated_section(Elf* elf, GElf_Word shndx) {
  if (shndx >= SHN_LORESERVE && shndx != SHN_XINDEX) return false;
  GElf_Shdr shdr;
  Elf_Scn* scn = elf != nullptr ? elf_getscn(elf, shndx) : nullptr;
  return scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr || (shdr.sh_flags & SHF_ALLOC) != 0;
}

}  // namespace

symbol_index::symbol_index(Dwfl_Module* mod) {
  const int count = dwfl_module_getsymtab(mod);
  const int first_global = dwfl_module_getsymtab_first_global(mod);
  Dwarf_Addr main_bias = 0;
  Elf* main = dwfl_module_getelf(mod, &main_bias);
  GElf_Ehdr ehdr;
  if (count < 0 || first_global < 0 || main == nullptr || gelf_getehdr(main, &ehdr) == nullptr ||
      ehdr.e_type == ET_REL)
    return;
  global_start_ = first_global == 0 ? 1 : static_cast<std::uint32_t>(first_global);
  search_locals_ = first_global > 1;
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr value = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    GElf_Word shndx = SHN_UNDEF;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, &elf, &bias);
    const int type = GELF_ST_TYPE(sym.st_info);
    if (name == nullptr || name[0] == '\0' || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
        type == STT_FILE || type == STT_TLS)
      continue;
    // A value resolved through a function descriptor is tried twice by libdwfl. (libdwfl moves
    // only symbols of allocated sections by the bias: the version names of a library with a
    // version script are absolute, glibc's link warnings in unallocated sections. Taking those
    // for descriptors left libc, libstdc++ and libLLVM without an index.)
    if (value != sym.st_value + bias &&
        !(value == sym.st_value && !in_allocated_section(elf, shndx)))
      return;
    boundaries_.push_back(value);
    boundaries_.push_back(value + sym.st_size);
    const bool global = static_cast<std::uint32_t>(i) >= global_start_;
    all_.add(value, value + sym.st_size);
    if (global) globals_.add(value, value + sym.st_size);
    if (sym.st_size == 0) {
      if (global) sizeless_global_.push_back(value);
      continue;
    }
    sized_.push_back(
        entry{value, value + sym.st_size, static_cast<std::uint32_t>(i), binding_rank(sym), name});
  }
  std::sort(sized_.begin(), sized_.end(),
            [](const entry& x, const entry& y) { return x.value < y.value; });
  reach_.resize(sized_.size());
  for (std::size_t k = 0; k < sized_.size(); ++k)
    reach_[k] = std::max(sized_[k].end, k == 0 ? 0 : reach_[k - 1]);
  std::sort(sizeless_global_.begin(), sizeless_global_.end());
  all_.finish();
  globals_.finish();
  for (Elf_Scn* scn = elf_nextscn(main, nullptr); scn != nullptr; scn = elf_nextscn(main, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || (shdr.sh_flags & SHF_ALLOC) == 0) continue;
    boundaries_.push_back(shdr.sh_addr + main_bias);
    boundaries_.push_back(shdr.sh_addr + main_bias + shdr.sh_size);
  }
  std::sort(boundaries_.begin(), boundaries_.end());
  boundaries_.erase(std::unique(boundaries_.begin(), boundaries_.end()), boundaries_.end());
  usable_ = true;
}

const char* symbol_index::name(Dwfl_Module* mod, Dwarf_Addr pc) {
  if (!usable_) return addrinfo(mod, pc);
  bool decided = false;
  const char* found = sized_name(pc, decided);
  if (decided) return found;
  // libdwfl searches the locals too unless a global label lies exactly at pc.
  const bool label_at_pc = std::binary_search(sizeless_global_.begin(), sizeless_global_.end(), pc);
  if (!search_locals_ ? globals_.overlapped_at(pc) : !label_at_pc && all_.overlapped_at(pc))
    return nullptr;
  const auto above = std::upper_bound(boundaries_.begin(), boundaries_.end(), pc);
  if (above == boundaries_.begin() || *(above - 1) == pc) return addrinfo(mod, pc);
  auto [it, inserted] =
      by_interval_.try_emplace(static_cast<std::size_t>(above - boundaries_.begin()));
  if (inserted) it->second = addrinfo(mod, pc);
  return it->second;
}

void symbol_index::extents::finish() {
  std::sort(by_start_.begin(), by_start_.end());
  for (std::size_t k = 1; k < by_start_.size(); ++k)
    by_start_[k].second = std::max(by_start_[k].second, by_start_[k - 1].second);
}
bool symbol_index::extents::overlapped_at(Dwarf_Addr pc) const {
  const auto above = std::upper_bound(
      by_start_.begin(), by_start_.end(), pc,
      [](Dwarf_Addr a, const std::pair<Dwarf_Addr, Dwarf_Addr>& e) { return a < e.first; });
  if (above == by_start_.begin()) return false;
  return (above - 1)->second > (above - 1)->first;  // the highest end so far, past the start
}

const char* symbol_index::addrinfo(Dwfl_Module* mod, Dwarf_Addr pc) {
  GElf_Off off = 0;
  GElf_Sym sym;
  return dwfl_module_addrinfo(mod, pc, &off, &sym, nullptr, nullptr, nullptr);
}

const char* symbol_index::sized_name(Dwarf_Addr pc, bool& decided) {
  decided = false;
  containing_.clear();
  // The sized symbols starting at or below pc whose end is above it: walk down from the last
  // start <= pc while some symbol at or below still reaches past pc.
  std::size_t k = static_cast<std::size_t>(
      std::upper_bound(sized_.begin(), sized_.end(), pc,
                       [](Dwarf_Addr a, const entry& e) { return a < e.value; }) -
      sized_.begin());
  while (k-- > 0 && reach_[k] > pc)
    if (sized_[k].end > pc) containing_.push_back(&sized_[k]);
  std::sort(containing_.begin(), containing_.end(),
            [](const entry* x, const entry* y) { return x->index < y->index; });
  if (const entry* e = choose(true)) {
    decided = true;
    return e->name;
  }
  // libdwfl searches the locals unless a global label (no size) lies exactly at pc.
  if (!search_locals_ || std::binary_search(sizeless_global_.begin(), sizeless_global_.end(), pc))
    return nullptr;
  if (const entry* e = choose(false)) {
    decided = true;
    return e->name;
  }
  return nullptr;
}

const symbol_index::entry* symbol_index::choose(bool global) const {
  const entry* chosen = nullptr;
  for (const entry* e : containing_) {
    if ((e->index >= global_start_) != global) continue;
    if (chosen == nullptr || chosen->value < e->value || chosen->binding < e->binding)
      chosen = e;
    else if (chosen->value == e->value &&
             ((chosen->end - chosen->value > e->end - e->value && chosen->binding <= e->binding) ||
              (chosen->end - chosen->value >= e->end - e->value && chosen->binding < e->binding)))
      chosen = e;
  }
  return chosen;
}

}  // namespace lowalloc::analyze::detail
