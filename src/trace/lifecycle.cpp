// Start, fork, exec, thread exit and process exit (lifecycle.hpp).
#include "trace/lifecycle.hpp"

#include "trace/block.hpp"
#include "trace/bootstrap.hpp"
#include "trace/clock.hpp"
#include "trace/config.hpp"
#include "trace/crash.hpp"
#include "trace/modules.hpp"
#include "trace/os.hpp"
#include "trace/sink.hpp"
#include "trace/thread_state.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

// glibc's, declared by no header: an exit handler that belongs to no shared object (atexit would
// tie it to this one, whose handlers have run by the time it is registered).
extern "C" int __cxa_atexit(void (*function)(void*), void* arg, void* dso_handle);

namespace lowalloc::trace {

namespace fmt = lowalloc::trace_format;

namespace {

pid_t traced_pid = 0;  // a vfork child shares our memory and must not touch it

// The program's threads alive, the one that started the recorder included (lifecycle.hpp); each
// has program_key set, whose destructor counts its exit.
std::atomic<long> program_threads{0};
pthread_key_t program_key;

// The program's last thread is exiting: glibc calls exit in it once its destructors are done, and
// what the program's atexit handlers and static destructors do there is recorded in the thread's
// own state, which it keeps (program_key's destructor runs before thread_key's: it was created
// first) and which the exit writes with END.
__thread bool tls_last_thread;

void on_program_thread_exit(void*) {
  if (program_threads.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  tls_last_thread = true;
  const bool guard = tls_guard;
  tls_guard = true;  // the writer's lock: a signal that ends the process waits (crash.cpp)
  stop_writer();
  release_guard(guard);
}

void count_this_thread() { pthread_setspecific(program_key, &program_key); }

}  // namespace

struct thread_start {
  void* (*start)(void*);
  void* arg;
  thread_start* next;
};

namespace {

// Records for the threads being started, from the recorder's own memory (it must not call
// malloc), reused.
pthread_mutex_t starts_mutex = PTHREAD_MUTEX_INITIALIZER;
thread_start* free_starts = nullptr;

void write_process_records(thread_state* t, std::uint64_t flags, pid_t ppid) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  std::size_t need = 64 + 4200;
  for (int i = 0; i < saved_argc; ++i) need += 16 + std::strlen(saved_argv[i]);
  if (need > buffer_bytes / 2) need = buffer_bytes / 2;
  unsigned char* p = record_space(t, need);
  unsigned char* end = t->buffer + buffer_bytes - 16;
  fmt::process_record record{static_cast<std::uint64_t>(getpid()), static_cast<std::uint64_t>(ppid),
                             flags, std::string_view(exe), 0};
  // argv gets at most half the room left after the fields before argc: the record encoded with
  // argc 0 (one byte) shows where they end; then it is encoded with the count.
  const unsigned char* fixed_end = fmt::encode(p, record, 4096) - 1;
  int argc = 0;
  std::size_t budget = static_cast<std::size_t>(end - fixed_end) - 16;
  std::size_t used = 0;
  while (argc < saved_argc && used + std::strlen(saved_argv[argc]) + 10 < budget / 2)
    used += std::strlen(saved_argv[argc++]) + 10;
  record.argc = static_cast<std::uint64_t>(argc);
  p = fmt::encode(p, record, 4096);
  for (int i = 0; i < argc; ++i) p = fmt::put_string(p, saved_argv[i], fmt::max_string_bytes);
  commit(t, p);
  note_process_record(t->stream);
}

namespace {

// The objects whose definitions of allocation functions the dynamic loader binds the program's
// calls to instead of the recorder's (found at the start, for the fork children's files too).
struct shadowing {
  std::uint64_t functions = 0;  // bit i: fmt::shadowed_names[i]
  char path[1024] = {};
};
constexpr std::size_t max_shadowing = 4;
shadowing shadowings[max_shadowing];
std::size_t shadowing_count = 0;

// The symbols looked up for fmt::shadowed_names: operator new(size_t) and operator delete(void*)
// stand for theirs.
constexpr const char* shadowed_symbols[fmt::shadowed_count] = {
    "malloc",        "free",     "calloc", "realloc", "reallocarray", "posix_memalign",
    "aligned_alloc", "memalign", "valloc", "pvalloc", "_Znwm",        "_ZdlPv"};
constexpr unsigned first_operator = 10;

// The global scope's definition of each function the recorder hooks for allocations, against
// the recorder's own: the loader searches the executable before any preloaded object, so an
// executable linked with an allocator of its own (tcmalloc, jemalloc, mimalloc, or its own
// malloc) takes every call to the functions it defines, from its libraries and libc too, and the
// recorder sees none of them. The same goes for operator new and delete (operators.cpp) when
// the executable defines them, but only an allocator's do not call malloc: a program's own that
// counts its allocations does, and is recorded there. So they count as shadowed when the object
// defining them is the one whose malloc the program's calls reach. The trace says so (SHADOWED)
// and so does lowalloc run.
void find_shadowing() {
  const void* self = object_containing(reinterpret_cast<void*>(&find_shadowing));
  // The object whose malloc the program's calls reach: the one after the recorder, unless malloc
  // is shadowed (the first function looked up below).
  const void* allocator = object_containing(dlsym(RTLD_NEXT, "malloc"));
  for (unsigned i = 0; i < fmt::shadowed_count; ++i) {
    void* f = dlsym(RTLD_DEFAULT, shadowed_symbols[i]);
    const char* name = "";
    const void* object = object_containing(f, &name);
    if (object == nullptr || object == self) continue;
    // An executable built without -fPIE that takes a function's address (python3 takes malloc's
    // and free's) exports it undefined, with the address of a PLT entry that jumps to the
    // definition found after it (the recorder's): a call through it is recorded.
    Dl_info info{};
    void* symbol_entry = nullptr;
    if (dladdr1(f, &info, &symbol_entry, RTLD_DL_SYMENT) != 0 && symbol_entry != nullptr &&
        static_cast<const ElfW(Sym)*>(symbol_entry)->st_shndx == SHN_UNDEF)
      continue;
    if (i == 0) allocator = object;
    if (i >= first_operator && object != allocator) continue;
    char path[sizeof shadowings[0].path];
    if (name[0] == 0) {
      // The executable: /proc names its file.
      ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
      path[n > 0 ? n : 0] = 0;
    } else {
      std::snprintf(path, sizeof path, "%s", name);
    }
    std::size_t k = 0;
    while (k < shadowing_count && std::strcmp(shadowings[k].path, path) != 0) ++k;
    if (k == shadowing_count) {
      if (k == max_shadowing) continue;
      std::memcpy(shadowings[k].path, path, sizeof path);
      ++shadowing_count;
    }
    shadowings[k].functions |= std::uint64_t{1} << i;
  }
  // For lowalloc run, which warns: "shadowed PID MASK PATH".
  for (std::size_t k = 0; k < shadowing_count; ++k) {
    char line[sizeof shadowings[0].path + 64];
    std::snprintf(line, sizeof line, "%ld %llu %s", static_cast<long>(getpid()),
                  static_cast<unsigned long long>(shadowings[k].functions), shadowings[k].path);
    manifest("shadowed", line);
  }
}

void write_shadowed_records(thread_state* t) {
  for (std::size_t k = 0; k < shadowing_count; ++k) {
    unsigned char* p = record_space(t, 32 + sizeof shadowings[k].path);
    commit(t, fmt::encode(p,
                          fmt::shadowed_record{shadowings[k].functions,
                                               std::string_view(shadowings[k].path)},
                          sizeof shadowings[k].path));
  }
}

}  // namespace

void write_end_records(thread_state* t) {
  unsigned char* p = record_space(t, 64);
  // A last (ticks, ns) pair: the run time of a program shorter than a tick, and the calibration.
  std::uint64_t ticks = stamp_now();
  p = fmt::encode(p, fmt::time_record{ticks, monotonic_ns()});
  t->clock = ticks > t->clock ? ticks : t->clock;
  std::uint64_t lost = lost_events.load(std::memory_order_relaxed);
  if (lost != 0) p = fmt::encode(p, fmt::lost_record{lost});
  p = fmt::encode(p, fmt::end_record{take_dt(t, stamp_now())});
  commit(t, p);
}

// glibc runs the destructors of a thread's keys in rounds, each in the order the keys were made,
// and runs another round while a destructor sets a value again, up to
// PTHREAD_DESTRUCTOR_ITERATIONS (4) rounds. thread_key was made before any key of the program's,
// so its destructor comes first in a round: setting it again once puts it after theirs, in the
// next round, and what their destructors free (OpenSSL's and glib's per-thread state, any
// pthread_key_create of the program's) is recorded. Once, not to the last round: a thread whose
// first event comes in a destructor of the program's sets the key in the middle of glibc's rounds,
// and no count of its calls can tell which round is the last, after which glibc drops the value
// (and the state with it, never written or released). What a destructor of the program's does in
// a later round of its own is counted as lost.
__thread bool tls_exit_again;

void on_thread_exit(void* state) {
  auto* t = static_cast<thread_state*>(state);
  if (t == nullptr || t != tls_state || tls_last_thread) return;
  if (!tls_exit_again && pthread_setspecific(thread_key, t) == 0) {
    tls_exit_again = true;
    return;
  }
  bool guard = tls_guard;
  tls_guard = true;
  tls_state = nullptr;
  tls_dead = true;
  if (!mark_active(t)) {
    // The process is exiting and its exit writes this thread's block: the state stays for it.
    mark_inactive(t);
    release_guard(guard);
    return;
  }
  flush(t, true);
  wait_for_buffers(t);
  mark_inactive(t);  // nothing left to write: the exiting thread may look at it
  release_thread_state(t);
  release_guard(guard);
}

// Lock order: module_mutex, live_mutex, then the sink's. The recorder's locks are held from here
// to the fork's return, under the guard: a signal that ends the process waits until then
// (crash.cpp), in the parent; in the child, it was the parent's.
__thread bool tls_fork_guard;
// Threads between fork's prepare and the parent's return: they hold the recorder's locks, and
// glibc's fork then takes stdio's and malloc's, which a thread that a signal interrupted may hold.
std::atomic<int> forks_in_progress{0};

void fork_prepare() {
  tls_fork_guard = tls_guard;
  tls_guard = true;
  forks_in_progress.fetch_add(1);
  pthread_mutex_lock(&starts_mutex);
  modules_fork_prepare();
  process_stacks_fork_prepare();
  live_fork_prepare();
  sink_fork_prepare();
}

void fork_parent() {
  sink_fork_parent();
  live_fork_parent();
  process_stacks_fork_parent();
  modules_fork_parent();
  pthread_mutex_unlock(&starts_mutex);
  forks_in_progress.fetch_sub(1);
  release_guard(tls_fork_guard);
}

// A traced fork child's trace is set up at its first event or at its exit, not in the fork
// handler: most children of a build tool or a shell only exec, and the setup (clearing the stack
// tables, reading /proc/self/exe and the modules) cost 0.45 ms of CPU a fork, a third of it in
// the faults that copied the parent's pages only to clear them. Until then `tracing` is off in
// the child, so that nothing else of the recorder runs there.
bool fork_pending = false;
pid_t fork_parent_pid = 0;

// 0: the trace is open, 1: a thread is finishing it (finish_process), 2: it has its end.
std::atomic<int> finish_state{0};

namespace {
// One exec at a time (before_exec, held until the exec fails or the image is gone). Set when an
// exec ended the trace (manifest_trace_closed) and the other threads' blocks: if it fails, the
// trace goes on.
pthread_mutex_t exec_mutex = PTHREAD_MUTEX_INITIALIZER;
__thread bool tls_exec_held;
bool closed_by_exec = false;
bool others_closed_by_exec = false;
}  // namespace

void settle_fork_child() {
  // The child has one thread, this one.
  if (program_threads.load(std::memory_order_relaxed) != 0) {
    program_threads.store(1, std::memory_order_relaxed);
    count_this_thread();
  }
  // (A child that forks before it has settled has a child traced as it would be.)
  if (!tracing.load(std::memory_order_relaxed) && !fork_pending) return;
  fork_parent_pid = traced_pid;
  traced_pid = getpid();
  close_parent_file();
  tracing.store(false, std::memory_order_relaxed);
  if (!follow_fork) return;
  many_threads.store(false, std::memory_order_relaxed);
  fork_pending = true;
}

void fork_child() {
  // A signal deferred before the fork was the parent's; the child's own come after this.
  tls_pending_signal = 0;
  // An exec in another thread of the parent: its lock and its closing of the threads are not the
  // child's (the child recorded nothing while they were set).
  pthread_mutex_init(&exec_mutex, nullptr);
  closed_by_exec = false;
  others_closed_by_exec = false;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  signals_fork_child();
  forks_in_progress.store(0);
  sink_fork_child();
  live_fork_child();
  process_stacks_fork_child();
  modules_fork_child();
  pthread_mutex_unlock(&starts_mutex);
  settle_fork_child();
  release_guard(tls_fork_guard);
}

// The rest of fork_child, in a traced child before its first event or its exit (not in a vfork
// child of it): its file starts afresh, with new streams, the parent's unflushed events dropped
// (the parent writes them), stack ids defined again, every module written again.
bool settle_pending_fork() {
  if (!fork_pending || getpid() != traced_pid) return false;
  const bool guard = tls_guard;
  tls_guard = true;
  fork_pending = false;
  finish_state.store(0);
  prepare_process_barrier();
  process_stacks_clear();
  start_child_file(base_path);
  next_stream.store(1, std::memory_order_relaxed);
  lost_events.store(0, std::memory_order_relaxed);  // the parent's, reported in its own file
  tracing.store(true, std::memory_order_relaxed);
  // Its file comes with its first block; a child that ends first (killed, or by the exit_group
  // system call) would leave no sign of the events it had.
  manifest_trace_forked();
  thread_state* t = tls_state;
  if (t == nullptr && !tls_dead) {
    // A thread that had not recorded anything forked: the child's first block still needs its
    // PROCESS and MODULE records.
    t = create_thread_state();
    tls_state = t;
  }
  if (t != nullptr) {
    t->stream = next_stream.fetch_add(1, std::memory_order_relaxed);
    t->pos = 0;
    t->pending_count = 0;  // the parent's frees, which it records
    t->has_events = false;
    // The child has one thread, and a trace whose ordinals start again.
    t->keeps = true;
    kept_release(t->kept);
    t->alloc_ordinal = 0;
    t->ordinal_base = 0;
    reset_stacks(t->stacks);
    begin_block(t);
    write_thread_record(t);
    write_process_records(t, fmt::process_flag_fork_child, fork_parent_pid);
    write_module_records(t, true);
    write_shadowed_records(t);
  }
  release_guard(guard);
  return true;
}

// 0: not started, 1: starting, 2: started (tracing or not).
std::atomic<int> start_state{0};

// quick_exit runs the handlers at_quick_exit registered, the last registered first, then ends the
// process by glibc's own _exit, which the _exit hook does not see, and runs no atexit handler:
// the recorder's, registered at its start, is the last to run.
void finish_at_quick_exit() { finish_process(); }

// Sets tracing up: the options, the file, the first block. `argv` is null when
// the start is the first hooked call (the command line is then read from /proc). Runs once.
void start_recorder(int argc, char** argv) {
  tls_guard = true;
  if (argv != nullptr)
    save_argv(argc, argv);
  else
    save_argv_from_proc();
  if (!read_config()) {
    release_guard();
    return;  // loaded without `lowalloc run`: do nothing
  }
  std::uint64_t flags = 0;
  if (claim_first_image()) {
    set_trace_path(base_path);
  } else {
    derive_trace_path(base_path);
    flags |= fmt::process_flag_exec;
  }
  if (!follow_exec) stop_exec_inheritance();

  traced_pid = getpid();
  use_tsc = cpu_has_invariant_tsc();
  prepare_process_barrier();
  if (pthread_key_create(&program_key, on_program_thread_exit) == 0) {
    program_threads.store(1, std::memory_order_relaxed);
    count_this_thread();
  }
  pthread_key_create(&thread_key, on_thread_exit);
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  at_quick_exit(finish_at_quick_exit);
  if (!start_compressor()) {
    release_guard();
    return;
  }
  tracing.store(true, std::memory_order_relaxed);
  if (!open_trace_file()) {
    release_guard();
    return;
  }
  find_shadowing();
  thread_state* t = create_thread_state();
  tls_state = t;
  if (t != nullptr) {
    // The first block of the file carries the process and the modules.
    write_process_records(t, flags, getppid());
    write_module_records(t, true);
    write_shadowed_records(t);
  }
  install_signal_handlers();
  release_guard();
}

// Runs start_recorder once, whichever comes first: the constructor or a hooked call. Another
// thread that calls in meanwhile waits for it.
bool start_once(int argc, char** argv) {
  int expected = 0;
  if (start_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    start_recorder(argc, argv);
    start_state.store(2, std::memory_order_release);
  } else {
    while (start_state.load(std::memory_order_acquire) != 2) sched_yield();
  }
  return tracing.load(std::memory_order_relaxed);
}

// The loader runs the initialisers of the program's libraries before this one's: the recorder
// has usually started at their first allocation already.
__attribute__((constructor(101))) void init_recorder(int argc, char** argv, char**) {
  if (!ready()) return;
  start_once(argc, argv);
}

void finish_at_exit(void*) { finish_process(); }

// The destructors of the other shared libraries run after this one (the loader finalises objects
// that do not depend on each other in the reverse of their order, and the recorder's came first),
// and a C++ library's static objects free their memory there: libapt-pkg's 1,333 blocks, which
// the report counted as leaked. So the recorder finishes in an exit handler it registers now, from
// inside the exit handler that runs the destructors: exit runs handlers registered meanwhile
// after it, and then only flushes stdio and ends the process.
__attribute__((destructor(101))) void fini_recorder() {
  if ((tracing.load(std::memory_order_relaxed) || fork_pending) &&
      __cxa_atexit(finish_at_exit, nullptr, nullptr) == 0)
    return;
  finish_process();
}

}  // namespace

bool start_on_first_call() {
  if (LOWALLOC_LIKELY(start_state.load(std::memory_order_acquire) == 2))
    return settle_pending_fork();
  // Before libc has set up the environment (the loader's own first allocations) the options
  // cannot be read yet: those calls are not recorded, and the start waits for a later one.
  if (environ == nullptr) return false;
  return start_once(0, nullptr);
}

bool finish_process(int signal, std::uint64_t tid, bool deferred) {
  settle_pending_fork();  // a fork child that recorded nothing still writes its file
  if (!tracing.load(std::memory_order_relaxed) || getpid() != traced_pid)
    return finish_state.load() == 2;
  if (tls_guard) {
    // _exit from a signal handler that interrupted this thread inside the recorder: its buffer is
    // half written and it may hold a lock. Write nothing; the trace reads as a killed process.
    tracing.store(false, std::memory_order_relaxed);
    manifest_trace_interrupted();
    return false;
  }
  bool guard = tls_guard;
  tls_guard = true;
  int expected = 0;
  if (!finish_state.compare_exchange_strong(expected, 1)) {
    // Another thread finishes the trace: an exit and a signal sent to end the process at once.
    // The exit waits for the signal's handler, which then ends the process, and the other way
    // round; each at most ten seconds.
    const std::uint64_t deadline = monotonic_ns() + 10000000000;
    while (finish_state.load() != 2 && monotonic_ns() < deadline) sched_yield();
    release_guard(guard);
    return finish_state.load() == 2;
  }
  if (signal != 0) {
    // Another thread in fork holds the recorder's locks and may wait for a lock of the C library
    // that this thread holds (stdio's, in fopen): wait for the fork, five seconds at most, else
    // give up and let the signal end the process as a kill does.
    const std::uint64_t deadline = monotonic_ns() + 5000000000;
    while (forks_in_progress.load() != 0 && monotonic_ns() < deadline) sched_yield();
    if (forks_in_progress.load() != 0) {
      release_guard(guard);
      return false;
    }
  }
  thread_state* t = tls_state;
  // A thread past its own exit's flush has no state; it still needs one for END (and CRASH).
  // glibc ends the process in the thread that finishes last, after its keys' destructors: that
  // can be one whose recording ended there, when another thread counted itself last earlier (the
  // program's key destructor woke it).
  if (t == nullptr) {
    t = create_thread_state();
    tls_state = t;
  }
  close_other_threads(t);
  if (t != nullptr) {
    if (signal != 0) {
      unsigned char* p = record_space(t, 64);
      const std::uint64_t flags = fmt::crash_flag_thread_written | fmt::crash_flag_ended |
                                  (deferred ? fmt::crash_flag_deferred : 0);
      p = fmt::encode(p, fmt::crash_record{take_dt(t, stamp_now()),
                                           static_cast<std::uint64_t>(signal), tid, flags, 0});
      commit(t, p);
    }
    write_end_records(t);
    flush(t, false);
  }
  drain_writer();
  if (t != nullptr) manifest_trace_closed();
  tracing.store(false, std::memory_order_relaxed);
  finish_state.store(2);
  release_guard(guard);
  return t != nullptr;
}

bool program_threads_ended() { return program_threads.load(std::memory_order_acquire) == 0; }

bool traced_process() { return getpid() == traced_pid; }

bool recording_here() {
  return traced_process() && (tracing.load(std::memory_order_relaxed) || fork_pending);
}

thread_start* counted_thread(void* (*start)(void*), void* arg) {
  if (program_threads.load(std::memory_order_relaxed) == 0) return nullptr;  // no key
  pthread_mutex_lock(&starts_mutex);
  if (free_starts == nullptr) {
    constexpr std::size_t chunk_bytes = 4096;
    auto* fresh = static_cast<thread_start*>(map_memory(chunk_bytes));
    for (std::size_t i = 0; fresh != nullptr && i < chunk_bytes / sizeof(thread_start); ++i) {
      fresh[i].next = free_starts;
      free_starts = &fresh[i];
    }
  }
  thread_start* r = free_starts;
  if (r != nullptr) free_starts = r->next;
  pthread_mutex_unlock(&starts_mutex);
  if (r == nullptr) return nullptr;
  r->start = start;
  r->arg = arg;
  // Counted before it exists: the count cannot reach 0 between the start and the thread.
  program_threads.fetch_add(1, std::memory_order_relaxed);
  return r;
}

void thread_not_started(thread_start* r) {
  program_threads.fetch_sub(1, std::memory_order_relaxed);
  pthread_mutex_lock(&starts_mutex);
  r->next = free_starts;
  free_starts = r;
  pthread_mutex_unlock(&starts_mutex);
}

void* counted_thread_main(void* record) {
  auto* r = static_cast<thread_start*>(record);
  void* (*start)(void*) = r->start;
  void* arg = r->arg;
  pthread_mutex_lock(&starts_mutex);
  r->next = free_starts;
  free_starts = r;
  pthread_mutex_unlock(&starts_mutex);
  count_this_thread();
  note_thread_stack();
  return start(arg);  // a tail call: the thread's stacks show no frame of the recorder
}

void before_thread_start() {
  many_threads.store(true, std::memory_order_relaxed);
  thread_state* t = enter();
  if (t == nullptr) return;
  if (t->keeps) stop_keeping(t);
  // The new thread finds the stacks of this one in the process's table.
  publish_stacks(t->stacks, t->generation, t->clock);
  // The writer thread starts with the program's second thread. Until then the program's thread
  // compresses its own blocks, and the process stays single-threaded for glibc, which then skips
  // the atomic operations of malloc's arena lock and of uncontended mutexes: a writer thread
  // from the start cost a one-thread program 2 to 4% more CPU (sqlite 3.8%, python3 2.8%).
  start_writer();
  // The block that names the process and its modules goes to the file now, ahead of the new
  // threads' blocks: a write that fails later (a full disk) then leaves a trace that reads
  // (end_stopped), where one of the other threads' blocks alone is none.
  if (process_block_pending(t->stream)) flush(t, false);
  leave(t);
}

void before_hidden_thread() {
  if (!many_threads.load(std::memory_order_relaxed)) before_thread_start();
}

void after_failed_exec() {
  const bool held = tls_exec_held;
  tls_exec_held = false;
  if (!tracing.load(std::memory_order_relaxed) || tls_guard || getpid() != traced_pid) {
    if (held) pthread_mutex_unlock(&exec_mutex);
    return;
  }
  const int error = errno;  // the program reads why the exec failed
  tls_guard = true;
  if (closed_by_exec) {
    closed_by_exec = false;
    manifest_trace_open();
  }
  // (Not once the process's exit has closed the threads meanwhile: their events come after its
  // end.)
  if (others_closed_by_exec) {
    others_closed_by_exec = false;
    if (finish_state.load() == 0) reopen_other_threads();
  }
  if (thread_state* t = tls_state; t != nullptr && mark_active(t)) {
    unsigned char* p = record_space(t, 32);
    const std::uint64_t ticks = stamp_now();
    commit(t,
           fmt::encode(p, fmt::time_record{ticks > t->clock ? ticks : t->clock, monotonic_ns()}));
    flush(t, false);
    mark_inactive(t);
  }
  if (held) pthread_mutex_unlock(&exec_mutex);
  release_guard();
  errno = error;
}

// The exec ends every thread: their blocks are written first, as at an exit, then EXEC. A thread
// that has recorded nothing gets a state for it: without EXEC the trace would read as a killed
// process's. A fork child that recorded nothing writes no file. In a vfork child (it shares our
// memory; fork handlers did not run) nothing is touched. One exec at a time, marked inside an
// event: another thread's exec or exit ends the blocks of every thread but its own, and one that
// was writing its EXEC was written over (two threads that exec'd at once damaged the trace).
void before_exec(const char* path) {
  if (!tracing.load(std::memory_order_relaxed) || tls_guard || getpid() != traced_pid) return;
  tls_guard = true;
  pthread_mutex_lock(&exec_mutex);
  tls_exec_held = true;
  thread_state* t = tls_state;
  if (t == nullptr && !file_pending) {
    t = create_thread_state();
    tls_state = t;
  }
  if (t != nullptr && (!file_pending || t->has_events)) {
    // (Not marked: the process's exit has closed this thread's state, and writes it.)
    if (mark_active(t)) {
      if (many_threads.load(std::memory_order_relaxed)) {
        close_other_threads(t, false);
        others_closed_by_exec = true;
      }
      std::size_t n = path != nullptr ? std::strlen(path) : 0;
      if (n > 4096) n = 4096;
      unsigned char* p = record_space(t, 32 + n);
      commit(t, fmt::encode(p, fmt::exec_record{take_dt(t, stamp_now()), std::string_view(path, n)},
                            4096));
      flush(t, false);
      drain_writer();
      manifest_trace_closed();
      closed_by_exec = true;
    }
    mark_inactive(t);
  } else if (file_pending) {
    // A fork child with no event: no file, and nothing of it is missing (settle_pending_fork said
    // "open" at its first hooked call).
    manifest_trace_closed();
  }
  release_guard();
}

}  // namespace lowalloc::trace
