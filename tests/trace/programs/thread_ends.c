/* Ways a thread or a process ends, or gets a second thread, that the recorder must not miss.
   argv[1] is K, argv[2] the mode:
     keys         two threads each keep K blocks of 40 bytes in a list under a key of their own,
                  whose destructor frees them as the thread ends; main joins them
     main_keys    main keeps K blocks of 40 bytes under a key whose destructor frees them, starts a
                  thread that waits for that destructor, and leaves by pthread_exit
     c11          main makes K blocks of 24 bytes; a thread started by C11's thrd_create frees them
                  and makes K of 40, which main frees after thrd_join
     timer        main makes K blocks of 24 bytes; a SIGEV_THREAD timer's function frees them
     aio          main makes K blocks of 24 bytes; the SIGEV_THREAD notification of an aio_write
                  frees them
     quick        K pairs of malloc(32)/free, K blocks of 48 kept, then quick_exit(0); the
                  program's at_quick_exit handler frees the kept blocks
     quick_thread a thread makes K pairs of malloc(32)/free and is joined; then as `quick`
     quick_fork   a fork child does what `quick` does; the parent waits for it and exits 0
     exec_fails   K pairs of malloc(32)/free, an exec of a program that does not exist, K more
                  pairs, then exit(0)
     exec_fails_killed  K blocks of 32 kept, an exec that fails, then SIGKILL
     exec_kept    K blocks of 32 kept, then an exec of /bin/true
     key_first    main makes K blocks of 64; K threads one after the other each only set one under
                  a key whose destructor frees it (the thread's first event is in that destructor);
                  prints the anonymous mappings that appeared meanwhile
     last_atexit  main makes K blocks of 24 that an atexit handler frees, starts a thread that
                  returns at once and leaves by pthread_exit: the process may end in either thread
     timer_signal a SIGEV_SIGNAL timer, which starts no thread; prints the process's threads
     exec_thread  main keeps K blocks of 32; a thread that allocates nothing execs /bin/true
     exec_thread_fails  K pairs of malloc(32)/free; a thread that allocates nothing execs a
                  program that does not exist and is joined; K more pairs, then exit(0)
     raw_exit     K pairs of malloc(32)/free, K blocks of 32 kept, then the exit_group system
                  call with status 3, as Go's runtime ends a program: no exit handler runs
     raw_exit_fork  a fork child does what `raw_exit` does; the parent waits for it, exits 0
     sequential   K threads one after another, joined each before the next starts: the even ones
                  make 10 pairs of malloc(32)/free in pairs_in_a, the odd ones 10 of malloc(48)/free
                  in pairs_in_b, two call sites at the same depth
     many_stacks  K threads one after another, each allocating from the same 2^11 distinct call
                  stacks (stack_chain.h): each thread's table of stacks grows past its first
     getattr_first  K threads one after another, each reading its own attributes
                  (pthread_getattr_np, which reallocs with the thread's lock held) before it
                  makes one malloc(100)/free, as a JVM's threads and Rust's do
     fork_during_exec  a thread execs a program that does not exist, over and over, while main
                  forks K children one after another, each making 100 blocks of 32 and exiting
     two_execs    two threads each exec a program that does not exist K times, while two others
                  make malloc(24)/free pairs until they are done
     killed_fork  a fork child makes K pairs of malloc(32)/free and keeps K blocks of 32, then
                  kills itself (SIGKILL) before it has written a block; the parent waits, exits 0
     killed_fork_orphan  as killed_fork, but the parent does not wait: it exits 0 once the
                  child is a zombie, which lowalloc run then finds unreaped
     killed_fork_written  as killed_fork, with 300,000 pairs first: the child has written a
                  block when it kills itself
     child_abort  a fork child makes 10 blocks of 32, then abort(); the parent exits 0
     child_probe_exec  a fork child's only call is a malloc that fails, then it execs /bin/true */
#define _GNU_SOURCE
#include <aio.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "stack_chain.h"

struct node {
  struct node* next;
  char payload[32];
};

static long k;
static void** blocks;
static sem_t done;

/* K nodes of 40 bytes, the first made first in the list. */
static struct node* make_list(long n) {
  struct node* head = NULL;
  struct node** tail = &head;
  for (long i = 0; i < n; ++i) {
    struct node* e = malloc(sizeof *e);
    e->next = NULL;
    *tail = e;
    tail = &e->next;
  }
  return head;
}

