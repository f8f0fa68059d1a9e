// The trace file, compression and the writer thread (sink.hpp).
#include "trace/sink.hpp"

#include "trace/block.hpp"
#include "trace/clock.hpp"
#include "trace/config.hpp"
#include "trace/format.hpp"
#include "trace/os.hpp"
#include "trace/records.hpp"
#include "trace/thread_state.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace lowalloc::trace {

namespace fmt = lowalloc::trace_format;

bool file_pending = false;

namespace {

int trace_fd = -1;
// The file trace_fd was opened on, and how many bytes were written to it (trace_fd_checked).
dev_t trace_dev = 0;
ino_t trace_ino = 0;
std::uint64_t trace_written = 0;
// The file's length up to the end of its last whole block (or of its header), and the stream of
// the block being written or last written: a write that fails cuts the file back to whole blocks
// and ends it with STOPPED in that stream (end_stopped).
std::uint64_t trace_whole = 0;
std::uint64_t trace_whole_before = 0;  // the end of the whole block before the last one
std::uint32_t trace_stream = 0;
// The stream whose block holds the PROCESS and MODULE records, and the end of that block in the
// file once it is written whole (0 until then): without them a file is no trace.
std::uint32_t process_stream = 0;
std::uint64_t process_block_end = 0;

// A block of `stream` is now whole in the file, up to trace_written.
void block_whole(std::uint32_t stream) {
  trace_whole_before = trace_whole;
  trace_whole = trace_written;
  if (stream == process_stream && process_block_end == 0) process_block_end = trace_written;
}
pthread_mutex_t file_mutex = PTHREAD_MUTEX_INITIALIZER;  // compression context and writes
ZSTD_CCtx* cctx = nullptr;
unsigned char* compress_buffer = nullptr;
std::size_t compress_capacity = 0;
char trace_path[4096];
bool path_too_long = false;  // trace_path is cut: no file is opened

// The last block written of up to prefix_slots streams, or its end. A stream's next block is
// compressed with it as a zstd prefix: a program's blocks repeat one another (the same stacks,
// sizes and runs of events), which a block compressed alone cannot use (a clang++ compile: 11.3 MB
// of trace instead of 13.4 MB). A reader decompresses with the whole previous block: zstd refers
// back only as far as the prefix the compressor was given, and this is the end of that block.
// zstd hashes a prefix into its tables before it compresses, which doubled the cost of
// compressing a block that compresses well. So the prefix is the whole block only where that
// pays:
// - a block of at most 64 KiB (the block-local table ended it: a program that keeps many of its
//   allocations) repeats the one before it as a whole (python3 building a dict: 38 KB blocks that
//   compress to 100 bytes against the whole block, to 2 kB against its last 8 KiB);
// - a block that compressed to an eighth of its size or more is mostly new (a compiler's new
//   stacks) and finds its repeats far back (a g++ compile: 5.5 MB of trace against whole blocks,
//   6.9 MB against their last 8 KiB, 6.0 MB by these rules), where the prefix's hashing is a
//   small part of the cost;
// - of any other, the last 8 KiB: offline, the blocks of deep-churn took 48 M instructions to
//   compress instead of 192 M, 10.3 kB either way; those of sqlite3 inserting 89 M instead of
//   168 M, 228.2 kB against 227.8 kB; of the string workload 116 M instead of 151 M.
// A stream without a slot (more than 16 threads writing in turn) takes one round robin; its block
// is then compressed alone. Under file_mutex.
//
// A whole block is its stream's prefix where it lies, not copied, while no writer thread has
// started: the thread that wrote it goes on in its other buffer (flush), and no one else
// compresses that stream's next block. perl's blocks compress to an eighth of their size or more
// and were copied whole, 8% of the first-level misses the recorder added to it (cachegrind). The
// writer's start copies such prefixes into their slots first (own_prefixes): from then on a
// thread goes on in the buffer that held its prefix while the writer compresses the next block.
constexpr std::size_t prefix_slots = 16;
constexpr std::size_t prefix_bytes = buffer_bytes + trailer_bytes;  // the largest block
constexpr std::size_t prefix_small = 64 * 1024;  // a block kept whole whatever it compressed to
constexpr std::size_t prefix_tail = 8 * 1024;    // what is kept of a block that compressed well
struct prefix_slot {
  std::uint32_t stream;  // 0: free
  std::size_t size;
  const unsigned char* at;  // its slot's memory, or the block where it lies (prefixes_in_place)
};
prefix_slot prefixes[prefix_slots];
unsigned char* prefix_memory = nullptr;  // prefix_slots * prefix_bytes, touched as slots fill
std::size_t prefix_next = 0;
bool prefixes_in_place = true;  // until the writer thread starts (own_prefixes)

std::size_t prefix_slot_of(std::uint32_t stream) {
  for (std::size_t k = 0; k < prefix_slots; ++k)
    if (prefixes[k].stream == stream) return k;
  return prefix_slots;
}

// How much of a block of `size` bytes that compressed to `compressed` the next one's prefix is.
std::size_t prefix_of(std::size_t size, std::size_t compressed) {
  if (size <= prefix_small || compressed * 8 >= size) return size;
  return prefix_tail;
}

// `data` is now the last block of `stream` in the file: it, or its end, is the stream's prefix.
// With `stays` (the block is not written over before the stream's next one is compressed), a
// whole block is not copied; returns whether it was not.
bool remember_block(std::size_t slot, const unsigned char* data, std::size_t size,
                    std::size_t compressed, std::uint32_t stream, bool stays) {
  if (prefix_memory == nullptr) return false;
  if (slot == prefix_slots) slot = prefix_next++ % prefix_slots;
  if (size > prefix_bytes) {
    prefixes[slot].stream = 0;
    return false;
  }
  const std::size_t kept = prefix_of(size, compressed);
  if (stays && prefixes_in_place && kept == size) {
    prefixes[slot] = prefix_slot{stream, kept, data};
    return true;
  }
  unsigned char* own = prefix_memory + slot * prefix_bytes;
  std::memcpy(own, data + (size - kept), kept);
  prefixes[slot] = prefix_slot{stream, kept, own};
  return false;
}

// Copies the prefixes that lie in their blocks into their slots, for good: the writer thread
// is about to start (under file_mutex).
void own_prefixes() {
  prefixes_in_place = false;
  for (std::size_t k = 0; k < prefix_slots; ++k) {
    prefix_slot& p = prefixes[k];
    unsigned char* own = prefix_memory + k * prefix_bytes;
    if (p.stream == 0 || p.at == own) continue;
    std::memcpy(own, p.at, p.size);
    p.at = own;
  }
}

// Whether `fd` is open on the trace file.
bool is_trace_file(int fd) {
  struct stat st;
  return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == trace_dev && st.st_ino == trace_ino;
}

// Moves `fd` to a number of 700 or more, out of the way of the program's own descriptors: a
// program that closes the low ones and opens files of its own must not receive ours.
int high_descriptor(int fd) {
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 700);
  if (high < 0) return fd;
  close(fd);
  return high;
}

