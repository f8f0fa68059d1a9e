// Symbolization with libdwfl: one Dwfl session per module, created on first use, so that
// modules unloaded and replaced at the same addresses never overlap in one session.
// ELF symbol names come from a symbol_index per module (symbol_index.hpp).
#include "analyze/symbolize.hpp"

#include "analyze/debug_file.hpp"
#include "analyze/symbol_index.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>
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

// libdwfl's own search for separate debug files (docs/tracer.md, "Debug information"): the
// --debug-path directories, then the main file's directory, its .debug, and /usr/lib/debug,
// each by build id (DIR/.build-id/xx/rest.debug) and by .gnu_debuglink name; then, when
// DEBUGINFOD_URLS is set and libdebuginfod is installed, the debuginfod servers.
constexpr const char* system_debuginfo_path = ":.debug:/usr/lib/debug";

std::string hex_bytes(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += digits[static_cast<unsigned char>(c) >> 4];
    out += digits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

// Where a debug directory keeps the debug file of the object with build id `id`:
// DIR/.build-id/xx/rest.debug (`suffix` ".debug"), or its copy of the object itself (suffix "").
std::string build_id_path(const std::string& dir, const std::string& id,
                          const char* suffix = ".debug") {
  const std::string hex = hex_bytes(id);
  std::string path = dir;
  path += "/.build-id/";
  path += hex.substr(0, 2);
  path += '/';
  path += hex.substr(2);
  path += suffix;
  return path;
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The GNU build id of the ELF file at `path` into `id` (empty if it has none); false if the file
// cannot be opened or is not ELF.
bool fd_build_id(int fd, std::string& id) {
  id.clear();
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  const bool ok = elf != nullptr && elf_kind(elf) == ELF_K_ELF;
  if (ok) {
    const void* bits = nullptr;
    const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
    if (n > 0) id.assign(static_cast<const char*>(bits), static_cast<std::size_t>(n));
  }
  elf_end(elf);
  return ok;
}

bool file_build_id(const std::string& path, std::string& id) {
  id.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = fd_build_id(fd, id);
  ::close(fd);
  return ok;
}

// The debug file of a module, as libdwfl's own search finds it, but with its compressed sections
// inflated first (debug_file.hpp): libdw would otherwise inflate them all with zlib as it opens
// the file, 40 ms for libc's. Only the first place libdwfl looks is taken over: the file named
// by the module's build id in the --debug-path directories and /usr/lib/debug (`*userdata`: the
// directories), checked as libdwfl checks it (the same build id). A file found there with nothing
// to inflate, and every other way (.gnu_debuglink, debuginfod), is libdwfl's search. (libdwfl's
// search cannot simply be called first: when it checks the build id of the file it found, it
// keeps the file it opened for that, and ignores the descriptor its callback returns.)
int find_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                   const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                   char** debuginfo_file_name) {
  const auto* dirs = static_cast<const std::vector<std::string>*>(*userdata);
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int length = dwfl_module_build_id(mod, &bits, &vaddr);
  if (dirs != nullptr && length > 0) {
    const std::string id(reinterpret_cast<const char*>(bits), static_cast<std::size_t>(length));
    for (const std::string& dir : *dirs) {
      const std::string path = build_id_path(dir, id);
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      std::string found;
      const int inflated = fd_build_id(fd, found) && found == id ? inflate_debug_file(fd) : -1;
      ::close(fd);
      if (inflated < 0) break;
      *debuginfo_file_name = ::strdup(path.c_str());
      return inflated;
    }
  }
  return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                      debuglink_crc, debuginfo_file_name);
}

// A modification time as UTC, to the nanosecond: "2026-11-26 06:58:01.123456789".
std::string utc_time(std::uint64_t ns) {
  const auto seconds = static_cast<std::time_t>(ns / 1000000000u);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%09u", static_cast<unsigned>(ns % 1000000000u));
  std::string out = text;
  out += fraction;
  out += " UTC";
  return out;
}

enum class file_state { same, changed, missing };

