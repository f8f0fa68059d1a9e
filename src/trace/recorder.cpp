// liblowalloc_trace.so: preloaded into a program by `lowalloc run`, it interposes the malloc
// family, records every allocation with its call stack and writes the trace file described in
// docs/trace-format.md.
//
// The recorder is small on purpose: it records raw addresses and sizes, never
// symbolizes, never allocates through the STL and has no global lock on the allocation path.
// Each thread encodes its events into its own mmap'd buffer; a full buffer is compressed and
// appended to the file under a lock taken once per 64 KiB of events.
//
// Re-entrancy: every hook sets a thread-local guard while it records, so allocations made by
// the recorder itself (zstd, dl_iterate_phdr, pthread_getattr_np) go straight to the real
// functions and are not recorded. Bootstrap: allocations made while dlsym looks up the real
// functions are served from a static buffer and are never passed to the real free.
#include "trace/format.hpp"
#include "trace/unwind.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#define LOWALLOC_EXPORT extern "C" __attribute__((visibility("default")))
#define LOWALLOC_LIKELY(x) __builtin_expect(!!(x), 1)
#define LOWALLOC_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace lowalloc::trace {
namespace {

namespace fmt = lowalloc::trace_format;

// --- the real allocation functions -------------------------------------------------------------

using malloc_fn = void* (*)(std::size_t);
using free_fn = void (*)(void*);
using calloc_fn = void* (*)(std::size_t, std::size_t);
using realloc_fn = void* (*)(void*, std::size_t);
using reallocarray_fn = void* (*)(void*, std::size_t, std::size_t);
using posix_memalign_fn = int (*)(void**, std::size_t, std::size_t);
using aligned_alloc_fn = void* (*)(std::size_t, std::size_t);
using valloc_fn = void* (*)(std::size_t);
using dlopen_fn = void* (*)(const char*, int);
using dlmopen_fn = void* (*)(Lmid_t, const char*, int);
using dlclose_fn = int (*)(void*);
using exit_fn = void (*)(int);
using execve_fn = int (*)(const char*, char* const[], char* const[]);
using execvp_fn = int (*)(const char*, char* const[]);
using execvpe_fn = int (*)(const char*, char* const[], char* const[]);
using fexecve_fn = int (*)(int, char* const[], char* const[]);
using execveat_fn = int (*)(int, const char*, char* const[], char* const[], int);

struct real_functions {
  malloc_fn malloc;
  free_fn free;
  calloc_fn calloc;
  realloc_fn realloc;
  reallocarray_fn reallocarray;
  posix_memalign_fn posix_memalign;
  aligned_alloc_fn aligned_alloc;
  aligned_alloc_fn memalign;
  valloc_fn valloc;
  valloc_fn pvalloc;
  dlopen_fn dlopen;
  dlmopen_fn dlmopen;
  dlclose_fn dlclose;
  exit_fn exit_now;   // _exit
  exit_fn exit_now2;  // _Exit
  execve_fn execve;
  execvp_fn execv;
  execvp_fn execvp;
  execvpe_fn execvpe;
  fexecve_fn fexecve;
  execveat_fn execveat;
};

real_functions real;
std::atomic<int> resolve_state{0};  // 0 not started, 1 resolving, 2 done
__thread bool tls_resolving;

// Bootstrap allocations (dlsym may call calloc). Never freed; never passed to the real free.
alignas(64) unsigned char bootstrap_buffer[64 * 1024];
std::atomic<std::size_t> bootstrap_used{0};

bool in_bootstrap(const void* p) {
  auto a = reinterpret_cast<std::uintptr_t>(p);
  auto lo = reinterpret_cast<std::uintptr_t>(bootstrap_buffer);
  return a >= lo && a < lo + sizeof bootstrap_buffer;
}

void* bootstrap_alloc(std::size_t n, std::size_t align = 16) {
  std::size_t used = bootstrap_used.load(std::memory_order_relaxed);
  for (;;) {
    std::size_t start = (used + align - 1) & ~(align - 1);
    if (start + n > sizeof bootstrap_buffer) return nullptr;
    if (bootstrap_used.compare_exchange_weak(used, start + n)) return bootstrap_buffer + start;
  }
}

template <class F>
void resolve_one(F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

void resolve_real_functions() {
  int expected = 0;
  if (resolve_state.compare_exchange_strong(expected, 1)) {
    tls_resolving = true;
    resolve_one(real.malloc, "malloc");
    resolve_one(real.free, "free");
    resolve_one(real.calloc, "calloc");
    resolve_one(real.realloc, "realloc");
    resolve_one(real.reallocarray, "reallocarray");
    resolve_one(real.posix_memalign, "posix_memalign");
    resolve_one(real.aligned_alloc, "aligned_alloc");
    resolve_one(real.memalign, "memalign");
    resolve_one(real.valloc, "valloc");
    resolve_one(real.pvalloc, "pvalloc");
    resolve_one(real.dlopen, "dlopen");
    resolve_one(real.dlmopen, "dlmopen");
    resolve_one(real.dlclose, "dlclose");
    resolve_one(real.exit_now, "_exit");
    resolve_one(real.exit_now2, "_Exit");
    resolve_one(real.execve, "execve");
    resolve_one(real.execv, "execv");
    resolve_one(real.execvp, "execvp");
    resolve_one(real.execvpe, "execvpe");
    resolve_one(real.fexecve, "fexecve");
    resolve_one(real.execveat, "execveat");
    tls_resolving = false;
    resolve_state.store(2, std::memory_order_release);
    return;
  }
  while (resolve_state.load(std::memory_order_acquire) != 2) sched_yield();
}

// True when the real functions can be called; false while this thread is resolving them.
inline bool ready() {
  if (LOWALLOC_LIKELY(resolve_state.load(std::memory_order_acquire) == 2)) return true;
  if (tls_resolving) return false;
  resolve_real_functions();
  return !tls_resolving;
}

// --- clock --------------------------------------------------------------------------------------

bool use_tsc = false;

std::uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// A FREE is stamped before the memory goes back (the fence keeps later instructions from
// starting first); an ALLOC after the allocator returned (the fence waits for it). See the
// "Timestamps" section of docs/trace-format.md.
// Ticks are coarse on purpose (2^18 TSC ticks, about 65-130 us; 131 us without the TSC): most
// events then carry a time delta of 0, which compresses to almost nothing.
constexpr unsigned tsc_shift = 18;
constexpr unsigned ns_shift = 17;

inline std::uint64_t read_clock() {
  if (LOWALLOC_LIKELY(use_tsc)) return __builtin_ia32_rdtsc() >> tsc_shift;
  return monotonic_ns() >> ns_shift;
}

// Stamps must respect causality across threads: an allocation's stamp <= the stamp of the free
// that releases it (wherever that runs) <= the stamp of the next allocation of that address. All
// stamps come from one atomic, the largest clock reading published so far; by the coherence of a
// single atomic object, a stamp read after (in happens-before) another is never smaller. So no
// fences are needed, and a free can reuse the shared value without reading the clock.
std::atomic<std::uint64_t> shared_clock{0};

// A fresh clock reading, published (every 8th event of a thread, records that open a block, END).
inline std::uint64_t stamp_now() {
  std::uint64_t now = read_clock();
  std::uint64_t cur = shared_clock.load(std::memory_order_relaxed);
  while (now > cur) {
    if (shared_clock.compare_exchange_weak(cur, now, std::memory_order_relaxed)) return now;
  }
  return cur;
}

// The largest stamp published so far, without reading the clock (most events: reading the TSC
// costs 20 ns on this machine's virtual CPU, a third of the recorder's own cost per event).
inline std::uint64_t stamp_shared() { return shared_clock.load(std::memory_order_relaxed); }

bool cpu_has_invariant_tsc() {
#if defined(__x86_64__)
  int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[8192];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  return std::strstr(buf, " constant_tsc") != nullptr &&
         std::strstr(buf, " nonstop_tsc") != nullptr;
#else
  return false;
#endif
}

// --- small helpers without the C++ runtime -------------------------------------------------------

void* map_memory(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void write_all(int fd, const char* s, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

void say(const char* a, const char* b = "", const char* c = "", const char* d = "") {
  char line[1024];
  int n = std::snprintf(line, sizeof line, "lowalloc: %s%s%s%s\n", a, b, c, d);
  if (n > 0)
    write_all(
        2, line,
        static_cast<std::size_t>(n) < sizeof line ? static_cast<std::size_t>(n) : sizeof line - 1);
}

// --- process-wide state --------------------------------------------------------------------------

constexpr std::size_t buffer_bytes = 64 * 1024;
// Allocations of the current block not yet freed in it. A free of one of them names it by its
// distance instead of its address (FREE_LOCAL); the addresses of the others are written once, at
// the end of the block (ADDRESSES). The block ends early when the table is half full.
constexpr std::size_t local_capacity = 4096;
constexpr std::size_t local_limit = local_capacity / 2;
constexpr std::size_t trailer_bytes = 16 + local_limit * 16;
constexpr std::size_t max_depth_limit = 256;
constexpr std::uint64_t flush_interval_ticks = std::uint64_t{1} << 12;  // 0.25-0.55 s

std::atomic<bool> tracing{false};
std::atomic<std::uint32_t> next_stream{1};
std::atomic<std::uint32_t> module_generation{0};
std::atomic<std::uint64_t> lost_events{0};
std::size_t max_depth = 128;
bool follow_fork = true;
bool follow_exec = false;
pthread_key_t thread_key;

int trace_fd = -1;
pthread_mutex_t file_mutex = PTHREAD_MUTEX_INITIALIZER;  // compression context and writes
ZSTD_CCtx* cctx = nullptr;
unsigned char* compress_buffer = nullptr;
std::size_t compress_capacity = 0;
char trace_path[4096];
char manifest_path[4096];
bool file_pending = false;  // fork child: the file is created at the first flush
pid_t traced_pid = 0;       // a vfork child shares our memory and must not touch it
// The command line, copied at start: a program may rewrite its argv (nginx's setproctitle sets
// argv[1] to NULL) before it forks, and a child writes the PROCESS record again.
constexpr int max_saved_args = 256;
char saved_args[16384];
const char* saved_argv[max_saved_args];
int saved_argc = 0;

void save_argv(int argc, char** argv) {
  std::size_t used = 0;
  saved_argc = 0;
  for (int i = 0; i < argc && argv != nullptr && argv[i] != nullptr && saved_argc < max_saved_args;
       ++i) {
    std::size_t n = std::strlen(argv[i]);
    if (used + n + 1 > sizeof saved_args) break;
    std::memcpy(saved_args + used, argv[i], n + 1);
    saved_argv[saved_argc++] = saved_args + used;
    used += n + 1;
  }
}

// --- encoding ------------------------------------------------------------------------------------

inline unsigned char* put_varint(unsigned char* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return p;
}

inline unsigned char* put_svarint(unsigned char* p, std::int64_t v) {
  return put_varint(p, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
}

inline unsigned char* put_string(unsigned char* p, const char* s, std::size_t cap) {
  std::size_t n = std::strlen(s);
  if (n > cap) n = cap;
  p = put_varint(p, n);
  std::memcpy(p, s, n);
  return p + n;
}

// --- per-thread state ----------------------------------------------------------------------------

struct stack_entry {
  std::uint64_t hash;
  std::uint32_t id;
  std::uint32_t n;
  const std::uintptr_t* ips;
};

struct ip_chunk {
  ip_chunk* next;
  std::size_t used;  // in ips
  std::size_t capacity;
  std::uintptr_t ips[1];
};

struct local_entry {
  std::uintptr_t addr;  // 0: empty
  std::uint32_t ordinal;
  std::uint32_t epoch;  // free_epoch() of the address when it was allocated
};

// Frees that carry an address bump a counter per address hash. A thread's block-local entry is
// valid only while the counter is what it was at the allocation: if another thread freed the block
// (and the address came back to this thread through another allocation), the entry is stale and
// the free must carry its address. One relaxed load per allocation and per local free, one
// relaxed increment per free with an address; the coherence of each counter orders them.
constexpr std::size_t free_epoch_buckets = 16384;
std::atomic<std::uint32_t> free_epochs[free_epoch_buckets];

inline std::atomic<std::uint32_t>& free_epoch(std::uintptr_t addr) {
  return free_epochs[((addr >> 4) * 0x9E3779B97F4A7C15u) >> (64 - 14)];
}

struct thread_state {
  unsigned char* buffer;      // buffers[0] or buffers[1]: the one being filled
  unsigned char* buffers[2];  // the other may be with the writer thread
  bool busy[2];               // under writer_mutex
  std::size_t pos;
  std::uint64_t clock;        // ticks of the last timed record
  std::uint64_t block_start;  // ticks of the block's TIME record
  std::uintptr_t prev_addr;   // of the last FREE with an address
  local_entry* local;         // local_capacity entries, linear probing
  local_entry* scratch;       // local_limit entries, for sorting at the end of a block
  local_entry* evicted;       // allocations whose address this thread received again: another
                              // thread freed them, so they are listed in ADDRESSES
  std::size_t local_count;
  std::size_t evicted_count;
  std::uint32_t alloc_ordinal;    // ALLOC records in this block
  std::uint32_t clock_countdown;  // an event reads the clock when this reaches 0
  bool has_events;                // an ALLOC or FREE since the stream (or the fork child) began
  std::uint32_t stream;
  std::uint32_t generation;
  std::uintptr_t stack_lo;  // the mapping of the thread's own stack; [lo, hi) is readable
  std::uintptr_t stack_hi;
  std::uintptr_t other_lo[4];  // other stacks it ran on (fibers, sigaltstack), round robin
  std::uintptr_t other_hi[4];
  unsigned other_next;
  unwind_cache* cache;
  bool exited;
  // Stack ids: an open-addressing table over the ips stored in chunks.
  stack_entry* table;
  std::size_t table_capacity;  // power of two
  std::size_t table_size;
  std::uint32_t next_stack_id;
  ip_chunk* chunks;
  // The previous allocation's stack: consecutive allocations often share it.
  std::uint32_t last_id;
  std::size_t last_n;
  std::uintptr_t last_ips[max_depth_limit];
};

__thread thread_state* tls_state;
__thread bool tls_guard;
__thread bool tls_dead;  // thread-exit flush done: later events are counted as lost

void flush(thread_state* t, bool final_block);

inline std::size_t local_slot(std::uintptr_t addr) {
  return static_cast<std::size_t>(((addr >> 4) * 0x9E3779B97F4A7C15u) >> 52) & (local_capacity - 1);
}

// Linear-probing deletion by backward shift: no tombstones, so lookups stay short.
void local_erase(thread_state* t, std::size_t hole) {
  constexpr std::size_t mask = local_capacity - 1;
  std::size_t i = hole;
  for (;;) {
    i = (i + 1) & mask;
    if (t->local[i].addr == 0) break;
    std::size_t home = local_slot(t->local[i].addr);
    // Move entry i into the hole unless its home lies cyclically in (hole, i].
    bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
    if (stays) continue;
    t->local[hole] = t->local[i];
    hole = i;
  }
  t->local[hole].addr = 0;
  --t->local_count;
}

// ADDRESSES: the addresses of the block's allocations it did not free, by ordinal.
void write_addresses(thread_state* t) {
  if (t->local_count + t->evicted_count == 0) return;
  std::size_t n = 0;
  for (std::size_t i = 0; i < local_capacity; ++i)
    if (t->local[i].addr != 0) t->scratch[n++] = t->local[i];
  for (std::size_t i = 0; i < t->evicted_count; ++i) t->scratch[n++] = t->evicted[i];
  // Insertion sort on a mostly sorted array would be quadratic in the worst case: heap-free
  // shell sort by ordinal instead.
  for (std::size_t gap = n / 2; gap > 0; gap /= 2)
    for (std::size_t i = gap; i < n; ++i) {
      local_entry e = t->scratch[i];
      std::size_t j = i;
      for (; j >= gap && t->scratch[j - gap].ordinal > e.ordinal; j -= gap)
        t->scratch[j] = t->scratch[j - gap];
      t->scratch[j] = e;
    }
  unsigned char* p = t->buffer + t->pos;  // the trailer space beyond buffer_bytes is reserved
  *p++ = fmt::tag_addresses;
  p = put_varint(p, n);
  std::uint32_t prev_ordinal = 0;
  std::uintptr_t prev_addr = 0;
  for (std::size_t i = 0; i < n; ++i) {
    p = put_varint(p, t->scratch[i].ordinal - prev_ordinal);
    p = put_svarint(p, static_cast<std::int64_t>(t->scratch[i].addr - prev_addr));
    prev_ordinal = t->scratch[i].ordinal;
    prev_addr = t->scratch[i].addr;
  }
  t->pos = static_cast<std::size_t>(p - t->buffer);
}

unsigned char* ensure_space(thread_state* t, std::size_t bytes) {
  if (t->pos + bytes > buffer_bytes) flush(t, false);
  return t->buffer + t->pos;
}

void begin_block(thread_state* t) {
  std::uint64_t ticks = stamp_now();
  if (ticks < t->clock) ticks = t->clock;
  unsigned char* p = t->buffer;
  *p++ = fmt::tag_time;
  p = put_varint(p, ticks);
  p = put_varint(p, monotonic_ns());
  t->pos = static_cast<std::size_t>(p - t->buffer);
  t->clock = ticks;
  t->block_start = ticks;
  t->prev_addr = 0;
  if (t->local_count != 0) std::memset(t->local, 0, local_capacity * sizeof(local_entry));
  t->local_count = 0;
  t->evicted_count = 0;
  t->alloc_ordinal = 0;
}

inline std::uint64_t take_dt(thread_state* t, std::uint64_t ticks) {
  if (ticks < t->clock) return 0;
  std::uint64_t dt = ticks - t->clock;
  t->clock = ticks;
  return dt;
}

void reset_stacks(thread_state* t) {
  std::memset(t->table, 0, t->table_capacity * sizeof(stack_entry));
  t->table_size = 0;
  t->next_stack_id = 1;
  for (ip_chunk* c = t->chunks; c != nullptr; c = c->next) c->used = 0;
  t->last_id = 0;
  t->last_n = 0;
}

void write_thread_record(thread_state* t) {
  unsigned char* p = ensure_space(t, 16);
  *p++ = fmt::tag_thread;
  p = put_varint(p, static_cast<std::uint64_t>(syscall(SYS_gettid)));
  t->pos = static_cast<std::size_t>(p - t->buffer);
}

// The end of the mapping that contains `address`, from /proc/self/maps; 0 if not found. The
// thread's stack top, found without pthread_getattr_np: that function takes the thread's lock and
// calls realloc, and a thread's first allocation may come from inside it.
bool mapping_range(std::uintptr_t address, std::uintptr_t* lo_out, std::uintptr_t* hi_out) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  std::size_t have = 0;
  std::uintptr_t result = 0;
  bool eof = false;
  while (result == 0) {
    if (!eof && have < sizeof buf) {
      ssize_t n = read(fd, buf + have, sizeof buf - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        eof = true;
      else
        have += static_cast<std::size_t>(n);
    }
    char* nl = static_cast<char*>(std::memchr(buf, '\n', have));
    if (nl == nullptr) {
      if (eof || have == sizeof buf) break;  // no line end: done, or a line over 4 KiB
      continue;
    }
    // "start-end perms ...": two hex numbers.
    std::uintptr_t lo = 0, hi = 0;
    const char* c = buf;
    auto hex = [&c](std::uintptr_t& v) {
      for (;; ++c) {
        unsigned d;
        if (*c >= '0' && *c <= '9')
          d = static_cast<unsigned>(*c - '0');
        else if (*c >= 'a' && *c <= 'f')
          d = static_cast<unsigned>(*c - 'a' + 10);
        else
          break;
        v = v * 16 + d;
      }
    };
    hex(lo);
    if (*c == '-') {
      ++c;
      hex(hi);
      if (lo <= address && address < hi) {
        result = hi;
        *lo_out = lo;
        *hi_out = hi;
      }
    }
    std::size_t used = static_cast<std::size_t>(nl + 1 - buf);
    std::memmove(buf, nl + 1, have - used);
    have -= used;
  }
  close(fd);
  return result != 0;
}

constexpr std::size_t first_table_capacity = 1024;

std::size_t thread_mapping_bytes() {
  std::size_t cache_bytes = (unwind_cache_bytes() + 63) & ~std::size_t{63};
  std::size_t state_bytes = (sizeof(thread_state) + 63) & ~std::size_t{63};
  return state_bytes + 2 * (buffer_bytes + trailer_bytes) + cache_bytes +
         (local_capacity + 2 * local_limit) * sizeof(local_entry) +
         first_table_capacity * sizeof(stack_entry);
}

thread_state* create_thread_state() {
  std::size_t cache_bytes = (unwind_cache_bytes() + 63) & ~std::size_t{63};
  std::size_t state_bytes = (sizeof(thread_state) + 63) & ~std::size_t{63};
  std::size_t table_capacity = first_table_capacity;
  auto* mem = static_cast<unsigned char*>(map_memory(thread_mapping_bytes()));
  if (mem == nullptr) return nullptr;
  auto* t = reinterpret_cast<thread_state*>(mem);
  unsigned char* at = mem + state_bytes;
  t->buffers[0] = at;
  at += buffer_bytes + trailer_bytes;
  t->buffers[1] = at;
  at += buffer_bytes + trailer_bytes;
  t->buffer = t->buffers[0];
  t->cache = unwind_cache_init(at);
  at += cache_bytes;
  t->local = reinterpret_cast<local_entry*>(at);
  at += local_capacity * sizeof(local_entry);
  t->scratch = reinterpret_cast<local_entry*>(at);
  at += local_limit * sizeof(local_entry);
  t->evicted = reinterpret_cast<local_entry*>(at);
  at += local_limit * sizeof(local_entry);
  t->table = reinterpret_cast<stack_entry*>(at);
  t->table_capacity = table_capacity;
  t->next_stack_id = 1;
  t->stream = next_stream.fetch_add(1, std::memory_order_relaxed);
  t->generation = module_generation.load(std::memory_order_acquire);

  // Unknown bounds (0) mean no stacks: the unwinder reads only inside the mapping of the stack.
  mapping_range(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)), &t->stack_lo,
                &t->stack_hi);
  begin_block(t);
  write_thread_record(t);
  pthread_setspecific(thread_key, t);
  return t;
}

// Stores the stack in the thread's table and returns its id, writing a STACK record for a new one.
std::uint32_t stack_id(thread_state* t, const std::uintptr_t* ips, std::size_t n) {
  if (n == 0) return 0;
  if (n == t->last_n && std::memcmp(ips, t->last_ips, n * sizeof *ips) == 0) return t->last_id;

  std::uint64_t h = 0x9E3779B97F4A7C15u ^ n;
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ ips[i]) * 0xff51afd7ed558ccdu;
    h ^= h >> 32;
  }
  std::size_t mask = t->table_capacity - 1;
  std::size_t i = static_cast<std::size_t>(h) & mask;
  for (;; i = (i + 1) & mask) {
    stack_entry& e = t->table[i];
    if (e.id == 0) break;
    if (e.hash == h && e.n == n && std::memcmp(e.ips, ips, n * sizeof *ips) == 0) {
      t->last_id = e.id;
      t->last_n = n;
      std::memcpy(t->last_ips, ips, n * sizeof *ips);
      return e.id;
    }
  }

  // A new stack: grow the table at 50% load, store the ips, write the record.
  if ((t->table_size + 1) * 2 > t->table_capacity) {
    std::size_t capacity = t->table_capacity * 2;
    auto* table = static_cast<stack_entry*>(map_memory(capacity * sizeof(stack_entry)));
    if (table == nullptr) return 0;
    for (std::size_t k = 0; k < t->table_capacity; ++k) {
      const stack_entry& e = t->table[k];
      if (e.id == 0) continue;
      std::size_t j = static_cast<std::size_t>(e.hash) & (capacity - 1);
      while (table[j].id != 0) j = (j + 1) & (capacity - 1);
      table[j] = e;
    }
    // The first table lives inside the thread's own mapping; only later ones are unmapped.
    if (t->table_capacity > 1024) munmap(t->table, t->table_capacity * sizeof(stack_entry));
    t->table = table;
    t->table_capacity = capacity;
    mask = capacity - 1;
    i = static_cast<std::size_t>(h) & mask;
    while (t->table[i].id != 0) i = (i + 1) & mask;
  }
  ip_chunk* chunk = t->chunks;
  while (chunk != nullptr && chunk->capacity - chunk->used < n) chunk = chunk->next;
  if (chunk == nullptr) {
    std::size_t bytes = 1u << 20;
    chunk = static_cast<ip_chunk*>(map_memory(bytes));
    if (chunk == nullptr) return 0;
    chunk->capacity = (bytes - offsetof(ip_chunk, ips)) / sizeof(std::uintptr_t);
    chunk->next = t->chunks;
    t->chunks = chunk;
  }
  std::uintptr_t* stored = chunk->ips + chunk->used;
  chunk->used += n;
  std::memcpy(stored, ips, n * sizeof *ips);
  std::uint32_t id = t->next_stack_id++;
  t->table[i] = stack_entry{h, id, static_cast<std::uint32_t>(n), stored};
  ++t->table_size;

  // The STACK record and the event that uses it must land in the same block or the STACK first:
  // reserve room for both.
  unsigned char* p = ensure_space(t, 32 + n * 10 + 64);
  *p++ = fmt::tag_stack;
  p = put_varint(p, id);
  p = put_varint(p, n);
  p = put_varint(p, ips[0]);
  for (std::size_t k = 1; k < n; ++k)
    p = put_svarint(p, static_cast<std::int64_t>(ips[k] - ips[k - 1]));
  t->pos = static_cast<std::size_t>(p - t->buffer);

  t->last_id = id;
  t->last_n = n;
  std::memcpy(t->last_ips, ips, n * sizeof *ips);
  return id;
}

void write_module_records(thread_state* t, bool all);

// The calling thread's state, set up on first use; nullptr when this event is not recorded (the
// recorder itself is running, tracing is off, or the thread has finished).
inline thread_state* enter() {
  if (tls_guard || !tracing.load(std::memory_order_relaxed)) return nullptr;
  tls_guard = true;
  thread_state* t = tls_state;
  if (LOWALLOC_UNLIKELY(t == nullptr)) {
    if (tls_dead) {
      lost_events.fetch_add(1, std::memory_order_relaxed);
      tls_guard = false;
      return nullptr;
    }
    t = create_thread_state();
    if (t == nullptr) {
      lost_events.fetch_add(1, std::memory_order_relaxed);
      tls_guard = false;
      return nullptr;
    }
    tls_state = t;
  }
  if (LOWALLOC_UNLIKELY(t->generation != module_generation.load(std::memory_order_acquire))) {
    // A module was unloaded: cached unwind rules and stack ids may name reused addresses.
    t->generation = module_generation.load(std::memory_order_acquire);
    unwind_cache_clear(t->cache);
    reset_stacks(t);
    unsigned char* p = ensure_space(t, 16);
    *p++ = fmt::tag_reset;
    p = put_varint(p, take_dt(t, stamp_now()));
    t->pos = static_cast<std::size_t>(p - t->buffer);
  }
  return t;
}

// Events mostly reuse the shared stamp; every 8th event of a thread reads the clock, so time moves
// on in every thread that records anything (a stamp lags the clock by at most 7 of the thread's
// events; causality does not depend on it).
inline std::uint64_t stamp_event(thread_state* t) {
  if (LOWALLOC_UNLIKELY(t->clock_countdown-- == 0)) {
    t->clock_countdown = 7;
    return stamp_now();
  }
  return stamp_shared();
}

inline void leave(thread_state* t) {
  if (LOWALLOC_UNLIKELY(t->clock - t->block_start > flush_interval_ticks)) flush(t, false);
  tls_guard = false;
}

// Where a hook was called from: its return address, the stack pointer after it returns, and the
// caller's rbp (saved by the hook's own frame-pointer prologue). The walk starts there.
struct caller_frame {
  std::uintptr_t pc;
  std::uintptr_t sp;
  std::uintptr_t rbp;
};

#define LOWALLOC_CALLER_FRAME()                                            \
  caller_frame {                                                           \
    reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)),         \
        reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) + 16, \
        *static_cast<const std::uintptr_t*>(__builtin_frame_address(0))    \
  }

