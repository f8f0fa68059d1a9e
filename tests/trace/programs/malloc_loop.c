/* K x (malloc 24, free): K allocations of 24 bytes, all temporary. argv[2], if given: spin that
   many microseconds after each free (events spread over many clock ticks, each tick with some). */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "common.h"

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  long spin_us = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
  for (long i = 0; i < k; ++i) {
    void* p = malloc(24);
    escape(p);
    free(p);
    if (spin_us > 0) {
      const long long until = now_ns() + spin_us * 1000LL;
      while (now_ns() < until) {
      }
    }
  }
  return 0;
}
