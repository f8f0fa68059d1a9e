// The handlers of the signals that end the process (crash.hpp). The crash handler is
// async-signal-safe: no allocation, no lock waited for (trylock, and give up after a second),
// only system calls and the recorder's own encoders. The handler of the signals sent to end the
// process runs the exit's path, only ever outside the recorder (see on_end).
#include "trace/crash.hpp"

#include "trace/block.hpp"
#include "trace/bootstrap.hpp"
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
// Signals whose default action ends the process and that come from outside it (kill, timeout,
// a pool's terminate, Ctrl-C, a closed pipe, an alarm), not from a fault of its own.
constexpr int end_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGPIPE,
                               SIGALRM, SIGTERM, SIGUSR1, SIGUSR2};

template <std::size_t N>
constexpr bool listed_in(const int (&list)[N], int sig) {
  for (int s : list)
    if (s == sig) return true;
  return false;
}

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

// "crash PID SIGNAL TID ALLOCATIONS THREADS WRITTEN".
void manifest_crash(int sig, std::uint64_t tid, std::uint64_t allocations, std::size_t threads,
                    bool written) {
  const std::uint64_t fields[] = {static_cast<std::uint64_t>(getpid()),
                                  static_cast<std::uint64_t>(sig),
                                  tid,
                                  allocations,
                                  threads,
                                  written ? 1u : 0u};
  manifest_numbers("crash", fields, 6);
}

// "ended PID SIGNAL TID LOST": the trace has its end, and LOST events could not be recorded.
void manifest_end(int sig, std::uint64_t tid, std::uint64_t lost) {
  const std::uint64_t fields[] = {static_cast<std::uint64_t>(getpid()),
                                  static_cast<std::uint64_t>(sig), tid, lost};
  manifest_numbers("ended", fields, 4);
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

// What the signal would have done: the default action, raised again in this thread. In a
// handler it is blocked until the handler returns; a fault's instruction is not run again.
void raise_default(int sig) {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  real.sig_action(sig, &dfl, nullptr);
  syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

// The mask the thread gets back as the handler returns, without `sig`: a signal let through only
// by ppoll's, pselect's or sigsuspend's temporary mask found the thread's own mask blocking it
// again, and the program went on (ppoll returned EINTR) where SIG_DFL ends it.
void unblock_on_return(void* context, int sig) {
  if (context != nullptr) sigdelset(&static_cast<ucontext_t*>(context)->uc_sigmask, sig);
}

void on_crash(int sig, siginfo_t*, void* context) {
  const int saved_errno = errno;
  int expected = 0;
  if (!traced_process()) {
    // A vfork child, which shares the traced process's memory: nothing here is its own.
  } else if (crash_state.compare_exchange_strong(expected, 1)) {
    if (tracing.load(std::memory_order_relaxed)) write_crash(sig, context);
    crash_state.store(2);
  } else {
    // Another thread crashed first: let it finish writing (for at most two seconds).
    const std::uint64_t deadline = monotonic_ns() + 2000000000;
    while (crash_state.load() != 2 && monotonic_ns() < deadline) sched_yield();
  }
  raise_default(sig);
  unblock_on_return(context, sig);
  errno = saved_errno;
}

// The signals that end the process without a fault. Inside the recorder (or the allocator it
// called) the thread's block is half written and it may hold the recorder's locks: the signal
// waits there until the thread leaves (release_guard). Outside, the thread holds none of them
// (the recorder sets the guard wherever it takes a lock the exit's path needs: fork's handlers,
// the writer's stop, dlclose's), and the trace is finished as at an exit (finish_process): every
// thread's events, a CRASH record with the flag `ended`, END. Once: a signal that comes while
// another thread finishes the trace waits for it (ten seconds at most), then ends the process.
std::atomic<int> end_state{0};  // 0: none yet, 1: a thread is finishing the trace, 2: done

void end_by_signal(int sig, bool deferred) {
  int expected = 0;
  if (end_state.compare_exchange_strong(expected, 1)) {
    const auto tid = static_cast<std::uint64_t>(syscall(SYS_gettid));
    if (finish_process(sig, tid, deferred))
      manifest_end(sig, tid, lost_events.load(std::memory_order_relaxed));
    end_state.store(2);
  } else {
    const std::uint64_t deadline = monotonic_ns() + 10000000000;
    while (end_state.load() != 2 && monotonic_ns() < deadline) sched_yield();
  }
  raise_default(sig);
}

void on_end(int sig, siginfo_t*, void* context) {
  const int saved_errno = errno;
  if (tls_guard && tls_pending_signal == 0 && traced_process()) {
    tls_pending_signal = sig;
    errno = saved_errno;
    return;
  }
  if (!traced_process() || tls_guard) {
    // A vfork child, of which nothing of the recorder's is its own; or a second signal while one
    // waits for the thread to leave the recorder, which it may never do (a handler of the
    // program's that left an allocation by siglongjmp): the signal's own action, untraced.
    raise_default(sig);
  } else {
    end_by_signal(sig, false);
  }
  unblock_on_return(context, sig);
  errno = saved_errno;
}

bool is_default(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) == 0 ? a.sa_handler == SIG_DFL : a.sa_sigaction == nullptr;
}

// A handler by its address (sa_handler and sa_sigaction share their storage).
template <class F>
std::uintptr_t address_of(F* f) {
  return reinterpret_cast<std::uintptr_t>(f);
}

bool is_recorders(std::uintptr_t handler) {
  return handler == address_of(on_end) || handler == address_of(on_crash);
}

bool is_recorders(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) != 0 && is_recorders(address_of(a.sa_sigaction));
}