// The top of the mapping that holds `sp`: the thread's own stack, or a fiber's or an alternate
// signal stack (looked up in /proc/self/maps once, then cached). 0 when unknown: no stack then,
// since the unwinder assumes [sp, top) is readable.
std::uintptr_t stack_top(thread_state* t, std::uintptr_t sp) {
  if (LOWALLOC_LIKELY(sp >= t->stack_lo && sp < t->stack_hi)) return t->stack_hi;
  for (unsigned k = 0; k < 4; ++k)
    if (sp >= t->other_lo[k] && sp < t->other_hi[k]) return t->other_hi[k];
  std::uintptr_t lo = 0, hi = 0;
  if (!mapping_range(sp, &lo, &hi)) return 0;
  unsigned k = t->other_next++ & 3;
  t->other_lo[k] = lo;
  t->other_hi[k] = hi;
  return hi;
}

__attribute__((noinline)) void record_alloc(thread_state* t, fmt::alloc_kind kind, std::size_t size,
                                            void* ptr, const caller_frame& from) {
  std::uint64_t ticks = stamp_event(t);
  std::uintptr_t ips[max_depth_limit];
  std::size_t n = unwind_capture_from(t->cache, ips, max_depth, from.pc, from.sp, from.rbp,
                                      stack_top(t, from.sp));
  std::uint32_t id = stack_id(t, ips, n);
  unsigned char* p = ensure_space(t, 48);
  *p++ = static_cast<unsigned char>(unsigned{fmt::tag_alloc} | unsigned{kind});
  p = put_varint(p, take_dt(t, ticks));
  p = put_varint(p, size);
  p = put_varint(p, id);
  t->pos = static_cast<std::size_t>(p - t->buffer);
  t->has_events = true;
  auto addr = reinterpret_cast<std::uintptr_t>(ptr);
  std::size_t i = local_slot(addr);
  while (t->local[i].addr != 0 && t->local[i].addr != addr) i = (i + 1) & (local_capacity - 1);
  // The same address again: another thread freed the older allocation (with its address, as a
  // FREE); keep the older one's address for ADDRESSES.
  if (t->local[i].addr == 0)
    ++t->local_count;
  else
    t->evicted[t->evicted_count++] = t->local[i];
  t->local[i] =
      local_entry{addr, t->alloc_ordinal++, free_epoch(addr).load(std::memory_order_relaxed)};
  if (t->local_count + t->evicted_count >= local_limit) flush(t, false);
}

