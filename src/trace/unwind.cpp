// DWARF CFI unwinder for x86_64 Linux, reduced to one cached rule per return address:
//   CFA = rsp + k | rbp + k | *(rbp + k)   (the last one: GCC's DRAP stack realignment)
//   return address at CFA - 8
//   rbp unchanged | saved at CFA + k | saved at rbp + k (DRAP)
// Anything else (signal frames, register-held return addresses, other expressions) stops the walk.
#include "trace/unwind.hpp"

#include <elf.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <new>

namespace lowalloc::trace {
namespace {

// ---- the per-thread rule cache ------------------------------------------------------------------

// The first two are the fast path; with them rbp is unchanged or at CFA + rbp_offset (<= -8).
enum cfa_kind : std::uint8_t {
  cfa_rsp = 0,        // CFA = rsp + cfa_offset
  cfa_rbp = 1,        // CFA = rbp + cfa_offset
  cfa_rbp_deref = 2,  // CFA = *(rbp + cfa_offset)
  cfa_frame_ptr = 3,  // no FDE: CFA = rbp + 16 if rbp looks like a frame pointer
  cfa_stop = 4,       // outermost frame or unsupported rule
};

enum rbp_kind : std::uint8_t {
  rbp_same = 0,    // rbp unchanged by this frame
  rbp_at_cfa = 1,  // caller's rbp saved at CFA + rbp_offset
  rbp_at_rbp = 2,  // caller's rbp saved at rbp + rbp_offset (with cfa_rbp_deref only)
};

struct rule {
  std::int32_t cfa_offset;
  std::int16_t rbp_offset;
  std::uint8_t cfa;  // cfa_kind
  std::uint8_t rbp;  // rbp_kind
};

struct entry {
  std::uintptr_t key;  // return address; 0 = empty (the memory comes zero-filled)
  rule r;
};
static_assert(sizeof(entry) == 16, "two entries per 32-byte set");

constexpr unsigned set_bits = 13;  // 8192 sets x 2 ways x 16 bytes = 256 KiB
constexpr std::size_t set_count = std::size_t{1} << set_bits;

// The low bits of return addresses are spread well enough; any mixing would lengthen the critical
// path (return address -> entry -> CFA -> return address) by ~15%.
inline std::size_t set_index(std::uintptr_t key) noexcept {
  return static_cast<std::size_t>(key & (set_count - 1));
}

constexpr rule stop_rule = {0, 0, cfa_stop, rbp_same};
constexpr rule frame_ptr_rule = {16, -16, cfa_frame_ptr, rbp_at_cfa};

// ---- bounded reads of .eh_frame_hdr / .eh_frame ------------------------------------------------

// Reads [p, end); any overrun clears ok and yields zeros, so parsers check ok once at the end.
struct reader {
  std::uintptr_t p;
  std::uintptr_t end;
  bool ok;

