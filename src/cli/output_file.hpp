// `-o FILE` of the commands that print a report: the output goes to a file next to FILE, which
// replaces FILE only once it is complete, so a failed run never leaves a half-written report
// behind, nor destroys the one that was there. A path that is not a regular file (/dev/stdout,
// /dev/full, a pipe) is written directly.
//
//   output_file out;
//   std::string error;
//   if (!out.open("report.html", error)) { print error; return 2; }  // before the long work
//   out.stream() << ...;
//   if (!out.commit(error)) { print error; return 2; }
#ifndef LOWALLOC_SRC_CLI_OUTPUT_FILE_HPP
#define LOWALLOC_SRC_CLI_OUTPUT_FILE_HPP

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace lowalloc::cli {

namespace output_detail {

// The temporary files being written, for a signal that ends the command (Ctrl-C, SIGTERM): its
// handler removes them, then ends the process by the signal as before. A slot's path is written
// before its flag is set, and the flag cleared before the path changes.
constexpr int slots = 4;
constexpr std::size_t path_bytes = 4200;
inline volatile std::sig_atomic_t slot_used[slots];
inline char slot_path[slots][path_bytes];
inline constexpr int signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};

inline void remove_temporaries(int sig) {
  for (int i = 0; i < slots; ++i)
    if (slot_used[i] != 0) ::unlink(slot_path[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Slot of `path`, or -1 when none is free (then a signal leaves the file, as before).
inline int add_temporary(const std::string& path) {
  static bool handlers = false;
  if (!handlers) {
    handlers = true;
    for (const int sig : signals) {
      struct sigaction old {};
      // A signal the command was started with ignored (a background job's SIGINT) stays so.
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
        struct sigaction act {};
        act.sa_handler = remove_temporaries;
        sigemptyset(&act.sa_mask);
        for (const int other : signals) sigaddset(&act.sa_mask, other);
        ::sigaction(sig, &act, nullptr);
      }
    }
  }
  if (path.size() >= path_bytes) return -1;
  for (int i = 0; i < slots; ++i) {
    if (slot_used[i] != 0) continue;
    std::memcpy(slot_path[i], path.c_str(), path.size() + 1);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    slot_used[i] = 1;
    return i;
  }
  return -1;
}

inline void drop_temporary(int slot) {
  if (slot >= 0) slot_used[slot] = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

}  // namespace output_detail

class output_file {
 public:
  output_file() = default;
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file() { discard(); }

  /// Opens the file the output is written to (a temporary one next to `path` when `path` is a
  /// regular file or does not exist). False, with the reason in `error`, when it cannot be made.
  bool open(const std::string& path, std::string& error) {
    path_ = path;
    struct stat st {};
    const bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
    if (special && S_ISDIR(st.st_mode)) {
      error = "cannot write " + path + ": it is a directory";
      return false;
    }
    target_ = special ? path : path + ".tmp." + std::to_string(::getpid());
    // The temporary file is listed for the signal handlers before it is made: a signal that
    // comes as soon as it exists (Ctrl-C at once) finds it listed and removes it.
    if (!special) slot_ = output_detail::add_temporary(target_);
    errno = 0;
    out_.open(target_, std::ios::binary | std::ios::trunc);
    if (!out_) {
      const int open_errno = errno;
      output_detail::drop_temporary(slot_);
      slot_ = -1;
      error = "cannot write " + path + ": " + std::strerror(open_errno != 0 ? open_errno : EIO);
      target_.clear();
      return false;
    }
    temporary_ = !special;
    return true;
  }

  std::ostream& stream() noexcept { return out_; }

  /// Flushes and closes the output, and puts it in place. False, with the reason in `error`,
  /// when a write failed (a full disk): then the temporary file is removed and `path` is as it
  /// was.
  bool commit(std::string& error) {
    errno = 0;
    out_.flush();
    const bool written = static_cast<bool>(out_);
    const int write_errno = errno;
    out_.close();
    if (!written || !out_) {
      error = "cannot write " + path_ + ": " +
              std::strerror(write_errno != 0 ? write_errno : (errno != 0 ? errno : EIO));
      discard();
      return false;
    }
    if (temporary_ && std::rename(target_.c_str(), path_.c_str()) != 0) {
      error = "cannot write " + path_ + ": " + std::strerror(errno);
      discard();
      return false;
    }
    output_detail::drop_temporary(slot_);
    slot_ = -1;
    temporary_ = false;
    target_.clear();
    return true;
  }

 private:
  void discard() noexcept {
    if (out_.is_open()) out_.close();
    if (temporary_ && !target_.empty()) std::remove(target_.c_str());
    output_detail::drop_temporary(slot_);
    slot_ = -1;
    temporary_ = false;
    target_.clear();
  }

  std::string path_;
  int slot_ = -1;       // in output_detail's list of temporaries
  std::string target_;  // the file being written
  bool temporary_ = false;
  std::ofstream out_;
};

/// Flushes standard output; false when what was written to it did not all get there (a full
/// disk, a closed descriptor), said on stderr as "lowalloc COMMAND: cannot write WHAT to standard
/// output: REASON" ("lowalloc: ..." without a COMMAND). A reader that went away (EPIPE, with
/// SIGPIPE ignored: `| head`) is not said: it is no news to the user.
inline bool flush_stdout(const std::string& command, const std::string& what) {
  std::cout.flush();
  const bool stream_ok = static_cast<bool>(std::cout);
  // std::cout writes through stdio: its buffer is written again here, which sets errno afresh.
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  int err = errno;
  if (stream_ok && flushed && !std::ferror(stdout)) return true;
  // What failed earlier, when stdio has nothing left to write: writing nothing still fails on a
  // closed descriptor (EBADF) and on /dev/full (ENOSPC), and a pipe whose reader is gone polls
  // as an error.
  if (err == 0 && ::write(STDOUT_FILENO, "", 0) < 0) err = errno;
  struct stat st {};
  pollfd p{STDOUT_FILENO, POLLOUT, 0};
  if (err == 0 && ::fstat(STDOUT_FILENO, &st) == 0 &&
      (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) && ::poll(&p, 1, 0) == 1 &&
      (p.revents & POLLERR) != 0)
    err = EPIPE;
  if (err == EPIPE) return false;
  std::cerr << "lowalloc" << (command.empty() ? "" : " ") << command << ": cannot write " << what
            << " to standard output: " << std::strerror(err != 0 ? err : EIO) << '\n';
  return false;
}

/// Empty if `output` is none of `inputs`; otherwise the message that refuses it: writing it would
/// replace an input with the output (`report T -o T`, also through another name of the same
/// file: a link, ./T). Files are the same when their device and inode are.
inline std::string output_names_an_input(const std::string& output,
                                         const std::vector<std::string>& inputs) {
  struct stat out_st {};
  if (output.empty() || ::stat(output.c_str(), &out_st) != 0 || !S_ISREG(out_st.st_mode)) return {};
  for (const std::string& input : inputs) {
    struct stat in_st {};
    if (::stat(input.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
        in_st.st_ino == out_st.st_ino)
      return "cannot write " + output + ": it is the input " + input +
             ", which the output would replace";
  }
  return {};
}

}  // namespace lowalloc::cli

#endif