inline void record_free(thread_state* t, void* ptr, std::uint64_t ticks) {
  t->has_events = true;
  unsigned char* p = ensure_space(t, 32);
  auto addr = reinterpret_cast<std::uintptr_t>(ptr);
  std::size_t i = local_slot(addr);
  while (t->local[i].addr != 0 && t->local[i].addr != addr) i = (i + 1) & (local_capacity - 1);
  std::atomic<std::uint32_t>& epoch = free_epoch(addr);
  bool local = t->local[i].addr == addr;
  if (local && epoch.load(std::memory_order_relaxed) != t->local[i].epoch) {
    // Stale: another thread freed this allocation, and this free is of a later allocation at the
    // same address. The old one's address goes to ADDRESSES; this free carries its address.
    t->evicted[t->evicted_count++] = t->local[i];
    local_erase(t, i);
    local = false;
  }
  if (local) {
    *p++ = fmt::tag_free_local;
    p = put_varint(p, take_dt(t, ticks));
    p = put_varint(p, t->alloc_ordinal - 1 - t->local[i].ordinal);
    local_erase(t, i);
  } else {
    epoch.fetch_add(1, std::memory_order_relaxed);
    *p++ = fmt::tag_free;
    p = put_varint(p, take_dt(t, ticks));
    p = put_svarint(p, static_cast<std::int64_t>(addr - t->prev_addr));
    t->prev_addr = addr;
  }
  t->pos = static_cast<std::size_t>(p - t->buffer);
}