// Closes trace_fd if it is still the trace's: the program may have closed it and opened a file
// of its own under its number, which must stay open.
void release_trace_fd() {
  if (is_trace_file(trace_fd)) close(trace_fd);
  trace_fd = -1;
}

void put_u32(unsigned char* p, std::uint32_t v) {
  p[0] = static_cast<unsigned char>(v);
  p[1] = static_cast<unsigned char>(v >> 8);
  p[2] = static_cast<unsigned char>(v >> 16);
  p[3] = static_cast<unsigned char>(v >> 24);
}

// A block stored without compression: its header, then a zstd frame (RFC 8878) of `pieces` raw
// blocks holding `size` bytes: magic, a descriptor for a single segment with a 4-byte content
// size, then each raw block under a 3-byte header (raw_piece_head).
constexpr std::size_t raw_head_size = fmt::block_header_size + 9;
constexpr std::size_t max_raw_piece = 128 * 1024;

void raw_head(unsigned char* head, std::size_t size, std::size_t pieces, std::uint32_t stream) {
  put_u32(head, fmt::block_magic);
  put_u32(head + 4, static_cast<std::uint32_t>(9 + pieces * 3 + size));
  put_u32(head + 8, static_cast<std::uint32_t>(size));
  put_u32(head + 12, stream);
  put_u32(head + 16, 0xFD2FB528u);
  head[20] = 0xA0;  // content size in 4 bytes, single segment, no checksum, no dictionary
  put_u32(head + 21, static_cast<std::uint32_t>(size));
}

void raw_piece_head(unsigned char* p, std::size_t n, bool last) {
  const std::uint32_t block = (last ? 1u : 0u) | static_cast<std::uint32_t>(n) << 3;
  p[0] = static_cast<unsigned char>(block);
  p[1] = static_cast<unsigned char>(block >> 8);
  p[2] = static_cast<unsigned char>(block >> 16);
}