// The action that stands in for SIG_DFL.
struct sigaction recorders_action(int sig) {
  struct sigaction act = {};
  sigemptyset(&act.sa_mask);
  if (listed_in(crash_signals, sig)) {
    // On the alternate stack, if the thread has one: a stack overflow is a crash too.
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    act.sa_sigaction = on_crash;
  } else {
    // A deferred signal returns to the recorder, which must not see EINTR; and no second one
    // runs the handler again in this thread meanwhile. On the thread's own stack: the exit's
    // path needs more than a small alternate stack holds.
    act.sa_flags = SA_SIGINFO | SA_RESTART;
    act.sa_sigaction = on_end;
    for (int s : end_signals) sigaddset(&act.sa_mask, s);
  }
  return act;
}

// Whether the recorder's handler stands in for SIG_DFL of `sig` in this process now.
bool stands_in_for(int sig) {
  return (listed_in(crash_signals, sig) || listed_in(end_signals, sig)) && recording_here();
}

void install(int sig) {
  const struct sigaction act = recorders_action(sig);
  real.sig_action(sig, &act, nullptr);
}

// The program's view of an action the kernel holds: the recorder's handler is SIG_DFL.
void show_as_program(struct sigaction* old) {
  if (old != nullptr && is_recorders(*old)) {
    std::memset(old, 0, sizeof *old);
    old->sa_handler = SIG_DFL;
  }
}

}  // namespace

void install_signal_handlers() {
  std::uintptr_t lo = 0, hi = 0;
  if (module_text_range(reinterpret_cast<const void*>(&on_crash), &lo, &hi)) {
    text_lo = lo;
    text_hi = hi;
  }
  auto install_if_default = [](int sig) {
    struct sigaction old = {};
    if (real.sig_action(sig, nullptr, &old) == 0 && is_default(old)) install(sig);
  };
  for (int sig : crash_signals) install_if_default(sig);
  for (int sig : end_signals) install_if_default(sig);
}

void deliver_pending_signal() {
  const int sig = tls_pending_signal;
  tls_pending_signal = 0;
  if (sig == 0) return;
  // Outside a handler now: the end signals are blocked while the trace is finished, as they are
  // in on_end, and the one raised again ends the process once they are not.
  const int saved_errno = errno;  // the hook's result may be in it
  sigset_t block, old;
  sigemptyset(&block);
  for (int s : end_signals) sigaddset(&block, s);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  end_by_signal(sig, true);
  sigdelset(&old, sig);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved_errno;
}

// The kernel holds the truth: the recorder's handler where it stands in for SIG_DFL, and the
// program's where the program set one, whichever way it did. The program's SIG_DFL becomes the
// recorder's handler in the same system call.
int program_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  struct sigaction recorders;
  if (act != nullptr && is_default(*act) && stands_in_for(sig)) {
    recorders = recorders_action(sig);
    act = &recorders;
  }
  const int r = real.sig_action(sig, act, old);
  if (r == 0) show_as_program(old);
  return r;
}

sighandler_t program_signal(sighandler_t (*real_signal)(int, sighandler_t), int sig,
                            sighandler_t handler, bool unblocks) {
  if (handler != SIG_DFL || !stands_in_for(sig)) {
    const sighandler_t old = real_signal(sig, handler);
    return is_recorders(address_of(old)) ? SIG_DFL : old;
  }
  // SIG_DFL: the recorder's handler in one system call, so that no signal finds the real
  // SIG_DFL in between (sigset's SIG_HOLD, then SIG_DFL, delivers the signal held right there).
  const struct sigaction act = recorders_action(sig);
  struct sigaction old;
  if (real.sig_action(sig, &act, &old) != 0) return SIG_ERR;
  show_as_program(&old);
  sighandler_t previous = old.sa_handler;
  if (unblocks) {  // sigset: the signal is no longer held; SIG_HOLD if it was
    sigset_t one, was;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, &was);
    if (sigismember(&was, sig) == 1) previous = SIG_HOLD;
  }
  return previous;
}

void signals_fork_child() {
  end_state.store(0);
  crash_state.store(0);
}

}  // namespace lowalloc::trace
