// A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) ends the process without the exit path that
// writes every thread's last block. The recorder's handler writes the crashing thread's block and
// a CRASH record naming the threads whose blocks it did not write, then lets the signal do what
// it would have done. Installed only for the signals the program leaves at their default action
// when tracing starts; a handler the program installs later replaces it (docs/tracer.md).
#ifndef LOWALLOC_SRC_TRACE_CRASH_HPP
#define LOWALLOC_SRC_TRACE_CRASH_HPP

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// Installs the handler for those signals still at SIG_DFL. Once, at the recorder's start.
void install_crash_handlers();

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_CRASH_HPP