// A write of the trace failed (a full disk, a file size limit, an I/O error): the file is cut
// back to its last whole block, where a reader would otherwise find a block cut short and call
// the trace damaged, and ends with a STOPPED record that says when and why, in the stream of the
// block that failed. The cut frees at least the STOPPED block's room on a full disk; a write
// that fails even so is cut off too, and the file ends as a killed process's does. A file with
// no whole block holds no event: it is removed (a build under --follow-exec on a full disk would
// leave one per process), and true returned.
bool end_stopped(const char* why) {
  struct stat st;
  if (trace_fd < 0 || fstat(trace_fd, &st) != 0 || st.st_dev != trace_dev ||
      st.st_ino != trace_ino || st.st_nlink == 0)
    return false;
  if (process_block_end == 0 || trace_whole <= fmt::file_header_size || trace_stream == 0) {
    unlink(trace_path);
    return true;
  }
  unsigned char block[raw_head_size + 3 + 512];
  unsigned char* payload = block + raw_head_size + 3;
  unsigned char* p = payload;
  p = fmt::encode(p, fmt::time_record{stamp_now(), monotonic_ns()});
  p = fmt::encode(p, fmt::stopped_record{0, why}, 300);
  p = fmt::encode_ticks(p, nullptr, nullptr, 0);
  const auto size = static_cast<std::size_t>(p - payload);
  raw_head(block, size, 1, trace_stream);
  raw_piece_head(block + raw_head_size, size, true);
  const std::size_t total = raw_head_size + 3 + size;
  // At the end of the last whole block; where the cut freed too little room for STOPPED (a file
  // size limit a few bytes past it), at the end of the one before, if that keeps the PROCESS
  // record's block.
  for (const std::uint64_t at : {trace_whole, trace_whole_before}) {
    if (at < process_block_end || ftruncate(trace_fd, static_cast<off_t>(at)) != 0) break;
    trace_written = trace_whole = at;
    ssize_t w;
    do w = pwrite(trace_fd, block, total, static_cast<off_t>(at));
    while (w < 0 && errno == EINTR);
    if (w == static_cast<ssize_t>(total)) {
      trace_written = trace_whole = at + total;
      return false;
    }
    if (w > 0 && ftruncate(trace_fd, static_cast<off_t>(at)) != 0) {
      trace_written += static_cast<std::uint64_t>(w);
      break;
    }
  }
  return false;
}

void stop_tracing(const char* why) {
  tracing.store(false, std::memory_order_relaxed);
  char text[4200];
  std::snprintf(text, sizeof text, "cannot write the trace to %s: %s; the program runs on untraced",
                trace_path, why);
  say(text);
  manifest("error", text);
  manifest_trace_stopped(end_stopped(why));
  release_trace_fd();
}

// Before a write: trace_fd still names the trace file, else the file is opened again. A program
// may close every descriptor it did not open itself (closefrom, close_range: ssh, sudo, a daemon
// going to the background, a fork child before exec) and may then open files of its own, one of
// which can get trace_fd's number: writing there would lose the trace and damage the program's
// file. So the descriptor is checked against the file it was opened on (one fstat a block), and
// when it is not that file any more, the trace is opened again by its path and the writes go on
// where they stopped; the old number, the program's now, is left alone.
//
// A file removed while the program runs (a clean-up of the directory) still takes the writes of
// the descriptor, where no name reaches them: the recorder stops and says so, as for a failed
// write, instead of losing the rest without a word.
bool trace_fd_checked() {
  struct stat st;
  if (trace_fd >= 0 && fstat(trace_fd, &st) == 0 && st.st_dev == trace_dev &&
      st.st_ino == trace_ino) {
    if (st.st_nlink != 0) return true;
    stop_tracing("the file was removed while the program ran");
    return false;
  }
  trace_fd = -1;
  int fd = open(trace_path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    char why[300];
    std::snprintf(why, sizeof why,
                  "the program closed its descriptor, and the file cannot be opened again: %s",
                  std::strerror(errno));
    stop_tracing(why);
    return false;
  }
  if (!is_trace_file(fd)) {
    close(fd);
    stop_tracing("the program closed its descriptor, and its path now names another file");
    return false;
  }
  if (lseek(fd, static_cast<off_t>(trace_written), SEEK_SET) < 0) {
    close(fd);
    stop_tracing(std::strerror(errno));
    return false;
  }
  trace_fd = high_descriptor(fd);
  return true;
}

