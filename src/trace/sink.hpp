// Where the blocks go: the trace file (its name, its header, the manifest line that names it),
// zstd compression, and the writer thread that compresses and appends the blocks threads hand
// over, so that the program's threads spend no time in zstd. A thread calls flush() once per
// block (512 KiB of events, or a quarter second): the only locks of the recorder's event path.
#ifndef LOWALLOC_SRC_TRACE_SINK_HPP
#define LOWALLOC_SRC_TRACE_SINK_HPP

#include <cstddef>
#include <cstdint>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

struct thread_state;

// A line "KIND TEXT" for lowalloc run, in its manifest file (none without lowalloc run).
void manifest(const char* kind, const char* text);

// A line "WORD N1 N2..." of numbers in decimal, `count` of them (at most 8). Safe in a signal
// handler: the crash handler writes its lines with it.
void manifest_numbers(const char* word, const std::uint64_t* fields, std::size_t count);

// Whether this process's trace has its end, for lowalloc run: "open PID" once the trace can be
// written to (its file created, or an exec that failed brought it back), "closed PID" once it has
// its END or EXEC. A process whose last line is "open" left without the recorder seeing it go:
// by the exit_group system call, as Go's runtime leaves, or killed.
void manifest_trace_open();
void manifest_trace_closed();
// "forked PID": a fork child is traced, its file not yet made (it comes with the child's first
// block). A process whose last line is this one left, or still runs, with none of its events in a
// file.
void manifest_trace_forked();
// "interrupted PID": the process ends in a signal handler that interrupted the recorder, which
// then writes nothing more (lifecycle.cpp, finish_process).
void manifest_trace_interrupted();
// "stopped PID REMOVED": this process's trace could not be written any more (after its "error"
// line); REMOVED 1: its file held no whole block, and the recorder removed it.
void manifest_trace_stopped(bool removed);

// The file of this image: `path` itself, or `base.PID` (`base.PID.K` if that exists: an exec'd
// image keeps its pid).
void set_trace_path(const char* path);
void derive_trace_path(const char* base);

// Sets up the compression context; false (with a message) when it cannot.
bool start_compressor();

// Opens the trace file and writes its header; false (tracing stopped, with a message) on error.
bool open_trace_file();

// A fork child's file is created at its first block, so that a child that only execs writes none.
extern bool file_pending;

// Starts the writer thread, once; without it, threads compress their own blocks. The recorder
// starts it with the program's second thread (before_thread_start).
void start_writer();

// Stops the writer thread once every block handed over is written, and waits until it has exited;
// threads then compress their own blocks. Called by the program's last thread as it exits
// (lifecycle.cpp): glibc ends the process when its last thread exits, and counts the writer.
void stop_writer();

// Ends the thread's current block: hands it to the writer (or writes it), then begins the next
// one in the thread's other buffer unless `final_block`.
void flush(thread_state* t, bool final_block);

// The PROCESS record (and the MODULE records after it) went into the current block of `stream`:
// a file without that block whole is no trace (end_stopped).
void note_process_record(std::uint32_t stream);
// Whether that block is `stream`'s and not written whole yet.
bool process_block_pending(std::uint32_t stream);

// From the writer thread, for a thread held outside its events (write_idle_blocks): ends its
// block, writes it and begins the next. Nothing is done while one of its blocks is still with
// the writer (the writer would wait for itself); false then.
bool write_idle_block(thread_state* t);

// Waits until neither of the thread's buffers is still being written (before unmapping them).
void wait_for_buffers(thread_state* t);

// Waits until every block handed over is in the file.
void drain_writer();

// From the crash handler (crash.cpp), async-signal-safe and bounded by `deadline_ns`
// (monotonic_ns()): waits until the blocks handed to the writer before the call are written and
// neither of `t`'s buffers (t may be null) is with the writer, then takes the file's lock without
// blocking. False if the lock was not free by the deadline; `late` is set when the writer had not
// written the earlier blocks by then.
bool crash_take_file(thread_state* t, std::uint64_t deadline_ns, bool* late);
// With the lock taken: appends `size` raw bytes as a block of `stream`, stored uncompressed (a
// zstd frame of raw blocks: zstd's context may be in use, and it allocates).
void crash_write_block(const unsigned char* data, std::size_t size, std::uint32_t stream);
void crash_release_file();

// Around fork: the sink's locks are held across it; the child gets fresh ones, no writer thread
// (it compresses in its own threads) and, if it is traced, a file of its own.
void sink_fork_prepare();
void sink_fork_parent();
void sink_fork_child();
void close_parent_file();
void start_child_file(const char* base);

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_SINK_HPP
