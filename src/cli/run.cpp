// `lowalloc run`: starts PROGRAM with liblowalloc_trace.so preloaded, waits for it, tells the user
// where the trace is, and exits with PROGRAM's exit status.
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "report/common.hpp"
#include "trace/format.hpp"
#include "trace/launch_env.hpp"

#ifndef LOWALLOC_TRACE_LIBRARY_RELATIVE
#error "LOWALLOC_TRACE_LIBRARY_RELATIVE is defined by src/cli/CMakeLists.txt"
#endif

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace lowalloc::cli {
namespace {

// Exit statuses of our own failures, as env(1) and timeout(1) use them.
constexpr int exit_failure = 125;     // bad options, no recorder library
constexpr int exit_cannot_run = 126;  // PROGRAM cannot be executed or traced
constexpr int exit_not_found = 127;   // PROGRAM not found

constexpr const char* run_usage =
    "usage: lowalloc run [-o FILE] [options] -- PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM with every heap allocation recorded (malloc, calloc, realloc, the aligned\n"
    "forms, and operator new/delete through them), with its call stack, into a trace file.\n"
    "The exit status is PROGRAM's (128+N if a signal N ended it); 125 if lowalloc run\n"
    "itself fails (bad options, no recorder, a trace path that cannot be written) or the\n"
    "trace could not be written completely; 126 if PROGRAM cannot be executed, 127 if it is\n"
    "not found.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE  write the trace to FILE (default: lowalloc.PROGRAM.PID.trace)\n"
    "  --no-fork          do not trace child processes made by fork (default: each child\n"
    "                     writes FILE.PID)\n"
    "  --follow-exec      also trace programs PROGRAM starts with exec (each writes FILE.PID)\n"
    "  --depth N          keep at most N frames per call stack (default 128, at most 256)\n"
    "  -q, --quiet        print nothing but errors and warnings\n"
    "  -h, --help         this text\n";

struct run_options {
  std::string output;
  bool follow_fork = true;
  bool follow_exec = false;
  int depth = 128;
  bool quiet = false;
  std::vector<char*> program;  // PROGRAM and its arguments
};

int usage_error(const std::string& message) {
  std::fprintf(stderr, "lowalloc run: %s\n%s", message.c_str(), run_usage);
  return exit_failure;
}

std::string self_directory() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The recorder: $LOWALLOC_TRACE_LIBRARY, else relative to the command: where the install puts it
// (bin/../lib/lowalloc/), then where the build tree has it (bin/../lib/). Never an absolute path
// compiled in: a moved or copied install finds its own recorder, never the build directory's.
std::string find_trace_library() {
  if (const char* env = std::getenv("LOWALLOC_TRACE_LIBRARY"); env != nullptr && *env != 0)
    return is_file(env) ? std::string(env) : std::string();
  const std::string dir = self_directory();
  if (dir.empty()) return {};
  for (const char* rel : {LOWALLOC_TRACE_LIBRARY_RELATIVE, "../lib/liblowalloc_trace.so"}) {
    std::string candidate = dir;
    candidate += '/';
    candidate += rel;
    if (is_file(candidate)) return candidate;
  }
  return {};
}

// execvp's search, done here so that a missing or static PROGRAM is reported before it runs.
std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    // An empty entry is the current directory. (Built without assigning a literal to a
    // std::string: GCC 12 at -O3 -std=c++20 reports a false -Wrestrict there, PR105329.)
    const std::string dir = end > start ? dirs.substr(start, end - start) : std::string(1, '.');
    std::string candidate = dir + "/" + name;
    if (is_file(candidate) && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

bool is_script(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {};
  in.read(magic, 2);
  return in.gcount() == 2 && magic[0] == '#' && magic[1] == '!';
}

// Empty if PROGRAM can be traced; otherwise why not.
std::string check_traceable(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + " is a directory";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open " + path + ": " + std::strerror(errno);
  unsigned char ident[EI_NIDENT] = {};
  in.read(reinterpret_cast<char*>(ident), sizeof ident);
  if (in.gcount() >= 2 && ident[0] == '#' && ident[1] == '!') return {};  // a script
  if (in.gcount() < EI_NIDENT || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    return path + " is not an ELF executable or a script";
  if (ident[EI_CLASS] != ELFCLASS64) return path + " is not a 64-bit program";
  in.seekg(0);
  Elf64_Ehdr eh;
  in.read(reinterpret_cast<char*>(&eh), sizeof eh);
  if (!in) return path + ": truncated ELF header";
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + i * std::uint64_t{eh.e_phentsize}));
    in.read(reinterpret_cast<char*>(&ph), sizeof ph);
    if (!in) return path + ": truncated program headers";
    if (ph.p_type == PT_INTERP) return {};
  }
  return path +
         " is statically linked: lowalloc run records through the dynamic loader "
         "(LD_PRELOAD) and cannot trace it; link it dynamically to trace it";
}

// `path` from the root; `path` itself when the working directory cannot be named. The working
// directory may be longer than PATH_MAX: glibc's getcwd sizes the buffer itself.
std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char* cwd = getcwd(nullptr, 0);
  if (cwd == nullptr) return path;
  std::string out = std::string(cwd) + "/" + path;
  std::free(cwd);
  return out;
}