// --- the file ------------------------------------------------------------------------------------

void manifest(const char* kind, const char* text) {
  if (manifest_path[0] == 0) return;
  int fd = open(manifest_path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  char line[4200];
  int n = std::snprintf(line, sizeof line, "%s %s\n", kind, text);
  if (n > 0)
    write_all(
        fd, line,
        static_cast<std::size_t>(n) < sizeof line ? static_cast<std::size_t>(n) : sizeof line - 1);
  close(fd);
}

void stop_tracing(const char* why) {
  tracing.store(false, std::memory_order_relaxed);
  char text[4200];
  std::snprintf(text, sizeof text, "cannot write the trace to %s: %s; the program runs on untraced",
                trace_path, why);
  say(text);
  manifest("error", text);
  if (trace_fd >= 0) {
    close(trace_fd);
    trace_fd = -1;
  }
}

bool write_bytes(const void* data, std::size_t n) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(trace_fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      stop_tracing(w < 0 ? std::strerror(errno) : "short write");
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Opens the trace file and writes its header. Called with file_mutex held (or before threads).
bool open_trace_file() {
  trace_fd = open(trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (trace_fd < 0) {
    stop_tracing(std::strerror(errno));
    return false;
  }
  // Out of the way of the program's own descriptors: a program that closes the low ones and opens
  // files of its own must not receive ours (it would get our blocks written into its file).
  int high = fcntl(trace_fd, F_DUPFD_CLOEXEC, 700);
  if (high >= 0) {
    close(trace_fd);
    trace_fd = high;
  }
  unsigned char header[fmt::file_header_size] = {};
  std::memcpy(header, fmt::file_magic, 8);
  header[8] = static_cast<unsigned char>(fmt::version & 0xff);
  header[9] = static_cast<unsigned char>(fmt::version >> 8);
  header[10] = static_cast<unsigned char>(fmt::file_header_size & 0xff);
  header[11] = static_cast<unsigned char>(fmt::file_header_size >> 8);
  if (!write_bytes(header, sizeof header)) return false;
  manifest("file", trace_path);
  return true;
}

void put_u32(unsigned char* p, std::uint32_t v) {
  p[0] = static_cast<unsigned char>(v);
  p[1] = static_cast<unsigned char>(v >> 8);
  p[2] = static_cast<unsigned char>(v >> 16);
  p[3] = static_cast<unsigned char>(v >> 24);
}

void write_process_records(thread_state* t, std::uint64_t flags);

// Compresses one raw block and appends it to the file. Called with file_mutex held.
void write_block(const unsigned char* data, std::size_t size, std::uint32_t stream) {
  if (file_pending && tracing.load(std::memory_order_relaxed)) {
    // A fork child's first block: create its own file now (a child that only execs writes none).
    file_pending = false;
    open_trace_file();  // the block begins with the child's PROCESS, THREAD and MODULE records
  }
  if (trace_fd < 0 || !tracing.load(std::memory_order_relaxed)) return;
  std::size_t n = ZSTD_compress2(cctx, compress_buffer, compress_capacity, data, size);
  if (ZSTD_isError(n)) {
    lost_events.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  unsigned char header[fmt::block_header_size];
  put_u32(header, fmt::block_magic);
  put_u32(header + 4, static_cast<std::uint32_t>(n));
  put_u32(header + 8, static_cast<std::uint32_t>(size));
  put_u32(header + 12, stream);
  iovec parts[2] = {{header, sizeof header}, {compress_buffer, n}};
  ssize_t total = static_cast<ssize_t>(sizeof header + n);
  ssize_t w;
  do w = writev(trace_fd, parts, 2);
  while (w < 0 && errno == EINTR);
  if (w == total) return;
  if (w < 0)
    stop_tracing(std::strerror(errno));
  else if (w >= static_cast<ssize_t>(sizeof header))
    (void)write_bytes(compress_buffer + (w - static_cast<ssize_t>(sizeof header)),
                      static_cast<std::size_t>(total - w));
  else
    stop_tracing("short write");
}

// The writer thread compresses and writes the blocks that threads hand over, so that the
// program's threads spend no time in zstd (5% of a string-heavy program's run time otherwise).
// Each thread has two buffers: it fills one while the writer writes the other. Blocks are written
// in the order they were handed over, so each stream's blocks stay in order. Fork children and
// processes where the thread cannot start compress in the calling thread instead.
struct pending_block {
  const unsigned char* data;
  std::size_t size;
  std::uint32_t stream;
  bool* busy;  // the buffer's flag, cleared (under writer_mutex) once written
};

constexpr std::size_t queue_capacity = 256;
pending_block queue[queue_capacity];
std::size_t queue_head = 0;  // under writer_mutex; head == tail: empty
std::size_t queue_tail = 0;
std::size_t writing = 0;  // blocks taken by the writer and not yet written
pthread_mutex_t writer_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t writer_wake = PTHREAD_COND_INITIALIZER;
pthread_cond_t writer_done = PTHREAD_COND_INITIALIZER;
bool writer_running = false;

void* writer_main(void*) {
  tls_guard = true;  // the writer's own allocations (zstd) are not the program's
  pthread_mutex_lock(&writer_mutex);
  for (;;) {
    while (queue_head == queue_tail) pthread_cond_wait(&writer_wake, &writer_mutex);
    pending_block b = queue[queue_head % queue_capacity];
    ++queue_head;
    ++writing;
    pthread_mutex_unlock(&writer_mutex);
    pthread_mutex_lock(&file_mutex);
    write_block(b.data, b.size, b.stream);
    pthread_mutex_unlock(&file_mutex);
    pthread_mutex_lock(&writer_mutex);
    *b.busy = false;
    --writing;
    pthread_cond_broadcast(&writer_done);
  }
  return nullptr;
}

void start_writer() {
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  // The program's signals must never be delivered to the writer (its handlers would run there,
  // maybe before the writer has set its guard): it starts with every signal blocked.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  writer_running = pthread_create(&thread, &attr, writer_main, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  if (writer_running) pthread_setname_np(thread, "lowalloc-writer");
}

// Waits until every block handed over is in the file.
void drain_writer() {
  if (!writer_running) return;
  pthread_mutex_lock(&writer_mutex);
  while (queue_head != queue_tail || writing != 0) pthread_cond_wait(&writer_done, &writer_mutex);
  pthread_mutex_unlock(&writer_mutex);
}

// Ends the thread's current block: hands it to the writer (or writes it), then continues in the
// other buffer.
void flush(thread_state* t, bool final_block) {
  if (t->pos == 0) return;
  write_addresses(t);
  if (!writer_running) {
    pthread_mutex_lock(&file_mutex);
    write_block(t->buffer, t->pos, t->stream);
    pthread_mutex_unlock(&file_mutex);
  } else {
    const int idx = t->buffer == t->buffers[0] ? 0 : 1;
    pthread_mutex_lock(&writer_mutex);
    while (queue_tail - queue_head == queue_capacity)
      pthread_cond_wait(&writer_done, &writer_mutex);
    t->busy[idx] = true;
    queue[queue_tail % queue_capacity] = pending_block{t->buffer, t->pos, t->stream, &t->busy[idx]};
    ++queue_tail;
    pthread_cond_signal(&writer_wake);
    while (t->busy[1 - idx]) pthread_cond_wait(&writer_done, &writer_mutex);
    pthread_mutex_unlock(&writer_mutex);
    t->buffer = t->buffers[1 - idx];
  }
  t->pos = 0;
  if (!final_block) begin_block(t);
}

// Waits until neither of the thread's buffers is still being written (before unmapping them).
void wait_for_buffers(thread_state* t) {
  if (!writer_running) return;
  pthread_mutex_lock(&writer_mutex);
  while (t->busy[0] || t->busy[1]) pthread_cond_wait(&writer_done, &writer_mutex);
  pthread_mutex_unlock(&writer_mutex);
}

// --- modules -------------------------------------------------------------------------------------

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
  unsigned char* p = ensure_space(t, 64 + 4200 + info->dlpi_phnum * 20u);
  *p++ = fmt::tag_module;
  p = put_varint(p, take_dt(t, stamp_now()));
  p = put_varint(p, slot->id);
  p = put_varint(p, info->dlpi_addr);
  p = put_string(p, name, 4096);
  std::size_t loads = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) loads += info->dlpi_phdr[i].p_type == PT_LOAD;
  p = put_varint(p, loads);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    p = put_varint(p, info->dlpi_addr + ph.p_vaddr);
    p = put_varint(p, ph.p_memsz);
  }
  t->pos = static_cast<std::size_t>(p - t->buffer);
  return 0;
}

// Writes MODULE records for new objects (or all) and UNMODULE for objects gone since last time.
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
    unsigned char* p = ensure_space(t, 32);
    *p++ = fmt::tag_unmodule;
    p = put_varint(p, take_dt(t, stamp_now()));
    p = put_varint(p, modules[i].id);
    t->pos = static_cast<std::size_t>(p - t->buffer);
    modules[i] = modules[--module_count];
    removed = true;
  }
  if (removed) {
    unwind_modules_invalidate();
    module_generation.fetch_add(1, std::memory_order_acq_rel);
  }
  pthread_mutex_unlock(&module_mutex);
}

