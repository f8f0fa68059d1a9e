/* The floor under recording allocations (scripts/recorder-floor.py): a preloaded library that
   interposes the allocation functions as lowalloc's recorder does, without recording anything a
   report could read. What a program pays under it is what any recorder of every event pays
   before it identifies a stack, names a block or writes a trace. LOWALLOC_FLOOR picks how much:

     pass   each call goes to glibc's allocator (__libc_malloc and the others) and is counted
     log    also a raw record per event into a 512 KiB buffer of the thread: 16 bytes an
            allocation (address, size, caller), 8 a free; a full buffer is emptied
     zstd   also each full buffer (and each thread's last, at its exit) compressed by zstd at
            level 1 before it is emptied: the cheapest general-purpose compression of a log

   Forked children keep it; programs started with exec do not (the library takes itself out of
   LD_PRELOAD at start, as `lowalloc run` does without --follow-exec). LOWALLOC_FLOOR_COUNTS=FILE:
   at exit, the process writes "allocations N\nfrees M\n" to FILE (its threads' included, those
   still running at exit not; a forked child its own to FILE.PID), so a test can check that every
   call went through it. glibc only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

extern void* __libc_malloc(size_t);
extern void __libc_free(void*);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);

#define EXPORT __attribute__((visibility("default")))
#define TLS __attribute__((tls_model("initial-exec"))) __thread

enum { buffer_bytes = 512 * 1024, mode_pass = 0, mode_log = 1, mode_zstd = 2 };

static int mode = mode_pass;
static const char* counts_path;
static pid_t start_pid; /* a forked child writes FILE.PID, not FILE */
static pthread_key_t thread_key;
static atomic_ulong exited_allocations, exited_frees;

struct thread_log {
  unsigned char* buffer; /* buffer_bytes; NULL until the thread's first event (log, zstd) */
  size_t pos;
  ZSTD_CCtx* cctx;
  void* compressed;
  size_t compressed_bytes;
};

static TLS unsigned long allocations, frees;
static TLS struct thread_log log_state;
static TLS int inside;     /* set while zstd runs: its own allocations are not counted */
static TLS int registered; /* thread_done will run at the thread's exit */

static void empty_buffer(struct thread_log* l) {
  if (mode == mode_zstd && l->pos > 0) {
    inside = 1;
    if (l->cctx == NULL) {
      l->cctx = ZSTD_createCCtx();
      l->compressed_bytes = ZSTD_compressBound(buffer_bytes);
      l->compressed = __libc_malloc(l->compressed_bytes);
    }
    if (l->cctx != NULL && l->compressed != NULL)
      ZSTD_compressCCtx(l->cctx, l->compressed, l->compressed_bytes, l->buffer, l->pos, 1);
    inside = 0;
  }
  l->pos = 0;
}

/* At a thread's exit: its last buffer, and its counts into the process's. */
static void thread_done(void* arg) {
  struct thread_log* l = arg;
  if (l->buffer != NULL) empty_buffer(l);
  atomic_fetch_add_explicit(&exited_allocations, allocations, memory_order_relaxed);
  atomic_fetch_add_explicit(&exited_frees, frees, memory_order_relaxed);
  allocations = frees = 0;
}

