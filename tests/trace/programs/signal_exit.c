/* Allocates and frees in a loop until a timer's signal handler ends the process with _exit(3),
   the async-signal-safe way out: the handler often interrupts the recorder itself. */
#include "common.h"

#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

static void on_alarm(int sig) {
  (void)sig;
  _exit(3);
}

int main(int argc, char** argv) {
  long us = iterations(argc, argv);
  signal(SIGALRM, on_alarm);
  struct itimerval t = {{0, 0}, {0, us > 0 ? us : 1000}};
  setitimer(ITIMER_REAL, &t, NULL);
  for (;;) {
    void* p = malloc(32);
    escape(p);
    free(p);
  }
}