static void free_list(void* list) {
  for (struct node* e = list; e != NULL;) {
    struct node* next = e->next;
    free(e);
    e = next;
  }
}

static void free_list_and_post(void* list) {
  free_list(list);
  sem_post(&done);
}

static pthread_key_t list_key;

static void* keep_under_key(void* arg) {
  (void)arg;
  if (k > 0) pthread_setspecific(list_key, make_list(k));
  return NULL;
}

static void* wait_for_main(void* arg) {
  (void)arg;
  if (k > 0) sem_wait(&done);
  return NULL;
}

static void make_blocks(size_t size) {
  blocks = k > 0 ? malloc(k * sizeof *blocks) : NULL;
  for (long i = 0; i < k; ++i) blocks[i] = malloc(size);
}

static void free_blocks(void) {
  for (long i = 0; i < k; ++i) free(blocks[i]);
  free(blocks);
}

static int c11_thread(void* arg) {
  (void)arg;
  for (long i = 0; i < k; ++i) {
    free(blocks[i]);
    blocks[i] = malloc(40);
  }
  return 0;
}

static void notified(union sigval v) {
  (void)v;
  free_blocks();
  sem_post(&done);
}

static void free_kept(void) { free_blocks(); }

static void quick(void) {
  malloc_free_pairs(k, 32);
  make_blocks(48);
  at_quick_exit(free_kept);
  quick_exit(0);
}

static void* pairs(void* arg) {
  (void)arg;
  malloc_free_pairs(k, 32);
  return NULL;
}

static void free_one(void* block) { free(block); }

static void* set_under_key(void* block) {
  pthread_setspecific(list_key, block);
  return NULL;
}

static void* return_at_once(void* arg) { return arg; }

static void* exec_path(void* path) {
  char* args[] = {"true", NULL};
  execv(path, args);
  return NULL;
}

__attribute__((noinline)) static void pairs_in_a(void) { malloc_free_pairs(10, 32); }
__attribute__((noinline)) static void pairs_in_b(void) { malloc_free_pairs(10, 48); }

static void* one_of_two_sites(void* odd) {
  if (odd != NULL)
    pairs_in_b();
  else
    pairs_in_a();
  return NULL;
}

static void* chains(void* arg) {
  (void)arg;
  for (unsigned i = 0; i < 1u << 11; ++i) chain(i, 11);
  return NULL;
}

static void* getattr_first(void* arg) {
  (void)arg;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) pthread_attr_destroy(&attr);
  malloc_free_pairs(1, 100);
  return NULL;
}

static atomic_int execs_stop;

/* Execs of a program that does not exist: K of them, or until execs_stop with K < 0. */
static void* failing_execs(void* arg) {
  const long n = *(const long*)arg;
  char* args[] = {"lowalloc-no-such-program", NULL};
  for (long i = 0; n < 0 ? !atomic_load(&execs_stop) : i < n; ++i) {
    void* p = malloc(40);
    escape(p);
    execv("/nonexistent/lowalloc-no-such-program", args);
    free(p);
  }
  return NULL;
}

static void* pairs_until_stopped(void* arg) {
  (void)arg;
  while (!atomic_load(&execs_stop)) malloc_free_pairs(1, 24);
  return NULL;
}

static void raw_exit(void) {
  malloc_free_pairs(k, 32);
  make_blocks(32);
  syscall(SYS_exit_group, 3);
}

/* Whether `child` became a zombie within 10 s: it ended, and no one has reaped it. */
static int wait_for_zombie(pid_t child) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)child);
  for (int i = 0; i < 10000; ++i) {
    FILE* f = fopen(path, "r");
    if (f == NULL) return 0;
    char line[512];
    const char* got = fgets(line, sizeof line, f);
    fclose(f);
    const char* close = got != NULL ? strrchr(line, ')') : NULL;
    if (close != NULL && close[1] == ' ' && close[2] == 'Z') return 1;
    usleep(1000);
  }
  return 0;
}

/* Anonymous read-write mappings of the process. */
static long anonymous_mappings(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return -1;
  char line[512];
  long n = 0;
  while (fgets(line, sizeof line, maps) != NULL)
    n += strstr(line, " rw-p 00000000 00:00 0") != NULL;
  fclose(maps);
  return n;
}