// Whether the file at `path` is the one `m` describes: by build id when the traced object had
// one, else by size and modification time (by size only for a copy, `copy`: copying changes
// the time). `why` says what differs.
file_state compare_file(const module_desc& m, const std::string& path, bool copy,
                        std::string& why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return file_state::missing;
  if (!m.build_id.empty()) {
    std::string now;
    if (!file_build_id(path, now)) now.clear();
    if (now == m.build_id) return file_state::same;
    why = "build id ";
    why += hex_bytes(m.build_id);
    why += " when traced, ";
    why += now.empty() ? std::string("none") : hex_bytes(now);
    why += " now";
    return file_state::changed;
  }
  if (m.size == 0 && m.mtime_ns == 0) return file_state::same;  // nothing to compare with
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t mtime = static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000u +
                              static_cast<std::uint64_t>(st.st_mtim.tv_nsec);
  if (size == m.size && (copy || mtime == m.mtime_ns)) return file_state::same;
  why = "no build id; size ";
  why += std::to_string(m.size);
  why += " bytes, modified ";
  why += utc_time(m.mtime_ns);
  why += " when traced, size ";
  why += std::to_string(size);
  why += " bytes, modified ";
  why += utc_time(mtime);
  why += " now";
  return file_state::changed;
}

// Libraries of the system, whose missing line information is not news: Debian ships them
// stripped, with lines in their -dbgsym packages.
bool system_library(const std::string& path) {
  if (path.size() >= 21 && path.compare(path.size() - 21, 21, "/liblowalloc_trace.so") == 0)
    return true;  // the recorder: built without -g in a release build, none of its frames shown
  for (const char* dir : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/libexec/"}) {
    if (path.compare(0, std::string_view(dir).size(), dir) == 0) return true;
  }
  return false;
}

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
  explicit impl(std::vector<std::string> dirs) : debug_paths(std::move(dirs)) {
    build_id_dirs = debug_paths;
    build_id_dirs.emplace_back("/usr/lib/debug");
    for (const std::string& dir : debug_paths) {
      debuginfo_path += dir;
      debuginfo_path += ':';
    }
    debuginfo_path += system_debuginfo_path;
    debuginfo_path_c = debuginfo_path.data();
    callbacks.find_elf = nullptr;  // modules are reported with their file name
    callbacks.find_debuginfo = find_debuginfo;
    callbacks.section_address = dwfl_offline_section_address;
    callbacks.debuginfo_path = &debuginfo_path_c;
  }

  std::vector<std::string> debug_paths;
  std::vector<std::string> build_id_dirs;  // debug_paths, then the system's
  std::string debuginfo_path;
  char* debuginfo_path_c = nullptr;
  Dwfl_Callbacks callbacks{};
  std::vector<std::string> warnings;  // files changed or missing
  std::vector<std::string> notes;     // modules without lines
  std::set<std::string> said;

  void say(std::vector<std::string>& to, std::string text) {
    if (said.insert(text).second) to.push_back(std::move(text));
  }

  // A copy of the traced file of `m` in the --debug-path directories (by base name), or its
  // debug file by build id there or in /usr/lib/debug; empty if there is none.
  std::string find_copy(const module_desc& m) const {
    std::string why;
    for (const std::string& dir : debug_paths) {
      std::string candidate = dir;
      candidate += '/';
      candidate += base_name(m.path);
      if (compare_file(m, candidate, true, why) == file_state::same) return candidate;
    }
    if (m.build_id.empty()) return {};
    for (const std::string& dir : build_id_dirs) {
      for (const char* suffix : {".debug", ""}) {
        const std::string candidate = build_id_path(dir, m.build_id, suffix);
        std::string id;
        if (file_build_id(candidate, id) && id == m.build_id) return candidate;
      }
    }
    return {};
  }

  // The file to read for `m`: its own path, or a copy when it changed or is missing (then a
  // note says so when there is no copy, and the result is empty).
  std::string file_of(const module_desc& m) {
    if (!m.identified) return m.path;  // a trace before format version 3: nothing to check
    std::string why;
    const file_state state = compare_file(m, m.path, false, why);
    if (state == file_state::same) return m.path;
    std::string copy = find_copy(m);
    if (!copy.empty()) return copy;
    std::string text = "warning: ";
    text += m.path;
    if (state == file_state::missing) {
      text += " is missing (deleted or moved since the trace was written)";
    } else {
      text += " changed since the trace was written (";
      text += why;
      text += ')';
    }
    text += ": its frames show as ";
    text += base_name(m.path);
    text +=
        "+0xOFFSET, not with another binary's functions. Keep the traced binary, or pass "
        "--debug-path DIR where a copy of it (";
    text += base_name(m.path);
    if (!m.build_id.empty()) {
      const std::string hex = hex_bytes(m.build_id);
      text += ", or its debug file .build-id/";
      text += hex.substr(0, 2);
      text += '/';
      text += hex.substr(2);
      text += ".debug";
    }
    text += ") is";
    say(warnings, std::move(text));
    return {};
  }

  struct session {
    std::unique_ptr<Dwfl, dwfl_deleter> dwfl;
    bool tried = false;
    std::unique_ptr<symbol_index> symbols;               // built on first use
    std::unordered_map<const char*, std::string> names;  // by libdwfl's name: as printed
    bool units_read = false;
    std::vector<unit_range> units;  // sorted by lo; read when .debug_aranges did not answer
    bool subprograms_read = false;
    std::vector<subprogram_range> subprograms;  // sorted by lo; read when getscopes did not find
    // The namespaces and classes around each function declared in a unit ("ns::Class::"), by
    // the declaration's DIE; each unit indexed once, on first use (qualified_name).
    std::unordered_map<Dwarf_Off, std::string> scope_prefixes;
    std::set<Dwarf_Off> units_indexed;
  };

  // Records in s.scope_prefixes the prefix of each function declared in `parent`'s children,
  // `prefix` being parent's; descends into namespaces and named classes.
  static void index_scopes(session& s, Dwarf_Die* parent, const std::string& prefix) {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      const int tag = dwarf_tag(&child);
      if (tag == DW_TAG_subprogram) {
        // (One with a linkage name is named by it, qualified: die_name.)
        if (!prefix.empty() && dwarf_hasattr(&child, DW_AT_linkage_name) == 0)
          s.scope_prefixes.emplace(dwarf_dieoffset(&child), prefix);
      } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
                 tag == DW_TAG_structure_type || tag == DW_TAG_union_type) {
        const char* name = dwarf_diename(&child);
        if (name == nullptr && tag != DW_TAG_namespace) continue;  // an unnamed class's members
        index_scopes(s, &child, prefix + (name != nullptr ? name : "(anonymous namespace)") + "::");
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }

  // A C++ function's name from DWARF without a linkage name (a function of internal linkage,
  // inlined: "split"), qualified by the namespaces and classes around its declaration
  // ("(anonymous namespace)::split"), as its ELF symbol would be: the report and --site then
  // name it as they name the same function where it is not inlined.
  std::string qualified_name(session& s, Dwarf_Die* die, const std::string& name) {
    Dwarf_Die decl = *die;
    Dwarf_Attribute attr;
    Dwarf_Die next;
    for (int step = 0; step < 8; ++step) {  // inlined call -> abstract origin -> declaration
      if ((dwarf_attr(&decl, DW_AT_abstract_origin, &attr) != nullptr ||
           dwarf_attr(&decl, DW_AT_specification, &attr) != nullptr) &&
          dwarf_formref_die(&attr, &next) != nullptr) {
        decl = next;
        continue;
      }
      break;
    }
    Dwarf_Die unit;
    if (dwarf_diecu(&decl, &unit, nullptr, nullptr) == nullptr) return name;
    if (s.units_indexed.insert(dwarf_dieoffset(&unit)).second) index_scopes(s, &unit, "");
    const auto it = s.scope_prefixes.find(dwarf_dieoffset(&decl));
    return it == s.scope_prefixes.end() ? name : it->second + name;
  }

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

  // Whether the module's file has a full symbol table (.symtab), not only the exported one
  // (.dynsym) that a stripped file keeps.
  static bool has_symtab(Dwfl_Module* mod) {
    GElf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(mod, &bias);
    for (Elf_Scn* scn = elf != nullptr ? elf_nextscn(elf, nullptr) : nullptr; scn != nullptr;
         scn = elf_nextscn(elf, scn)) {
      GElf_Shdr header;
      if (gelf_getshdr(scn, &header) != nullptr && header.sh_type == SHT_SYMTAB) return true;
    }
    return false;
  }

  // A module of the user's without DWARF: functions from its symbol table, no lines; with no
  // symbol table either (stripped), only the functions it exports.
  void note_no_lines(const module_desc& m, bool symbols) {
    std::string text = "note: ";
    text += m.path;
    text += symbols ? " has no line information (built without -g, or stripped): its frames show "
                      "functions without file:line"
                    : " has no line information and no symbol table (stripped): its frames show "
                      "as " +
                          m.path.substr(m.path.rfind('/') + 1) +
                          "+0xOFFSET, but for the functions it exports";
    text +=
        ". Rebuild it with -g, or install its debug package (-dbgsym), or pass --debug-path DIR "
        "holding its debug file";
    if (!m.build_id.empty()) {
      const std::string hex = hex_bytes(m.build_id);
      text += " as DIR/.build-id/";
      text += hex.substr(0, 2);
      text += '/';
      text += hex.substr(2);
      text += ".debug";
    }
    say(notes, std::move(text));
  }

  Dwfl* open(std::size_t key, const module_desc& m) {
    session& s = sessions[key];
    if (!s.tried) {
      s.tried = true;
      const std::string file = !m.path.empty() && m.path[0] == '/' ? file_of(m) : std::string();
      if (!file.empty()) {
        s.dwfl.reset(dwfl_begin(&callbacks));
        if (s.dwfl != nullptr) {
          dwfl_report_begin(s.dwfl.get());
          Dwfl_Module* mod =
              dwfl_report_elf(s.dwfl.get(), m.path.c_str(), file.c_str(), -1, m.bias, true);
          dwfl_report_end(s.dwfl.get(), nullptr, nullptr);
          void** userdata = nullptr;
          if (mod != nullptr)
            dwfl_module_info(mod, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
          if (userdata != nullptr) *userdata = &build_id_dirs;  // for find_debuginfo
          if (mod == nullptr) {
            s.dwfl.reset();
          } else if (Dwarf_Addr bias = 0;
                     !system_library(m.path) && dwfl_module_getdwarf(mod, &bias) == nullptr) {
            note_no_lines(m, has_symtab(mod));
          }
        }
      }
    }
    return s.dwfl.get();
  }
};

