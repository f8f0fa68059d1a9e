// The interposed functions, exported from liblowalloc_trace.so: the allocation functions record
// an event around the real call; the loader, exit and exec functions keep the trace in step
// with the modules and the image. Each is declared from the list in hooks.hpp; the shapes that
// repeat are defined from it too, the others by hand below.
#include "trace/hooks.hpp"
#include "trace/block.hpp"
#include "trace/bootstrap.hpp"
#include "trace/crash.hpp"
#include "trace/format.hpp"
#include "trace/lifecycle.hpp"
#include "trace/modules.hpp"
#include "trace/thread_state.hpp"
#include "trace/unwind.hpp"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdint>

#define LOWALLOC_EXPORT extern "C" __attribute__((visibility("default")))

using namespace lowalloc::trace;
namespace fmt = lowalloc::trace_format;

// Every hook's signature from the list: a hand-written definition that differs does not compile.
// noexcept where glibc's header says the function throws nothing (__THROW).
#define LOWALLOC_DECLARE_HOOK(shape, name, member, result, params, args) \
  LOWALLOC_DECLARE_HOOK_##shape(name, result, params)
#define LOWALLOC_DECLARE_HOOK_NOEXCEPT(name, result, params) \
  LOWALLOC_EXPORT result name params noexcept;
#define LOWALLOC_DECLARE_HOOK_own LOWALLOC_DECLARE_HOOK_NOEXCEPT
#define LOWALLOC_DECLARE_HOOK_module LOWALLOC_DECLARE_HOOK_NOEXCEPT
#define LOWALLOC_DECLARE_HOOK_exec LOWALLOC_DECLARE_HOOK_NOEXCEPT
#define LOWALLOC_DECLARE_HOOK_thread LOWALLOC_DECLARE_HOOK_NOEXCEPT
#define LOWALLOC_DECLARE_HOOK_own_c(name, result, params) LOWALLOC_EXPORT result name params;
LOWALLOC_HOOKS(LOWALLOC_DECLARE_HOOK)
#undef LOWALLOC_DECLARE_HOOK_own_c
#undef LOWALLOC_DECLARE_HOOK_thread
#undef LOWALLOC_DECLARE_HOOK_exec
#undef LOWALLOC_DECLARE_HOOK_module
#undef LOWALLOC_DECLARE_HOOK_own
#undef LOWALLOC_DECLARE_HOOK_NOEXCEPT
#undef LOWALLOC_DECLARE_HOOK

// --- the shapes that repeat ----------------------------------------------------------------------

#define LOWALLOC_DEFINE_HOOK(shape, name, member, result, params, args) \
  LOWALLOC_DEFINE_HOOK_##shape(name, member, result, params, args)
#define LOWALLOC_DEFINE_HOOK_own(name, member, result, params, args)    // below
#define LOWALLOC_DEFINE_HOOK_own_c(name, member, result, params, args)  // below

// dlopen and dlmopen: a new object may bring more (its dependencies).
#define LOWALLOC_DEFINE_HOOK_module(name, member, result, params, args) \
  LOWALLOC_EXPORT result name params noexcept {                         \
    if (!ready()) return nullptr;                                       \
    result h = real.member args;                                        \
    if (h != nullptr) after_module_change();                            \
    return h;                                                           \
  }

// exec: the image ends here.
#define LOWALLOC_DEFINE_HOOK_exec(name, member, result, params, args) \
  LOWALLOC_EXPORT result name params noexcept {                       \
    if (!ready()) return -1;                                          \
    before_exec(path);                                                \
    const result failed = real.member args;                           \
    after_failed_exec();                                              \
    return failed;                                                    \
  }

// Functions that may start threads inside glibc. A program that calls one before the recorder's
// lookup is done (from inside dlsym) cannot exist; one missing from this glibc fails as absent.
#define LOWALLOC_DEFINE_HOOK_thread(name, member, result, params, args) \
  LOWALLOC_EXPORT result name params noexcept {                         \
    if (!ready() || real.member == nullptr) {                           \
      errno = ENOSYS;                                                   \
      return -1;                                                        \
    }                                                                   \
    before_hidden_thread();                                             \
    return real.member args;                                            \
  }

