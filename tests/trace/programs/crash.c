/* K allocations of varied sizes, all kept (argv[1]), then the end named by argv[2]:
     exit     returns 0 (the trace compresses badly: the write-failure test fills a file limit)
     segv     a write through NULL
     abort    abort()
     double_free  frees a block twice: the C library finds it and aborts inside free, while
              the recorder's hook is running
     handler  installs its own SIGSEGV handler, which prints "handled" and _exit(7)s, then
              writes through NULL
     thread   a second thread makes argv[3] allocations and waits; then the main thread writes
              through NULL
   and the ends by a signal sent to end the process, which the recorder's handler takes where the
   program leaves it at its default action:
     term     kill(getpid(), SIGTERM)
     interrupt  kill(getpid(), SIGINT), as Ctrl-C
     pipe     writes to a pipe with no reader: SIGPIPE
     term_thread  a second thread makes argv[3] allocations, then makes and frees blocks without
              end; the main thread waits for the first of those, then kill(getpid(), SIGTERM)
     alarm    a timer's SIGALRM after argv[3] microseconds, while the main thread makes and frees
              blocks: the signal often comes inside the recorder
     shown    prints what sigaction and signal show of SIGTERM, SIGINT, SIGPIPE and SIGSEGV
              ("default" for SIG_DFL), catches one SIGTERM with a handler of its own, sets SIG_DFL
              again and then kill(getpid(), SIGTERM); on the way, sets a handler for SIGUSR1 with
              __sysv_signal (strict ISO C's signal) and SIG_DFL again with sigset
     fork_alarm  a timer's SIGALRM after argv[3] microseconds, while the main thread, with 64 MiB
              of memory touched, forks children that exit at once (reaped by the kernel): the
              signal mostly comes inside fork (copying the memory's page tables), whose handlers
              hold the recorder's locks
     sigset_hold  holds SIGTERM with sigset, sends it, then sets SIG_DFL with sigset: the signal
              comes as SIG_DFL is set
     ppoll    blocks SIGTERM, sends it, and lets it through only in ppoll's temporary mask; prints
              "survived" and returns 3 if the program goes on
     vfork    a vfork child sets SIGINT to SIG_IGN and exits; then the parent shows SIGINT's
              action and kill(getpid(), SIGINT) */
#define _GNU_SOURCE /* sigset */
#include "common.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static long thread_allocations = 0;
static int ready[2];

static void crash(void) {
  volatile int* volatile null_pointer = NULL;
  *null_pointer = 1;
}

static void on_segv(int sig) {
  (void)sig;
  static const char text[] = "handled\n";
  ssize_t ignored = write(1, text, sizeof text - 1);
  (void)ignored;
  _exit(7);
}

static void* other_thread(void* arg) {
  (void)arg;
  for (long i = 0; i < thread_allocations; ++i) escape(malloc(16));
  char byte = 1;
  ssize_t ignored = write(ready[1], &byte, 1);
  (void)ignored;
  for (;;) pause();
  return NULL;
}

static void churn(void) {
  for (;;) {
    void* p = malloc(32);
    escape(p);
    free(p);
  }
}

static void* churning_thread(void* arg) {
  (void)arg;
  for (long i = 0; i < thread_allocations; ++i) escape(malloc(16));
  void* p = malloc(32);
  escape(p);
  free(p);
  char byte = 1;
  ssize_t ignored = write(ready[1], &byte, 1);
  (void)ignored;
  churn();
  return NULL;
}

static void on_term(int sig) {
  (void)sig;
  static const char text[] = "own\n";
  ssize_t ignored = write(1, text, sizeof text - 1);
  (void)ignored;
}

static const char* shown(int sig) {
  struct sigaction old;
  if (sigaction(sig, NULL, &old) != 0) return "error";
  if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) return "handler";
  /* signal() shows the same, and setting SIG_DFL leaves the action as it was */
  if (signal(sig, SIG_DFL) != SIG_DFL) return "handler";
  return "default";
}

static void on_usr1(int sig) { (void)sig; }