void write_process_records(thread_state* t, std::uint64_t flags) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  std::size_t need = 64 + 4200;
  for (int i = 0; i < saved_argc; ++i) need += 16 + std::strlen(saved_argv[i]);
  if (need > buffer_bytes / 2) need = buffer_bytes / 2;
  unsigned char* p = ensure_space(t, need);
  unsigned char* end = t->buffer + buffer_bytes - 16;
  *p++ = fmt::tag_process;
  p = put_varint(p, static_cast<std::uint64_t>(getpid()));
  p = put_varint(p, static_cast<std::uint64_t>(getppid()));
  p = put_varint(p, flags);
  p = put_string(p, exe, 4096);
  int argc = 0;
  std::size_t budget = static_cast<std::size_t>(end - p) - 16;
  std::size_t used = 0;
  while (argc < saved_argc && used + std::strlen(saved_argv[argc]) + 10 < budget / 2)
    used += std::strlen(saved_argv[argc++]) + 10;
  p = put_varint(p, static_cast<std::uint64_t>(argc));
  for (int i = 0; i < argc; ++i) p = put_string(p, saved_argv[i], fmt::max_string_bytes);
  t->pos = static_cast<std::size_t>(p - t->buffer);
}

void write_end_records(thread_state* t) {
  unsigned char* p = ensure_space(t, 64);
  // A last (ticks, ns) pair: the run time of a program shorter than a tick, and the calibration.
  std::uint64_t ticks = stamp_now();
  *p++ = fmt::tag_time;
  p = put_varint(p, ticks);
  p = put_varint(p, monotonic_ns());
  t->clock = ticks > t->clock ? ticks : t->clock;
  std::uint64_t lost = lost_events.load(std::memory_order_relaxed);
  if (lost != 0) {
    *p++ = fmt::tag_lost;
    p = put_varint(p, lost);
  }
  *p++ = fmt::tag_end;
  p = put_varint(p, take_dt(t, stamp_now()));
  t->pos = static_cast<std::size_t>(p - t->buffer);
}

