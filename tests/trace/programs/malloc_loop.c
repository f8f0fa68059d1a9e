/* K x (malloc 24, free): K allocations of 24 bytes, all temporary. argv[2], if given: sleep that
   many microseconds after each free (events spread over many clock ticks). */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  long pause_us = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
  struct timespec pause = {0, pause_us * 1000};
  for (long i = 0; i < k; ++i) {
    void* p = malloc(24);
    escape(p);
    free(p);
    if (pause_us > 0) nanosleep(&pause, NULL);
  }
  return 0;
}