static unsigned char* room(size_t bytes) {
  struct thread_log* l = &log_state;
  if (l->buffer == NULL) {
    void* p = mmap(NULL, buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    l->buffer = p;
  }
  if (l->pos + bytes > buffer_bytes) empty_buffer(l);
  unsigned char* at = l->buffer + l->pos;
  l->pos += bytes;
  return at;
}

static void register_thread(void) {
  registered = 1;
  pthread_setspecific(thread_key, &log_state);
}

static inline void on_alloc(void* p, size_t size, void* caller) {
  if (p == NULL || inside) return;
  if (!registered) register_thread();
  ++allocations;
  if (mode == mode_pass) return;
  unsigned char* at = room(16);
  if (at == NULL) return;
  uint64_t address = (uint64_t)(uintptr_t)p;
  uint32_t words[2] = {(uint32_t)size, (uint32_t)(uintptr_t)caller};
  memcpy(at, &address, 8);
  memcpy(at + 8, words, 8);
}

static inline void on_free(void* p) {
  if (p == NULL || inside) return;
  if (!registered) register_thread();
  ++frees;
  if (mode == mode_pass) return;
  unsigned char* at = room(8);
  if (at == NULL) return;
  uint64_t address = (uint64_t)(uintptr_t)p | 1;
  memcpy(at, &address, 8);
}

EXPORT void* malloc(size_t n) {
  void* p = __libc_malloc(n);
  on_alloc(p, n, __builtin_return_address(0));
  return p;
}

EXPORT void free(void* p) {
  on_free(p);
  __libc_free(p);
}

EXPORT void* calloc(size_t count, size_t n) {
  void* p = __libc_calloc(count, n);
  on_alloc(p, count * n, __builtin_return_address(0));
  return p;
}

EXPORT void* realloc(void* old, size_t n) {
  void* p = __libc_realloc(old, n);
  if (old != NULL && (p != NULL || n == 0)) on_free(old);
  on_alloc(p, n, __builtin_return_address(0));
  return p;
}

EXPORT void* reallocarray(void* old, size_t count, size_t n) {
  if (n != 0 && count > SIZE_MAX / n) {
    errno = ENOMEM;
    return NULL;
  }
  void* p = __libc_realloc(old, count * n);
  if (old != NULL && (p != NULL || count * n == 0)) on_free(old);
  on_alloc(p, count * n, __builtin_return_address(0));
  return p;
}

EXPORT void* memalign(size_t alignment, size_t n) {
  void* p = __libc_memalign(alignment, n);
  on_alloc(p, n, __builtin_return_address(0));
  return p;
}

EXPORT void* aligned_alloc(size_t alignment, size_t n) {
  void* p = __libc_memalign(alignment, n);
  on_alloc(p, n, __builtin_return_address(0));
  return p;
}

EXPORT int posix_memalign(void** out, size_t alignment, size_t n) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, n);
  if (p == NULL) return ENOMEM;
  on_alloc(p, n, __builtin_return_address(0));
  *out = p;
  return 0;
}

EXPORT void* valloc(size_t n) {
  void* p = __libc_memalign((size_t)sysconf(_SC_PAGESIZE), n);
  on_alloc(p, n, __builtin_return_address(0));
  return p;
}

/* A forked child counts and logs its own events only. */
static void in_child(void) {
  allocations = frees = 0;
  atomic_store(&exited_allocations, 0);
  atomic_store(&exited_frees, 0);
  log_state.pos = 0;
}

__attribute__((constructor)) static void start(void) {
  const char* m = getenv("LOWALLOC_FLOOR");
  if (m != NULL && strcmp(m, "log") == 0) mode = mode_log;
  if (m != NULL && strcmp(m, "zstd") == 0) mode = mode_zstd;
  counts_path = getenv("LOWALLOC_FLOOR_COUNTS");
  start_pid = getpid();
  pthread_key_create(&thread_key, thread_done);
  pthread_atfork(NULL, NULL, in_child);
  unsetenv("LD_PRELOAD");
}

__attribute__((destructor)) static void finish(void) {
  if (log_state.buffer != NULL) empty_buffer(&log_state);
  if (counts_path == NULL) return;
  inside = 1;
  unsigned long a = allocations + atomic_load(&exited_allocations);
  unsigned long f = frees + atomic_load(&exited_frees);
  char path[4096];
  if (getpid() == start_pid)
    snprintf(path, sizeof path, "%s", counts_path);
  else
    snprintf(path, sizeof path, "%s.%ld", counts_path, (long)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    char text[128];
    int len = snprintf(text, sizeof text, "allocations %lu\nfrees %lu\n", a, f);
    if (len > 0) {
      ssize_t w = write(fd, text, (size_t)len);
      (void)w;
    }
    close(fd);
  }
  inside = 0;
}