// --- thread and process lifetime -----------------------------------------------------------------

void release_thread_state(thread_state* t) {
  for (ip_chunk* c = t->chunks; c != nullptr;) {
    ip_chunk* next = c->next;
    munmap(c, 1u << 20);
    c = next;
  }
  if (t->table_capacity > 1024) munmap(t->table, t->table_capacity * sizeof(stack_entry));
  munmap(t, thread_mapping_bytes());
}

void on_thread_exit(void* state) {
  auto* t = static_cast<thread_state*>(state);
  if (t == nullptr || t != tls_state) return;
  bool guard = tls_guard;
  tls_guard = true;
  flush(t, true);
  wait_for_buffers(t);
  tls_state = nullptr;
  tls_dead = true;
  release_thread_state(t);
  tls_guard = guard;
}

// The process ends: flush this thread, write END. Other threads still running at this point keep
// their unflushed events (docs/tracer.md); their later events are not recorded.
void finish_process() {
  if (!tracing.load(std::memory_order_relaxed) || getpid() != traced_pid) return;
  if (tls_guard) {
    // _exit from a signal handler that interrupted this thread inside the recorder: its buffer is
    // half written and it may hold a lock. Write nothing; the trace reads as a killed process.
    tracing.store(false, std::memory_order_relaxed);
    return;
  }
  bool guard = tls_guard;
  tls_guard = true;
  thread_state* t = tls_state;
  if (t == nullptr && !tls_dead) {
    t = create_thread_state();
    tls_state = t;
  }
  if (t != nullptr) {
    write_end_records(t);
    flush(t, false);
  }
  drain_writer();
  tracing.store(false, std::memory_order_relaxed);
  tls_guard = guard;
}

// exec replaces the image: write this thread's events and an EXEC record first. Other threads'
// unflushed events are lost, as at exit. A fork child that recorded nothing writes no file. In a
// vfork child (it shares our memory; fork handlers did not run) nothing is touched.
void before_exec(const char* path) {
  if (!tracing.load(std::memory_order_relaxed) || tls_guard || getpid() != traced_pid) return;
  tls_guard = true;
  thread_state* t = tls_state;
  if (t != nullptr && (!file_pending || t->has_events)) {
    std::size_t n = path != nullptr ? std::strlen(path) : 0;
    if (n > 4096) n = 4096;
    unsigned char* p = ensure_space(t, 32 + n);
    *p++ = fmt::tag_exec;
    p = put_varint(p, take_dt(t, stamp_now()));
    p = put_varint(p, n);
    if (n != 0) std::memcpy(p, path, n);
    t->pos = static_cast<std::size_t>(p + n - t->buffer);
    flush(t, false);
    drain_writer();
  }
  tls_guard = false;
}

// Lock order: module_mutex, writer_mutex, file_mutex (the writer never holds the last two at once).
void fork_prepare() {
  pthread_mutex_lock(&module_mutex);
  pthread_mutex_lock(&writer_mutex);
  pthread_mutex_lock(&file_mutex);
}

void fork_parent() {
  pthread_mutex_unlock(&file_mutex);
  pthread_mutex_unlock(&writer_mutex);
  pthread_mutex_unlock(&module_mutex);
}

void name_child_file();

