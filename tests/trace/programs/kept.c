/* 3K blocks that outlive the trace blocks they were made in (sizes 24, 40, 56, all live at
   once), then freed in a scrambled order. While the process has one thread the recorder keeps
   them by ordinal and their frees name them so (no address in the trace); such a free is looked
   up in the recorder's table only at the thread's next event, so it is pending when what follows
   it happens. argv[2], the mode:
     (none)    the main thread frees them all;
     "thread"  a second thread started after they were made frees them: a thread start writes
               their addresses first, so that the other thread's frees match them;
     "reuse"   each free of a block of 40 bytes is followed by a malloc(40), which gets the
               address just freed back; those K blocks are never freed (leaked);
     "pending-thread"  the first five blocks made are freed, then pthread_create; the new thread
               frees the rest;
     "pending-fork"    the first five blocks made are freed, then fork; the child makes and frees
               one block of 20 bytes and exits; the parent waits, then frees the rest;
     "pending-exec"    the first five blocks made are freed, then execv(argv[3], argv + 3);
     "spaced"  each free comes 20 us after the one before (busy waiting): the frees' times fill
               the trace block's list of them while frees are pending. */
#include "common.h"

#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void** blocks;
static long count;

static void wait_us(long us) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

/* i * 7919 % count visits every block once: 7919 is a prime that divides no count used. Those
   freed already are null. */
static void* free_all(void* arg) {
  (void)arg;
  for (long i = 0; i < count; ++i) free(blocks[(i * 7919) % count]);
  return NULL;
}

static void free_first_five(void) {
  for (long i = 0; i < 5 && i < count; ++i) {
    free(blocks[i]);
    blocks[i] = NULL;
  }
}

static int in_thread(void) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, free_all, NULL) != 0) return 1;
  return pthread_join(thread, NULL) != 0;
}

int main(int argc, char** argv) {
  count = 3 * iterations(argc, argv);
  const char* mode = argc > 2 ? argv[2] : "";
  static void* storage[3 * 100000];
  if (count > 3 * 100000) return 1;
  blocks = storage;
  for (long i = 0; i < count; ++i) {
    blocks[i] = malloc((size_t)(24 + 16 * (i % 3)));
    escape(blocks[i]);
  }
  if (strcmp(mode, "") == 0) {
    free_all(NULL);
  } else if (strcmp(mode, "thread") == 0) {
    return in_thread();
  } else if (strcmp(mode, "reuse") == 0) {
    for (long i = 0; i < count; ++i) {
      const long b = (i * 7919) % count;
      free(blocks[b]);
      if (b % 3 == 1) escape(malloc(40));
    }
  } else if (strcmp(mode, "pending-thread") == 0) {
    free_first_five();
    return in_thread();
  } else if (strcmp(mode, "pending-fork") == 0) {
    free_first_five();
    const pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      malloc_free_pairs(1, 20);
      exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || status != 0) return 1;
    free_all(NULL);
  } else if (strcmp(mode, "pending-exec") == 0 && argc > 3) {
    free_first_five();
    execv(argv[3], argv + 3);
    return 3;
  } else if (strcmp(mode, "spaced") == 0) {
    for (long i = 0; i < count; ++i) {
      wait_us(20);
      free(blocks[(i * 7919) % count]);
    }
  } else {
    return 2;
  }
  return 0;
}
