// The recorder's start (at the first hooked call, or in its constructor if that comes first) and
// the ends of what it traces: a thread's exit, fork (the child traces into a file of its own),
// exec (the image ends) and the process's exit (the other threads' blocks, the last block, END).
#ifndef LOWALLOC_SRC_TRACE_LIFECYCLE_HPP
#define LOWALLOC_SRC_TRACE_LIFECYCLE_HPP

#include <cstdint>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// The process ends: write the blocks of the other threads still running, then this thread's
// and END. The other threads' later events come after the end and are not recorded
// (docs/tracer.md). `signal`, when not 0, ends it (crash.cpp): a CRASH record with the flag
// `ended` (and `deferred`, if so) names it, in thread `tid`, before END. Once: a second call,
// from another thread meanwhile, waits for the first. True when the trace has its end.
bool finish_process(int signal = 0, std::uint64_t tid = 0, bool deferred = false);

// pthread_create is about to start a thread, which may free this one's blocks: no thread keeps
// blocks by ordinal from now on (thread_state.hpp, many_threads).
void before_thread_start();

// A function of glibc's that starts threads of its own without the exported pthread_create (C11's
// thrd_create, SIGEV_THREAD notifications of timers and message queues, POSIX AIO, getaddrinfo_a)
// is about to be called: as before_thread_start, once the process has a second thread.
void before_hidden_thread();

// The program's threads are counted, so that the recorder's writer thread does not keep the
// process alive after them: glibc ends a process when its last thread exits (main may leave by
// pthread_exit before the others end) and counts the writer among them. The last one to exit
// stops the writer, and glibc's exit then runs in it as it would untraced. pthread_create starts
// a program thread through counted_thread_main with the record counted_thread gives (nullptr:
// none could be had; the thread then starts uncounted), or gives it back if the start failed.
struct thread_start;
thread_start* counted_thread(void* (*start)(void*), void* arg);
void* counted_thread_main(void* record);
void thread_not_started(thread_start* record);

// True in the process the recorder traces (not in a vfork child, which shares its memory).
bool traced_process();

// True in the process the recorder traces while it traces it, or will at its first event (a fork
// child).
bool recording_here();

// exec replaces the image: write this thread's events and an EXEC record first.
void before_exec(const char* path);

// An exec hooked returned: it failed, and the program goes on. A block is written at once, so that
// a reader sees the image's EXEC followed by more of its stream even if the process is killed
// before its next block.
void after_failed_exec();

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_LIFECYCLE_HPP