LOWALLOC_HOOKS(LOWALLOC_DEFINE_HOOK)

#undef LOWALLOC_DEFINE_HOOK_thread
#undef LOWALLOC_DEFINE_HOOK_exec
#undef LOWALLOC_DEFINE_HOOK_module
#undef LOWALLOC_DEFINE_HOOK_own_c
#undef LOWALLOC_DEFINE_HOOK_own
#undef LOWALLOC_DEFINE_HOOK

// --- allocation ----------------------------------------------------------------------------------

LOWALLOC_EXPORT void* malloc(std::size_t size) noexcept {
  if (LOWALLOC_UNLIKELY(!ready())) return bootstrap_alloc(size);
  thread_state* t = enter();
  if (t != nullptr) prefetch_walk_set(t, LOWALLOC_CALLER_FRAME());
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
  if (t != nullptr) prefetch_walk_set(t, LOWALLOC_CALLER_FRAME());
  void* p = real.calloc(count, size);
  if (t != nullptr) {
    if (p != nullptr) record_alloc(t, fmt::kind_calloc, count * size, p, LOWALLOC_CALLER_FRAME());
    leave(t);
  }
  return p;
}

namespace {

// What realloc's free takes before the call: room for its records, then its stamp, and once the
// process has a second thread whether it is a FREE_LOCAL, else its order (prepare_free): the old
// block may go to another thread's allocation before realloc returns.
struct realloc_stamp {
  std::uint64_t ticks = 0;
  free_before before{};
  bool prepared = false;
};

realloc_stamp stamp_realloc(thread_state* t, const void* ptr) {
  realloc_stamp r;
  if (t == nullptr || ptr == nullptr) return r;
  if (many_threads.load(std::memory_order_relaxed)) {
    r.before = prepare_free(t, ptr);
    r.prepared = true;
  } else {
    ensure_space(t, 32 + 48);
  }
  r.ticks = stamp_shared();
  return r;
}

// A realloc that moved or freed the block is a FREE (stamped before the call) and an ALLOC.
void* realloc_common(void* ptr, std::size_t size, void* result, realloc_stamp before,
                     thread_state* t, fmt::alloc_kind kind, const caller_frame& from) {
  if (t == nullptr) return result;
  if (ptr != nullptr && (result != nullptr || size == 0))
    record_free(t, ptr, before.ticks, before.prepared ? &before.before : nullptr);
  if (result != nullptr) record_alloc(t, kind, size, result, from);
  leave(t);
  return result;
}

}  // namespace

LOWALLOC_EXPORT void* realloc(void* ptr, std::size_t size) noexcept {
  if (LOWALLOC_UNLIKELY(in_bootstrap(ptr) || !ready())) return bootstrap_realloc(ptr, size);
  thread_state* t = enter();
  if (t != nullptr) prefetch_walk_set(t, LOWALLOC_CALLER_FRAME());
  const realloc_stamp before = stamp_realloc(t, ptr);
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
  const realloc_stamp before = stamp_realloc(t, ptr);
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

// --- modules and exit ----------------------------------------------------------------------------

namespace {

// Under the guard: the unwinder's lock, which a signal that ends the process must not find held
// by its own thread (crash.cpp).
void invalidate_modules() {
  const bool guard = tls_guard;
  tls_guard = true;
  unwind_modules_invalidate();
  release_guard(guard);
}

}  // namespace

LOWALLOC_EXPORT int dlclose(void* handle) noexcept {
  if (!ready()) return -1;
  invalidate_modules();  // and again after: keep stale module entries out of the window
  int rc = real.dlclose(handle);
  invalidate_modules();  // whatever the state of tracing: the unwinder must not keep it
  after_module_change();
  return rc;
}

// --- threads -------------------------------------------------------------------------------------

// The new thread may free this one's blocks: before it runs, the blocks kept by ordinal get their
// addresses written, and the recorder's writer thread starts (inside the recorder: tls_guard).
LOWALLOC_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                   void* (*start)(void*), void* arg) noexcept {
  if (!ready()) return EAGAIN;
  if (tls_guard) return real.pthread_create(thread, attr, start, arg);  // the recorder's own
  before_thread_start();
  thread_start* record = counted_thread(start, arg);
  if (record == nullptr) return real.pthread_create(thread, attr, start, arg);
  const int rc = real.pthread_create(thread, attr, counted_thread_main, record);
  if (rc != 0) thread_not_started(record);
  return rc;
}