bool write_bytes(const void* data, std::size_t n) {
  auto* p = static_cast<const char*>(data);
  if (n > 0 && !trace_fd_checked()) return false;
  while (n > 0) {
    ssize_t w = ::write(trace_fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      stop_tracing(w < 0 ? std::strerror(errno) : "short write");
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
    trace_written += static_cast<std::uint64_t>(w);
  }
  return true;
}

// Compresses one raw block and appends it to the file. Called with file_mutex held. `stays`: the
// block is not written over before the stream's next one is compressed; returns whether the
// block is now the stream's prefix where it lies (remember_block).
bool write_block(const unsigned char* data, std::size_t size, std::uint32_t stream,
                 bool stays = false) {
  if (file_pending && tracing.load(std::memory_order_relaxed)) {
    // A fork child's first block: create its own file now (a child that only execs writes none).
    file_pending = false;
    open_trace_file();  // the block begins with the child's PROCESS, THREAD and MODULE records
  }
  if (trace_fd < 0 || !tracing.load(std::memory_order_relaxed)) return false;
  const std::size_t slot = prefix_slot_of(stream);
  const bool prefixed = slot != prefix_slots && prefixes[slot].size != 0;
  if (prefixed) ZSTD_CCtx_refPrefix(cctx, prefixes[slot].at, prefixes[slot].size);
  std::size_t n = ZSTD_compress2(cctx, compress_buffer, compress_capacity, data, size);
  if (ZSTD_isError(n)) {
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
    if (slot != prefix_slots) prefixes[slot].stream = 0;  // the next block has no previous one
    lost_events.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  unsigned char header[fmt::block_header_size];
  put_u32(header, fmt::block_magic);
  put_u32(header + 4, static_cast<std::uint32_t>(n));
  put_u32(header + 8, static_cast<std::uint32_t>(size));
  put_u32(header + 12, prefixed ? stream | fmt::stream_prefixed : stream);
  trace_stream = stream;
  if (!trace_fd_checked()) return false;
  iovec parts[2] = {{header, sizeof header}, {compress_buffer, n}};
  ssize_t total = static_cast<ssize_t>(sizeof header + n);
  ssize_t w;
  do w = writev(trace_fd, parts, 2);
  while (w < 0 && errno == EINTR);
  if (w > 0) trace_written += static_cast<std::uint64_t>(w);
  bool whole = w == total;
  if (w < 0) {
    stop_tracing(std::strerror(errno));
  } else if (!whole) {
    // The rest, piece by piece: a write cut short by a file size limit or a full disk then
    // fails with its reason (EFBIG, ENOSPC).
    const auto done = static_cast<std::size_t>(w);
    const std::size_t in_data = done > sizeof header ? done - sizeof header : 0;
    whole = (done >= sizeof header || write_bytes(header + done, sizeof header - done)) &&
            write_bytes(compress_buffer + in_data, n - in_data);
  }
  if (!whole) return false;
  block_whole(stream);
  return remember_block(slot, data, size, n, stream, stays);
}

// The writer thread. Each thread has two buffers: it fills one while the writer writes the
// other. Blocks are written in the order they were handed over, so each stream's blocks stay in
// order. Fork children and processes where the thread cannot start compress in the calling
// thread instead.
struct pending_block {
  const unsigned char* data;
  std::size_t size;
  std::uint32_t stream;
  bool* busy;  // the buffer's flag, cleared (under writer_mutex) once written
};

constexpr std::size_t queue_capacity = 256;
pending_block queue[queue_capacity];
std::size_t queue_head = 0;  // under writer_mutex; head == tail: empty
std::size_t queue_tail = 0;
std::size_t writing = 0;  // blocks taken by the writer and not yet written
pthread_mutex_t writer_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t writer_wake = PTHREAD_COND_INITIALIZER;
pthread_cond_t writer_done = PTHREAD_COND_INITIALIZER;
// Read without the lock by the threads that hand blocks over; set under writer_mutex.
std::atomic<bool> writer_running{false};
bool writer_stop = false;  // under writer_mutex: the writer exits once the queue is empty
pthread_t writer_thread;
bool writer_started = false;  // start_writer() was called (once per process image or fork child)

void* writer_main(void*) {
  tls_guard = true;  // the writer's own allocations (zstd) are not the program's
  std::uint64_t next_scan = monotonic_ns() + idle_scan_ns;
  pthread_mutex_lock(&writer_mutex);
  for (;;) {
    while (queue_head == queue_tail) {
      if (writer_stop) {
        pthread_mutex_unlock(&writer_mutex);
        return nullptr;
      }
      if (idle_scan_ns == 0) {  // (a test's)
        pthread_cond_wait(&writer_wake, &writer_mutex);
        continue;
      }
      const timespec until{static_cast<time_t>(next_scan / 1000000000),
                           static_cast<long>(next_scan % 1000000000)};
      pthread_cond_clockwait(&writer_wake, &writer_mutex, CLOCK_MONOTONIC, &until);
      if (monotonic_ns() >= next_scan && !writer_stop) {
        pthread_mutex_unlock(&writer_mutex);
        write_idle_blocks();
        next_scan = monotonic_ns() + idle_scan_ns;
        pthread_mutex_lock(&writer_mutex);
      }
    }
    pending_block b = queue[queue_head % queue_capacity];
    ++queue_head;
    ++writing;
    pthread_mutex_unlock(&writer_mutex);
    pthread_mutex_lock(&file_mutex);
    write_block(b.data, b.size, b.stream);
    pthread_mutex_unlock(&file_mutex);
    pthread_mutex_lock(&writer_mutex);
    *b.busy = false;
    --writing;
    pthread_cond_broadcast(&writer_done);
  }
  return nullptr;
}

}  // namespace

void manifest(const char* kind, const char* text) {
  if (manifest_path[0] == 0) return;
  int fd = open(manifest_path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  char line[4200];
  int n = std::snprintf(line, sizeof line, "%s %s\n", kind, text);
  if (n > 0)
    write_all(
        fd, line,
        static_cast<std::size_t>(n) < sizeof line ? static_cast<std::size_t>(n) : sizeof line - 1);
  close(fd);
}

void manifest_numbers(const char* word, const std::uint64_t* fields, std::size_t count) {
  if (manifest_path[0] == 0) return;
  char line[16 + 8 * 21];
  char* p = line;
  for (std::size_t i = 0; word[i] != 0 && i < 15; ++i) *p++ = word[i];
  for (std::size_t k = 0; k < count && k < 8; ++k) {
    *p++ = ' ';
    char digits[24];
    int n = 0;
    std::uint64_t v = fields[k];
    do digits[n++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0) *p++ = digits[--n];
  }
  *p++ = '\n';
  int fd = open(manifest_path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  write_all(fd, line, static_cast<std::size_t>(p - line));
  close(fd);
}

void manifest_trace_open() {
  const std::uint64_t pid = static_cast<std::uint64_t>(getpid());
  manifest_numbers("open", &pid, 1);
}

void manifest_trace_closed() {
  const std::uint64_t pid = static_cast<std::uint64_t>(getpid());
  manifest_numbers("closed", &pid, 1);
}

void manifest_trace_stopped(bool removed) {
  const std::uint64_t fields[2] = {static_cast<std::uint64_t>(getpid()), removed ? 1u : 0u};
  manifest_numbers("stopped", fields, 2);
}

void manifest_trace_forked() {
  const std::uint64_t pid = static_cast<std::uint64_t>(getpid());
  manifest_numbers("forked", &pid, 1);
}

void manifest_trace_interrupted() {
  const std::uint64_t pid = static_cast<std::uint64_t>(getpid());
  manifest_numbers("interrupted", &pid, 1);
}

void derive_trace_path(const char* base) {
  char candidate[sizeof trace_path];
  int n = 0;
  for (int k = 0; k < 1000; ++k) {
    if (k == 0)
      n = std::snprintf(candidate, sizeof candidate, "%s.%d", base, static_cast<int>(getpid()));
    else
      n = std::snprintf(candidate, sizeof candidate, "%s.%d.%d", base, static_cast<int>(getpid()),
                        k);
    if (access(candidate, F_OK) != 0) break;
  }
  std::memcpy(trace_path, candidate, sizeof trace_path);
  // Cut, the path could name another file, which the trace would replace: open_trace_file refuses.
  path_too_long = n < 0 || static_cast<std::size_t>(n) >= sizeof trace_path;
}

void set_trace_path(const char* path) {
  const int n = std::snprintf(trace_path, sizeof trace_path, "%s", path);
  path_too_long = n < 0 || static_cast<std::size_t>(n) >= sizeof trace_path;
}

bool start_compressor() {
  cctx = ZSTD_createCCtx();
  // Zstd's fast strategy with parameters of our own, the same for every block: a level picks them
  // by the size of the block and its prefix. Level 2 between 128 and 256 KiB is the double-fast
  // strategy, which, with a prefix, lost the long repeats of a program that repeats one loop
  // (deep-churn's blocks, offline: cut to 64,000 bytes they compressed to 8.6 kB with their
  // prefix, cut to 66,000 bytes to 1.36 MB). Matches of 5 bytes, not level 2's 6 above 256 KiB: a
  // program whose every stack is new repeats runs of 5 (6.7 MB with 6 bytes, 4.0 MB with 5); a
  // window of 2 MiB, that holds a block and its prefix. A hash of 2^14 entries (64 KiB): each block
  // writes over most of the table, and at 2^16 (256 KiB) the program lost that much of its data
  // from a 2 MiB cache at every block (cachegrind, a 2 MiB last level: 12 to 27% fewer of the
  // misses the recorder adds to ninja, python3 and perl with 2^14), for 0.1 to 0.6% smaller
  // traces, 1.2% on a million new stacks and 3.1% on cc1plus (offline, the same blocks).
  static_assert(2 * prefix_bytes <= std::size_t{1} << 21, "a block and its prefix in the window");
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 2);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_strategy, ZSTD_fast);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 21);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, 14);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, 5);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  compress_capacity = ZSTD_compressBound(prefix_bytes);
  compress_buffer = static_cast<unsigned char*>(map_memory(compress_capacity));
  prefix_memory = static_cast<unsigned char*>(map_memory(prefix_slots * prefix_bytes));
  // A fork child compresses into its own buffer and starts its prefixes afresh (sink_fork_child).
  if (compress_buffer != nullptr) wipe_on_fork(compress_buffer, compress_capacity);
  if (prefix_memory != nullptr) wipe_on_fork(prefix_memory, prefix_slots * prefix_bytes);
  if (cctx == nullptr || compress_buffer == nullptr) {
    say("cannot set up the trace compressor; the program runs on untraced");
    return false;
  }
  return true;
}

