// Running `lowalloc report` in the test process: report_main with its standard output and error
// captured, and file descriptor 1 (what isatty() sees) on a given descriptor meanwhile (a
// pseudo-terminal, /dev/null); and gunzip for the compressed outputs (pprof, the HTML page's
// data). Tests that include it link zlib.
#ifndef LOWALLOC_TESTS_SUPPORT_CLI_HPP
#define LOWALLOC_TESTS_SUPPORT_CLI_HPP

#include "cli/commands.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>  // posix_openpt, grantpt, unlockpt, ptsname
#include <unistd.h>
#include <zlib.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace lowalloc_test {

struct cli_result {
  int status;
  std::string out;
  std::string err;
};

/// `lowalloc report ARGS...`; `stdout_fd` >= 0: file descriptor 1 is a copy of it meanwhile.
inline cli_result run_report(std::vector<std::string> args, int stdout_fd = -1) {
  args.insert(args.begin(), "report");
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::ostringstream out;
  std::ostringstream err;
  std::cout.flush();
  const int saved = stdout_fd >= 0 ? ::dup(STDOUT_FILENO) : -1;
  if (stdout_fd >= 0) ::dup2(stdout_fd, STDOUT_FILENO);
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  const int status = lowalloc::cli::report_main(static_cast<int>(args.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  std::cout.clear();
  if (saved >= 0) {
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
  }
  return {status, out.str(), err.str()};
}

/// A pseudo-terminal for isatty() checks; ok() is false where none can be had.
class pseudo_terminal {
 public:
  pseudo_terminal() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    terminal_ = ::open(::ptsname(master_), O_RDWR | O_NOCTTY);
  }
  pseudo_terminal(const pseudo_terminal&) = delete;
  pseudo_terminal& operator=(const pseudo_terminal&) = delete;
  ~pseudo_terminal() {
    if (terminal_ >= 0) ::close(terminal_);
    if (master_ >= 0) ::close(master_);
  }
  bool ok() const noexcept { return terminal_ >= 0 && ::isatty(terminal_) == 1; }
  /// The terminal's side a program writes to.
  int fd() const noexcept { return terminal_; }

 private:
  int master_ = -1;
  int terminal_ = -1;
};

/// The bytes of one complete gzip stream (a failed expectation if `in` is not exactly that).
inline std::string gunzip(const std::string& in) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);  // gzip only, not a raw or zlib stream
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char chunk[1 << 16];
  int status = Z_OK;
  while (status == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    status = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
  }
  EXPECT_EQ(status, Z_STREAM_END) << "not one complete gzip stream";
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the gzip stream";
  inflateEnd(&z);
  return out;
}

}  // namespace lowalloc_test

#endif
