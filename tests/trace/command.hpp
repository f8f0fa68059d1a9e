// What the tests of the `lowalloc` command share: running a command with its output captured,
// and the test programs' paths. Needs LOWALLOC_TEST_PROGRAM_DIR defined.
#ifndef LOWALLOC_TESTS_TRACE_COMMAND_HPP
#define LOWALLOC_TESTS_TRACE_COMMAND_HPP

#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern char** environ;

namespace lowalloc::test {

namespace fs = std::filesystem;

inline std::string program(const std::string& name) {
  return std::string(LOWALLOC_TEST_PROGRAM_DIR) + "/" + name;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// Running commands

struct command_result {
  int status = -1;  // the exit status, or 128+N if signal N ended the command
  std::string out;
  std::string err;
};

// Runs args[0] (a path) with stdin from /dev/null and stdout, stderr captured through files in
// `dir` (no pipe to fill up while we wait).
inline command_result run_command(const std::vector<std::string>& args, const fs::path& dir) {
  static int serial = 0;
  ++serial;
  const fs::path out_path = dir / ("stdout." + std::to_string(serial));
  const fs::path err_path = dir / ("stderr." + std::to_string(serial));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  command_result result;
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << args[0] << ": " << std::strerror(rc);
    return result;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      ADD_FAILURE() << "waitpid: " << std::strerror(errno);
      return result;
    }
  }
  result.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  result.out = read_text(out_path);
  result.err = read_text(err_path);
  return result;
}

}  // namespace lowalloc::test

#endif