// Called with file_mutex held (or before threads).
bool open_trace_file() {
  if (path_too_long) {  // (not named: the message would be cut before its reason)
    trace_fd = -1;
    tracing.store(false, std::memory_order_relaxed);
    const char* why =
        "cannot write the trace: its path, with the .PID the recorder adds for this process, is "
        "longer than 4,095 bytes; the program runs on untraced";
    say(why);
    manifest("error", why);
    manifest_trace_stopped(false);
    return false;
  }
  int fd = open(trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    trace_fd = -1;
    stop_tracing(std::strerror(error));
    return false;
  }
  trace_fd = high_descriptor(fd);
  trace_dev = st.st_dev;
  trace_ino = st.st_ino;
  trace_written = 0;
  unsigned char header[fmt::file_header_size] = {};
  std::memcpy(header, fmt::file_magic, 8);
  header[8] = static_cast<unsigned char>(fmt::version & 0xff);
  header[9] = static_cast<unsigned char>(fmt::version >> 8);
  header[10] = static_cast<unsigned char>(fmt::file_header_size & 0xff);
  header[11] = static_cast<unsigned char>(fmt::file_header_size >> 8);
  trace_whole = trace_whole_before = 0;
  trace_stream = 0;
  process_block_end = 0;
  if (!write_bytes(header, sizeof header)) return false;  // (and the file removed: end_stopped)
  trace_whole = trace_whole_before = trace_written;
  manifest("file", trace_path);
  manifest_trace_open();
  return true;
}