void fork_child() {
  pthread_mutex_init(&file_mutex, nullptr);
  pthread_mutex_init(&module_mutex, nullptr);
  pthread_mutex_init(&writer_mutex, nullptr);
  pthread_cond_init(&writer_wake, nullptr);
  pthread_cond_init(&writer_done, nullptr);
  // The writer thread is the parent's: the child compresses in its own threads, and the blocks
  // queued at the fork belong to the parent's file.
  writer_running = false;
  queue_head = queue_tail = 0;
  writing = 0;
  if (tls_state != nullptr) tls_state->busy[0] = tls_state->busy[1] = false;
  if (!tracing.load(std::memory_order_relaxed)) return;
  traced_pid = getpid();
  if (trace_fd >= 0) close(trace_fd);
  trace_fd = -1;
  if (!follow_fork) {
    tracing.store(false, std::memory_order_relaxed);
    return;
  }
  // The child's file starts afresh: new streams, the parent's unflushed events dropped (the
  // parent writes them), stack ids defined again, every module written again.
  name_child_file();
  file_pending = true;
  next_stream.store(1, std::memory_order_relaxed);
  lost_events.store(0, std::memory_order_relaxed);  // the parent's, reported in its own file
  thread_state* t = tls_state;
  if (t == nullptr && !tls_dead) {
    // A thread that had not recorded anything forked: the child's first block still needs its
    // PROCESS and MODULE records.
    bool guard = tls_guard;
    tls_guard = true;
    t = create_thread_state();
    tls_state = t;
    tls_guard = guard;
  }
  if (t != nullptr) {
    t->stream = next_stream.fetch_add(1, std::memory_order_relaxed);
    t->pos = 0;
    t->has_events = false;
    reset_stacks(t);
    begin_block(t);
    bool guard = tls_guard;
    tls_guard = true;
    write_thread_record(t);
    write_process_records(t, fmt::process_flag_fork_child);
    write_module_records(t, true);
    tls_guard = guard;
  }
}

// `base.PID`, or `base.PID.K` if that exists (an exec'd image keeps its pid).
void derive_path(const char* base) {
  char candidate[sizeof trace_path];
  for (int k = 0; k < 1000; ++k) {
    if (k == 0)
      std::snprintf(candidate, sizeof candidate, "%s.%d", base, static_cast<int>(getpid()));
    else
      std::snprintf(candidate, sizeof candidate, "%s.%d.%d", base, static_cast<int>(getpid()), k);
    if (access(candidate, F_OK) != 0) break;
  }
  std::memcpy(trace_path, candidate, sizeof trace_path);
}

char base_path[4096];

void name_child_file() { derive_path(base_path); }

bool env_is(const char* name, const char* value) {
  const char* v = getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

// Removes this library from LD_PRELOAD so that programs started with exec are not traced.
void stop_exec_inheritance() {
  const char* preload = getenv("LD_PRELOAD");
  if (preload != nullptr) {
    char kept[8192];
    std::size_t k = 0;
    const char* s = preload;
    while (*s != 0) {
      const char* e = s;
      while (*e != 0 && *e != ':' && *e != ' ') ++e;
      std::size_t len = static_cast<std::size_t>(e - s);
      bool ours = len >= 22 && std::memcmp(e - 22, "liblowalloc_trace.so", 20) == 0;
      ours = ours || (len >= 20 && std::memcmp(e - 20, "liblowalloc_trace.so", 20) == 0);
      if (!ours && len > 0 && k + len + 2 < sizeof kept) {
        if (k != 0) kept[k++] = ':';
        std::memcpy(kept + k, s, len);
        k += len;
      }
      s = *e != 0 ? e + 1 : e;
    }
    kept[k] = 0;
    if (k == 0)
      unsetenv("LD_PRELOAD");
    else
      setenv("LD_PRELOAD", kept, 1);
  }
  unsetenv(fmt::env_file);
  unsetenv(fmt::env_first);
  unsetenv(fmt::env_manifest);
  unsetenv(fmt::env_fork);
  unsetenv(fmt::env_exec);
  unsetenv(fmt::env_depth);
}

__attribute__((constructor(101))) void init_recorder(int argc, char** argv, char**) {
  if (!ready()) return;
  tls_guard = true;
  save_argv(argc, argv);
  const char* file = getenv(fmt::env_file);
  if (file == nullptr || file[0] == 0) {
    tls_guard = false;
    return;  // loaded without `lowalloc run`: do nothing
  }
  std::snprintf(base_path, sizeof base_path, "%s", file);
  const char* m = getenv(fmt::env_manifest);
  std::snprintf(manifest_path, sizeof manifest_path, "%s", m != nullptr ? m : "");
  follow_fork = !env_is(fmt::env_fork, "0");
  follow_exec = env_is(fmt::env_exec, "1");
  if (const char* d = getenv(fmt::env_depth)) {
    long v = std::strtol(d, nullptr, 10);
    if (v > 0) max_depth = static_cast<std::size_t>(v > 256 ? 256 : v);
  }
  std::uint64_t flags = 0;
  const char* first = getenv(fmt::env_first);
  if (first != nullptr && std::strtol(first, nullptr, 10) == getpid()) {
    std::snprintf(trace_path, sizeof trace_path, "%s", file);
    unsetenv(fmt::env_first);  // an image exec'd from this one writes its own file
  } else {
    derive_path(file);
    flags |= fmt::process_flag_exec;
  }
  if (!follow_exec) stop_exec_inheritance();

  traced_pid = getpid();
  use_tsc = cpu_has_invariant_tsc();
  pthread_key_create(&thread_key, on_thread_exit);
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  compress_capacity = ZSTD_compressBound(buffer_bytes);
  compress_buffer = static_cast<unsigned char*>(map_memory(compress_capacity));
  if (cctx == nullptr || compress_buffer == nullptr) {
    say("cannot set up the trace compressor; the program runs on untraced");
    tls_guard = false;
    return;
  }
  tracing.store(true, std::memory_order_relaxed);
  if (!open_trace_file()) {
    tls_guard = false;
    return;
  }
  thread_state* t = create_thread_state();
  tls_state = t;
  if (t != nullptr) {
    // The first block of the file carries the process and the modules.
    write_process_records(t, flags);
    write_module_records(t, true);
  }
  start_writer();
  tls_guard = false;
}

__attribute__((destructor(101))) void fini_recorder() { finish_process(); }

}  // namespace
}  // namespace lowalloc::trace

// --- the interposed functions --------------------------------------------------------------------

using namespace lowalloc::trace;
namespace fmt = lowalloc::trace_format;

LOWALLOC_EXPORT void* malloc(std::size_t size) noexcept {
  if (LOWALLOC_UNLIKELY(!ready())) return bootstrap_alloc(size);
  thread_state* t = enter();
  void* p = real.malloc(size);
  if (t != nullptr) {
    if (p != nullptr) record_alloc(t, fmt::kind_malloc, size, p, LOWALLOC_CALLER_FRAME());
    leave(t);
  }
  return p;
}

LOWALLOC_EXPORT void free(void* ptr) noexcept {
  if (ptr == nullptr || LOWALLOC_UNLIKELY(in_bootstrap(ptr))) return;
  if (LOWALLOC_UNLIKELY(!ready())) return;
  thread_state* t = enter();
  if (t != nullptr) {
    record_free(t, ptr, stamp_event(t));
    real.free(ptr);
    leave(t);
    return;
  }
  real.free(ptr);
}

LOWALLOC_EXPORT void* calloc(std::size_t count, std::size_t size) noexcept {
  if (LOWALLOC_UNLIKELY(!ready())) {
    std::size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) return nullptr;
    return bootstrap_alloc(bytes);  // static memory is zero
  }
  thread_state* t = enter();
  void* p = real.calloc(count, size);
  if (t != nullptr) {
    if (p != nullptr) record_alloc(t, fmt::kind_calloc, count * size, p, LOWALLOC_CALLER_FRAME());
    leave(t);
  }
  return p;
}

namespace {

void* realloc_common(void* ptr, std::size_t size, void* result, std::uint64_t before,
                     thread_state* t, fmt::alloc_kind kind, const caller_frame& from) {
  if (t == nullptr) return result;
  if (ptr != nullptr && (result != nullptr || size == 0)) record_free(t, ptr, before);
  if (result != nullptr) record_alloc(t, kind, size, result, from);
  leave(t);
  return result;
}

void* bootstrap_realloc(void* ptr, std::size_t size) {
  // Moving a bootstrap block to the real heap: its size is unknown, copy what fits.
  void* p = ready() ? real.malloc(size) : bootstrap_alloc(size);
  if (p != nullptr && ptr != nullptr) {
    auto used = bootstrap_used.load();
    auto offset = static_cast<std::size_t>(static_cast<unsigned char*>(ptr) - bootstrap_buffer);
    std::size_t avail = used - offset;
    std::memcpy(p, ptr, avail < size ? avail : size);
  }
  return p;
}

}  // namespace