// The recorder keeps the trace's path in a buffer of 4096 bytes (src/trace/config.cpp's
// base_path, sink.cpp's trace_path), and cuts a longer path without a word: the trace would go
// to another file, perhaps one that exists. The processes the program starts write the path with
// ".PID" or ".PID.N" after it (sink.cpp's derive_trace_path): a PID below Linux's PID_MAX_LIMIT
// (2^22) has at most 7 digits, and N is below 1000.
constexpr std::size_t recorder_path_buffer = 4096;
constexpr std::size_t recorder_suffix = sizeof ".4194303.999" - 1;
constexpr std::size_t longest_trace_path = recorder_path_buffer - 1 - recorder_suffix;

// Empty if the recorder can hold `path` (and the names it derives from it) in full; otherwise
// why not.
std::string check_output_length(const std::string& path) {
  const std::string full = absolute(path);
  if (full.empty() || full[0] != '/')
    return std::string("the working directory cannot be named: ") + std::strerror(errno);
  if (full.size() <= longest_trace_path) return {};
  return "its absolute path is " + std::to_string(full.size()) +
         " bytes long, and the recorder takes at most " + std::to_string(longest_trace_path) +
         " (with the .PID.N it adds for the other processes, " +
         std::to_string(recorder_path_buffer - 1) + ")";
}

// Whether process `pid` has ended: gone, or a zombie (an orphan its new parent has not reaped
// yet: kill(pid, 0) still finds it). One of another user's is taken to run.
bool process_ended(long long pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0) return errno != EPERM;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;  // gone since
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses, the state follows the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return state == 'Z' || state == 'X';
}

std::string base_name(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string directory_of(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? std::string(1, '/') : path.substr(0, slash);
}

// Empty if the recorder will be able to write a trace at `path`; otherwise why not. Opens it as
// the recorder will (an existing file is not truncated here, a new one is removed again) and
// writes nothing to it: /dev/full and its kind refuse even that.
std::string check_output(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "it is a directory";
    // The recorder's open of a FIFO waits for a reader, before PROGRAM's main: with none, the
    // program hangs without a word. Nor could the recorder open it again at the place it stopped
    // after the program closed its descriptor. Opening it here to see whether a reader is there
    // would end that reader's input as we closed it again.
    if (S_ISFIFO(st.st_mode)) return "it is a FIFO (named pipe): the trace must be a file";
    int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return std::strerror(errno);
    std::string why;
    if (write(fd, "", 0) < 0) why = std::strerror(errno);
    close(fd);
    return why;
  }
  if (errno != ENOENT) return std::strerror(errno);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno != ENOENT) return std::strerror(errno);
    // ENOENT from a directory that exists: a file system that makes no files on request (/proc).
    const std::string dir = directory_of(path);
    struct stat dir_st;
    if (stat(dir.c_str(), &dir_st) == 0 && S_ISDIR(dir_st.st_mode))
      return "no file can be created in " + dir;
    return "the directory " + dir + " does not exist";
  }
  close(fd);
  unlink(path.c_str());
  return {};
}