static void show_and_end(void) {
  printf("%s %s %s %s\n", shown(SIGTERM), shown(SIGINT), shown(SIGPIPE), shown(SIGSEGV));
  fflush(stdout);
  struct sigaction old;
  if (__sysv_signal(SIGUSR1, on_usr1) != SIG_DFL) printf("SIGUSR1 not SIG_DFL before\n");
  if (sigaction(SIGUSR1, NULL, &old) != 0 || old.sa_handler != on_usr1)
    printf("SIGUSR1 not the own handler\n");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (sigset(SIGUSR1, SIG_DFL) != on_usr1) printf("sigset did not return the own handler\n");
  if (sigset(SIGUSR1, SIG_DFL) != SIG_DFL) printf("sigset did not return SIG_DFL\n");
  if (sigset(SIGUSR1, SIG_HOLD) != SIG_DFL) printf("sigset did not hold from SIG_DFL\n");
  if (sigset(SIGUSR1, SIG_DFL) != SIG_HOLD) printf("sigset did not return SIG_HOLD\n");
#pragma GCC diagnostic pop
  printf("%s\n", shown(SIGUSR1));
  fflush(stdout);
  if (signal(SIGTERM, on_term) != SIG_DFL) printf("not SIG_DFL before\n");
  kill(getpid(), SIGTERM);
  if (signal(SIGTERM, SIG_DFL) != on_term) printf("not the own handler\n");
  printf("%s\n", shown(SIGTERM));
  fflush(stdout);
  kill(getpid(), SIGTERM);
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  const char* end = argc > 2 ? argv[2] : "exit";
  /* A shell's background job starts with SIGINT ignored, and a test runner may ignore SIGPIPE:
     the program sets the default action, for which the recorder's handler then stands in. */
  const int sent[] = {SIGTERM, SIGINT, SIGPIPE, SIGALRM, SIGUSR1};
  sigset_t unblock;
  sigemptyset(&unblock);
  for (unsigned i = 0; i < sizeof sent / sizeof sent[0]; ++i) {
    signal(sent[i], SIG_DFL);
    sigaddset(&unblock, sent[i]);
  }
  sigprocmask(SIG_UNBLOCK, &unblock, NULL);
  unsigned size = 12345;
  for (long i = 0; i < k; ++i) {
    size = size * 1103515245u + 12345u;
    escape(malloc(1 + (size >> 16) % 4096));
  }
  if (strcmp(end, "segv") == 0) crash();
  if (strcmp(end, "abort") == 0) abort();
  if (strcmp(end, "double_free") == 0) {
    void* p = malloc(24);
    escape(p);
    free(p);
    free(p);
  }
  if (strcmp(end, "handler") == 0) {
    signal(SIGSEGV, on_segv);
    crash();
  }
  if (strcmp(end, "thread") == 0) {
    thread_allocations = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    pthread_t t;
    if (pipe(ready) != 0 || pthread_create(&t, NULL, other_thread, NULL) != 0) return 1;
    char byte;
    if (read(ready[0], &byte, 1) != 1) return 1;
    crash();
  }
  if (strcmp(end, "term") == 0) kill(getpid(), SIGTERM);
  if (strcmp(end, "interrupt") == 0) kill(getpid(), SIGINT);
  if (strcmp(end, "pipe") == 0) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    close(fds[0]);
    ssize_t ignored = write(fds[1], "x", 1);
    (void)ignored;
  }
  if (strcmp(end, "term_thread") == 0) {
    thread_allocations = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    pthread_t t;
    if (pipe(ready) != 0 || pthread_create(&t, NULL, churning_thread, NULL) != 0) return 1;
    char byte;
    if (read(ready[0], &byte, 1) != 1) return 1;
    kill(getpid(), SIGTERM);
  }
  if (strcmp(end, "alarm") == 0) {
    long us = argc > 3 ? strtol(argv[3], NULL, 10) : 1000;
    struct itimerval timer = {{0, 0}, {0, us}};
    setitimer(ITIMER_REAL, &timer, NULL);
    churn();
  }
  if (strcmp(end, "shown") == 0) show_and_end();
  if (strcmp(end, "fork_alarm") == 0) {
    long us = argc > 3 ? strtol(argv[3], NULL, 10) : 1000;
    size_t bytes = (size_t)64 << 20;
    char* touched = malloc(bytes);
    if (touched == NULL) return 1;
    memset(touched, 1, bytes);
    escape(touched);
    signal(SIGCHLD, SIG_IGN);
    struct itimerval timer = {{0, 0}, {0, us}};
    setitimer(ITIMER_REAL, &timer, NULL);
    for (;;) {
      if (fork() == 0) _exit(0);
      escape(malloc(1));
    }
  }
  if (strcmp(end, "ppoll") == 0) {
    sigset_t term, none;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);
    kill(getpid(), SIGTERM);
    sigemptyset(&none);
    struct timespec wait = {5, 0};
    ppoll(NULL, 0, &wait, &none);
    printf("survived\n");
    return 3;
  }
  if (strcmp(end, "sigset_hold") == 0) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    sigset(SIGTERM, SIG_HOLD);
    kill(getpid(), SIGTERM);
    sigset(SIGTERM, SIG_DFL);
#pragma GCC diagnostic pop
    printf("still running\n");
  }
  if (strcmp(end, "vfork") == 0) {
    pid_t child = vfork();
    if (child == 0) {
      signal(SIGINT, SIG_IGN);
      _exit(0);
    }
    if (child > 0) waitpid(child, NULL, 0);
    printf("%s\n", shown(SIGINT));
    fflush(stdout);
    kill(getpid(), SIGINT);
  }
  return 0;
}