  template <class T>
  T read() noexcept {
    T v{};
    if (!ok || p > end || end - p < sizeof(T)) {
      ok = false;
      return v;
    }
    std::memcpy(&v, reinterpret_cast<const void*>(p), sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::uint8_t u8() noexcept { return read<std::uint8_t>(); }
  std::uint64_t uleb() noexcept {
    std::uint64_t v = 0;
    for (unsigned shift = 0; ok; shift += 7) {
      const std::uint8_t b = u8();
      if (shift < 64) v |= std::uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) break;
      if (shift > 70) ok = false;  // garbage, not a LEB128
    }
    return v;
  }
  std::int64_t sleb() noexcept {
    std::uint64_t v = 0;
    unsigned shift = 0;
    std::uint8_t b = 0;
    do {
      b = u8();
      if (shift < 64) v |= std::uint64_t{b & 0x7fu} << shift;
      shift += 7;
      if (shift > 77) ok = false;
    } while (ok && (b & 0x80) != 0);
    if (shift < 64 && (b & 0x40) != 0) v |= ~std::uint64_t{0} << shift;
    return static_cast<std::int64_t>(v);
  }
  void skip(std::uint64_t n) noexcept {
    if (!ok || p > end || end - p < n) {
      ok = false;
      return;
    }
    p += static_cast<std::uintptr_t>(n);
  }
};

constexpr std::uint8_t pe_omit = 0xff;
constexpr std::uint8_t pe_indirect = 0x80;

// The raw value of a DW_EH_PE_* encoded field, without applying its base.
std::uintptr_t read_raw(reader& r, std::uint8_t enc) noexcept {
  switch (enc & 0x0f) {
    case 0x00:
      return r.read<std::uint64_t>();  // absptr
    case 0x01:
      return r.uleb();
    case 0x02:
      return r.read<std::uint16_t>();
    case 0x03:
      return r.read<std::uint32_t>();
    case 0x04:
      return r.read<std::uint64_t>();
    case 0x09:
      return static_cast<std::uintptr_t>(r.sleb());
    case 0x0a:
      return static_cast<std::uintptr_t>(std::intptr_t{r.read<std::int16_t>()});
    case 0x0b:
      return static_cast<std::uintptr_t>(std::intptr_t{r.read<std::int32_t>()});
    case 0x0c:
      return static_cast<std::uintptr_t>(r.read<std::int64_t>());
    default:
      r.ok = false;
      return 0;
  }
}

// An encoded pointer: absptr, pcrel or datarel (relative to data_base); no indirection.
std::uintptr_t read_pointer(reader& r, std::uint8_t enc, std::uintptr_t data_base) noexcept {
  const std::uintptr_t field = r.p;
  std::uintptr_t v = read_raw(r, enc);
  switch (enc & 0x70) {
    case 0x00:
      break;
    case 0x10:
      v += field;
      break;
    case 0x30:
      if (data_base == 0) r.ok = false;
      v += data_base;
      break;
    default:
      r.ok = false;
      break;  // textrel/funcrel/aligned: never emitted for x86_64 FDEs
  }
  if ((enc & pe_indirect) != 0) r.ok = false;
  return v;
}

// ---- modules ------------------------------------------------------------------------------------

struct module_info {
  std::uintptr_t text_lo;  // union of the executable PT_LOADs
  std::uintptr_t text_hi;
  std::uintptr_t table;  // .eh_frame_hdr search table (datarel|sdata4 pairs), 0 if unusable
  std::uintptr_t hdr;    // .eh_frame_hdr: base of the table's datarel values
  std::size_t fde_count;
  std::uintptr_t eh_lo;  // the PT_LOAD holding .eh_frame: bound for every CIE/FDE read
  std::uintptr_t eh_hi;
};

constexpr std::size_t max_modules = 512;

// Written under the spinlock; read under it too (only on cache misses), so entries can be replaced
// after unwind_modules_invalidate. Nothing is called while holding it: no deadlock with the loader.
struct module_table {
  std::atomic<bool> locked;
  std::size_t count;
  module_info modules[max_modules];
};
module_table g_modules;  // zero-initialised: no constructor runs

class table_lock {
 public:
  table_lock() noexcept {
    while (g_modules.locked.exchange(true, std::memory_order_acquire)) {
      while (g_modules.locked.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  ~table_lock() { g_modules.locked.store(false, std::memory_order_release); }
  table_lock(const table_lock&) = delete;
  table_lock& operator=(const table_lock&) = delete;
};

struct phdr_search {
  std::uintptr_t pc;
  module_info found;
  bool ok;
};

// Parses the .eh_frame_hdr of a module found by dl_iterate_phdr.
void parse_eh_frame_hdr(const dl_phdr_info* info, const ElfW(Phdr) * eh, module_info* m) noexcept {
  const std::uintptr_t hdr = info->dlpi_addr + eh->p_vaddr;
  reader r{hdr, hdr + eh->p_memsz, true};
  const std::uint8_t version = r.u8();
  const std::uint8_t eh_frame_ptr_enc = r.u8();
  const std::uint8_t fde_count_enc = r.u8();
  const std::uint8_t table_enc = r.u8();
  if (!r.ok || version != 1 || eh_frame_ptr_enc == pe_omit) return;
  const std::uintptr_t eh_frame = read_pointer(r, eh_frame_ptr_enc, hdr);
  if (!r.ok) return;
  // Bound CIE/FDE reads by the segment holding .eh_frame (its size is not in the program headers).
  for (std::size_t i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_R) != 0 && eh_frame >= lo &&
        eh_frame - lo < ph.p_memsz) {
      m->eh_lo = lo;
      m->eh_hi = lo + ph.p_memsz;
    }
  }
  if (m->eh_hi == 0 || fde_count_enc == pe_omit || table_enc != 0x3b) return;  // datarel|sdata4
  const std::uintptr_t count = read_pointer(r, fde_count_enc, hdr);
  if (!r.ok || count > (r.end - r.p) / 8) return;
  m->hdr = hdr;
  m->table = r.p;
  m->fde_count = count;
}

int phdr_callback(dl_phdr_info* info, std::size_t, void* data) noexcept {
  auto* s = static_cast<phdr_search*>(data);
  module_info m{};
  bool contains = false;
  const ElfW(Phdr)* eh = nullptr;
  for (std::size_t i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_GNU_EH_FRAME) eh = &ph;
    if (ph.p_type != PT_LOAD) continue;
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    const std::uintptr_t hi = lo + ph.p_memsz;
    if (s->pc >= lo && s->pc < hi) contains = true;
    if ((ph.p_flags & PF_X) == 0) continue;
    if (m.text_hi == 0 || lo < m.text_lo) m.text_lo = lo;
    if (hi > m.text_hi) m.text_hi = hi;
  }
  if (!contains) return 0;
  if (eh != nullptr) parse_eh_frame_hdr(info, eh, &m);
  s->found = m;
  s->ok = true;
  return 1;
}

bool find_module(std::uintptr_t pc, module_info* out) noexcept {
  {
    table_lock lock;
    for (std::size_t i = 0; i < g_modules.count; ++i) {
      const module_info& m = g_modules.modules[i];
      if (pc >= m.text_lo && pc < m.text_hi) {
        *out = m;
        return true;
      }
    }
  }
  phdr_search s{pc, {}, false};
  dl_iterate_phdr(phdr_callback, &s);
  if (!s.ok) return false;
  *out = s.found;
  table_lock lock;
  for (std::size_t i = 0; i < g_modules.count; ++i) {
    if (g_modules.modules[i].text_lo == s.found.text_lo) return true;  // another thread won
  }
  if (g_modules.count < max_modules) g_modules.modules[g_modules.count++] = s.found;
  return true;
}

// ---- CIE / FDE parsing --------------------------------------------------------------------------

constexpr unsigned reg_rbp = 6;
constexpr unsigned reg_rsp = 7;
constexpr unsigned reg_ra = 16;

struct cie_info {
  std::uint64_t code_align;
  std::int64_t data_align;
  std::uint8_t fde_enc;
  bool has_z;
  bool ok;  // false: unsupported (signal frame, odd augmentation or return-address column)
  std::uintptr_t insn;
  std::uintptr_t insn_end;
};

// Sets r.end to the end of the entry whose length field is at r.p; returns false on overrun.
bool enter_entry(reader& r, bool* is64) noexcept {
  std::uint64_t len = r.read<std::uint32_t>();
  *is64 = len == 0xffffffffu;
  if (*is64) len = r.read<std::uint64_t>();
  if (!r.ok || len == 0 || len > r.end - r.p) return false;
  r.end = r.p + static_cast<std::uintptr_t>(len);
  return true;
}

cie_info parse_cie(std::uintptr_t cie, const module_info& m) noexcept {
  cie_info c{};
  if (cie < m.eh_lo || cie >= m.eh_hi) return c;
  reader r{cie, m.eh_hi, true};
  bool is64 = false;
  if (!enter_entry(r, &is64)) return c;
  const std::uint64_t id = is64 ? r.read<std::uint64_t>() : r.read<std::uint32_t>();
  const std::uint8_t version = r.u8();
  if (!r.ok || id != 0 || (version != 1 && version != 3)) return c;
  char aug[8];
  std::size_t aug_len = 0;
  for (;;) {
    const char ch = static_cast<char>(r.u8());
    if (!r.ok) return c;
    if (ch == '\0') break;
    if (aug_len == sizeof aug) return c;
    aug[aug_len++] = ch;
  }
  c.code_align = r.uleb();
  c.data_align = r.sleb();
  const std::uint64_t ra_column = version == 1 ? r.u8() : r.uleb();
  if (!r.ok || ra_column != reg_ra) return c;
  bool signal_frame = false;
  if (aug_len > 0) {
    if (aug[0] != 'z') return c;  // "eh" and other pre-'z' augmentations
    c.has_z = true;
    const std::uint64_t data_len = r.uleb();
    if (!r.ok || data_len > r.end - r.p) return c;
    const std::uintptr_t data_end = r.p + static_cast<std::uintptr_t>(data_len);
    for (std::size_t i = 1; i < aug_len; ++i) {
      switch (aug[i]) {
        case 'R':
          c.fde_enc = r.u8();
          break;
        case 'P':  // personality routine: not needed
          read_raw(r, r.u8());
          break;
        case 'L':
          r.u8();
          break;
        case 'S':
          signal_frame = true;
          break;
        case 'B':
          break;
        default:
          return c;
      }
    }
    if (!r.ok || r.p > data_end) return c;
    r.p = data_end;
  }
  c.insn = r.p;
  c.insn_end = r.end;
  c.ok = !signal_frame;  // a signal frame's caller registers live in a ucontext: unsupported
  return c;
}

// ---- CFA program --------------------------------------------------------------------------------

enum reg_kind : std::uint8_t {
  reg_same = 0,
  reg_undefined,
  reg_offset,      // saved at CFA + off
  reg_at_rbp,      // saved at rbp + off (DW_CFA_expression: DW_OP_breg6 off)
  reg_unsupported  // in another register, val_* or other expressions
};

enum cfa_reg : std::uint8_t { cfa_reg_rsp, cfa_reg_rbp, cfa_reg_rbp_deref, cfa_reg_other };

struct frame_state {
  std::int64_t cfa_off;
  std::int64_t rbp_off;
  std::int64_t ra_off;
  std::uint8_t cfa;  // cfa_reg
  std::uint8_t rbp;  // reg_kind
  std::uint8_t ra;   // reg_kind
};

constexpr std::size_t max_remembered = 8;

void set_reg(frame_state& s, std::uint64_t reg, std::uint8_t kind, std::int64_t off) noexcept {
  if (reg == reg_rbp) {
    s.rbp = kind;
    s.rbp_off = off;
  } else if (reg == reg_ra) {
    s.ra = kind;
    s.ra_off = off;
  }
}

void set_cfa_reg(frame_state& s, std::uint64_t reg) noexcept {
  s.cfa = reg == reg_rsp ? cfa_reg_rsp : reg == reg_rbp ? cfa_reg_rbp : cfa_reg_other;
}

// DW_CFA_def_cfa_expression: DW_OP_breg7 N [DW_OP_breg16 ...] (the .plt FDE's rsp + N + 8 * (rip
// past the push): rsp + N, exact enough since a PLT stub never is a return address), or
// DW_OP_breg6 N; DW_OP_deref (DRAP). Else unsupported.
void cfa_expression(frame_state& s, reader block) noexcept {
  const std::uint8_t op = block.u8();
  const std::int64_t off = block.sleb();
  if (!block.ok) {
    s.cfa = cfa_reg_other;
  } else if (op == 0x77 && (block.p == block.end || block.u8() == 0x80)) {
    s.cfa = cfa_reg_rsp;
    s.cfa_off = off;
  } else if (op == 0x76 && block.u8() == 0x06 && block.ok && block.p == block.end) {
    s.cfa = cfa_reg_rbp_deref;
    s.cfa_off = off;
  } else {
    s.cfa = cfa_reg_other;
  }
}

// DW_CFA_expression for rbp: only DW_OP_breg6 N (DRAP saves rbp at the realigned rbp).
void reg_expression(frame_state& s, std::uint64_t reg, reader block) noexcept {
  if (reg != reg_rbp) {
    set_reg(s, reg, reg_unsupported, 0);
    return;
  }
  const std::uint8_t op = block.u8();
  const std::int64_t off = block.sleb();
  if (block.ok && op == 0x76 && block.p == block.end) {
    set_reg(s, reg, reg_at_rbp, off);
  } else {
    set_reg(s, reg, reg_unsupported, 0);
  }
}

// Runs the instructions in [insn, end) until the location passes `target`. `initial` is the state
// after the CIE (for DW_CFA_restore).
bool run_cfa(const cie_info& c, std::uintptr_t insn, std::uintptr_t end, std::uintptr_t loc,
             std::uintptr_t target, const frame_state& initial, frame_state& s) noexcept {
  frame_state stack[max_remembered];
  std::size_t depth = 0;
  reader r{insn, end, true};
  const auto advance = [&](std::uint64_t delta) {
    loc += static_cast<std::uintptr_t>(delta * c.code_align);
    return loc <= target;
  };
  const auto restore = [&](std::uint64_t reg) {
    if (reg == reg_rbp) {
      s.rbp = initial.rbp;
      s.rbp_off = initial.rbp_off;
    } else if (reg == reg_ra) {
      s.ra = initial.ra;
      s.ra_off = initial.ra_off;
    }
  };
  while (r.ok && r.p < r.end) {
    const std::uint8_t op = r.u8();
    switch (op & 0xc0) {
      case 0x40:
        if (!advance(op & 0x3fu)) return true;
        continue;
      case 0x80:
        set_reg(s, op & 0x3fu, reg_offset, static_cast<std::int64_t>(r.uleb()) * c.data_align);
        continue;
      case 0xc0:
        restore(op & 0x3fu);
        continue;
      default:
        break;
    }
    switch (op) {
      case 0x00:
        break;      // nop
      case 0x01: {  // set_loc
        loc = read_pointer(r, c.fde_enc, 0);
        if (loc > target) return r.ok;
        break;
      }
      case 0x02:
        if (!advance(r.u8())) return r.ok;
        break;
      case 0x03:
        if (!advance(r.read<std::uint16_t>())) return r.ok;
        break;
      case 0x04:
        if (!advance(r.read<std::uint32_t>())) return r.ok;
        break;
      case 0x05: {  // offset_extended
        const std::uint64_t reg = r.uleb();
        set_reg(s, reg, reg_offset, static_cast<std::int64_t>(r.uleb()) * c.data_align);
        break;
      }
      case 0x06:
        restore(r.uleb());
        break;  // restore_extended
      case 0x07:
        set_reg(s, r.uleb(), reg_undefined, 0);
        break;  // undefined
      case 0x08:
        set_reg(s, r.uleb(), reg_same, 0);
        break;      // same_value
      case 0x09: {  // register
        set_reg(s, r.uleb(), reg_unsupported, 0);
        r.uleb();
        break;
      }
      case 0x0a:  // remember_state
        if (depth == max_remembered) return false;
        stack[depth++] = s;
        break;
      case 0x0b:  // restore_state: the CFA too (GCC relies on it after epilogues)
        if (depth == 0) return false;
        s = stack[--depth];
        break;
      case 0x0c: {  // def_cfa
        set_cfa_reg(s, r.uleb());
        s.cfa_off = static_cast<std::int64_t>(r.uleb());
        break;
      }
      case 0x0d:
        set_cfa_reg(s, r.uleb());
        break;  // def_cfa_register
      case 0x0e:
        s.cfa_off = static_cast<std::int64_t>(r.uleb());
        break;      // def_cfa_offset
      case 0x0f: {  // def_cfa_expression
        const std::uint64_t len = r.uleb();
        const reader block{r.p, r.p + static_cast<std::uintptr_t>(len), r.ok && len <= r.end - r.p};
        r.skip(len);
        cfa_expression(s, block);
        break;
      }
      case 0x10: {  // expression
        const std::uint64_t reg = r.uleb();
        const std::uint64_t len = r.uleb();
        const reader block{r.p, r.p + static_cast<std::uintptr_t>(len), r.ok && len <= r.end - r.p};
        r.skip(len);
        reg_expression(s, reg, block);
        break;
      }
      case 0x11: {  // offset_extended_sf
        const std::uint64_t reg = r.uleb();
        set_reg(s, reg, reg_offset, r.sleb() * c.data_align);
        break;
      }
      case 0x12: {  // def_cfa_sf
        set_cfa_reg(s, r.uleb());
        s.cfa_off = r.sleb() * c.data_align;
        break;
      }
      case 0x13:
        s.cfa_off = r.sleb() * c.data_align;
        break;      // def_cfa_offset_sf
      case 0x14:    // val_offset
      case 0x15: {  // val_offset_sf
        set_reg(s, r.uleb(), reg_unsupported, 0);
        r.uleb();  // same byte length as the sleb of _sf
        break;
      }
      case 0x16: {  // val_expression
        set_reg(s, r.uleb(), reg_unsupported, 0);
        r.skip(r.uleb());
        break;
      }
      case 0x2e:
        r.uleb();
        break;      // GNU_args_size
      case 0x2f: {  // GNU_negative_offset_extended
        const std::uint64_t reg = r.uleb();
        set_reg(s, reg, reg_offset, -static_cast<std::int64_t>(r.uleb()) * c.data_align);
        break;
      }
      default:
        return false;
    }
  }
  return r.ok;
}

// Finds the FDE covering `target` through the .eh_frame_hdr binary-search table.
std::uintptr_t find_fde(const module_info& m, std::uintptr_t target) noexcept {
  if (m.table == 0 || m.fde_count == 0) return 0;
  std::size_t lo = 0;
  std::size_t hi = m.fde_count;  // invariant: the answer is in [lo, hi)
  const auto initial_loc = [&](std::size_t i) {
    std::int32_t v;
    std::memcpy(&v, reinterpret_cast<const void*>(m.table + i * 8), 4);
    return m.hdr + static_cast<std::uintptr_t>(std::intptr_t{v});
  };
  if (target < initial_loc(0)) return 0;
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (initial_loc(mid) <= target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  std::int32_t fde;
  std::memcpy(&fde, reinterpret_cast<const void*>(m.table + lo * 8 + 4), 4);
  return m.hdr + static_cast<std::uintptr_t>(std::intptr_t{fde});
}

// The rule for a return address, from its module's CFI; frame_ptr_rule when there is no FDE.
rule compute_rule(std::uintptr_t ra) noexcept {
  const std::uintptr_t target = ra - 1;  // inside the call instruction, not after it
  module_info m{};
  if (!find_module(target, &m)) return frame_ptr_rule;  // JIT or anonymous code
  const std::uintptr_t fde = find_fde(m, target);
  if (fde == 0) return frame_ptr_rule;
  if (fde < m.eh_lo || fde >= m.eh_hi) return stop_rule;

  reader r{fde, m.eh_hi, true};
  bool is64 = false;
  if (!enter_entry(r, &is64)) return stop_rule;
  const std::uintptr_t cie_field = r.p;
  const std::uint64_t cie_delta = is64 ? r.read<std::uint64_t>() : r.read<std::uint32_t>();
  if (!r.ok || cie_delta == 0 || cie_delta > cie_field) return stop_rule;
  const cie_info c = parse_cie(cie_field - static_cast<std::uintptr_t>(cie_delta), m);
  if (!c.ok) return stop_rule;
  const std::uintptr_t pc_begin = read_pointer(r, c.fde_enc, 0);
  const std::uintptr_t pc_range = read_raw(r, c.fde_enc & 0x0f);
  if (!r.ok) return stop_rule;
  if (target < pc_begin || target - pc_begin >= pc_range) return frame_ptr_rule;  // in a gap
  if (c.has_z) r.skip(r.uleb());
  if (!r.ok) return stop_rule;

  frame_state s{};
  s.cfa = cfa_reg_other;  // until the CIE defines it
  const frame_state empty = s;
  if (!run_cfa(c, c.insn, c.insn_end, pc_begin, ~std::uintptr_t{0}, empty, s)) return stop_rule;
  const frame_state initial = s;
  if (!run_cfa(c, r.p, r.end, pc_begin, target, initial, s)) return stop_rule;

  if (s.ra != reg_offset || s.ra_off != -8) return stop_rule;  // also: undefined RA = outermost
  if (s.cfa_off < INT32_MIN || s.cfa_off > INT32_MAX) return stop_rule;
  rule out{static_cast<std::int32_t>(s.cfa_off), 0, cfa_stop, rbp_same};
  switch (s.cfa) {
    case cfa_reg_rsp:
      out.cfa = cfa_rsp;
      break;
    case cfa_reg_rbp:
      out.cfa = cfa_rbp;
      break;
    case cfa_reg_rbp_deref:
      out.cfa = cfa_rbp_deref;
      break;
    default:
      return stop_rule;
  }
  switch (s.rbp) {
    case reg_same:
    case reg_undefined:
      break;  // the caller's rbp is then irrelevant
    case reg_offset:
      // Below the CFA and aligned, so that the fast path only checks the slot against sp.
      if (s.rbp_off < INT16_MIN || s.rbp_off > -8 || (s.rbp_off & 7) != 0) return stop_rule;
      out.rbp = rbp_at_cfa;
      out.rbp_offset = static_cast<std::int16_t>(s.rbp_off);
      break;
    case reg_at_rbp:
      if (out.cfa != cfa_rbp_deref || s.rbp_off < INT16_MIN || s.rbp_off > INT16_MAX) {
        return stop_rule;
      }
      out.rbp = rbp_at_rbp;
      out.rbp_offset = static_cast<std::int16_t>(s.rbp_off);
      break;
    default:
      return stop_rule;
  }
  return out;
}

inline std::uintptr_t load(std::uintptr_t address) noexcept {
  return *reinterpret_cast<const std::uintptr_t*>(address);
}

inline std::uintptr_t add(std::uintptr_t base, std::int32_t offset) noexcept {
  return base + static_cast<std::uintptr_t>(std::intptr_t{offset});
}

// The registers of one frame; [sp, stack_hi) is readable and sp is 8-aligned.
struct frame {
  std::uintptr_t pc;  // a return address
  std::uintptr_t sp;
  std::uintptr_t rbp;
};

__attribute__((noinline, cold)) rule miss(entry* set, std::uintptr_t ra) noexcept {
  const rule r = compute_rule(ra);
  set[1] = set[0];  // the older entry survives in the second way
  set[0] = entry{ra, r};
  return r;
}

struct caller_regs {
  std::uintptr_t cfa;  // 0: stop
  std::uintptr_t rbp;
};

// The rare rules. By value: references would keep the hot loop's registers in memory.
__attribute__((noinline)) caller_regs slow_step(rule r, frame f, std::uintptr_t stack_hi) noexcept {
  constexpr caller_regs stop = {0, 0};
  std::uintptr_t cfa = 0;
  std::uintptr_t rbp_slot = 0;
  bool rbp_saved = true;
  if (r.cfa == cfa_rbp_deref) {
    const std::uintptr_t a = add(f.rbp, r.cfa_offset);
    if (a < f.sp || a > stack_hi - 8 || (a & 7) != 0) return stop;
    cfa = load(a);
    rbp_saved = r.rbp == rbp_at_rbp;
    rbp_slot = add(f.rbp, r.rbp_offset);
  } else if (r.cfa == cfa_frame_ptr) {
    if (f.rbp < f.sp || (f.rbp & 7) != 0) return stop;
    cfa = f.rbp + 16;
    rbp_slot = f.rbp;
  } else {
    return stop;
  }
  if (cfa <= f.sp || cfa > stack_hi || (cfa & 7) != 0) return stop;
  if (rbp_saved) {
    if (rbp_slot < f.sp || rbp_slot > stack_hi - 8 || (rbp_slot & 7) != 0) return stop;
    f.rbp = load(rbp_slot);
  }
  return {cfa, f.rbp};
}

// What a step depended on besides pc, sp and the return address at CFA - 8: the address it loaded
// the caller's rbp from (8-aligned; 0 when the caller's rbp is this frame's), with these flags.
constexpr std::uintptr_t reads_rare = 1;     // a rare rule (slow_step): it cannot be checked
constexpr std::uintptr_t reads_cfa_rbp = 2;  // the CFA came from this frame's rbp
constexpr std::uintptr_t reads_flags = 7;

// Moves f to the caller's frame; false at the outermost frame or on anything doubtful. `reads`
// says what it depended on (see above).
inline bool step(entry (*sets)[2], frame& f, std::uintptr_t stack_hi,
                 std::uintptr_t& reads) noexcept {
  entry* set = sets[set_index(f.pc)];
  rule r;
  if (__builtin_expect(set[0].key == f.pc, 1)) {
    r = set[0].r;
  } else if (set[1].key == f.pc) {
    r = set[1].r;
  } else {
    r = miss(set, f.pc);
  }
  std::uintptr_t cfa;
  if (__builtin_expect(r.cfa <= cfa_rbp, 1)) {
    cfa = add(r.cfa == cfa_rsp ? f.sp : f.rbp, r.cfa_offset);
    // Strictly increasing, on the stack, aligned: ends every walk and keeps reads in bounds.
    if (cfa - f.sp - 1 >= stack_hi - f.sp || (cfa & 7) != 0) return false;
    reads = r.cfa == cfa_rbp ? reads_cfa_rbp : 0;
    if (r.rbp == rbp_at_cfa) {
      const std::uintptr_t slot = add(cfa, r.rbp_offset);  // <= cfa - 8, aligned
      if (slot < f.sp) return false;
      reads |= slot;
      f.rbp = load(slot);
    }
  } else {
    const caller_regs next = slow_step(r, f, stack_hi);
    if (next.cfa == 0) return false;
    reads = reads_rare;
    cfa = next.cfa;
    f.rbp = next.rbp;
  }
  f.pc = load(cfa - 8);
  f.sp = cfa;
  return f.pc != 0;
}

// ---- the previous walk --------------------------------------------------------------------------

// A step's result depends only on the frame's pc and sp, the rule of its pc, the stack's top, the
// stack words it reads (the return address at CFA - 8 and the saved rbp) and, where its rule
// computes the CFA from rbp, the frame's rbp. So a walk that reaches a frame of the thread's
// previous walk (the same pc at the same sp) need not step on: it checks that the words the
// previous walk read from there are unchanged, and rbp where a rule used it, two loads a frame and
// no rule lookups, and steps only from the first frame where something differs. A deep stack whose
// innermost frames alone change between allocations then costs little more than a shallow one.
// Only the first memo_leaf_frames frames are looked up in the previous walk.
constexpr std::size_t memo_frames = 256;  // max_depth_limit (trace/config.hpp)
constexpr std::size_t memo_leaf_frames = 16;

struct walk_memo {
  std::size_t count;
  std::uintptr_t stack_hi;
  std::uintptr_t pc[memo_frames];
  std::uintptr_t sp[memo_frames];
  std::uintptr_t rbp[memo_frames];
  std::uintptr_t reads[memo_frames];  // of the step from this frame (reads_rare: the last frame)
  std::uint64_t hash[memo_frames];    // stack_hash of pc[i, count)
};

// Brings hash[0, from) up to date, hash[from, count) being right (from == count: none is).
std::uint64_t hash_frames(walk_memo& m, std::size_t from) noexcept {
  std::uint64_t h = from == m.count ? stack_hash_seed : m.hash[from];
  for (std::size_t i = from; i-- > 0;) {
    h = stack_hash(h, m.pc[i]);
    m.hash[i] = h;
  }
  return h;
}

inline void put_frame(walk_memo& m, std::size_t i, const frame& f) noexcept {
  m.pc[i] = f.pc;
  m.sp[i] = f.sp;
  m.rbp[i] = f.rbp;
}

// Frame `from` of the memo becomes frame `to`, with what its step read and its hash. (Five
// memmove calls of a few words each, one per array, cost more than the walk they spared on a
// program whose leaf depth changes from one allocation to the next.)
inline void move_frame(walk_memo& m, std::size_t to, std::size_t from) noexcept {
  m.pc[to] = m.pc[from];
  m.sp[to] = m.sp[from];
  m.rbp[to] = m.rbp[from];
  m.reads[to] = m.reads[from];
  m.hash[to] = m.hash[from];
}

// Steps on from frame n - 1 of the memo, storing each frame, up to `max` frames in all.
std::size_t walk_on(walk_memo& m, std::size_t n, std::size_t max, entry (*sets)[2],
                    std::uintptr_t stack_hi) noexcept {
  frame f{m.pc[n - 1], m.sp[n - 1], m.rbp[n - 1]};
  for (;;) {
    std::uintptr_t reads = reads_rare;
    if (n == max || !step(sets, f, stack_hi, reads)) break;
    m.reads[n - 1] = reads;
    put_frame(m, n++, f);
  }
  m.reads[n - 1] = reads_rare;
  m.count = n;
  return n;
}

// Whether each of the frames [from, to) whose step computed the CFA from rbp (reads_cfa_rbp) has
// the rbp it had, frame_rbp; `rbp` is frame from's now, and the caller's rbp at each step is read
// from its slot, as the step did. `last_rbp` becomes frame to's rbp.
inline bool rbp_unchanged(const std::uintptr_t* reads, const std::uintptr_t* frame_rbp,
                          std::size_t from, std::size_t to, std::uintptr_t rbp,
                          std::uintptr_t& last_rbp) noexcept {
  for (std::size_t k = from; k < to; ++k) {
    const std::uintptr_t read = reads[k];
    if ((read & reads_cfa_rbp) != 0 && rbp != frame_rbp[k]) return false;
    const std::uintptr_t slot = read & ~reads_flags;
    if (slot != 0) rbp = load(slot);
  }
  last_rbp = rbp;
  return true;
}

// Frame k of the memo is this walk's with the same pc and sp, and `rbp` its rbp now: checks the
// frames from k on and returns the last one known to be this walk's, its rbp brought up to date.
std::size_t check_previous(walk_memo& m, std::size_t k, std::uintptr_t rbp) noexcept {
  // Mostly every frame is unchanged: then one pass that neither branches on what it reads nor
  // stores anything proves it, at about half the cost of the frame-by-frame check below, which
  // finds where a walk that differs stops matching. Every word it reads lies in [sp, stack_hi) of
  // the frame it matched (the sp of the memo's frames increases, and a step's rbp slot lies
  // between its sp and its CFA). Where a rule computed the CFA from rbp, a second pass checks
  // that the frame's rbp now is the one it had (a compiler's frames with alloca or a realigned
  // stack: cc1plus ran the frame-by-frame check after the first pass at most walks, when such
  // frames made the first pass give up). The rbp of the other frames between is not stored:
  // nothing reads it (see unchanged()), and the frame-by-frame check and walk_on overwrite it
  // from where they start.
  {
    std::uintptr_t differs = 0;
    std::uintptr_t flags = 0;
    std::uintptr_t last_rbp = rbp;
    for (std::size_t i = k; i + 1 < m.count; ++i) {
      const std::uintptr_t reads = m.reads[i];
      flags |= reads;
      differs |= load(m.sp[i + 1] - 8) ^ m.pc[i + 1];
      const std::uintptr_t slot = reads & ~reads_flags;
      if (slot != 0) last_rbp = load(slot);
    }
    if (differs == 0 && (flags & reads_rare) == 0 &&
        ((flags & reads_cfa_rbp) == 0 ||
         rbp_unchanged(m.reads, m.rbp, k, m.count - 1, rbp, last_rbp))) {
      m.rbp[k] = rbp;
      m.rbp[m.count - 1] = last_rbp;
      return m.count - 1;
    }
  }
  for (; k + 1 < m.count; ++k) {
    const std::uintptr_t reads = m.reads[k];
    if ((reads & reads_rare) != 0 || ((reads & reads_cfa_rbp) != 0 && rbp != m.rbp[k])) break;
    if (load(m.sp[k + 1] - 8) != m.pc[k + 1]) break;
    m.rbp[k] = rbp;
    const std::uintptr_t slot = reads & ~reads_flags;
    if (slot != 0) rbp = load(slot);
  }
  m.rbp[k] = rbp;
  return k;
}

// The frames of the walk from `f`, into the memo, with their hashes; how many. max <=
// memo_frames. `same`: they are the previous walk's.
// (The frame comes as three words: a frame passed by value went through memory, as two 8-byte
// stores and one 16-byte load, which stalled on store forwarding at every call.)
std::size_t walk(walk_memo& m, std::uintptr_t pc, std::uintptr_t sp, std::uintptr_t rbp,
                 std::size_t max, entry (*sets)[2], std::uintptr_t stack_hi, bool& same) noexcept {
  frame f{pc, sp, rbp};
  same = false;
  if (m.stack_hi != stack_hi) {  // another stack (a fiber, a signal stack): nothing to reuse
    m.count = 0;
    m.stack_hi = stack_hi;
  }
  frame leaf[memo_leaf_frames];
  std::uintptr_t leaf_reads[memo_leaf_frames];
  std::size_t n = 0;
  std::size_t j = 0;  // the previous walk's first frame not below f
  bool matched = false;
  for (;;) {
    while (j < m.count && m.sp[j] < f.sp) ++j;
    if (j < m.count && m.sp[j] == f.sp && m.pc[j] == f.pc) {
      matched = true;
      break;
    }
    if (n == memo_leaf_frames) break;
    leaf[n] = f;
    leaf_reads[n] = reads_rare;
    ++n;
    if (n == max || !step(sets, f, stack_hi, leaf_reads[n - 1])) {
      leaf_reads[n - 1] = reads_rare;
      for (std::size_t i = 0; i < n; ++i) {
        put_frame(m, i, leaf[i]);
        m.reads[i] = leaf_reads[i];
      }
      m.count = n;
      hash_frames(m, n);
      return n;
    }
  }
  std::size_t k = n;  // the frame of this walk that f is
  const std::size_t previous_count = m.count;
  bool tail_hashed = false;  // hash[n, count) stays right if the walk ends at frame k
  if (matched) {
    bool same_leaf = n == j;
    for (std::size_t i = 0; same_leaf && i < n; ++i) same_leaf = leaf[i].pc == m.pc[i];
    // The previous walk's frames from j on become this walk's from n on.
    std::size_t keep = m.count - j;
    if (keep > max - n) keep = max - n;
    if (n < j) {
      for (std::size_t i = 0; i < keep; ++i) move_frame(m, n + i, j + i);
    } else if (n > j) {
      for (std::size_t i = keep; i-- > 0;) move_frame(m, n + i, j + i);
    }
    const bool whole_tail = keep == m.count - j;
    m.count = n + keep;
    k = check_previous(m, n, f.rbp);
    tail_hashed = whole_tail && k + 1 == m.count;
    same = same_leaf && k + 1 == previous_count;
  } else {
    put_frame(m, k, f);
  }
  for (std::size_t i = 0; i < n; ++i) {
    put_frame(m, i, leaf[i]);
    m.reads[i] = leaf_reads[i];
  }
  // Frame k is right; step on from it (at the end of the previous walk: it stopped there).
  const std::size_t count = walk_on(m, k + 1, max, sets, stack_hi);
  same = same && count == previous_count;
  hash_frames(m, tail_hashed && count == k + 1 ? n : count);
  return count;
}

// ---- remembered walks ---------------------------------------------------------------------------

// A program allocates from a few call sites in turn (a loop body's allocations, an interpreter's
// cycle of them), so the previous walk alone mostly shares only the outer frames with this one,
// and the frames below must be stepped, one dependent load after another. The walks of recent
// leaf frames (pc and sp) are kept too, frame by frame as the memo keeps them, in a ring of frames
// that the newest overwrite; a walk from a remembered leaf frame is the remembered one if every
// word it read is unchanged (the check above, two independent loads a frame), and then costs
// neither a step nor a hash. Walks whose steps took a rare rule are not remembered.
// 16,384 frames (512 KiB with the rbp and reads, touched as they fill) in 128 sets of walks: a
// program that allocates from many deep call sites in turn (cmake running its scripts, 45 frames
// deep; a compiler) outgrew 4,096 frames in 32 sets, its walks overwritten before they were
// found again: cmake stepped a walk at one allocation in three, cc1plus at more than half. With
// these the recorder added 9.5% fewer instructions to cmake and 8.2% fewer to cc1plus (python3,
// ninja: the same).
constexpr std::size_t ring_frames = 16384;
// Up to 8 walks from one innermost frame: a parser's string constructors called at one depth
// from many places (ninja: 85% of walks found again with 4 ways, 99.97% with 8).
constexpr unsigned walk_set_bits = unwind_walk_set_bits;  // 128 sets of 8 remembered walks
constexpr std::size_t walk_set_count = std::size_t{1} << walk_set_bits;
constexpr int walk_ways = 8;

struct remembered_walk {
  std::uintptr_t pc;  // the leaf frame's; 0 = empty
  std::uintptr_t sp;
  std::uintptr_t stack_hi;
  std::uint64_t hash;
  std::uint64_t tag;    // the caller's (unwind_capture_from), 0 when remembered
  std::uint64_t start;  // its first frame's position in the ring (frames written before it)
  std::uint64_t used;   // the ring's clock when it was last remembered or found
  std::uint16_t count;
  std::uint16_t max;
  // Where a step computed the CFA from rbp (uses_rbp), the rbp check runs over frames
  // [rbp_from, rbp_to]: from the last frame below the first such step that loads the caller's rbp
  // (0 if none does) to the last such step. cmake's walks found again, 46 frames, had those steps
  // between frames 19 and 29 on average, and the check went over all of them.
  std::uint8_t rbp_from;
  std::uint8_t rbp_to;
  bool restep;    // its last step failed on what it read, not on its rule alone: step it again
  bool uses_rbp;  // a step computed the CFA from rbp
};
static_assert(memo_frames <= 256, "frame indexes of a remembered walk fit in a byte");

// A set's walks, with their keys in one cache line: a set is looked at on every walk.
struct walk_set {
  alignas(64) std::uint64_t keys[walk_ways];  // unwind_leaf_key of each way's walk; 0: empty
  remembered_walk ways[walk_ways];
};

static_assert(sizeof(walk_set) == unwind_walk_set_bytes, "unwind.hpp names a set's size");

// Remembering a walk costs a copy of its frames, wasted on a walk that does not come again (a
// compiler's stacks, most of them seen once, copied 2 GB): a walk is remembered the second time
// it is stepped, the first only noted by its hash, four hashes a set, the oldest replaced (with
// one a set, two walks of a program's cycle whose hashes shared it replaced each other and
// neither was ever remembered: sqlite, 10% of walks).
constexpr unsigned seen_bits = 8;
constexpr std::size_t seen_ways = 4;

struct walk_ring {
  std::uint64_t head;   // frames written so far; the next goes at head % ring_frames
  std::uint64_t clock;  // walks remembered or found so far
  std::uint64_t seen[std::size_t{1} << seen_bits][seen_ways];  // hashes of walks stepped
  std::uint32_t seen_next;  // the way the next hash noted replaces
  std::uintptr_t pc[ring_frames];
  std::uintptr_t sp[ring_frames];
  std::uintptr_t rbp[ring_frames];
  std::uintptr_t reads[ring_frames];
  walk_set sets[walk_set_count];
};

inline walk_set& set_of(walk_ring& w, std::uint64_t key) noexcept {
  return w.sets[static_cast<std::size_t>(key >> (64 - walk_set_bits))];
}

// Whether the walk remembered in `r` is the walk from its leaf frame with this rbp now.
bool unchanged(const walk_ring& w, const remembered_walk& r, entry (*sets)[2],
               std::uintptr_t rbp) noexcept {
  const std::size_t base = static_cast<std::size_t>(r.start % ring_frames);
  const std::uintptr_t* pc = w.pc + base;
  const std::uintptr_t* sp = w.sp + base;
  const std::uintptr_t* reads = w.reads + base;
  const std::size_t n = r.count;
  // Every word the walk read (see walk_memo), 4 frames at a time, then the 0 to 3 left: a walk
  // of another stack from the same leaf mostly differs near the leaf. (Clamping the last group's
  // indexes to the last frame took three conditional moves in every group.)
  const std::size_t last = n - 1;
  std::size_t i = 1;
  for (; i + 4 <= n; i += 4) {
    const std::uintptr_t differs = (load(sp[i] - 8) ^ pc[i]) | (load(sp[i + 1] - 8) ^ pc[i + 1]) |
                                   (load(sp[i + 2] - 8) ^ pc[i + 2]) |
                                   (load(sp[i + 3] - 8) ^ pc[i + 3]);
    if (differs != 0) return false;
  }
  std::uintptr_t differs = 0;
  for (; i < n; ++i) differs |= load(sp[i] - 8) ^ pc[i];
  if (differs != 0) return false;
  if (!r.uses_rbp && !r.restep) return true;
  // rbp, where a step computed the CFA from it, and to step on from the last frame.
  const std::size_t from = r.uses_rbp ? r.rbp_from : 0;
  if (!rbp_unchanged(reads, w.rbp + base, from, r.restep ? last : r.rbp_to + std::size_t{1}, rbp,
                     rbp))
    return false;
  if (!r.restep) return true;
  frame f{pc[n - 1], sp[n - 1], rbp};
  std::uintptr_t read = 0;
  return !step(sets, f, r.stack_hi, read);  // else the stack goes on now
}

// The remembered walk from frame (pc, sp, rbp) if it is this one, else nullptr.
remembered_walk* recall(walk_ring& w, entry (*sets)[2], std::uintptr_t pc, std::uintptr_t sp,
                        std::uintptr_t rbp, std::size_t max, std::uintptr_t stack_hi) noexcept {
  const std::uint64_t key = unwind_leaf_key(pc, sp);
  walk_set& set = set_of(w, key);
  for (int way = 0; way < walk_ways; ++way) {
    if (set.keys[way] != key) continue;
    remembered_walk& r = set.ways[way];
    if (r.pc != pc || r.sp != sp || r.stack_hi != stack_hi || r.max != max ||
        w.head - r.start > ring_frames) {
      continue;  // another leaf, or its frames are overwritten
    }
    if (unchanged(w, r, sets, rbp)) {
      r.used = ++w.clock;
      return &r;
    }
  }
  return nullptr;
}

// Remembers the walk in the memo, from its leaf frame; nullptr if it is not remembered.
remembered_walk* remember(walk_ring& w, const walk_memo& m, entry (*sets)[2], std::size_t max,
                          std::uintptr_t stack_hi) noexcept {
  const std::size_t n = m.count;
  if (n == 0) return nullptr;
  std::uint64_t* seen = w.seen[m.hash[0] & ((std::uint64_t{1} << seen_bits) - 1)];
  if (seen[0] != m.hash[0] && seen[1] != m.hash[0] && seen[2] != m.hash[0] &&
      seen[3] != m.hash[0]) {
    seen[w.seen_next++ % seen_ways] = m.hash[0];
    return nullptr;
  }
  std::uintptr_t flags = 0;
  std::size_t rbp_from = 0;
  std::size_t rbp_to = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const std::uintptr_t reads = m.reads[i];
    if ((reads & reads_cfa_rbp) != 0) {
      rbp_to = i;
    } else if ((flags & reads_cfa_rbp) == 0 && (reads & ~reads_flags) != 0) {
      rbp_from = i;
    }
    flags |= reads;
  }
  if ((flags & reads_rare) != 0) return nullptr;
  bool restep = n < max;
  if (restep) {
    const entry* rules = sets[set_index(m.pc[n - 1])];
    for (int way = 0; way < 2; ++way) {
      if (rules[way].key == m.pc[n - 1] && rules[way].r.cfa == cfa_stop) restep = false;
    }
  }
  std::uint64_t start = w.head;
  if (start % ring_frames + n > ring_frames) start += ring_frames - start % ring_frames;
  const std::size_t base = static_cast<std::size_t>(start % ring_frames);
  std::memcpy(w.pc + base, m.pc, n * sizeof(std::uintptr_t));
  std::memcpy(w.sp + base, m.sp, n * sizeof(std::uintptr_t));
  // rbp and the reads only where unchanged() checks them: most walks compute every CFA from the
  // stack pointer and end at the outermost frame or at `max`, and their copy was half the bytes.
  const bool uses_rbp = (flags & reads_cfa_rbp) != 0;
  if (uses_rbp || restep) {
    std::memcpy(w.rbp + base, m.rbp, n * sizeof(std::uintptr_t));
    std::memcpy(w.reads + base, m.reads, n * sizeof(std::uintptr_t));
  }
  w.head = start + n;
  // The least recently used way, even if another holds a walk from this leaf: callers of one
  // function with the same frame layout, called in turn, keep a walk each.
  const std::uint64_t key = unwind_leaf_key(m.pc[0], m.sp[0]);
  walk_set& set = set_of(w, key);
  int way = 0;
  for (int other = 1; other < walk_ways; ++other) {
    if (set.ways[other].used < set.ways[way].used) way = other;
  }
  set.keys[way] = key;
  remembered_walk* r = &set.ways[way];
  *r = remembered_walk{m.pc[0],
                       m.sp[0],
                       stack_hi,
                       m.hash[0],
                       0,
                       start,
                       ++w.clock,
                       static_cast<std::uint16_t>(n),
                       static_cast<std::uint16_t>(max),
                       static_cast<std::uint8_t>(rbp_from),
                       static_cast<std::uint8_t>(rbp_to),
                       restep,
                       uses_rbp};
  return r;
}

}  // namespace

struct unwind_cache {
  alignas(64) entry sets[set_count][2];
  walk_memo memo;
  bool memo_is_last;  // the latest walk was the memo's (not a remembered one)
  walk_ring walks;
};

std::size_t unwind_cache_bytes() noexcept { return sizeof(unwind_cache); }

static_assert(sizeof(unwind_cache::sets) % 4096 == 0, "the rules end at a page boundary");
std::size_t unwind_cache_rule_bytes() noexcept { return sizeof(unwind_cache::sets); }

unwind_cache* unwind_cache_init(void* memory) noexcept {
  return new (memory) unwind_cache;  // trivial type: the zero-filled memory is the empty cache
}

const unsigned char* unwind_walk_sets(const unwind_cache* cache) noexcept {
  return reinterpret_cast<const unsigned char*>(cache->walks.sets);
}

void unwind_cache_clear(unwind_cache* cache) noexcept {
  // All but the frames in the ring (512 KiB), which no walk names once the sets are empty.
  std::memset(cache->sets, 0, sizeof cache->sets);
  cache->memo.count = 0;
  cache->memo.stack_hi = 0;
  cache->memo_is_last = false;
  walk_ring& w = cache->walks;
  w.head = 0;
  w.clock = 0;
  std::memset(w.seen, 0, sizeof w.seen);
  w.seen_next = 0;
  std::memset(w.sets, 0, sizeof w.sets);
}

std::size_t unwind_capture(unwind_cache* cache, std::uintptr_t* out, std::size_t max,
                           std::uintptr_t skip_lo, std::uintptr_t skip_hi,
                           std::uintptr_t stack_hi) noexcept {
  // __builtin_frame_address forces a standard frame here: [fp] = caller's rbp, [fp+8] = return
  // address, fp + 16 = caller's rsp after the call returns.
  const auto fp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  frame f{0, fp + 16, 0};
  if (cache == nullptr || max == 0 || stack_hi <= f.sp) return 0;
  f.rbp = load(fp);
  f.pc = load(fp + 8);
  if (f.pc == 0) return 0;
  const std::uintptr_t skip_len = skip_hi > skip_lo ? skip_hi - skip_lo : 0;
  std::uintptr_t reads;
  while (f.pc - skip_lo < skip_len) {
    if (!step(cache->sets, f, stack_hi, reads)) return 0;
  }
  std::size_t n = 0;
  for (;;) {
    out[n++] = f.pc;
    if (n == max || !step(cache->sets, f, stack_hi, reads)) return n;
  }
}

std::size_t unwind_capture_from(unwind_cache* cache, const std::uintptr_t** out, std::size_t max,
                                std::uintptr_t pc, std::uintptr_t sp, std::uintptr_t rbp,
                                std::uintptr_t stack_hi, std::uint64_t* hash, bool* same_as_last,
                                std::uint64_t** tag) noexcept {
  *same_as_last = false;
  *hash = stack_hash_seed;
  *out = nullptr;
  *tag = nullptr;
  if (cache == nullptr || max == 0 || stack_hi <= sp || pc == 0) return 0;
  if (max > memo_frames) max = memo_frames;
  if (remembered_walk* r = recall(cache->walks, cache->sets, pc, sp, rbp, max, stack_hi)) {
    cache->memo_is_last = false;
    *out = cache->walks.pc + r->start % ring_frames;
    *hash = r->hash;
    *tag = &r->tag;
    return r->count;
  }
  bool same = false;
  const std::size_t n = walk(cache->memo, pc, sp, rbp, max, cache->sets, stack_hi, same);
  *same_as_last = same && cache->memo_is_last;
  cache->memo_is_last = true;
  *out = cache->memo.pc;
  *hash = cache->memo.hash[0];
  if (remembered_walk* r = remember(cache->walks, cache->memo, cache->sets, max, stack_hi)) {
    *tag = &r->tag;
  }
  return n;
}

bool module_text_range(const void* address, std::uintptr_t* lo, std::uintptr_t* hi) noexcept {
  module_info m{};
  if (!find_module(reinterpret_cast<std::uintptr_t>(address), &m)) return false;
  *lo = m.text_lo;
  *hi = m.text_hi;
  return true;
}

void unwind_modules_invalidate() noexcept {
  table_lock lock;
  g_modules.count = 0;
}

}  // namespace lowalloc::trace
