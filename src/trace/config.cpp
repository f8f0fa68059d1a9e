// The options and the command line read at start (config.hpp).
#include "trace/config.hpp"

#include "trace/launch_env.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lowalloc::trace {

std::size_t max_depth = 128;
bool follow_fork = true;
bool follow_exec = false;
char base_path[4096];
char manifest_path[4096];

namespace {

constexpr int max_saved_args = 256;
char saved_args[16384];

bool env_is(const char* name, const char* value) {
  const char* v = getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

}  // namespace

const char* saved_argv[max_saved_args];
int saved_argc = 0;

void save_argv(int argc, char** argv) {
  std::size_t used = 0;
  saved_argc = 0;
  for (int i = 0; i < argc && argv != nullptr && argv[i] != nullptr && saved_argc < max_saved_args;
       ++i) {
    std::size_t n = std::strlen(argv[i]);
    if (used + n + 1 > sizeof saved_args) break;
    std::memcpy(saved_args + used, argv[i], n + 1);
    saved_argv[saved_argc++] = saved_args + used;
    used += n + 1;
  }
}

void save_argv_from_proc() {
  saved_argc = 0;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::size_t used = 0;
  for (;;) {
    ssize_t n = read(fd, saved_args + used, sizeof saved_args - 1 - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<std::size_t>(n);
  }
  close(fd);
  saved_args[used] = 0;  // a command line cut at the buffer's end still ends its last argument
  for (std::size_t at = 0; at < used && saved_argc < max_saved_args;) {
    saved_argv[saved_argc++] = saved_args + at;
    at += std::strlen(saved_args + at) + 1;
  }
}

bool read_config() {
  const char* file = getenv(launch_env::file);
  if (file == nullptr || file[0] == 0) return false;
  std::snprintf(base_path, sizeof base_path, "%s", file);
  const char* m = getenv(launch_env::manifest);
  std::snprintf(manifest_path, sizeof manifest_path, "%s", m != nullptr ? m : "");
  follow_fork = !env_is(launch_env::follow_fork, "0");
  follow_exec = env_is(launch_env::follow_exec, "1");
  if (const char* d = getenv(launch_env::depth)) {
    long v = std::strtol(d, nullptr, 10);
    if (v > 0) max_depth = static_cast<std::size_t>(v > 256 ? 256 : v);
  }
  return true;
}

bool claim_first_image() {
  const char* first = getenv(launch_env::first_pid);
  if (first == nullptr || std::strtol(first, nullptr, 10) != getpid()) return false;
  unsetenv(launch_env::first_pid);  // an image exec'd from this one writes its own file
  return true;
}

void stop_exec_inheritance() {
  const char* preload = getenv("LD_PRELOAD");
  if (preload != nullptr) {
    char kept[8192];
    std::size_t k = 0;
    const char* s = preload;
    while (*s != 0) {
      const char* e = s;
      while (*e != 0 && *e != ':' && *e != ' ') ++e;
      std::size_t len = static_cast<std::size_t>(e - s);
      bool ours = len >= 22 && std::memcmp(e - 22, "liblowalloc_trace.so", 20) == 0;
      ours = ours || (len >= 20 && std::memcmp(e - 20, "liblowalloc_trace.so", 20) == 0);
      if (!ours && len > 0 && k + len + 2 < sizeof kept) {
        if (k != 0) kept[k++] = ':';
        std::memcpy(kept + k, s, len);
        k += len;
      }
      s = *e != 0 ? e + 1 : e;
    }
    kept[k] = 0;
    if (k == 0)
      unsetenv("LD_PRELOAD");
    else
      setenv("LD_PRELOAD", kept, 1);
  }
  unsetenv(launch_env::file);
  unsetenv(launch_env::first_pid);
  unsetenv(launch_env::manifest);
  unsetenv(launch_env::follow_fork);
  unsetenv(launch_env::follow_exec);
  unsetenv(launch_env::depth);
}

}  // namespace lowalloc::trace
