// The crash handler (crash.hpp). Everything here is async-signal-safe: no allocation, no lock
// waited for (trylock, and give up after a second), only system calls and the recorder's own
// encoders.
#include "trace/crash.hpp"

#include "trace/block.hpp"
#include "trace/clock.hpp"
#include "trace/config.hpp"
#include "trace/format.hpp"
#include "trace/lifecycle.hpp"
#include "trace/records.hpp"
#include "trace/sink.hpp"
#include "trace/thread_state.hpp"
#include "trace/unwind.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace lowalloc::trace {

namespace fmt = lowalloc::trace_format;

namespace {

constexpr int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr std::size_t max_listed = 256;  // threads named in CRASH

// The recorder's own code: a crash there may have left the thread's block half written.
std::uintptr_t text_lo = 0, text_hi = 0;

std::atomic<int> crash_state{0};  // 0: none yet, 1: a handler is writing, 2: written

// The CRASH block: TIME, THREAD (in a stream of its own), CRASH and its entries.
unsigned char crash_buffer[128 + max_listed * 3 * fmt::max_varint_bytes];
fmt::crash_thread listed[max_listed];

bool in_recorder_code(void* context) {
  if (context == nullptr || text_hi == 0) return false;
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  const auto pc = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  const auto pc = static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  const std::uintptr_t pc = 0;
#endif
  return pc >= text_lo && pc < text_hi;
}

char* put_decimal(char* p, std::uint64_t v) {
  char digits[24];
  int n = 0;
  do digits[n++] = static_cast<char>('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

// "crash PID SIGNAL TID ALLOCATIONS THREADS WRITTEN" for `lowalloc run` (run.cpp).
void manifest_crash(int sig, std::uint64_t tid, std::uint64_t allocations, std::size_t threads,
                    bool written) {
  if (manifest_path[0] == 0) return;
  char line[160];
  char* p = line;
  std::memcpy(p, "crash ", 6);
  p += 6;
  const std::uint64_t fields[] = {static_cast<std::uint64_t>(getpid()),
                                  static_cast<std::uint64_t>(sig),
                                  tid,
                                  allocations,
                                  threads,
                                  written ? 1u : 0u};
  for (std::uint64_t f : fields) {
    p = put_decimal(p, f);
    *p++ = ' ';
  }
  p[-1] = '\n';
  int fd = open(manifest_path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  write_all(fd, line, static_cast<std::size_t>(p - line));
  close(fd);
}

void write_crash(int sig, void* context) {
  const std::uint64_t deadline = monotonic_ns() + 1000000000;
  const auto tid = static_cast<std::uint64_t>(syscall(SYS_gettid));
  thread_state* t = tls_state;
  const bool guard = tls_guard;
  tls_guard = true;
  // Inside the recorder's own code the block may be half written: leave it. Inside the real
  // malloc (a heap found corrupt aborts there) the block is whole.
  const bool usable = t != nullptr && !(guard && in_recorder_code(context));
  bool late = false;
  bool written = false;
  std::size_t others = 0;  // threads other than this one with unwritten blocks
  std::uint64_t others_allocations = 0;
  if (crash_take_file(t, deadline, &late)) {
    if (usable && t->pos != 0) {
      end_block(t);
      crash_write_block(t->buffer, t->pos, t->stream);
      t->pos = 0;
    }
    written = usable;
    std::uint64_t flags = 0;
    if (!unwritten_threads(t, listed, max_listed - 1, &others, deadline))
      flags |= fmt::crash_flag_more_threads;
    for (std::size_t i = 0; i < others; ++i) others_allocations += listed[i].allocations;
    std::size_t n = others;
    if (t != nullptr && !usable)  // the crashing thread's own block is lost too
      listed[n++] = fmt::crash_thread{tid, t->alloc_ordinal, block_event_bytes(t)};
    if (written) flags |= fmt::crash_flag_thread_written;
    if (late) flags |= fmt::crash_flag_writer_late;
    // The CRASH block: in the crashing thread's stream after its last block, or in a new one.
    unsigned char* p = crash_buffer;
    std::uint64_t ticks = stamp_now();
    if (t != nullptr && ticks < t->clock) ticks = t->clock;
    p = fmt::encode(p, fmt::time_record{ticks, monotonic_ns()});
    std::uint32_t stream;
    if (t != nullptr) {
      stream = t->stream;
    } else {
      stream = next_stream.fetch_add(1, std::memory_order_relaxed);
      p = fmt::encode(p, fmt::thread_record{tid});
    }
    p = fmt::encode(p, fmt::crash_record{0, static_cast<std::uint64_t>(sig), tid, flags, n});
    for (std::size_t i = 0; i < n; ++i) p = fmt::encode(p, listed[i]);
    p = fmt::encode_ticks(p, nullptr, nullptr, 0);
    crash_write_block(crash_buffer, static_cast<std::size_t>(p - crash_buffer), stream);
    crash_release_file();
  }
  // Nothing written when the file's lock was not free: the trace ends as a killed process's.
  manifest_crash(sig, tid, others_allocations, others, written);
  tls_guard = guard;
}

void on_crash(int sig, siginfo_t*, void* context) {
  const int saved_errno = errno;
  int expected = 0;
  if (crash_state.compare_exchange_strong(expected, 1)) {
    if (tracing.load(std::memory_order_relaxed) && traced_process()) write_crash(sig, context);
    crash_state.store(2);
  } else {
    // Another thread crashed first: let it finish writing (for at most two seconds).
    const std::uint64_t deadline = monotonic_ns() + 2000000000;
    while (crash_state.load() != 2 && monotonic_ns() < deadline) sched_yield();
  }
  // What the signal would have done: the default action, raised again in this thread. It is
  // blocked until the handler returns; a fault's instruction is not run again.
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
  errno = saved_errno;
}

}  // namespace

void install_crash_handlers() {
  std::uintptr_t lo = 0, hi = 0;
  if (module_text_range(reinterpret_cast<const void*>(&on_crash), &lo, &hi)) {
    text_lo = lo;
    text_hi = hi;
  }
  for (int sig : crash_signals) {
    struct sigaction old = {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction act = {};
    act.sa_sigaction = on_crash;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&act.sa_mask);
    sigaction(sig, &act, nullptr);
  }
}

}  // namespace lowalloc::trace
