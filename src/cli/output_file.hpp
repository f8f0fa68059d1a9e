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

#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace lowalloc::cli {

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
    errno = 0;
    out_.open(target_, std::ios::binary | std::ios::trunc);
    if (!out_) {
      error = "cannot write " + path + ": " + std::strerror(errno != 0 ? errno : EIO);
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
    temporary_ = false;
    target_.clear();
    return true;
  }

 private:
  void discard() noexcept {
    if (out_.is_open()) out_.close();
    if (temporary_ && !target_.empty()) std::remove(target_.c_str());
    temporary_ = false;
    target_.clear();
  }

  std::string path_;
  std::string target_;  // the file being written
  bool temporary_ = false;
  std::ofstream out_;
};

}  // namespace lowalloc::cli

#endif
