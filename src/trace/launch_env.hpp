// The environment `lowalloc run` sets for the recorder it preloads: not part of the trace file's
// format, but the contract between the launcher (src/cli/run.cpp) and the recorder (config.cpp).
#ifndef LOWALLOC_SRC_TRACE_LAUNCH_ENV_HPP
#define LOWALLOC_SRC_TRACE_LAUNCH_ENV_HPP

namespace lowalloc::launch_env {

inline constexpr const char* file = "LOWALLOC_TRACE_FILE";            // output path
inline constexpr const char* first_pid = "LOWALLOC_TRACE_FIRST_PID";  // pid that owns `file`
inline constexpr const char* manifest = "LOWALLOC_TRACE_MANIFEST";    // files written, errors
inline constexpr const char* follow_fork = "LOWALLOC_TRACE_FORK";     // "0": children untraced
inline constexpr const char* follow_exec = "LOWALLOC_TRACE_EXEC";     // "1": follow exec
inline constexpr const char* depth = "LOWALLOC_TRACE_DEPTH";          // max frames per stack
// For tests, set by hand: the writer thread looks for idle threads every N microseconds, and a
// thread with no event for a tick is idle (the threads' blocks are written for them all the time);
// 0: it never looks.
inline constexpr const char* idle_scan = "LOWALLOC_TRACE_IDLE_SCAN_US";

}  // namespace lowalloc::launch_env

#endif  // LOWALLOC_SRC_TRACE_LAUNCH_ENV_HPP
