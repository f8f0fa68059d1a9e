// The functions the recorder interposes, listed once. The list generates the table of the real
// functions (bootstrap.hpp), their lookup with dlsym (bootstrap.cpp) and the exported wrappers of
// the shapes that repeat (hooks.cpp); a wrapper with a body of its own is written by hand there,
// against the declaration the list makes. The list's order is the lookup order.
//
// X(shape, name, member, result, params, args)
//   shape   how hooks.cpp defines the wrapper: `own` (by hand), `own_c` (by hand, and not
//           noexcept: glibc's header does not say it throws nothing), `module` (after the real call
//           succeeds, look for modules loaded), `exec` (before the call, the image's trace ends;
//           the parameter `path` names the program), `thread` (before the call, glibc may start a
//           thread of its own: lifecycle.hpp, before_hidden_thread)
//   name    the C symbol
//   member  its slot in real_functions (_exit and _Exit are reserved names)
//   result, params, args   its signature, and its parameters as passed on
//
// sigaction and the signal family (signal is __sysv_signal in a program built as strict ISO C):
// the recorder's handlers stand in for SIG_DFL, and the program is shown SIG_DFL (crash.hpp).
//
// execl, execlp and execle have no real function of their own: hooks.cpp collects their
// arguments and calls the exec hooks of the list.
#ifndef LOWALLOC_SRC_TRACE_HOOKS_HPP
#define LOWALLOC_SRC_TRACE_HOOKS_HPP

#include <aio.h>
#include <dlfcn.h>
#include <mqueue.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <threads.h>
#include <time.h>

#include <cstddef>

// clang-format off
#define LOWALLOC_HOOKS(X)                                                                          \
  X(own, malloc, malloc, void*, (std::size_t size), (size))                                        \
  X(own, free, free, void, (void* ptr), (ptr))                                                     \
  X(own, calloc, calloc, void*, (std::size_t count, std::size_t size), (count, size))              \
  X(own, realloc, realloc, void*, (void* ptr, std::size_t size), (ptr, size))                      \
  X(own, reallocarray, reallocarray, void*, (void* ptr, std::size_t count, std::size_t size),      \
    (ptr, count, size))                                                                            \
  X(own, posix_memalign, posix_memalign, int,                                                      \
    (void** out, std::size_t alignment, std::size_t size), (out, alignment, size))                 \
  X(own, aligned_alloc, aligned_alloc, void*, (std::size_t alignment, std::size_t size),           \
    (alignment, size))                                                                             \
  X(own, memalign, memalign, void*, (std::size_t alignment, std::size_t size), (alignment, size))  \
  X(own, valloc, valloc, void*, (std::size_t size), (size))                                        \
  X(own, pvalloc, pvalloc, void*, (std::size_t size), (size))                                      \
  X(module, dlopen, dlopen, void*, (const char* path, int mode), (path, mode))                     \
  X(module, dlmopen, dlmopen, void*, (Lmid_t lmid, const char* path, int mode),                    \
    (lmid, path, mode))                                                                            \
  X(own, dlclose, dlclose, int, (void* handle), (handle))                                          \
  X(own, pthread_create, pthread_create, int,                                                      \
    (pthread_t * thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg),            \
    (thread, attr, start, arg))                                                                    \
  X(own_c, thrd_create, thrd_create, int, (thrd_t * thread, thrd_start_t start, void* arg),        \
    (thread, start, arg))                                                                          \
  X(own, timer_create, timer_create, int,                                                          \
    (clockid_t clock, struct sigevent* event, timer_t* timer), (clock, event, timer))              \
  X(own, mq_notify, mq_notify, int, (mqd_t queue, const struct sigevent* event),                   \
    (queue, event))                                                                                \
  X(thread, aio_read, aio_read, int, (struct aiocb * request), (request))                          \
  X(thread, aio_read64, aio_read64, int, (struct aiocb64 * request), (request))                    \
  X(thread, aio_write, aio_write, int, (struct aiocb * request), (request))                        \
  X(thread, aio_write64, aio_write64, int, (struct aiocb64 * request), (request))                  \
  X(thread, aio_fsync, aio_fsync, int, (int op, struct aiocb* request), (op, request))             \
  X(thread, aio_fsync64, aio_fsync64, int, (int op, struct aiocb64* request), (op, request))       \
  X(thread, lio_listio, lio_listio, int,                                                           \
    (int mode, struct aiocb* const list[], int count, struct sigevent* event),                     \
    (mode, list, count, event))                                                                    \
  X(thread, lio_listio64, lio_listio64, int,                                                       \
    (int mode, struct aiocb64* const list[], int count, struct sigevent* event),                   \
    (mode, list, count, event))                                                                    \
  X(own_c, getaddrinfo_a, getaddrinfo_a, int,                                                      \
    (int mode, struct gaicb* list[], int count, struct sigevent* event),                           \
    (mode, list, count, event))                                                                    \
  X(own, _exit, exit_now, void, (int status), (status))                                            \
  X(own, _Exit, exit_now2, void, (int status), (status))                                           \
  X(exec, execve, execve, int, (const char* path, char* const argv[], char* const envp[]),         \
    (path, argv, envp))                                                                            \
  X(exec, execv, execv, int, (const char* path, char* const argv[]), (path, argv))                 \
  X(exec, execvp, execvp, int, (const char* path, char* const argv[]), (path, argv))               \
  X(exec, execvpe, execvpe, int, (const char* path, char* const argv[], char* const envp[]),       \
    (path, argv, envp))                                                                            \
  X(own, fexecve, fexecve, int, (int fd, char* const argv[], char* const envp[]),                  \
    (fd, argv, envp))                                                                              \
  X(own, execveat, execveat, int,                                                                  \
    (int dirfd, const char* path, char* const argv[], char* const envp[], int flags),              \
    (dirfd, path, argv, envp, flags))                                                              \
  X(own, sigaction, sig_action, int,                                                               \
    (int sig, const struct sigaction* act, struct sigaction* old), (sig, act, old))                \
  X(own, signal, sig_signal, sighandler_t, (int sig, sighandler_t handler), (sig, handler))        \
  X(own, bsd_signal, sig_bsd, sighandler_t, (int sig, sighandler_t handler), (sig, handler))       \
  X(own, ssignal, sig_ssignal, sighandler_t, (int sig, sighandler_t handler), (sig, handler))      \
  X(own, sysv_signal, sig_sysv, sighandler_t, (int sig, sighandler_t handler), (sig, handler))     \
  X(own, __sysv_signal, sig_sysv2, sighandler_t, (int sig, sighandler_t handler), (sig, handler))  \
  X(own, sigset, sig_sigset, sighandler_t, (int sig, sighandler_t handler), (sig, handler))
// clang-format on

#endif  // LOWALLOC_SRC_TRACE_HOOKS_HPP
