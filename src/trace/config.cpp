// The options and the command line read at start (config.hpp).
#include "trace/config.hpp"

#include "trace/launch_env.hpp"
#include "trace/os.hpp"
#include "trace/thread_state.hpp"

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
std::uint64_t idle_scan_ns = 500000000;
std::uint64_t idle_ticks = flush_interval_ticks;

namespace {

constexpr int max_saved_args = 256;
char saved_args[16384];

// The environment is read and changed through `environ` itself, never by getenv, setenv or
// unsetenv: a program may define its own, which the recorder's calls would reach before the
// program's main (bash keeps its shell variables that way, and its setenv left the recorder's
// variables to every program it ran).
bool names(const char* entry, const char* name, std::size_t length) {
  return std::strncmp(entry, name, length) == 0 && entry[length] == '=';
}

const char* env_get(const char* name) {
  if (environ == nullptr) return nullptr;
  const std::size_t length = std::strlen(name);
  for (char** e = environ; *e != nullptr; ++e)
    if (names(*e, name, length)) return *e + length + 1;
  return nullptr;
}

// Takes every NAME=... entry out of the environment (the others move down: it only shrinks).
void env_remove(const char* name) {
  if (environ == nullptr) return;
  const std::size_t length = std::strlen(name);
  char** out = environ;
  for (char** e = environ; *e != nullptr; ++e)
    if (!names(*e, name, length)) *out++ = *e;
  *out = nullptr;
}

bool env_is(const char* name, const char* value) {
  const char* v = env_get(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

// LD_PRELOAD=... without the recorder, in place of the one the program started with.
char preload_entry[8192 + sizeof "LD_PRELOAD="];

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
  const char* file = env_get(launch_env::file);
  if (file == nullptr || file[0] == 0) return false;
  // Cut, the path could name another file, which the trace would replace.
  if (std::strlen(file) >= sizeof base_path) {
    say("the trace's path is longer than the recorder holds (4,095 bytes); the program runs on "
        "untraced");
    return false;
  }
  std::snprintf(base_path, sizeof base_path, "%s", file);
  const char* m = env_get(launch_env::manifest);
  // Cut, it could name another file, which the manifest's lines would be appended to: none then.
  if (m == nullptr || std::strlen(m) >= sizeof manifest_path) m = "";
  std::snprintf(manifest_path, sizeof manifest_path, "%s", m);
  follow_fork = !env_is(launch_env::follow_fork, "0");
  follow_exec = env_is(launch_env::follow_exec, "1");
  if (const char* d = env_get(launch_env::depth)) {
    long v = std::strtol(d, nullptr, 10);
    if (v > 0) max_depth = static_cast<std::size_t>(v > 256 ? 256 : v);
  }
  if (const char* d = env_get(launch_env::idle_scan)) {
    long v = std::strtol(d, nullptr, 10);
    if (v >= 0 && v <= 10000000 && d[0] >= '0' && d[0] <= '9') {
      idle_scan_ns = static_cast<std::uint64_t>(v) * 1000;  // 0: never
      idle_ticks = 1;
    }
  }
  return true;
}

bool claim_first_image() {
  const char* first = env_get(launch_env::first_pid);
  if (first == nullptr || std::strtol(first, nullptr, 10) != getpid()) return false;
  env_remove(launch_env::first_pid);  // an image exec'd from this one writes its own file
  return true;
}

void stop_exec_inheritance() {
  if (const char* preload = env_get("LD_PRELOAD")) {
    char* kept = preload_entry + std::strlen("LD_PRELOAD=");
    const std::size_t room = sizeof preload_entry - std::strlen("LD_PRELOAD=");
    std::size_t k = 0;
    const char* s = preload;
    while (*s != 0) {
      const char* e = s;
      while (*e != 0 && *e != ':' && *e != ' ') ++e;
      std::size_t len = static_cast<std::size_t>(e - s);
      bool ours = len >= 22 && std::memcmp(e - 22, "liblowalloc_trace.so", 20) == 0;
      ours = ours || (len >= 20 && std::memcmp(e - 20, "liblowalloc_trace.so", 20) == 0);
      if (!ours && len > 0 && k + len + 2 < room) {
        if (k != 0) kept[k++] = ':';
        std::memcpy(kept + k, s, len);
        k += len;
      }
      s = *e != 0 ? e + 1 : e;
    }
    kept[k] = 0;
    env_remove("LD_PRELOAD");
    if (k != 0) {
      // At the end, where the entry just removed left room.
      std::memcpy(preload_entry, "LD_PRELOAD=", std::strlen("LD_PRELOAD="));
      char** end = environ;
      while (*end != nullptr) ++end;
      end[0] = preload_entry;
      end[1] = nullptr;
    }
  }
  env_remove(launch_env::file);
  env_remove(launch_env::first_pid);
  env_remove(launch_env::manifest);
  env_remove(launch_env::follow_fork);
  env_remove(launch_env::follow_exec);
  env_remove(launch_env::depth);
  env_remove(launch_env::idle_scan);
}

}  // namespace lowalloc::trace