void start_writer() {
  if (writer_started) return;
  writer_started = true;
  pthread_mutex_lock(&file_mutex);
  own_prefixes();
  pthread_mutex_unlock(&file_mutex);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // The program's signals must never be delivered to the writer (its handlers would run there,
  // maybe before the writer has set its guard): it starts with every signal blocked.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  writer_running = pthread_create(&writer_thread, &attr, writer_main, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  if (writer_running) pthread_setname_np(writer_thread, "lowalloc-writer");
}

void stop_writer() {
  pthread_mutex_lock(&writer_mutex);
  if (!writer_running) {
    pthread_mutex_unlock(&writer_mutex);
    return;
  }
  writer_running = false;  // a thread that hands a block over from now on writes it itself
  writer_stop = true;
  pthread_cond_broadcast(&writer_wake);
  pthread_mutex_unlock(&writer_mutex);
  // Joined, not only told: glibc's count of the process's threads drops when the writer has
  // exited, and the caller's exit must then be the last.
  pthread_join(writer_thread, nullptr);
}

void drain_writer() {
  if (!writer_running) return;
  pthread_mutex_lock(&writer_mutex);
  while (queue_head != queue_tail || writing != 0) pthread_cond_wait(&writer_done, &writer_mutex);
  pthread_mutex_unlock(&writer_mutex);
}