symbolizer::symbolizer(std::vector<std::string> debug_paths)
    : impl_(new impl(std::move(debug_paths))) {}
symbolizer::~symbolizer() = default;

const std::vector<std::string>& symbolizer::warnings() const noexcept { return impl_->warnings; }

const std::vector<std::string>& symbolizer::notes() const noexcept { return impl_->notes; }

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
  // libdwfl takes each range of .debug_aranges to reach to the start of the next one: a unit the
  // section does not list (a Go unit, in a program built with cgo) was taken for the listed unit
  // before it, and its frames got that unit's last line (all of a cgo program's Go frames
  // showed gcc_mmap.c:37).
  if (cu != nullptr && dwarf_haspc(cu, pc - bias) != 1) cu = nullptr;
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
    // A file name relative to the unit's compilation directory (ccache's base_dir, a build that
    // passes relative paths): joined with DW_AT_comp_dir as debuggers do, so that the source
    // can be read from anywhere; left as it is when the directory is not absolute either.
    const char* comp_dir = nullptr;
    {
      Dwarf_Attribute attr;
      comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
    }
    const auto resolve = [comp_dir](std::string& name) {
      if (name.empty() || name.front() == '/' || comp_dir == nullptr || comp_dir[0] != '/') return;
      name = (std::filesystem::path(comp_dir) / name).lexically_normal().string();
    };
    resolve(file);
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
      } else if (!qualified && cxx && !f.function.empty()) {
        f.function = impl_->qualified_name(module_session, die, f.function);
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
      resolve(file);
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
