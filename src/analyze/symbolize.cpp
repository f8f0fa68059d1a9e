// Symbolization with libdwfl: one Dwfl session per module, created on first use, so that
// modules unloaded and replaced at the same addresses never overlap in one session.
// ELF symbol names come from a symbol_index per module (symbol_index.hpp).
#include "analyze/symbolize.hpp"

#include "analyze/symbol_index.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <vector>

namespace lowalloc::analyze::detail {

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  if (name[0] == '_' && name[1] == 'Z') {
    int status = 0;
    char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (d != nullptr) {
      std::string s = status == 0 ? std::string(d) : std::string(name);
      std::free(d);
      return s;
    }
  }
  return name;
}

namespace {

const Dwfl_Callbacks callbacks = {
    nullptr,  // find_elf: modules are reported with their file name
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    nullptr,
};

struct dwfl_deleter {
  void operator()(Dwfl* d) const noexcept { dwfl_end(d); }
};

// The name of a subprogram or inlined subroutine DIE: the linkage name demangled (qualified,
// with parameters), else the plain name; both through abstract_origin and specification.
std::string die_name(Dwarf_Die* die, bool* qualified = nullptr) {
  Dwarf_Attribute attr;
  const char* linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
  if (linkage == nullptr)
    linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
  if (qualified != nullptr) *qualified = linkage != nullptr;
  if (linkage != nullptr) return demangle(linkage);
  const char* name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
  return name != nullptr ? std::string(name) : std::string();
}

}  // namespace

// A compilation unit's address range, in the module's DWARF addresses.
struct unit_range {
  Dwarf_Addr lo;
  Dwarf_Addr hi;
  Dwarf_Die cu;
};

// A function's address range, and its DIE.
struct subprogram_range {
  Dwarf_Addr lo;
  Dwarf_Addr hi;
  Dwarf_Die die;
};