namespace {

// Queues the thread's block for the writer and goes on in its other buffer; false when the writer
// is not running (or stopped meanwhile).
bool hand_to_writer(thread_state* t) {
  const int idx = t->buffer == t->buffers[0] ? 0 : 1;
  pthread_mutex_lock(&writer_mutex);
  if (!writer_running) {
    pthread_mutex_unlock(&writer_mutex);
    return false;
  }
  while (queue_tail - queue_head == queue_capacity) pthread_cond_wait(&writer_done, &writer_mutex);
  t->busy[idx] = true;
  queue[queue_tail % queue_capacity] = pending_block{t->buffer, t->pos, t->stream, &t->busy[idx]};
  ++queue_tail;
  pthread_cond_signal(&writer_wake);
  while (t->busy[1 - idx]) pthread_cond_wait(&writer_done, &writer_mutex);
  pthread_mutex_unlock(&writer_mutex);
  t->buffer = t->buffers[1 - idx];
  return true;
}

}  // namespace

void flush(thread_state* t, bool final_block) {
  if (t->pos == 0) return;
  end_block(t);
  // A state's last block is written by the thread that ends it, which would otherwise wait for
  // the writer thread to write it: waking the writer and waiting cost a thread that exits two
  // context switches.
  if (final_block || !writer_running || !hand_to_writer(t)) {
    // The thread writes its own block, after those it handed over (a writer stopped since may
    // still be writing them). Past a file size limit the write must fail (EFBIG) and stop the
    // trace, not kill the program with SIGXFSZ, which the writer thread has blocked.
    wait_for_buffers(t);
    sigset_t xfsz, old;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    pthread_mutex_lock(&file_mutex);
    // Without a writer thread, the block stays as the stream's prefix while the thread goes on
    // in its other buffer (free: wait_for_buffers).
    const bool stays = !final_block && !writer_running.load(std::memory_order_relaxed);
    if (write_block(t->buffer, t->pos, t->stream, stays))
      t->buffer = t->buffer == t->buffers[0] ? t->buffers[1] : t->buffers[0];
    pthread_mutex_unlock(&file_mutex);
    if (!tracing.load(std::memory_order_relaxed) && !sigismember(&old, SIGXFSZ)) {
      // The failed write's SIGXFSZ is pending on this thread: take it before the mask comes back.
      timespec zero{};
      while (sigtimedwait(&xfsz, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  t->pos = 0;
  if (final_block) return;
  begin_block(t);
  // Another thread has started since (without pthread_create, which stops keeping at once).
  if (LOWALLOC_UNLIKELY(t->keeps && many_threads.load(std::memory_order_relaxed))) stop_keeping(t);
  // ...and may name this thread's stacks by their ids from now on. (Not at exit: a thread that
  // did not leave the recorder in time may hold the table's lock.)
  if (LOWALLOC_UNLIKELY(t->stacks.published_epoch == 0 &&
                        many_threads.load(std::memory_order_relaxed) &&
                        !closing.load(std::memory_order_relaxed)))
    publish_stacks(t->stacks, t->generation, t->clock);
}

void note_process_record(std::uint32_t stream) { process_stream = stream; }

bool process_block_pending(std::uint32_t stream) {
  return stream == process_stream && __atomic_load_n(&process_block_end, __ATOMIC_ACQUIRE) == 0;
}

bool write_idle_block(thread_state* t) {
  if (t->pos == 0) return false;
  // Ended and queued as hand_to_writer does, without waiting: the writer is the caller, and
  // writes it once the round is over, the thread given back by then. A thread is held for its
  // block's end and the next one's beginning, not for the compression and the write.
  pthread_mutex_lock(&writer_mutex);
  const bool room = writer_running.load(std::memory_order_relaxed) && !t->busy[0] && !t->busy[1] &&
                    queue_tail - queue_head < queue_capacity;
  if (room) {
    end_block(t);
    const int idx = t->buffer == t->buffers[0] ? 0 : 1;
    t->busy[idx] = true;
    queue[queue_tail % queue_capacity] = pending_block{t->buffer, t->pos, t->stream, &t->busy[idx]};
    ++queue_tail;
    t->buffer = t->buffers[1 - idx];
  }
  pthread_mutex_unlock(&writer_mutex);
  if (!room) return false;
  t->pos = 0;
  begin_block(t);
  return true;
}

void wait_for_buffers(thread_state* t) {
  pthread_mutex_lock(&writer_mutex);
  while (t->busy[0] || t->busy[1]) pthread_cond_wait(&writer_done, &writer_mutex);
  pthread_mutex_unlock(&writer_mutex);
}

bool crash_take_file(thread_state* t, std::uint64_t deadline_ns, bool* late) {
  // The writer takes blocks in order, one at a time: once it has taken the block after the last
  // one handed over before now, or is idle past it, those are in the file.
  if (writer_running) {
    const std::size_t tail = __atomic_load_n(&queue_tail, __ATOMIC_ACQUIRE);
    for (;;) {
      const std::size_t head = __atomic_load_n(&queue_head, __ATOMIC_ACQUIRE);
      const bool written =
          head > tail || (head == tail && __atomic_load_n(&writing, __ATOMIC_ACQUIRE) == 0);
      // (Nor while the writer thread ends this thread's block for it: write_idle_blocks.)
      const bool mine_free = t == nullptr || (!__atomic_load_n(&t->busy[0], __ATOMIC_ACQUIRE) &&
                                              !__atomic_load_n(&t->busy[1], __ATOMIC_ACQUIRE) &&
                                              !t->taken.load(std::memory_order_acquire));
      if (written && mine_free) break;
      if (monotonic_ns() > deadline_ns) {
        *late = true;
        break;
      }
      sched_yield();
    }
  }
  while (pthread_mutex_trylock(&file_mutex) != 0) {
    if (monotonic_ns() > deadline_ns) return false;
    sched_yield();
  }
  return true;
}

void crash_write_block(const unsigned char* data, std::size_t size, std::uint32_t stream) {
  if (file_pending && tracing.load(std::memory_order_relaxed)) {
    file_pending = false;
    open_trace_file();
  }
  if (trace_fd < 0) return;
  // Stored alone: a later block of the stream (none is expected) would have no prefix.
  const std::size_t slot = prefix_slot_of(stream);
  if (slot != prefix_slots) prefixes[slot].stream = 0;
  const std::size_t pieces = size == 0 ? 1 : (size + max_raw_piece - 1) / max_raw_piece;
  unsigned char head[raw_head_size];
  raw_head(head, size, pieces, stream);
  trace_stream = stream;
  if (!write_bytes(head, sizeof head)) return;
  std::size_t done = 0;
  for (std::size_t k = 0; k < pieces; ++k) {
    const std::size_t n = size - done < max_raw_piece ? size - done : max_raw_piece;
    unsigned char piece_head[3];
    raw_piece_head(piece_head, n, k + 1 == pieces);
    if (!write_bytes(piece_head, 3) || (n != 0 && !write_bytes(data + done, n))) return;
    done += n;
  }
  block_whole(stream);
}

void crash_release_file() { pthread_mutex_unlock(&file_mutex); }

// Lock order: module_mutex (modules.cpp), writer_mutex, file_mutex (the writer never holds the
// last two at once).
void sink_fork_prepare() {
  pthread_mutex_lock(&writer_mutex);
  pthread_mutex_lock(&file_mutex);
}

void sink_fork_parent() {
  pthread_mutex_unlock(&file_mutex);
  pthread_mutex_unlock(&writer_mutex);
}

void sink_fork_child() {
  pthread_mutex_init(&file_mutex, nullptr);
  pthread_mutex_init(&writer_mutex, nullptr);
  pthread_cond_init(&writer_wake, nullptr);
  pthread_cond_init(&writer_done, nullptr);
  // The writer thread is the parent's: the child compresses in its own threads, and the blocks
  // queued at the fork belong to the parent's file.
  writer_running = false;
  writer_stop = false;
  writer_started = false;  // the child starts its own with its second thread
  queue_head = queue_tail = 0;
  writing = 0;
  // The child's file begins anew: no block of it has a previous one yet.
  for (prefix_slot& p : prefixes) p = prefix_slot{0, 0, nullptr};
  prefixes_in_place = true;
  if (tls_state != nullptr) tls_state->busy[0] = tls_state->busy[1] = false;
}

void close_parent_file() { release_trace_fd(); }

void start_child_file(const char* base) {
  derive_trace_path(base);
  file_pending = true;
}

}  // namespace lowalloc::trace
