// The recorder's start and the ends of what it traces: the constructor that starts tracing, a
// thread's exit, fork (the child traces into a file of its own), exec (the image ends) and the
// process's exit (the last block and END).
#ifndef LOWALLOC_SRC_TRACE_LIFECYCLE_HPP
#define LOWALLOC_SRC_TRACE_LIFECYCLE_HPP

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// The process ends: flush this thread, write END. Other threads still running at this point keep
// their unflushed events (docs/tracer.md); their later events are not recorded.
void finish_process();

// exec replaces the image: write this thread's events and an EXEC record first.
void before_exec(const char* path);

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_LIFECYCLE_HPP