volatile sig_atomic_t child_pid = 0;

void forward_signal(int sig) {
  if (child_pid > 0) kill(child_pid, sig);
}

const char* signal_name(int sig) {
  const char* d = sigdescr_np(sig);
  return d != nullptr ? d : "unknown signal";
}

}  // namespace

int run_main(int argc, char** argv) {
  run_options opt;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    if (a == "-h" || a == "--help") {
      std::fputs(run_usage, stdout);
      return 0;
    }
    if (a == "-o" || a == "--output") {
      // An empty name would be taken for no name: the default, not the file asked for.
      if (++i == argc || argv[i][0] == '\0') return usage_error(a + " needs a file name");
      opt.output = argv[i];
    } else if (a.rfind("--output=", 0) == 0) {
      if (a.size() == 9) return usage_error("--output needs a file name");
      opt.output = a.substr(9);
    } else if (a == "--no-fork") {
      opt.follow_fork = false;
    } else if (a == "--follow-exec") {
      opt.follow_exec = true;
    } else if (a == "--depth" || a.rfind("--depth=", 0) == 0) {
      std::string v;
      if (a == "--depth") {
        if (++i == argc) return usage_error("--depth needs a value");
        v = argv[i];
      } else {
        v = a.substr(8);
      }
      std::uint64_t d = 0;
      if (parse_count(v, d) != count_status::ok || d < 1 || d > 256)
        return usage_error("--depth takes a number from 1 to 256, not '" + v + "'");
      opt.depth = static_cast<int>(d);
    } else if (a == "-q" || a == "--quiet") {
      opt.quiet = true;
    } else {
      return usage_error("unknown option '" + a + "'");
    }
  }
  if (i == argc) return usage_error("no program to run");
  for (; i < argc; ++i) opt.program.push_back(argv[i]);
  opt.program.push_back(nullptr);

  std::string program = resolve_program(opt.program[0]);
  if (program.empty()) {
    std::fprintf(stderr, "lowalloc run: %s: command not found\n", opt.program[0]);
    return exit_not_found;
  }
  if (access(program.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "lowalloc run: %s: %s\n", program.c_str(), std::strerror(errno));
    return errno == ENOENT ? exit_not_found : exit_cannot_run;
  }
  if (std::string why = check_traceable(program); !why.empty()) {
    std::fprintf(stderr, "lowalloc run: %s\n", why.c_str());
    return exit_cannot_run;
  }
  const bool script = is_script(program);
  std::string library = find_trace_library();
  if (library.empty()) {
    if (const char* env = std::getenv("LOWALLOC_TRACE_LIBRARY"); env != nullptr && *env != 0)
      std::fprintf(stderr,
                   "lowalloc run: LOWALLOC_TRACE_LIBRARY names %s, which is not a file (%s was "
                   "not run)\n",
                   env, opt.program[0]);
    else
      std::fprintf(stderr,
                   "lowalloc run: cannot find liblowalloc_trace.so (looked in %s/%s and "
                   "%s/../lib/; set LOWALLOC_TRACE_LIBRARY to its path)\n",
                   self_directory().c_str(), LOWALLOC_TRACE_LIBRARY_RELATIVE,
                   self_directory().c_str());
    return exit_failure;
  }

  // The trace must be writable before PROGRAM runs: a program run untraced is a wasted run.
  if (opt.output.empty()) {
    // The default name holds PROGRAM's pid, not known yet: try the same name with ours.
    std::string probe = "lowalloc.";
    probe += base_name(program);
    probe += ".";
    probe += std::to_string(getpid());
    probe += ".trace";
    if (std::string why = check_output(probe); !why.empty()) {
      char cwd[4096];
      std::fprintf(stderr,
                   "lowalloc run: cannot write the trace in the working directory %s: %s; "
                   "name a writable file with -o FILE (%s was not run)\n",
                   getcwd(cwd, sizeof cwd) != nullptr ? cwd : ".", why.c_str(), opt.program[0]);
      return exit_failure;
    }
    // The same with the longest PID, for the path's length.
    probe = "lowalloc." + base_name(program) + ".4194303.trace";
    if (std::string too_long = check_output_length(probe); !too_long.empty()) {
      std::fprintf(stderr,
                   "lowalloc run: cannot write the trace lowalloc.%s.PID.trace in the working "
                   "directory: %s; name a file with -o FILE (%s was not run)\n",
                   base_name(program).c_str(), too_long.c_str(), opt.program[0]);
      return exit_failure;
    }
  } else if (std::string too_long = check_output_length(opt.output); !too_long.empty()) {
    std::fprintf(stderr, "lowalloc run: cannot write the trace to %s: %s (%s was not run)\n",
                 opt.output.c_str(), too_long.c_str(), opt.program[0]);
    return exit_failure;
  } else if (std::string why = check_output(opt.output); !why.empty()) {
    std::fprintf(stderr, "lowalloc run: cannot write the trace to %s: %s (%s was not run)\n",
                 opt.output.c_str(), why.c_str(), opt.program[0]);
    return exit_failure;
  }

  // The recorders' manifest: what each process wrote, and how it ended. In TMPDIR (else /tmp). A
  // first line is written now, so that a full file system is said before PROGRAM runs: the
  // recorder cannot say it when its lines do not get there, and the run's status would be a guess.
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string manifest_dir = tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
  std::string manifest_name = manifest_dir + "/lowalloc-manifest-XXXXXX";
  char* manifest = manifest_name.data();
  errno = 0;
  int manifest_fd = mkstemp(manifest);
  static const char manifest_header[] = "manifest lowalloc run\n";
  if (manifest_fd < 0 || write(manifest_fd, manifest_header, sizeof manifest_header - 1) !=
                             static_cast<ssize_t>(sizeof manifest_header - 1)) {
    const int error = errno;
    if (manifest_fd >= 0) {
      close(manifest_fd);
      unlink(manifest);
    }
    std::fprintf(stderr, "lowalloc run: cannot write a file in %s: %s (%s was not run)\n",
                 manifest_dir.c_str(), std::strerror(error != 0 ? error : EIO), opt.program[0]);
    return exit_failure;
  }
  close(manifest_fd);

  // The child reports a failed exec through this pipe (closed on a successful exec).
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "lowalloc run: pipe: %s\n", std::strerror(errno));
    unlink(manifest);
    return exit_failure;
  }

  std::string output = opt.output;
  // We must be able to wait for PROGRAM even if our parent ignores SIGCHLD (waitpid would fail
  // with ECHILD); PROGRAM gets the disposition we inherited.
  struct sigaction default_chld = {}, old_chld;
  default_chld.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &default_chld, &old_chld);

  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "lowalloc run: fork: %s\n", std::strerror(errno));
    unlink(manifest);
    return exit_failure;
  }
  if (pid == 0) {
    close(exec_pipe[0]);
    std::string file = output.empty() ? "lowalloc." + base_name(program) + "." +
                                            std::to_string(getpid()) + ".trace"
                                      : output;
    std::string preload = library;
    if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != 0)
      preload += std::string(":") + old;
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv(launch_env::file, absolute(file).c_str(), 1);
    setenv(launch_env::first_pid, std::to_string(getpid()).c_str(), 1);
    setenv(launch_env::manifest, manifest, 1);
    setenv(launch_env::follow_fork, opt.follow_fork ? "1" : "0", 1);
    setenv(launch_env::follow_exec, opt.follow_exec ? "1" : "0", 1);
    setenv(launch_env::depth, std::to_string(opt.depth).c_str(), 1);
    sigaction(SIGCHLD, &old_chld, nullptr);
    execv(program.c_str(), opt.program.data());
    int err = errno;
    ssize_t ignored = write(exec_pipe[1], &err, sizeof err);
    (void)ignored;
    _exit(exit_cannot_run);
  }
  close(exec_pipe[1]);
  child_pid = pid;

  // Like system(3): the terminal's SIGINT/SIGQUIT reach PROGRAM directly; we wait for it.
  // SIGTERM and SIGHUP sent to us are passed on.
  struct sigaction ignore = {}, forward = {}, old_int, old_quit, old_term, old_hup;
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);

  int exec_errno = 0;
  ssize_t got;
  do got = read(exec_pipe[0], &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  close(exec_pipe[0]);

  int status = 0;
  int wait_errno = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      wait_errno = errno;
      break;
    }
  }
  sigaction(SIGCHLD, &old_chld, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);

  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    std::fprintf(stderr, "lowalloc run: cannot execute %s: %s\n", program.c_str(),
                 std::strerror(exec_errno));
    unlink(manifest);
    return exec_errno == ENOENT ? exit_not_found : exit_cannot_run;
  }

  // What the recorder wrote: "file PATH" per trace file, "error TEXT" per failure (already
  // printed by the recorder), "crash PID SIGNAL TID ALLOCATIONS THREADS WRITTEN" when a crash
  // handler ran, "ended PID SIGNAL TID" when the handler of a signal sent to end the process
  // finished the trace (recorder's crash.cpp).
  std::vector<std::string> files;
  std::vector<std::string> shadowed;  // "PID MASK PATH": see below
  bool recorder_error = false;
  struct crash_line {
    bool seen = false;
    unsigned long long allocations = 0;  // in the unwritten blocks of other threads
    unsigned long long threads = 0;      // how many threads had unwritten blocks
    int written = 0;                     // 1: the crashing thread's events were written
  } crash;
  // The processes whose trace has no end: their last line is "open PID", not "closed PID".
  std::set<long long> open_traces;
  // Fork children traced whose file is not made yet (it comes with the first block): their last
  // line is "forked PID".
  std::set<long long> unwritten;
  std::set<long long> interrupted;  // _exit in a signal handler found the recorder busy
  // Traces the recorder could not write any more ("stopped PID REMOVED" after its "error" line):
  // with a file that ends early (STOPPED), or removed by the recorder (no whole block in it),
  // or never made (a fork child's, whose file comes with its first block).
  std::size_t stopped_with_file = 0, stopped_without_file = 0;
  std::set<long long> removed;  // the processes whose file the recorder removed
  bool ended_whole = false;     // the program's own process: its trace has its end after the signal
  unsigned long long ended_lost = 0;  // events the recorder could not record
  {
    std::ifstream in(manifest);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("file ", 0) == 0) files.push_back(line.substr(5));
      long long trace_pid = 0;
      if (std::sscanf(line.c_str(), "forked %lld", &trace_pid) == 1) unwritten.insert(trace_pid);
      if (std::sscanf(line.c_str(), "open %lld", &trace_pid) == 1) {
        open_traces.insert(trace_pid);
        unwritten.erase(trace_pid);
      }
      if (std::sscanf(line.c_str(), "closed %lld", &trace_pid) == 1) {
        open_traces.erase(trace_pid);
        unwritten.erase(trace_pid);
      }
      if (int gone = 0; std::sscanf(line.c_str(), "stopped %lld %d", &trace_pid, &gone) == 2) {
        const bool kept = open_traces.count(trace_pid) != 0 && gone == 0;
        ++(kept ? stopped_with_file : stopped_without_file);
        if (gone != 0) removed.insert(trace_pid);
        open_traces.erase(trace_pid);
        unwritten.erase(trace_pid);
      }
      if (std::sscanf(line.c_str(), "interrupted %lld", &trace_pid) == 1)
        interrupted.insert(trace_pid);
      // A crash handler ends its trace with CRASH: the report says what it holds.
      if (std::sscanf(line.c_str(), "crash %lld", &trace_pid) == 1) {
        open_traces.erase(trace_pid);
        unwritten.erase(trace_pid);
      }
      if (line.rfind("error ", 0) == 0) recorder_error = true;
      if (line.rfind("shadowed ", 0) == 0) shadowed.push_back(line.substr(9));
      if (line.rfind("crash ", 0) == 0) {
        long long crash_pid = 0;
        int sig = 0;
        unsigned long long tid = 0;
        crash_line c;
        if (std::sscanf(line.c_str() + 6, "%lld %d %llu %llu %llu %d", &crash_pid, &sig, &tid,
                        &c.allocations, &c.threads, &c.written) == 6 &&
            crash_pid == pid) {
          c.seen = true;
          crash = c;
        }
      }
      long long ended_pid = 0;
      int ended_sig = 0;
      unsigned long long ended_tid = 0, lost = 0;
      if (std::sscanf(line.c_str(), "ended %lld %d %llu %llu", &ended_pid, &ended_sig, &ended_tid,
                      &lost) == 4 &&
          ended_pid == pid) {
        ended_whole = true;
        ended_lost = lost;
      }
    }
  }
  unlink(manifest);

  int exit_status;
  std::string program_status;  // "exited with status N" or "was killed by signal N (NAME)"
  if (wait_errno != 0) {
    std::fprintf(stderr, "lowalloc run: cannot wait for %s: %s\n", opt.program[0],
                 std::strerror(wait_errno));
    exit_status = exit_failure;
    program_status = "could not be waited for";
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    exit_status = 128 + sig;
    program_status = "was killed by signal ";
    program_status += std::to_string(sig);
    program_status += " (";
    program_status += signal_name(sig);
    program_status += ")";
    // What the trace holds of its end, as far as the recorder's manifest tells.
    std::string what;
    if (files.empty()) {
      what = "no trace was written";
    } else if (recorder_error && !crash.seen && !ended_whole) {
      what = "the recorder had stopped writing its trace before (its message is above)";
    } else if (ended_whole && ended_lost == 0) {
      what = "the recorder wrote every thread's events up to the signal: no event is missing";
    } else if (ended_whole) {
      what = "the recorder wrote the threads' events up to the signal, but for ";
      what += std::to_string(ended_lost);
      what += ended_lost == 1 ? " event it could not record" : " events it could not record";
    } else if (!crash.seen) {
      what =
          "the recorder could not write the events of each thread's last block (up to 512 KiB "
          "of events per thread are missing from ";
      what += files.front();
      what += ")";
    } else {
      what = crash.written != 0 ? "the recorder wrote the crashing thread's last events"
                                : "the recorder could not write the crashing thread's last events";
      if (crash.threads == 0) {
        what += crash.written != 0 ? "; no event is missing" : "";
      } else {
        what += "; up to ";
        what += std::to_string(crash.allocations);
        what += crash.allocations == 1 ? " allocation" : " allocations";
        what += " (and the frees among them) of ";
        what += std::to_string(crash.threads);
        what += crash.threads == 1 ? " other thread were" : " other threads were";
        what += " not written (lowalloc report ";
        what += files.front();
        what += " names them)";
      }
    }
    std::fprintf(stderr, "lowalloc run: %s %s; %s\n", opt.program[0], program_status.c_str(),
                 what.c_str());
  } else {
    exit_status = WEXITSTATUS(status);
    program_status = "exited with status ";
    program_status += std::to_string(exit_status);
    if (open_traces.count(pid) != 0 && !files.empty() && !recorder_error) {
      // The trace is incomplete as a killed program's is; the status is the program's, as then.
      const char* how = interrupted.count(pid) != 0
                            ? "it called _exit in a signal handler that interrupted the recorder"
                            : "it ended by the exit_group system call, as Go's runtime ends a "
                              "program, which runs nothing the recorder sees";
      std::fprintf(stderr,
                   "lowalloc run: %s %s without the recorder finishing its trace (%s): the "
                   "events of each thread's last block (up to 512 KiB of events per thread) are "
                   "missing from %s\n",
                   opt.program[0], program_status.c_str(), how, files.front().c_str());
    }
  }
  // The one trace removed while the program ran (the recorder said so if it wrote again after):
  // nothing of it is left, which is a trace not written completely.
  // The recorder removes a file it could not write one whole block to: such a file is no trace.
  struct stat trace_stat;
  // (Its "file" line is missing when not even the header could be written.)
  const bool only_removed_by_recorder =
      files.size() <= 1 && removed.size() == 1 && removed.count(pid) != 0;
  const bool trace_removed = files.size() == 1 && !only_removed_by_recorder &&
                             stat(files.front().c_str(), &trace_stat) != 0;
  const std::size_t files_left =
      static_cast<std::size_t>(std::count_if(files.begin(), files.end(), [](const std::string& f) {
        return access(f.c_str(), F_OK) == 0;
      }));
  if (files.empty() || only_removed_by_recorder) {
    if (only_removed_by_recorder && !opt.quiet)
      std::fprintf(stderr,
                   "lowalloc run: no trace: the recorder could not write the block that names "
                   "the process and its libraries to %s, and removed the file (its message is "
                   "above)\n",
                   files.empty()
                       ? absolute(output.empty() ? "lowalloc." + base_name(program) + "." +
                                                       std::to_string(pid) + ".trace"
                                                 : output)
                             .c_str()
                       : files.front().c_str());
    if (!recorder_error)
      std::fprintf(stderr,
                   "lowalloc run: no trace was written: %s did not load the recorder (a setuid "
                   "program, or one that clears LD_PRELOAD?)\n",
                   opt.program[0]);
  } else if (!opt.quiet) {
    if (trace_removed) {
      std::fprintf(stderr, "lowalloc run: no trace: %s was removed while %s ran\n",
                   files.front().c_str(), opt.program[0]);
    } else if (files.size() == 1) {
      std::fprintf(stderr, "lowalloc run: trace written to %s\n", files.front().c_str());
      std::fprintf(stderr, "lowalloc run: read it with: lowalloc report %s\n",
                   files.front().c_str());
    } else {
      // One file per process: a build writes hundreds. Said in a few lines, whatever their
      // number; `report --processes` lists them.
      // The first process's path even when it wrote none (killed before it could): the others
      // are named after it, and `report --processes` finds them by it.
      const std::string first = absolute(output.empty() ? "lowalloc." + base_name(program) + "." +
                                                              std::to_string(pid) + ".trace"
                                                        : output);
      std::fprintf(stderr,
                   "lowalloc run: %zu traces written, one per process: %s and %s.PID for the "
                   "processes %s started\n",
                   files_left, first.c_str(), first.c_str(), opt.program[0]);
      std::fprintf(stderr, "lowalloc run: list them with: lowalloc report --processes %s\n",
                   first.c_str());
      std::fprintf(stderr, "lowalloc run: read one with: lowalloc report FILE\n");
    }
    if (stopped_with_file + stopped_without_file > 1 || files.size() > 1) {
      // Said once for all: a build on a full disk stops hundreds of processes' traces.
      const auto of = [](std::size_t n) { return n == 1 ? " process" : " processes"; };
      const std::size_t n = stopped_with_file + stopped_without_file;
      std::string which;
      if (stopped_without_file == 0)
        which = n == 1 ? "its trace ends where the writing failed"
                       : "each trace ends where the writing failed";
      else if (stopped_with_file == 0)
        which = n == 1 ? "it has no trace" : "none of them has a trace";
      else
        which = std::to_string(stopped_with_file) +
                (stopped_with_file == 1 ? " trace ends" : " traces end") +
                " where the writing failed, " + std::to_string(stopped_without_file) +
                (stopped_without_file == 1 ? " process has none" : " processes have none");
      if (n != 0)
        std::fprintf(stderr,
                     "lowalloc run: the recorder could not write the traces of %zu%s (its "
                     "messages are above): %s\n",
                     n, of(n), which.c_str());
    }
    if (script && !opt.follow_exec)
      std::fprintf(stderr,
                   "lowalloc run: %s is a script: its interpreter was traced; programs it starts "
                   "with exec are traced only with --follow-exec\n",
                   opt.program[0]);
  }
  // Allocation functions defined ahead of the recorder (an allocator linked into the program):
  // the trace misses their calls. Said even with -q: it is about what the trace holds. Once per
  // object and set of functions, whichever processes found it.
  std::vector<std::string> said;
  for (const std::string& s : shadowed) {
    const std::size_t names_at = s.find(' ');
    const std::size_t path_at =
        names_at == std::string::npos ? names_at : s.find(' ', names_at + 1);
    if (path_at == std::string::npos) continue;
    const std::string what = s.substr(names_at + 1);
    if (std::find(said.begin(), said.end(), what) != said.end()) continue;
    said.push_back(what);
    const unsigned long long mask = std::strtoull(s.c_str() + names_at + 1, nullptr, 10);
    analyze::shadowed_functions f;
    for (unsigned bit = 0; bit < trace_format::shadowed_count; ++bit)
      if ((mask >> bit & 1) != 0) f.functions.emplace_back(trace_format::shadowed_names[bit]);
    f.module = s.substr(path_at + 1);
    std::fprintf(stderr, "lowalloc run: warning: %s\n", report::shadowed_text(f).c_str());
  }
  // Processes the program started whose traces have no end (the program's own is said above):
  // still running (a daemon it started), or gone without the recorder seeing them end; each with
  // its file, or none yet (a fork child's comes with its first block).
  std::size_t gone = 0, gone_unwritten = 0, running = 0, running_unwritten = 0;
  for (const std::set<long long>* set : {&open_traces, &unwritten}) {
    const bool written = set == &open_traces;
    for (long long p : *set) {
      if (p == pid) continue;
      if (process_ended(p))
        ++(written ? gone : gone_unwritten);
      else
        ++(written ? running : running_unwritten);
    }
  }
  const auto processes = [](std::size_t n) { return n == 1 ? "process" : "processes"; };
  if (gone != 0 && wait_errno == 0)
    std::fprintf(stderr,
                 "lowalloc run: warning: %zu %s started by %s ended without the recorder seeing "
                 "%s end (killed by SIGKILL, or by the exit_group system call): %s miss%s the "
                 "last events (lowalloc report --processes lists them)\n",
                 gone, processes(gone), opt.program[0], gone == 1 ? "it" : "them",
                 gone == 1 ? "its trace" : "their traces", gone == 1 ? "es" : "");
  if (gone_unwritten != 0 && wait_errno == 0)
    std::fprintf(stderr,
                 "lowalloc run: warning: %zu %s started by %s ended without the recorder seeing "
                 "%s end (killed by SIGKILL, or by the exit_group system call) before %s first "
                 "block: no trace holds any of %s events\n",
                 gone_unwritten, processes(gone_unwritten), opt.program[0],
                 gone_unwritten == 1 ? "it" : "them", gone_unwritten == 1 ? "its" : "their",
                 gone_unwritten == 1 ? "its" : "their");
  if (running != 0 && wait_errno == 0)
    std::fprintf(stderr, "lowalloc run: %zu %s started by %s still %s: %s trace%s so far\n",
                 running, processes(running), opt.program[0], running == 1 ? "runs" : "run",
                 running == 1 ? "its" : "their",
                 running == 1 ? " holds its events" : "s hold their events");
  if (running_unwritten != 0 && wait_errno == 0)
    std::fprintf(stderr,
                 "lowalloc run: %zu %s started by %s still %s and %s written no trace yet (a "
                 "process's file comes with its first block)\n",
                 running_unwritten, processes(running_unwritten), opt.program[0],
                 running_unwritten == 1 ? "runs" : "run", running_unwritten == 1 ? "has" : "have");
  if (trace_removed && !recorder_error && wait_errno == 0) {
    std::fprintf(stderr, "lowalloc run: %s %s; exiting with status %d\n", opt.program[0],
                 program_status.c_str(), exit_failure);
    return exit_failure;
  }
  if (recorder_error && wait_errno == 0) {
    // The trace is incomplete whatever PROGRAM did: our own failure, as env(1) reports one.
    std::fprintf(stderr,
                 "lowalloc run: the trace could not be written completely (the recorder's message "
                 "is above); %s %s; exiting with status %d\n",
                 opt.program[0], program_status.c_str(), exit_failure);
    return exit_failure;
  }
  return exit_status;
}

}  // namespace lowalloc::cli
