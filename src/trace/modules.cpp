// The module table and its MODULE, MODULE_ID and UNMODULE records (modules.hpp).
#include "trace/modules.hpp"

#include "trace/block.hpp"
#include "trace/thread_state.hpp"
#include "trace/unwind.hpp"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace lowalloc::trace {

namespace fmt = lowalloc::trace_format;

namespace {

struct module_slot {
  std::uintptr_t bias;
  const void* phdr;  // identifies the object together with bias
  std::uint32_t id;
  bool seen;
};

constexpr std::size_t max_modules = 1024;
module_slot modules[max_modules];
std::size_t module_count = 0;
std::uint32_t next_module_id = 1;
pthread_mutex_t module_mutex = PTHREAD_MUTEX_INITIALIZER;

struct scan_context {
  thread_state* t;
  bool all;  // write every module (new file), not only new ones
};

// The object's GNU build id, from its PT_NOTE segments as loaded (no file is read): the bytes
// of the NT_GNU_BUILD_ID note, or an empty view.
std::string_view build_id_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const std::size_t align = ph.p_align == 8 ? 8 : 4;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    const auto pad = [align](std::size_t n) { return (n + align - 1) & ~(align - 1); };
    while (static_cast<std::size_t>(end - p) >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof n);
      const unsigned char* name = p + sizeof n;
      if (static_cast<std::size_t>(end - name) < pad(n.n_namesz)) break;
      const unsigned char* desc = name + pad(n.n_namesz);
      if (static_cast<std::size_t>(end - desc) < n.n_descsz) break;
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0)
        return std::string_view(reinterpret_cast<const char*>(desc), n.n_descsz);
      if (static_cast<std::size_t>(end - desc) < pad(n.n_descsz)) break;
      p = desc + pad(n.n_descsz);
    }
  }
  return {};
}

int scan_one(dl_phdr_info* info, std::size_t, void* data) {
  auto* ctx = static_cast<scan_context*>(data);
  module_slot* slot = nullptr;
  for (std::size_t i = 0; i < module_count; ++i) {
    if (modules[i].bias == info->dlpi_addr && modules[i].phdr == info->dlpi_phdr) {
      slot = &modules[i];
      break;
    }
  }
  bool is_new = slot == nullptr;
  if (is_new) {
    if (module_count == max_modules) return 0;
    slot = &modules[module_count++];
    slot->bias = info->dlpi_addr;
    slot->phdr = info->dlpi_phdr;
    slot->id = next_module_id++;
  }
  slot->seen = true;
  if (!is_new && !ctx->all) return 0;

  char path[4096];
  const char* name = info->dlpi_name;
  if (name == nullptr || name[0] == 0) {
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    name = path;
  }
  thread_state* t = ctx->t;
  // What the file is, so that the analyzer can tell whether the one on disk is still it.
  fmt::module_id_record identity{slot->id, build_id_of(info), 0, 0};
  struct stat st;
  if (stat(name, &st) == 0) {
    identity.size = static_cast<std::uint64_t>(st.st_size);
    identity.mtime_ns = static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000u +
                        static_cast<std::uint64_t>(st.st_mtim.tv_nsec);
  }
  unsigned char* p =
      record_space(t, 64 + 4200 + info->dlpi_phnum * 20u + 32 + fmt::max_build_id_bytes);
  std::uint64_t dt = take_dt(t, stamp_now());
  std::size_t loads = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) loads += info->dlpi_phdr[i].p_type == PT_LOAD;
  p = fmt::encode(
      p, fmt::module_record{dt, slot->id, info->dlpi_addr, std::string_view(name), loads}, 4096);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    p = fmt::encode(p, fmt::segment{info->dlpi_addr + ph.p_vaddr, ph.p_memsz});
  }
  p = fmt::encode(p, identity);
  commit(t, p);
  return 0;
}

}  // namespace

void write_module_records(thread_state* t, bool all) {
  pthread_mutex_lock(&module_mutex);
  for (std::size_t i = 0; i < module_count; ++i) modules[i].seen = false;
  scan_context ctx{t, all};
  dl_iterate_phdr(scan_one, &ctx);
  bool removed = false;
  for (std::size_t i = 0; i < module_count;) {
    if (modules[i].seen) {
      ++i;
      continue;
    }
    unsigned char* p = record_space(t, 32);
    commit(t, fmt::encode(p, fmt::unmodule_record{take_dt(t, stamp_now()), modules[i].id}));
    modules[i] = modules[--module_count];
    removed = true;
  }
  if (removed) {
    unwind_modules_invalidate();
    module_generation.fetch_add(1, std::memory_order_acq_rel);
  }
  pthread_mutex_unlock(&module_mutex);
}

void after_module_change() {
  if (!tracing.load(std::memory_order_relaxed) || tls_guard) return;
  tls_guard = true;
  thread_state* t = tls_state;
  if (t == nullptr && !tls_dead) {
    t = create_thread_state();
    tls_state = t;
  }
  if (t != nullptr) {
    if (mark_active(t)) write_module_records(t, false);
    mark_inactive(t);
  }
  release_guard();
}

void modules_fork_prepare() { pthread_mutex_lock(&module_mutex); }

void modules_fork_parent() { pthread_mutex_unlock(&module_mutex); }

void modules_fork_child() { pthread_mutex_init(&module_mutex, nullptr); }

namespace {

struct containing_search {
  std::uintptr_t address;
  const void* phdr;
  const char* name;
};

int find_containing(dl_phdr_info* info, std::size_t, void* data) {
  auto* s = static_cast<containing_search*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (s->address - start < ph.p_memsz) {
      s->phdr = info->dlpi_phdr;
      s->name = info->dlpi_name != nullptr ? info->dlpi_name : "";
      return 1;
    }
  }
  return 0;
}

}  // namespace

const void* object_containing(const void* address, const char** name) {
  containing_search s{reinterpret_cast<std::uintptr_t>(address), nullptr, ""};
  if (address != nullptr) dl_iterate_phdr(find_containing, &s);
  if (name != nullptr) *name = s.name;
  return s.phdr;
}

}  // namespace lowalloc::trace
