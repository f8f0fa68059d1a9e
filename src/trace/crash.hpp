// The signals that end the process without its exit, which writes every thread's last block.
// - A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT): the recorder's handler writes the crashing
//   thread's block and a CRASH record naming the threads whose blocks it did not write.
// - A signal sent to end it (SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1,
//   SIGUSR2): the handler finishes the trace as the exit does, with a CRASH record (flag `ended`)
//   before END; a thread inside the recorder first leaves it (release_guard).
// Either then lets the signal do what it would have done. The handlers stand in for SIG_DFL: they
// are installed for the signals the program leaves at their default action, the program is shown
// SIG_DFL when it asks, and one it installs itself replaces the recorder's until it sets SIG_DFL
// again (docs/tracer.md).
#ifndef LOWALLOC_SRC_TRACE_CRASH_HPP
#define LOWALLOC_SRC_TRACE_CRASH_HPP

#include <signal.h>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// Installs the handlers for those signals still at SIG_DFL. Once, at the recorder's start.
void install_signal_handlers();

// sigaction as the program sees it: SIG_DFL where the recorder's handler stands in for it.
int program_sigaction(int sig, const struct sigaction* act, struct sigaction* old);

// signal, bsd_signal, ssignal, sysv_signal, __sysv_signal and sigset (`unblocks`) the same way,
// through `real_signal`.
sighandler_t program_signal(sighandler_t (*real_signal)(int, sighandler_t), int sig,
                            sighandler_t handler, bool unblocks);

// In a fork child: a signal the parent was handling is not the child's.
void signals_fork_child();

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_CRASH_HPP
