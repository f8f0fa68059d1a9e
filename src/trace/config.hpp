// What the recorder reads once at start: the options `lowalloc run` passes in the environment
// (launch_env.hpp) and the program's command line, copied before the program can change it.
#ifndef LOWALLOC_SRC_TRACE_CONFIG_HPP
#define LOWALLOC_SRC_TRACE_CONFIG_HPP

#include <cstddef>
#include <cstdint>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

inline constexpr std::size_t max_depth_limit = 256;

extern std::size_t max_depth;  // frames per stack, at most max_depth_limit
extern bool follow_fork;
extern bool follow_exec;
extern char base_path[4096];      // the trace file `lowalloc run` asked for
extern char manifest_path[4096];  // "" when there is none
// How often the writer thread looks for idle threads, and how long without an event makes one
// idle (write_idle_blocks): every half second, 2^12 ticks, unless a test asks for less.
extern std::uint64_t idle_scan_ns;
extern std::uint64_t idle_ticks;

// Reads the options; false when the recorder was loaded without `lowalloc run` (then it does
// nothing).
bool read_config();

// True in the image `lowalloc run` started, which writes base_path itself; an image exec'd from
// it (or a fork child) derives a file name of its own. Claims the launch for this image only.
bool claim_first_image();

// Removes this library and its options from the environment, so that programs started with
// exec are not traced.
void stop_exec_inheritance();

// The command line, copied at start: a program may rewrite its argv (nginx's setproctitle sets
// argv[1] to NULL) before it forks, and a child writes the PROCESS record again.
void save_argv(int argc, char** argv);
// The same from /proc/self/cmdline, when the recorder starts before its constructor has them.
void save_argv_from_proc();
extern const char* saved_argv[];
extern int saved_argc;

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_CONFIG_HPP