namespace {

// Every subprogram with code under `die`, through namespaces and types (clang defines a
// function in a namespace inside the namespace's DIE, GCC at the unit's top level).
void collect_subprograms(Dwarf_Die* die, std::vector<subprogram_range>& out) {
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      Dwarf_Addr base = 0;
      Dwarf_Addr lo = 0;
      Dwarf_Addr hi = 0;
      for (ptrdiff_t off = dwarf_ranges(&child, 0, &base, &lo, &hi); off > 0;
           off = dwarf_ranges(&child, off, &base, &lo, &hi))
        if (hi > lo) out.push_back(subprogram_range{lo, hi, child});
    } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
               tag == DW_TAG_structure_type || tag == DW_TAG_union_type) {
      collect_subprograms(&child, out);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The scopes at `pc` below a subprogram that covers it, innermost first, the subprogram last:
// each step down is the lexical block or inlined call whose ranges hold pc.
std::vector<Dwarf_Die> scopes_below(Dwarf_Die subprogram, Dwarf_Addr pc) {
  std::vector<Dwarf_Die> path(1, subprogram);
  for (bool deeper = true; deeper;) {
    deeper = false;
    Dwarf_Die child;
    if (dwarf_child(&path.back(), &child) != 0) break;
    do {
      const int tag = dwarf_tag(&child);
      if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) &&
          dwarf_haspc(&child, pc) > 0) {
        path.push_back(child);
        deeper = true;
        break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

struct symbolizer::impl {
  struct session {
    std::unique_ptr<Dwfl, dwfl_deleter> dwfl;
    bool tried = false;
    std::unique_ptr<symbol_index> symbols;               // built on first use
    std::unordered_map<const char*, std::string> names;  // by libdwfl's name: as printed
    bool units_read = false;
    std::vector<unit_range> units;  // sorted by lo; read when .debug_aranges did not answer
    bool subprograms_read = false;
    std::vector<subprogram_range> subprograms;  // sorted by lo; read when getscopes did not find
  };

  // The scopes at pc, innermost first, from the module's functions indexed once: libdw 0.188's
  // dwarf_getscopes does not look inside namespaces, where clang puts its functions' DIEs, so
  // every frame of such a function had no inlined calls and no line.
  std::vector<Dwarf_Die> scopes_of(session& s, Dwfl_Module* mod, Dwarf_Addr at) {
    if (!s.subprograms_read) {
      s.subprograms_read = true;
      Dwarf_Addr b = 0;
      for (Dwarf_Die* cu = dwfl_module_nextcu(mod, nullptr, &b); cu != nullptr;
           cu = dwfl_module_nextcu(mod, cu, &b))
        collect_subprograms(cu, s.subprograms);
      std::sort(s.subprograms.begin(), s.subprograms.end(),
                [](const subprogram_range& x, const subprogram_range& y) { return x.lo < y.lo; });
    }
    auto it = std::upper_bound(s.subprograms.begin(), s.subprograms.end(), at,
                               [](Dwarf_Addr a, const subprogram_range& r) { return a < r.lo; });
    if (it == s.subprograms.begin()) return {};
    --it;
    if (at >= it->hi) return {};
    return scopes_below(it->die, at);
  }
  std::unordered_map<std::size_t, session> sessions;

  // The unit whose ranges hold pc, from the units' own DW_AT_low_pc/high_pc/ranges: clang
  // writes no .debug_aranges unless asked (-gdwarf-aranges), and libdw 0.188 finds a unit by
  // pc through that section only, so every frame of a clang-built program had no line and no
  // inlined calls.
  Dwarf_Die* unit_of(session& s, Dwfl_Module* mod, Dwarf_Addr pc, Dwarf_Addr* bias) {
    if (!s.units_read) {
      s.units_read = true;
      Dwarf_Addr b = 0;
      for (Dwarf_Die* cu = dwfl_module_nextcu(mod, nullptr, &b); cu != nullptr;
           cu = dwfl_module_nextcu(mod, cu, &b)) {
        Dwarf_Addr base = 0;
        Dwarf_Addr lo = 0;
        Dwarf_Addr hi = 0;
        for (ptrdiff_t off = dwarf_ranges(cu, 0, &base, &lo, &hi); off > 0;
             off = dwarf_ranges(cu, off, &base, &lo, &hi)) {
          if (hi > lo) s.units.push_back(unit_range{lo, hi, *cu});
        }
      }
      std::sort(s.units.begin(), s.units.end(),
                [](const unit_range& x, const unit_range& y) { return x.lo < y.lo; });
    }
    if (dwfl_module_getdwarf(mod, bias) == nullptr) return nullptr;
    const Dwarf_Addr at = pc - *bias;
    auto it = std::upper_bound(s.units.begin(), s.units.end(), at,
                               [](Dwarf_Addr a, const unit_range& u) { return a < u.lo; });
    // Ranges of different units do not overlap; the one starting last at or below pc.
    if (it == s.units.begin()) return nullptr;
    --it;
    return at < it->hi ? &it->cu : nullptr;
  }

  // The ELF symbol at pc, demangled, without a symbol version ("name@@GLIBC_2.2.5").
  std::string symbol_name(session& s, Dwfl_Module* mod, Dwarf_Addr pc) {
    if (s.symbols == nullptr) s.symbols = std::make_unique<symbol_index>(mod);
    const char* raw = s.symbols->name(mod, pc);
    auto [it, inserted] = s.names.try_emplace(raw);
    if (inserted) {
      it->second = demangle(raw);
      const std::size_t at = it->second.find('@');
      if (at != std::string::npos && at != 0) it->second.resize(at);
    }
    return it->second;
  }

  Dwfl* open(std::size_t key, const module_desc& m) {
    session& s = sessions[key];
    if (!s.tried) {
      s.tried = true;
      if (!m.path.empty() && m.path[0] == '/') {
        s.dwfl.reset(dwfl_begin(&callbacks));
        if (s.dwfl != nullptr) {
          dwfl_report_begin(s.dwfl.get());
          Dwfl_Module* mod =
              dwfl_report_elf(s.dwfl.get(), m.path.c_str(), m.path.c_str(), -1, m.bias, true);
          dwfl_report_end(s.dwfl.get(), nullptr, nullptr);
          if (mod == nullptr) s.dwfl.reset();
        }
      }
    }
    return s.dwfl.get();
  }
};

symbolizer::symbolizer() : impl_(new impl) {}
symbolizer::~symbolizer() = default;

void symbolizer::resolve(std::size_t key, const module_desc& m, std::uint64_t address,
                         std::vector<frame>& out) {
  frame base;
  base.address = address;
  base.module = m.path;
  base.offset = address - m.bias;
  const std::size_t first = out.size();

  Dwfl* dwfl = impl_->open(key, m);
  impl::session& module_session = impl_->sessions[key];
  // A return address points after the call: look up the call instruction itself.
  const Dwarf_Addr pc = address == 0 ? 0 : address - 1;
  Dwfl_Module* mod = dwfl != nullptr ? dwfl_addrmodule(dwfl, pc) : nullptr;
  if (mod == nullptr) {
    out.push_back(base);
    return;
  }

  std::string file;
  unsigned line = 0;
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(mod, pc, &bias);
  const bool by_aranges = cu != nullptr;
  if (cu == nullptr) cu = impl_->unit_of(module_session, mod, pc, &bias);
  if (cu != nullptr) {
    // A line only from the unit that covers pc (else the nearest line of another unit).
    if (by_aranges) {
      if (Dwfl_Line* l = dwfl_module_getsrc(mod, pc)) {
        int lineno = 0;
        if (const char* src = dwfl_lineinfo(l, nullptr, &lineno, nullptr, nullptr, nullptr)) {
          file = src;
          line = lineno > 0 ? static_cast<unsigned>(lineno) : 0;
        }
      }
    } else if (Dwarf_Line* l = dwarf_getsrc_die(cu, pc - bias)) {
      int lineno = 0;
      if (const char* src = dwarf_linesrc(l, nullptr, nullptr)) {
        file = src;
        if (dwarf_lineno(l, &lineno) == 0 && lineno > 0) line = static_cast<unsigned>(lineno);
      }
    }
    // dwarf_getscopes continues an inlined instance with its abstract origin's scopes; the
    // concrete chain of callers comes from the innermost scope's own parents.
    std::vector<Dwarf_Die> chain;
    {
      Dwarf_Die* scopes = nullptr;
      int n = dwarf_getscopes(cu, pc - bias, &scopes);
      if (n > 0) {
        Dwarf_Die innermost = scopes[0];
        std::free(scopes);
        scopes = nullptr;
        n = dwarf_getscopes_die(&innermost, &scopes);
      }
      if (n > 0) chain.assign(scopes, scopes + n);
      std::free(scopes);
    }
    if (chain.empty()) chain = impl_->scopes_of(module_session, mod, pc - bias);
    const int lang = dwarf_srclang(cu);
    const bool cxx = lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
                     lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
    Dwarf_Files* files = nullptr;
    std::size_t nfiles = 0;
    const bool have_files = dwarf_getsrcfiles(cu, &files, &nfiles) == 0;
    for (Dwarf_Die& scope : chain) {
      Dwarf_Die* die = &scope;
      const int tag = dwarf_tag(die);
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
      frame f = base;
      bool qualified = false;
      f.function = die_name(die, &qualified);
      if (tag == DW_TAG_subprogram && !qualified && cxx) {
        // A C++ function with a bare DWARF name ("_M_run"): the ELF symbol is qualified.
        std::string sym = impl_->symbol_name(module_session, mod, pc);
        if (!sym.empty()) f.function = std::move(sym);
      }
      f.file = file;
      f.line = line;
      // Through abstract_origin and specification: an inlined call's function, a member's
      // out-of-class definition.
      if (int decl = 0; dwarf_decl_line(die, &decl) == 0 && decl > 0)
        f.function_line = static_cast<unsigned>(decl);
      f.inlined = tag == DW_TAG_inlined_subroutine;
      out.push_back(std::move(f));
      if (tag == DW_TAG_subprogram) break;
      // The next (outer) frame is where this inlined call was made.
      Dwarf_Attribute attr;
      Dwarf_Word call_file = 0;
      Dwarf_Word call_line = 0;
      file.clear();
      line = 0;
      if (have_files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &call_file) == 0 &&
          call_file < nfiles) {
        if (const char* f2 = dwarf_filesrc(files, call_file, nullptr, nullptr)) file = f2;
      }
      if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &call_line) == 0)
        line = static_cast<unsigned>(call_line);
    }
  }

  if (out.size() > first && out.back().inlined) {
    // Inlined frames but no enclosing subprogram DIE: the ELF symbol names the function.
    frame f = base;
    f.file = file;
    f.line = line;
    f.function = impl_->symbol_name(module_session, mod, pc);
    out.push_back(std::move(f));
  } else if (out.size() == first) {
    // No function DIE covers pc (no DWARF, or code without it like _start): the ELF symbol
    // table, and no line (a line table would give the nearest line of some other function).
    frame f = base;
    f.function = impl_->symbol_name(module_session, mod, pc);
    out.push_back(std::move(f));
  } else if (out.back().function.empty()) {
    out.back().function = impl_->symbol_name(module_session, mod, pc);
  }
}

}  // namespace lowalloc::analyze::detail