// C11's threads: thrd_create starts its thread with glibc's own pthread_create.
LOWALLOC_EXPORT int thrd_create(thrd_t* thread, thrd_start_t start, void* arg) {
  if (!ready() || real.thrd_create == nullptr) return thrd_error;
  if (!tls_guard) before_thread_start();
  return real.thrd_create(thread, start, arg);
}

// A SIGEV_THREAD notification runs in a thread of glibc's; the others start none.
LOWALLOC_EXPORT int timer_create(clockid_t clock, struct sigevent* event, timer_t* timer) noexcept {
  if (!ready() || real.timer_create == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (event != nullptr && event->sigev_notify == SIGEV_THREAD) before_hidden_thread();
  return real.timer_create(clock, event, timer);
}

LOWALLOC_EXPORT int mq_notify(mqd_t queue, const struct sigevent* event) noexcept {
  if (!ready() || real.mq_notify == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (event != nullptr && event->sigev_notify == SIGEV_THREAD) before_hidden_thread();
  return real.mq_notify(queue, event);
}

// Its requests are served by threads of glibc's.
LOWALLOC_EXPORT int getaddrinfo_a(int mode, struct gaicb* list[], int count,
                                  struct sigevent* event) {
  if (!ready() || real.getaddrinfo_a == nullptr) return EAI_SYSTEM;
  before_hidden_thread();
  return real.getaddrinfo_a(mode, list, count, event);
}

// --- signals -------------------------------------------------------------------------------------

// The program sees SIG_DFL where the recorder's handler stands in for it (crash.hpp). Called
// before the real functions are known only from inside dlsym, which sets no signal's action.
LOWALLOC_EXPORT int sigaction(int sig, const struct sigaction* act,
                              struct sigaction* old) noexcept {
  if (!ready()) {
    errno = EAGAIN;
    return -1;
  }
  return program_sigaction(sig, act, old);
}

#define LOWALLOC_SIGNAL_HOOK(name, member, unblocks)                          \
  LOWALLOC_EXPORT sighandler_t name(int sig, sighandler_t handler) noexcept { \
    if (!ready()) {                                                           \
      errno = EAGAIN;                                                         \
      return SIG_ERR;                                                         \
    }                                                                         \
    return program_signal(real.member, sig, handler, unblocks);               \
  }
LOWALLOC_SIGNAL_HOOK(signal, sig_signal, false)
LOWALLOC_SIGNAL_HOOK(bsd_signal, sig_bsd, false)
LOWALLOC_SIGNAL_HOOK(ssignal, sig_ssignal, false)
LOWALLOC_SIGNAL_HOOK(sysv_signal, sig_sysv, false)
LOWALLOC_SIGNAL_HOOK(__sysv_signal, sig_sysv2, false)
LOWALLOC_SIGNAL_HOOK(sigset, sig_sigset, true)
#undef LOWALLOC_SIGNAL_HOOK

// A process that ends with _exit (often a fork child) still gets its last block and END. (glibc
// declares _exit without noexcept, _Exit with it; the definitions match.)
LOWALLOC_EXPORT __attribute__((noreturn)) void _exit(int status) {
  finish_process();
  if (ready() && real.exit_now != nullptr) real.exit_now(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

LOWALLOC_EXPORT __attribute__((noreturn)) void _Exit(int status) noexcept { _exit(status); }

// --- exec: the image ends here -------------------------------------------------------------------

LOWALLOC_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  if (!ready()) return -1;
  before_exec(nullptr);
  const int failed = real.fexecve(fd, argv, envp);
  after_failed_exec();
  return failed;
}

LOWALLOC_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                             int flags) noexcept {
  if (!ready() || real.execveat == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  before_exec(path);
  const int failed = real.execveat(dirfd, path, argv, envp, flags);
  after_failed_exec();
  return failed;
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