LOWALLOC_EXPORT void* realloc(void* ptr, std::size_t size) noexcept {
  if (LOWALLOC_UNLIKELY(in_bootstrap(ptr) || !ready())) return bootstrap_realloc(ptr, size);
  thread_state* t = enter();
  std::uint64_t before = t != nullptr && ptr != nullptr ? stamp_shared() : 0;
  void* result = real.realloc(ptr, size);
  return realloc_common(ptr, size, result, before, t, fmt::kind_realloc, LOWALLOC_CALLER_FRAME());
}

LOWALLOC_EXPORT void* reallocarray(void* ptr, std::size_t count, std::size_t size) noexcept {
  std::size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (LOWALLOC_UNLIKELY(in_bootstrap(ptr) || !ready())) return bootstrap_realloc(ptr, bytes);
  thread_state* t = enter();
  std::uint64_t before = t != nullptr && ptr != nullptr ? stamp_shared() : 0;
  void* result =
      real.reallocarray != nullptr ? real.reallocarray(ptr, count, size) : real.realloc(ptr, bytes);
  return realloc_common(ptr, bytes, result, before, t, fmt::kind_reallocarray,
                        LOWALLOC_CALLER_FRAME());
}

LOWALLOC_EXPORT int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  if (LOWALLOC_UNLIKELY(!ready())) {
    void* p = bootstrap_alloc(size, alignment < 16 ? 16 : alignment);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
  }
  thread_state* t = enter();
  int rc = real.posix_memalign(out, alignment, size);
  if (t != nullptr) {
    if (rc == 0) record_alloc(t, fmt::kind_posix_memalign, size, *out, LOWALLOC_CALLER_FRAME());
    leave(t);
  }
  return rc;
}

namespace {

template <class F>
void* aligned_common(F fn, std::size_t alignment, std::size_t size, fmt::alloc_kind kind,
                     const caller_frame& from) {
  if (LOWALLOC_UNLIKELY(!ready())) return bootstrap_alloc(size, alignment < 16 ? 16 : alignment);
  thread_state* t = enter();
  void* p = fn(alignment, size);
  if (t != nullptr) {
    if (p != nullptr) record_alloc(t, kind, size, p, from);
    leave(t);
  }
  return p;
}

}  // namespace

LOWALLOC_EXPORT void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  return aligned_common([](std::size_t a, std::size_t n) { return real.aligned_alloc(a, n); },
                        alignment, size, fmt::kind_aligned_alloc, LOWALLOC_CALLER_FRAME());
}

LOWALLOC_EXPORT void* memalign(std::size_t alignment, std::size_t size) noexcept {
  return aligned_common([](std::size_t a, std::size_t n) { return real.memalign(a, n); }, alignment,
                        size, fmt::kind_memalign, LOWALLOC_CALLER_FRAME());
}

LOWALLOC_EXPORT void* valloc(std::size_t size) noexcept {
  return aligned_common([](std::size_t, std::size_t n) { return real.valloc(n); }, 4096, size,
                        fmt::kind_valloc, LOWALLOC_CALLER_FRAME());
}

LOWALLOC_EXPORT void* pvalloc(std::size_t size) noexcept {
  return aligned_common([](std::size_t, std::size_t n) { return real.pvalloc(n); }, 4096, size,
                        fmt::kind_valloc, LOWALLOC_CALLER_FRAME());
}

namespace {

void after_module_change() {
  if (!tracing.load(std::memory_order_relaxed) || tls_guard) return;
  tls_guard = true;
  thread_state* t = tls_state;
  if (t == nullptr && !tls_dead) {
    t = create_thread_state();
    tls_state = t;
  }
  if (t != nullptr) write_module_records(t, false);
  tls_guard = false;
}

}  // namespace

LOWALLOC_EXPORT void* dlopen(const char* file, int mode) noexcept {
  if (!ready()) return nullptr;
  void* h = real.dlopen(file, mode);
  if (h != nullptr) after_module_change();
  return h;
}

LOWALLOC_EXPORT void* dlmopen(Lmid_t lmid, const char* file, int mode) noexcept {
  if (!ready()) return nullptr;
  void* h = real.dlmopen(lmid, file, mode);
  if (h != nullptr) after_module_change();
  return h;
}

LOWALLOC_EXPORT int dlclose(void* handle) noexcept {
  if (!ready()) return -1;
  unwind_modules_invalidate();  // and again after: keep stale module entries out of the window
  int rc = real.dlclose(handle);
  unwind_modules_invalidate();  // whatever the state of tracing: the unwinder must not keep it
  after_module_change();
  return rc;
}

// A process that ends with _exit (often a fork child) still gets its last block and END.
LOWALLOC_EXPORT __attribute__((noreturn)) void _exit(int status) noexcept {
  finish_process();
  if (ready() && real.exit_now != nullptr) real.exit_now(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

LOWALLOC_EXPORT __attribute__((noreturn)) void _Exit(int status) noexcept { _exit(status); }

// --- exec: the image ends here -------------------------------------------------------------------

LOWALLOC_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  if (!ready()) return -1;
  before_exec(path);
  return real.execve(path, argv, envp);
}

LOWALLOC_EXPORT int execv(const char* path, char* const argv[]) noexcept {
  if (!ready()) return -1;
  before_exec(path);
  return real.execv(path, argv);
}

LOWALLOC_EXPORT int execvp(const char* file, char* const argv[]) noexcept {
  if (!ready()) return -1;
  before_exec(file);
  return real.execvp(file, argv);
}

LOWALLOC_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  if (!ready()) return -1;
  before_exec(file);
  return real.execvpe(file, argv, envp);
}

LOWALLOC_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  if (!ready()) return -1;
  before_exec(nullptr);
  return real.fexecve(fd, argv, envp);
}

LOWALLOC_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                             int flags) noexcept {
  if (!ready() || real.execveat == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  before_exec(path);
  return real.execveat(dirfd, path, argv, envp, flags);
}

// The execl family collects its arguments and goes through the hooks above (glibc's own execl*
// call execve internally, where a preloaded library cannot see them).
namespace {

constexpr int max_exec_args = 4096;

int collect_args(const char* arg0, va_list ap, char** argv, char*** envp) {
  int n = 0;
  argv[n++] = const_cast<char*>(arg0);
  while (arg0 != nullptr) {
    char* a = va_arg(ap, char*);
    if (n == max_exec_args - 1) {
      errno = E2BIG;
      return -1;
    }
    argv[n++] = a;
    if (a == nullptr) break;
  }
  if (envp != nullptr) *envp = va_arg(ap, char**);
  return n;
}

}  // namespace

LOWALLOC_EXPORT int execl(const char* path, const char* arg, ...) noexcept {
  char* argv[max_exec_args];
  va_list ap;
  va_start(ap, arg);
  int n = collect_args(arg, ap, argv, nullptr);
  va_end(ap);
  return n < 0 ? -1 : execv(path, argv);
}

LOWALLOC_EXPORT int execlp(const char* file, const char* arg, ...) noexcept {
  char* argv[max_exec_args];
  va_list ap;
  va_start(ap, arg);
  int n = collect_args(arg, ap, argv, nullptr);
  va_end(ap);
  return n < 0 ? -1 : execvp(file, argv);
}

LOWALLOC_EXPORT int execle(const char* path, const char* arg, ...) noexcept {
  char* argv[max_exec_args];
  char** envp = nullptr;
  va_list ap;
  va_start(ap, arg);
  int n = collect_args(arg, ap, argv, &envp);
  va_end(ap);
  return n < 0 ? -1 : execve(path, argv, envp);
}