static long threads_of_process(void) {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == NULL) return -1;
  long n = 0;
  for (struct dirent* e; (e = readdir(tasks)) != NULL;) n += e->d_name[0] != '.';
  closedir(tasks);
  return n;
}

int main(int argc, char** argv) {
  k = iterations(argc, argv);
  const char* mode = argc > 2 ? argv[2] : "";
  sem_init(&done, 0, 0);
  if (strcmp(mode, "keys") == 0) {
    if (pthread_key_create(&list_key, free_list) != 0) return 1;
    pthread_t threads[2];
    for (int i = 0; i < 2; ++i)
      if (pthread_create(&threads[i], NULL, keep_under_key, NULL) != 0) return 1;
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
    return 0;
  }
  if (strcmp(mode, "main_keys") == 0) {
    if (pthread_key_create(&list_key, free_list_and_post) != 0) return 1;
    if (k > 0) pthread_setspecific(list_key, make_list(k));
    pthread_t thread;
    if (pthread_create(&thread, NULL, wait_for_main, NULL) != 0) return 1;
    pthread_exit(NULL);
  }
  if (strcmp(mode, "c11") == 0) {
    make_blocks(24);
    thrd_t thread;
    if (thrd_create(&thread, c11_thread, NULL) != thrd_success) return 1;
    thrd_join(thread, NULL);
    free_blocks();
    return 0;
  }
  if (strcmp(mode, "timer") == 0) {
    make_blocks(24);
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD;
    event.sigev_notify_function = notified;
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) return 1;
    struct itimerspec when = {{0, 0}, {0, 1000000}};
    if (timer_settime(timer, 0, &when, NULL) != 0) return 1;
    sem_wait(&done);
    timer_delete(timer);
    return 0;
  }
  if (strcmp(mode, "aio") == 0) {
    make_blocks(24);
    char path[] = "/tmp/lowalloc-aio-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    unlink(path);
    static char text[] = "written by aio_write\n";
    struct aiocb request;
    memset(&request, 0, sizeof request);
    request.aio_fildes = fd;
    request.aio_buf = text;
    request.aio_nbytes = sizeof text - 1;
    request.aio_sigevent.sigev_notify = SIGEV_THREAD;
    request.aio_sigevent.sigev_notify_function = notified;
    if (aio_write(&request) != 0) return 1;
    sem_wait(&done);
    close(fd);
    return 0;
  }
  if (strcmp(mode, "quick") == 0) quick();
  if (strcmp(mode, "quick_thread") == 0) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, pairs, NULL) != 0) return 1;
    pthread_join(thread, NULL);
    quick();
  }
  if (strcmp(mode, "quick_fork") == 0) {
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) quick();
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return 1;
    return 0;
  }
  if (strcmp(mode, "exec_fails") == 0) {
    malloc_free_pairs(k, 32);
    char* no_args[] = {"lowalloc-no-such-program", NULL};
    execv("/nonexistent/lowalloc-no-such-program", no_args);
    malloc_free_pairs(k, 32);
    return 0;
  }
  if (strcmp(mode, "exec_fails_killed") == 0 || strcmp(mode, "exec_kept") == 0) {
    make_blocks(32);
    char* args[] = {"true", NULL};
    if (strcmp(mode, "exec_kept") == 0) {
      execv("/bin/true", args);
      return 1;
    }
    execv("/nonexistent/lowalloc-no-such-program", args);
    raise(SIGKILL);
  }
  if (strcmp(mode, "key_first") == 0) {
    if (pthread_key_create(&list_key, free_one) != 0) return 1;
    make_blocks(64);
    const long before = anonymous_mappings();
    for (long i = 0; i < k; ++i) {
      pthread_t thread;
      if (pthread_create(&thread, NULL, set_under_key, blocks[i]) != 0) return 1;
      pthread_join(thread, NULL);
    }
    printf("%ld\n", anonymous_mappings() - before);
    free(blocks);
    return 0;
  }
  if (strcmp(mode, "last_atexit") == 0) {
    make_blocks(24);
    atexit(free_blocks);
    pthread_t thread;
    if (pthread_create(&thread, NULL, return_at_once, NULL) != 0) return 1;
    pthread_exit(NULL);
  }
  if (strcmp(mode, "timer_signal") == 0) {
    signal(SIGUSR1, SIG_IGN);
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_SIGNAL;
    event.sigev_signo = SIGUSR1;
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) return 1;
    malloc_free_pairs(k, 32);
    printf("%ld\n", threads_of_process());
    timer_delete(timer);
    return 0;
  }
  if (strcmp(mode, "exec_thread") == 0 || strcmp(mode, "exec_thread_fails") == 0) {
    const int fails = strcmp(mode, "exec_thread_fails") == 0;
    if (fails)
      malloc_free_pairs(k, 32);
    else
      make_blocks(32);
    pthread_t thread;
    char* path = fails ? "/nonexistent/lowalloc-no-such-program" : "/bin/true";
    if (pthread_create(&thread, NULL, exec_path, path) != 0) return 1;
    pthread_join(thread, NULL);
    if (!fails) return 1;
    malloc_free_pairs(k, 32);
    return 0;
  }
  if (strcmp(mode, "raw_exit") == 0) raw_exit();
  if (strcmp(mode, "getattr_first") == 0) {
    for (long i = 0; i < k; ++i) {
      pthread_t thread;
      if (pthread_create(&thread, NULL, getattr_first, NULL) != 0) return 1;
      pthread_join(thread, NULL);
    }
    return 0;
  }
  if (strcmp(mode, "fork_during_exec") == 0) {
    static long forever = -1;
    pthread_t thread;
    if (pthread_create(&thread, NULL, failing_execs, &forever) != 0) return 1;
    for (long i = 0; i < k; ++i) {
      pid_t child = fork();
      if (child < 0) return 1;
      if (child == 0) {
        for (int b = 0; b < 100; ++b) escape(malloc(32));
        exit(0);
      }
      int status;
      if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 1;
    }
    atomic_store(&execs_stop, 1);
    pthread_join(thread, NULL);
    return 0;
  }
  if (strcmp(mode, "two_execs") == 0) {
    pthread_t threads[4];
    for (int i = 0; i < 2; ++i)
      if (pthread_create(&threads[i], NULL, failing_execs, &k) != 0) return 1;
    for (int i = 2; i < 4; ++i)
      if (pthread_create(&threads[i], NULL, pairs_until_stopped, NULL) != 0) return 1;
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
    atomic_store(&execs_stop, 1);
    for (int i = 2; i < 4; ++i) pthread_join(threads[i], NULL);
    return 0;
  }
  if (strcmp(mode, "child_abort") == 0 || strcmp(mode, "child_probe_exec") == 0) {
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      if (strcmp(mode, "child_abort") == 0) {
        for (int b = 0; b < 10; ++b) escape(malloc(32));
        abort();
      }
      escape(malloc(SIZE_MAX / 2));
      execl("/bin/true", "true", (char*)NULL);
      _exit(127);
    }
    int status;
    return waitpid(child, &status, 0) == child ? 0 : 1;
  }
  if (strcmp(mode, "many_stacks") == 0) {
    for (long i = 0; i < k; ++i) {
      pthread_t thread;
      if (pthread_create(&thread, NULL, chains, NULL) != 0) return 1;
      pthread_join(thread, NULL);
    }
    return 0;
  }
  if (strcmp(mode, "sequential") == 0) {
    for (long i = 0; i < k; ++i) {
      pthread_t thread;
      if (pthread_create(&thread, NULL, one_of_two_sites, (i & 1) != 0 ? &k : NULL) != 0) return 1;
      pthread_join(thread, NULL);
    }
    return 0;
  }
  if (strncmp(mode, "killed_fork", 11) == 0) {
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      if (strcmp(mode, "killed_fork_written") == 0) malloc_free_pairs(300000, 32);
      malloc_free_pairs(k, 32);
      make_blocks(32);
      raise(SIGKILL);
    }
    if (strcmp(mode, "killed_fork_orphan") == 0) return wait_for_zombie(child) ? 0 : 1;
    int status;
    if (waitpid(child, &status, 0) != child || !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
      return 1;
    return 0;
  }
  if (strcmp(mode, "raw_exit_fork") == 0) {
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) raw_exit();
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 3)
      return 1;
    return 0;
  }
  fprintf(stderr, "unknown mode '%s'\n", mode);
  return 2;
}
