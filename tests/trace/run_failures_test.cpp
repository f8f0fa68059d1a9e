// Failures that tell the truth: `lowalloc run` refuses a trace path it cannot write before the
// program starts, reports a trace the recorder could not write completely (exit status 125 with
// the program's own status in the message), and a crashing program's trace keeps the crashing
// thread's events and says, in a CRASH record, what the other threads' unwritten blocks held.
#include "analyze/analysis.hpp"

#include "command.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace analyze = lowalloc::analyze;
using lowalloc::test::command_result;
using lowalloc::test::contains;
using lowalloc::test::program;
using lowalloc::test::read_text;
using lowalloc::test::run_command;

const std::string lowalloc_cli = LOWALLOC_TEST_CLI;
const std::string not_a_recorder = LOWALLOC_TEST_DLOPEN_LIB;

class run_failures : public ::testing::Test {
 public:
  void SetUp() override {
    struct rlimit no_core = {0, 0};  // the crashing programs must not write core files
    setrlimit(RLIMIT_CORE, &no_core);
    std::string pattern = (fs::temp_directory_path() / "lowalloc-run-failures-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
  }

  void TearDown() override {
    for (const fs::path& m : mounts_) umount2(m.c_str(), MNT_DETACH);
    std::error_code ignored;
    fs::permissions(dir_ / "ro", fs::perms::owner_all, ignored);
    fs::remove_all(dir_, ignored);
  }

  // A directory no file can be created in, and the reason creating one fails: a read-only bind
  // mount when we may mount (as root; chmod does not stop root), else a directory of mode 0555,
  // else (root without the right to mount) /sys, which refuses new files. Empty when none works.
  std::string read_only_dir(fs::path& d) {
    d = dir_ / "ro";
    fs::create_directory(d);
    if (mount(d.c_str(), d.c_str(), nullptr, MS_BIND, nullptr) == 0) {
      mounts_.push_back(d);
      if (mount(nullptr, d.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0)
        return std::strerror(EROFS);
    }
    if (geteuid() != 0) {
      fs::permissions(d, fs::perms::owner_read | fs::perms::owner_exec);
      return std::strerror(EACCES);
    }
    d = "/sys";
    const fs::path probe = d / "lowalloc-probe.trace";
    const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      close(fd);
      unlink(probe.c_str());
      return {};
    }
    return std::strerror(errno);
  }

  // `lowalloc run -o OUTPUT -- touch MARKER`.
  command_result run_touch(const std::string& output) {
    return run_command(
        {lowalloc_cli, "run", "-q", "-o", output, "--", "touch", (dir_ / "marker").string()}, dir_);
  }

  // `lowalloc run -q [OPTIONS] -o DIR/NAME.trace -- crash ARGS...`, ended after two minutes
  // (timeout's status 124; its process group killed 10 s later if it does not end): a recorder
  // that hangs the program fails the test.
  command_result run_crash(const std::string& name, const std::vector<std::string>& args,
                           const std::vector<std::string>& options = {}) {
    std::vector<std::string> command = {"/usr/bin/timeout", "-k",  "10", "120",
                                        lowalloc_cli,       "run", "-q"};
    command.insert(command.end(), options.begin(), options.end());
    command.insert(command.end(), {"-o", trace(name), "--", program("crash")});
    command.insert(command.end(), args.begin(), args.end());
    return run_command(command, dir_);
  }

  std::string trace(const std::string& name) const { return (dir_ / (name + ".trace")).string(); }

  static analyze::analysis read(const std::string& file) {
    analyze::options opts;
    opts.symbolize = false;
    return analyze::analyze_file(file, opts);
  }

  fs::path dir_;
  std::vector<fs::path> mounts_;
};

// ---------------------------------------------------------------------------------------------
// An output that cannot be written: exit 125, a message naming the path and the reason, and the
// program never starts (touch would create the marker).

TEST_F(run_failures, an_unwritable_output_is_refused_before_the_program_starts) {
  struct refusal {
    std::string output;
    std::string reason;
  };
  std::vector<refusal> cases = {
      {(dir_ / "no-such-dir" / "x.trace").string(),
       "the directory " + (dir_ / "no-such-dir").string() + " does not exist"},
      {dir_.string(), "it is a directory"},
      {"/dev/full", std::strerror(ENOSPC)},
  };
  fs::path ro;
  const std::string ro_reason = read_only_dir(ro);
  if (!ro_reason.empty()) cases.push_back({(ro / "x.trace").string(), ro_reason});
  // A directory that exists but makes no files: Linux's /proc answers a create with ENOENT.
  const std::string in_proc = "/proc/lowalloc-test-x.trace";
  const int proc_fd = open(in_proc.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  const int proc_errno = errno;
  if (proc_fd >= 0) close(proc_fd);
  if (proc_fd < 0 && proc_errno == ENOENT && fs::is_directory("/proc"))
    cases.push_back({in_proc, "no file can be created in /proc"});
  for (const refusal& c : cases) {
    SCOPED_TRACE(c.output);
    const command_result r = run_touch(c.output);
    EXPECT_EQ(r.status, 125) << r.err;
    EXPECT_EQ(r.err, "lowalloc run: cannot write the trace to " + c.output + ": " + c.reason +
                         " (touch was not run)\n");
    EXPECT_FALSE(fs::exists(dir_ / "marker")) << "the program ran";
  }
  EXPECT_FALSE(ro_reason.empty()) << "no read-only directory could be made here";
}

// --depth takes decimal digits, from 1 to 256, and nothing else, as every number of the `lowalloc`
// command line: strtol, which read it before, skipped leading spaces and took a sign, so " 8" and
// "+8" were 8. A value refused is a usage error (125) before anything runs; a value taken lets
// run go on to PROGRAM, which is missing here (127).
TEST_F(run_failures, depth_takes_decimal_digits_only) {
  const std::string missing = (dir_ / "no-such-program").string();
  for (const std::string value :
       {" 8", "8 ", "+8", "-8", "", "0x10", "8k", "0", "257", "18446744073709551617"}) {
    SCOPED_TRACE("'" + value + "'");
    const command_result r =
        run_command({lowalloc_cli, "run", "--depth", value, "--", missing}, dir_);
    EXPECT_EQ(r.status, 125) << r.err;
    EXPECT_TRUE(contains(
        r.err, "lowalloc run: --depth takes a number from 1 to 256, not '" + value + "'\n"))
        << r.err;
  }
  for (const std::string value : {"1", "256", "008"}) {
    SCOPED_TRACE(value);
    const command_result r = run_command({lowalloc_cli, "run", "--depth=" + value, missing}, dir_);
    EXPECT_EQ(r.status, 127) << r.err;
  }
  // Last, without its value: said as every command says it of its options.
  const command_result r = run_command({lowalloc_cli, "run", "--depth"}, dir_);
  EXPECT_EQ(r.status, 125) << r.err;
  EXPECT_TRUE(contains(r.err, "lowalloc run: --depth needs a value\n")) << r.err;
}

// An empty output name was taken for none: the trace went to the default name, not where asked.
TEST_F(run_failures, an_empty_output_name_is_refused) {
  const std::string missing = (dir_ / "no-such-program").string();
  for (const std::vector<std::string>& option :
       std::vector<std::vector<std::string>>{{"-o", ""}, {"--output", ""}, {"--output="}}) {
    SCOPED_TRACE(option[0]);
    std::vector<std::string> args = {lowalloc_cli, "run"};
    args.insert(args.end(), option.begin(), option.end());
    args.insert(args.end(), {"--", missing});
    const command_result r = run_command(args, dir_);
    EXPECT_EQ(r.status, 125) << r.err;
    const std::string name = option[0] == "-o" ? "-o" : "--output";
    EXPECT_TRUE(contains(r.err, "lowalloc run: " + name + " needs a file name\n")) << r.err;
  }
}

// The recorder holds the trace's path in 4096 bytes, and cuts a longer one: the trace would go to
// another file (here one that exists, which it would replace). A path that does not fit with the
// longest ".PID.N" the recorder adds for other processes (12 bytes) is refused.
TEST_F(run_failures, an_output_path_longer_than_the_recorder_holds_is_refused) {
  // A working directory of about 3,900 bytes, made a component at a time (a path given to mkdir
  // or chdir at once may be no longer than PATH_MAX), which leaves room for a file name of less
  // than NAME_MAX (255) bytes up to the limit.
  const std::string component(100, 'd');
  std::string deep = dir_.string();
  const int old_cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(old_cwd, 0);
  ASSERT_EQ(chdir(dir_.c_str()), 0);
  while (deep.size() + 1 + component.size() <= 3950) {
    ASSERT_EQ(mkdir(component.c_str(), 0755), 0) << std::strerror(errno);
    ASSERT_EQ(chdir(component.c_str()), 0) << std::strerror(errno);
    deep += "/" + component;
  }
  const std::string marker = (dir_ / "marker").string();
  // A name whose absolute path is 4,083 bytes long is taken; one byte more is not.
  const std::size_t room = 4083 - deep.size() - 1;
  const std::string fits(room, 'f');
  const std::string too_long(room + 1, 'v');
  const command_result accepted =
      run_command({lowalloc_cli, "run", "-q", "-o", fits, "--", "touch", marker}, ".");
  const bool fits_written = fs::exists(fits);
  const command_result refused =
      run_command({lowalloc_cli, "run", "-q", "-o", too_long, "--", "touch", marker}, ".");
  // Over 4,095 bytes, the recorder would cut the path: here to the name of a file that exists,
  // which it would replace.
  const std::string longer(room + 17, 'w');
  const std::string victim = longer.substr(0, room + 12);
  std::ofstream(victim) << "precious data\n";
  const command_result refused_longer =
      run_command({lowalloc_cli, "run", "-q", "-o", longer, "--", "touch", marker}, ".");
  const std::string victim_text = read_text(victim);
  // The default name in the working directory, lowalloc.true.PID.trace: 27 bytes with a PID of 7
  // digits.
  const std::string deeper(4084 - 27 - 1 - deep.size() - 1, 'e');
  ASSERT_EQ(mkdir(deeper.c_str(), 0755), 0) << std::strerror(errno);
  ASSERT_EQ(chdir(deeper.c_str()), 0) << std::strerror(errno);
  const command_result default_name = run_command({lowalloc_cli, "run", "--", "true"}, ".");
  ASSERT_EQ(fchdir(old_cwd), 0);
  close(old_cwd);

  EXPECT_EQ(accepted.status, 0) << accepted.err;
  EXPECT_TRUE(fits_written);
  const auto refusal = [](const std::string& path, std::size_t length) {
    return "lowalloc run: cannot write the trace to " + path + ": its absolute path is " +
           std::to_string(length) +
           " bytes long, and the recorder takes at most 4083 (with the .PID.N it adds for the "
           "other processes, 4095) (touch was not run)\n";
  };
  EXPECT_EQ(refused.status, 125) << refused.err;
  EXPECT_EQ(refused.err, refusal(too_long, 4084));
  EXPECT_EQ(refused_longer.status, 125) << refused_longer.err;
  EXPECT_EQ(refused_longer.err, refusal(longer, 4100));
  EXPECT_EQ(victim_text, "precious data\n");
  EXPECT_EQ(default_name.status, 125) << default_name.err;
  EXPECT_EQ(default_name.err,
            "lowalloc run: cannot write the trace lowalloc.true.PID.trace in the working "
            "directory: its absolute path is 4084 bytes long, and the recorder takes at most 4083 "
            "(with the .PID.N it adds for the other processes, 4095); name a file with -o FILE "
            "(true was not run)\n");
}

// The recorders' manifest, which tells lowalloc run how each process ended, goes to TMPDIR (else
// /tmp), and a place where it cannot be written is said before the program runs: the recorders'
// lines would not get there, and the run's status would be a guess.
TEST_F(run_failures, a_manifest_that_cannot_be_written_is_said_before_the_program_runs) {
  const fs::path not_a_directory = dir_ / "plain";
  std::ofstream(not_a_directory) << "a file\n";
  const std::string marker = (dir_ / "marker").string();
  const command_result refused =
      run_command({"/usr/bin/env", "TMPDIR=" + not_a_directory.string(), lowalloc_cli, "run", "-q",
                   "-o", (dir_ / "x.trace").string(), "--", "touch", marker},
                  dir_);
  EXPECT_EQ(refused.status, 125) << refused.err;
  EXPECT_EQ(refused.err, "lowalloc run: cannot write a file in " + not_a_directory.string() +
                             ": Not a directory (touch was not run)\n");
  EXPECT_FALSE(fs::exists(marker));
  const fs::path tmp = dir_ / "tmp";
  fs::create_directory(tmp);
  const command_result run =
      run_command({"/usr/bin/env", "TMPDIR=" + tmp.string(), lowalloc_cli, "run", "-q", "-o",
                   (dir_ / "x.trace").string(), "--", "touch", marker},
                  dir_);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_TRUE(fs::is_empty(tmp)) << "the manifest is removed";
}

// The recorder loaded without `lowalloc run` (which refuses such paths first): a path it would cut
// could name another file, which the trace would replace. A path longer than its 4,095 bytes is
// refused at the start; one that fits, but not with the .PID added for the process, when the file
// is to be opened. The program runs on untraced, its status unchanged, and no file is written.
TEST_F(run_failures, the_recorder_refuses_a_trace_path_it_would_cut) {
  const std::string library =
      (fs::path(lowalloc_cli).parent_path().parent_path() / "lib" / "liblowalloc_trace.so")
          .string();
  ASSERT_TRUE(fs::exists(library)) << library;
  // dir_/././.../NAME of exactly `length` bytes: "./" steps, and a name of 1 or 2 letters + .trace.
  const auto path_of = [&](std::size_t length) {
    std::string p = dir_.string() + "/";
    const std::size_t name = length - p.size() - 6;
    const std::size_t letters = 2 - name % 2;
    for (std::size_t i = 0; i < (name - letters) / 2; ++i) p += "./";
    return p + std::string(letters, 't') + ".trace";
  };
  for (const std::size_t length : {std::size_t{4094}, std::size_t{4100}}) {
    SCOPED_TRACE(length);
    const std::string base = path_of(length);
    ASSERT_EQ(base.size(), length);
    // What the path would be cut to: the base and a dot, or the base's first 4,095 bytes.
    const std::string victim = (base + ".").substr(0, 4095);
    std::ofstream(victim) << "precious data\n";
    const auto files = [&] {
      std::set<std::string> names;
      for (const fs::directory_entry& e : fs::directory_iterator(dir_))
        if (e.path().filename().string().compare(0, 7, "stdout.") != 0 &&
            e.path().filename().string().compare(0, 7, "stderr.") != 0)
          names.insert(e.path().filename().string());
      return names;
    };
    const std::set<std::string> before = files();
    const command_result run =
        run_command({"/usr/bin/env", "LD_PRELOAD=" + library, "LOWALLOC_TRACE_FILE=" + base,
                     "/bin/sh", "-c", "exit 7"},
                    dir_);
    EXPECT_EQ(run.status, 7) << run.err;
    EXPECT_NE(run.err.find("4,095 bytes"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("the program runs on untraced"), std::string::npos) << run.err;
    EXPECT_EQ(read_text(victim), "precious data\n");
    EXPECT_EQ(files(), before) << "no file written";
    fs::remove(victim);
  }
}

// A FIFO: the recorder's open would wait for a reader before the program's main, hanging it
// without a word when there is none.
TEST_F(run_failures, a_fifo_is_refused_as_the_output) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  const command_result r =
      run_command({"/usr/bin/timeout", "-k", "5", "30", lowalloc_cli, "run", "-q", "-o", fifo, "--",
                   "touch", (dir_ / "marker").string()},
                  dir_);
  EXPECT_EQ(r.status, 125) << r.err;
  EXPECT_EQ(r.err,
            "lowalloc run: cannot write the trace to " + fifo +
                ": it is a FIFO (named pipe): the trace must be a file (touch was not run)\n");
  EXPECT_FALSE(fs::exists(dir_ / "marker")) << "the program ran";
  // /dev/null, a character device, is still taken: the trace is thrown away.
  EXPECT_EQ(run_touch("/dev/null").status, 0);
}

TEST_F(run_failures, a_read_only_working_directory_is_refused_for_the_default_name) {
  fs::path ro;
  const std::string reason = read_only_dir(ro);
  if (reason.empty()) GTEST_SKIP() << "no read-only directory can be made here";
  const command_result r =
      run_command({"/bin/sh", "-c", "cd \"$1\" && exec \"$0\" run -- touch \"$2\"", lowalloc_cli,
                   ro.string(), (dir_ / "marker").string()},
                  dir_);
  EXPECT_EQ(r.status, 125) << r.err;
  EXPECT_EQ(r.err, "lowalloc run: cannot write the trace in the working directory " + ro.string() +
                       ": " + reason + "; name a writable file with -o FILE (touch was not run)\n");
  EXPECT_FALSE(fs::exists(dir_ / "marker")) << "the program ran";
}

TEST_F(run_failures, a_writable_output_is_left_as_it_was_when_the_program_does_not_run) {
  // The check creates a missing file and removes it again: a run refused later (here: the
  // program is not found) leaves no empty trace behind.
  const std::string output = (dir_ / "x.trace").string();
  const command_result r = run_command(
      {lowalloc_cli, "run", "-q", "-o", output, "--", (dir_ / "no-such-program").string()}, dir_);
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_FALSE(fs::exists(output));
}

// ---------------------------------------------------------------------------------------------
// A write failure during the run: the recorder stops, and `lowalloc run` exits 125 though the
// program succeeded, giving the program's own status. The file is cut back to its last whole
// block and ends with STOPPED: a reader finds no damage, and says why the trace stops.

void expect_incomplete_trace(const command_result& r, const std::string& output,
                             const std::string& reason, const std::string& program_status) {
  EXPECT_EQ(r.status, 125) << r.err;
  try {
    analyze::options opts;
    opts.symbolize = false;
    const analyze::analysis a = analyze::analyze_file(output, opts);
    EXPECT_EQ(a.truncation, "");
    EXPECT_EQ(a.stopped.value_or("(not stopped)"), reason);
    EXPECT_FALSE(a.complete);
    EXPECT_FALSE(a.running);
    EXPECT_GT(a.totals.allocations, 0u);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  const command_result report =
      run_command({lowalloc_cli, "report", "--top", "0", output}, fs::temp_directory_path());
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_TRUE(contains(report.out, "\nthe recorder stopped: it could not write the trace (" +
                                       reason + "), and the program ran on untraced"))
      << report.out;
  EXPECT_FALSE(contains(report.out, "damaged")) << report.out;
  EXPECT_FALSE(contains(report.out, "did not finish")) << report.out;
  const command_result json =
      run_command({lowalloc_cli, "report", "--format", "json", output}, fs::temp_directory_path());
  EXPECT_TRUE(contains(json.out, "\n  \"stopped\": {\"reason\": \"" + reason + "\"},\n"))
      << json.out;
  const command_result processes =
      run_command({lowalloc_cli, "report", "--processes", output}, fs::temp_directory_path());
  EXPECT_TRUE(contains(processes.out, "  stopped  " + output)) << processes.out;
  const command_result check =
      run_command({lowalloc_cli, "check", "--max-allocations", "1000000000", output},
                  fs::temp_directory_path());
  EXPECT_EQ(check.status, 2) << check.err;
  EXPECT_TRUE(contains(check.err,
                       "the trace is incomplete: the recorder stopped writing the "
                       "trace (" +
                           reason + "), and the program ran on untraced"))
      << check.err;
  EXPECT_TRUE(contains(r.err, "lowalloc: cannot write the trace to " + output + ": " + reason +
                                  "; the program runs on untraced\n"))
      << r.err;
  EXPECT_TRUE(contains(r.err,
                       "lowalloc run: the trace could not be written completely (the recorder's "
                       "message is above); " +
                           program("crash") + " " + program_status + "; exiting with status 125\n"))
      << r.err;
}

TEST_F(run_failures, a_file_size_limit_reached_during_the_run_exits_125) {
  // RLIMIT_FSIZE of 8 KiB: the header and the first blocks fit, the rest fail with EFBIG (the
  // writer thread blocks SIGXFSZ, so the program is not killed by it).
  for (const char* end : {"exit", "segv"}) {
    SCOPED_TRACE(end);
    const std::string output = trace(end);
    const command_result r = run_command(
        {"/bin/sh", "-c", "ulimit -f 16 && exec \"$0\" run -q -o \"$1\" -- \"$2\" 100000 \"$3\"",
         lowalloc_cli, output, program("crash"), end},
        dir_);
    expect_incomplete_trace(r, output, std::strerror(EFBIG),
                            end == std::string("exit")
                                ? "exited with status 0"
                                : "was killed by signal 11 (Segmentation fault)");
    if (end == std::string("segv")) {  // not "could not write the events of each thread's last"
      EXPECT_TRUE(contains(r.err, "lowalloc run: " + program("crash") +
                                      " was killed by signal 11 (Segmentation fault); the "
                                      "recorder had stopped writing its trace before (its "
                                      "message is above)\n"))
          << r.err;
    }
    EXPECT_LE(fs::file_size(output), 8192u);
  }
}

TEST_F(run_failures, a_full_file_system_during_the_run_exits_125) {
  const fs::path small = dir_ / "small";
  fs::create_directory(small);
  if (mount("tmpfs", small.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  mounts_.push_back(small);
  const std::string output = (small / "x.trace").string();
  const command_result r = run_command(
      {lowalloc_cli, "run", "-q", "-o", output, "--", program("crash"), "100000", "exit"}, dir_);
  expect_incomplete_trace(r, output, std::strerror(ENOSPC), "exited with status 0");
}

// Four threads whose blocks reach the file while the main thread waits to join them: the main
// thread's block, which names the process and its modules, now goes first, as the threads start,
// and a file size limit leaves a trace that says which program it is and where its allocations
// were. Before, that block came last and failed: the file had the threads' blocks alone, no
// process, and frames as bare addresses.
TEST_F(run_failures, a_threaded_programs_stopped_trace_names_its_process_and_frames) {
  const std::string output = trace("threads");
  const command_result r = run_command(
      {"/bin/sh", "-c", "ulimit -f 16 && exec \"$0\" run -q -o \"$1\" -- \"$2\" 100000 4",
       lowalloc_cli, output, program("threads")},
      dir_);
  EXPECT_EQ(r.status, 125) << r.err;
  try {
    const analyze::analysis a = analyze::analyze_file(output);
    EXPECT_EQ(a.stopped.value_or("(not stopped)"), std::strerror(EFBIG));
    EXPECT_EQ(a.truncation, "");
    EXPECT_NE(a.process.pid, 0u);
    EXPECT_EQ(a.process.exe, fs::canonical(program("threads")).string());
    EXPECT_GT(a.totals.allocations, 0u);
    ASSERT_FALSE(a.sites.empty());
    ASSERT_FALSE(a.sites[0].stack.empty());
    EXPECT_EQ(a.sites[0].stack[0].function, "work") << a.sites[0].stack[0].address;
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
}

// A file that could not take one whole block holds no event: the recorder removes it, and `run`
// says there is no trace. Before, an empty or header-only file was left.
TEST_F(run_failures, a_file_size_limit_before_the_first_block_leaves_no_file) {
  const std::string output = trace("tiny");
  const command_result r = run_command(
      // (2 KiB: the limit holds for run's own stderr, a file here, too.)
      {"/bin/sh", "-c", "ulimit -f 4 && exec \"$0\" run -o \"$1\" -- \"$2\" 100000 exit",
       lowalloc_cli, output, program("crash")},
      dir_);
  EXPECT_EQ(r.status, 125) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "lowalloc run: no trace: the recorder could not write the block that "
                       "names the process and its libraries to " +
                           output + ", and removed the file (its message is above)\n"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "trace written")) << r.err;
  EXPECT_FALSE(fs::exists(output));
}

// A build under --follow-exec on a file system that fills up: every file left is a trace that
// reads without damage (ended, or STOPPED), the summary counts the files there are and the
// processes whose traces stopped, and no process that exited is said to have been killed. Before,
// it said "10 traces written" of 37 files, 27 of them empty, and warned that processes whose
// recorder had stopped were killed by SIGKILL.
TEST_F(run_failures, a_file_system_filled_by_many_processes_is_summed_up) {
  const fs::path small = dir_ / "small";
  fs::create_directory(small);
  if (mount("tmpfs", small.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  mounts_.push_back(small);
  const std::string output = (small / "x.trace").string();
  const command_result r =
      run_command({lowalloc_cli, "run", "--follow-exec", "-o", output, "--", "/bin/sh", "-c",
                   "for i in 1 2 3 4 5 6 7 8; do \"$0\" 100000 exit; done", program("crash")},
                  dir_);
  EXPECT_EQ(r.status, 125) << r.err;
  std::size_t files = 0, stopped = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(small)) {
    ++files;
    SCOPED_TRACE(e.path().string());
    try {
      analyze::options opts;
      opts.symbolize = false;
      const analyze::analysis a = analyze::analyze_file(e.path().string(), opts);
      EXPECT_EQ(a.truncation, "");
      EXPECT_TRUE(a.complete || a.stopped);
      EXPECT_GT(a.totals.allocations, 0u);
      if (a.stopped) ++stopped;
    } catch (const std::exception& ex) {
      ADD_FAILURE() << ex.what();
    }
  }
  std::size_t messages = 0;
  for (std::size_t at = 0;
       (at = r.err.find("lowalloc: cannot write the trace to ", at)) != std::string::npos; ++at)
    ++messages;
  EXPECT_GE(messages, 2u) << r.err;  // the file system did fill up
  EXPECT_TRUE(contains(r.err, "lowalloc run: " + std::to_string(files) +
                                  " traces written, one per process: " + output))
      << r.err;
  const std::string kept = stopped == 1 ? "1 trace ends" : std::to_string(stopped) + " traces end";
  const std::size_t none = messages - stopped;
  EXPECT_TRUE(contains(
      r.err, "lowalloc run: the recorder could not write the traces of " +
                 std::to_string(messages) + " processes (its messages are above): " +
                 (stopped == 0 ? std::string("none of them has a trace")
                  : none == 0  ? std::string("each trace ends where the writing failed")
                               : kept + " where the writing failed, " + std::to_string(none) +
                                    (none == 1 ? " process has none" : " processes have none")) +
                 "\n"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "SIGKILL")) << r.err;
}

TEST_F(run_failures, a_trace_removed_during_the_run_exits_125) {
  // The program removes its trace after its first blocks (a clean-up of the directory): the
  // recorder's descriptor still took the writes, where no name reached them, and `run` said
  // "trace written to" a file that was not there, with exit status 0. Removed early (blocks
  // written after) or late (the end alone written after), the same.
  for (const char* pairs : {"300000", "10"}) {
    SCOPED_TRACE(pairs);
    const std::string output = trace(std::string("removed-") + pairs);
    const command_result r = run_command(
        {lowalloc_cli, "run", "-o", output, "--", program("removes_trace"), pairs, output}, dir_);
    EXPECT_EQ(r.status, 125) << r.err;
    EXPECT_TRUE(contains(r.err, "lowalloc: cannot write the trace to " + output +
                                    ": the file was removed while the program ran; the program "
                                    "runs on untraced\n"))
        << r.err;
    EXPECT_TRUE(contains(r.err, "lowalloc run: no trace: " + output + " was removed while " +
                                    program("removes_trace") + " ran\n"))
        << r.err;
    EXPECT_FALSE(contains(r.err, "trace written")) << r.err;
    EXPECT_FALSE(fs::exists(output));
  }
}

// ---------------------------------------------------------------------------------------------
// Crashes: the crashing thread's events are written, the CRASH record says what was not, the
// exit status is the signal's, and a handler of the program's own keeps its behaviour.

constexpr long crash_allocations = 100018;

// The allocations of `crash K END` minus those of `crash 0 END`: the program's own.
struct crash_run {
  command_result run;
  analyze::analysis a;
  std::uint64_t own_allocations = 0;
};

class crash_test : public run_failures {
 protected:
  crash_run crash(const std::string& end, int expected_status,
                  const std::vector<std::string>& more = {},
                  const std::vector<std::string>& options = {}) {
    crash_run c;
    std::vector<std::string> args = {"0", end};
    args.insert(args.end(), more.begin(), more.end());
    const command_result baseline = run_crash("baseline", args, options);
    EXPECT_EQ(baseline.status, expected_status) << baseline.err;
    args[0] = std::to_string(crash_allocations);
    c.run = run_crash("x", args, options);
    EXPECT_EQ(c.run.status, expected_status) << c.run.err;
    c.a = read(trace("x"));
    c.own_allocations = c.a.totals.allocations - read(trace("baseline")).totals.allocations;
    return c;
  }

  std::string report(const std::string& format) {
    const command_result r =
        run_command({lowalloc_cli, "report", "--format", format, "--top", "1", trace("x")}, dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  }

  void expect_whole_crash(const std::string& end, int sig, const std::string& name,
                          const std::string& description) {
    const crash_run c = crash(end, 128 + sig);
    EXPECT_EQ(c.own_allocations, static_cast<std::uint64_t>(crash_allocations));
    EXPECT_FALSE(c.a.complete);
    EXPECT_EQ(c.a.truncation, "");
    ASSERT_TRUE(c.a.crash.has_value());
    EXPECT_EQ(c.a.crash->signal, sig);
    EXPECT_EQ(c.a.crash->tid, c.a.process.pid) << "the main thread crashed";
    EXPECT_TRUE(c.a.crash->thread_written);
    EXPECT_TRUE(c.a.crash->unwritten.empty());
    const std::string pid = std::to_string(c.a.process.pid);
    EXPECT_TRUE(contains(report("text"), "\nthe program was killed by signal " +
                                             std::to_string(sig) + " (" + name + ") in thread " +
                                             pid +
                                             "; no event is missing: the recorder wrote every "
                                             "thread's events up to the crash\n"))
        << report("text");
    EXPECT_TRUE(contains(report("json"), "  \"crash\": {\"signal\": " + std::to_string(sig) +
                                             ", \"signal_name\": \"" + name +
                                             "\", \"thread\": " + pid +
                                             ", \"thread_written\": true, \"writer_late\": false, "
                                             "\"more_threads\": false, \"ended\": false, "
                                             "\"unwritten\": []},\n"))
        << report("json");
    EXPECT_TRUE(
        contains(c.run.err, "lowalloc run: " + program("crash") + " was killed by signal " +
                                std::to_string(sig) + " (" + description +
                                "); the recorder wrote the crashing thread's last events; no event "
                                "is missing\n"))
        << c.run.err;
  }
};

TEST_F(crash_test, a_segfault_keeps_every_allocation_of_the_crashing_thread) {
  expect_whole_crash("segv", SIGSEGV, "SIGSEGV", "Segmentation fault");
}

TEST_F(crash_test, an_abort_keeps_every_allocation_of_the_crashing_thread) {
  expect_whole_crash("abort", SIGABRT, "SIGABRT", "Aborted");
}

TEST_F(crash_test, an_abort_inside_free_keeps_every_allocation_of_the_crashing_thread) {
  // The C library aborts inside the real free, called from the recorder's hook: the thread's
  // block is whole, and written.
  expect_whole_crash("double_free", SIGABRT, "SIGABRT", "Aborted");
}

TEST_F(crash_test, the_programs_own_handler_runs_and_chooses_the_exit_status) {
  const crash_run c = crash("handler", 7);
  EXPECT_EQ(c.run.out, "handled\n");
  EXPECT_FALSE(c.a.crash.has_value()) << "the recorder's handler ran in place of the program's";
  EXPECT_EQ(c.own_allocations, static_cast<std::uint64_t>(crash_allocations));
}

TEST_F(crash_test, another_threads_unwritten_block_is_reported_as_possibly_missing) {
  constexpr std::uint64_t other = 100;  // the other thread's allocations, all in its first block
  // The writer thread would write the block of the other thread, which waits, if the main thread
  // took a quarter of a second to crash (a loaded machine): it is told not to look.
  setenv("LOWALLOC_TRACE_IDLE_SCAN_US", "0", 1);
  const crash_run c = crash("thread", 128 + SIGSEGV, {std::to_string(other)});
  unsetenv("LOWALLOC_TRACE_IDLE_SCAN_US");
  ASSERT_TRUE(c.a.crash.has_value());
  const analyze::crash_info& k = *c.a.crash;
  EXPECT_EQ(k.tid, c.a.process.pid);
  EXPECT_TRUE(k.thread_written);
  ASSERT_EQ(k.unwritten.size(), 1u);
  EXPECT_NE(k.unwritten[0].tid, c.a.process.pid);
  EXPECT_EQ(k.unwritten[0].allocations, other);
  EXPECT_GE(k.unwritten[0].bytes, 3 * other);  // at least 3 bytes an ALLOC (format version 4)
  // The main thread's allocations are all there; pthread_create's own is in the baseline too.
  EXPECT_EQ(c.own_allocations, static_cast<std::uint64_t>(crash_allocations));
  const std::uint64_t frees = k.max_frees(k.unwritten[0]);
  EXPECT_TRUE(contains(report("text"),
                       "\nthe program was killed by signal 11 (SIGSEGV) in thread " +
                           std::to_string(k.tid) + "; the last events of thread " +
                           std::to_string(k.unwritten[0].tid) + " were not written: up to " +
                           std::to_string(other + frees) + " events (100 allocations and up to " +
                           std::to_string(frees) + (frees == 1 ? " free" : " frees") + ")\n"))
      << report("text");
  EXPECT_TRUE(contains(c.run.err,
                       "; up to 100 allocations (and the frees among them) of 1 other "
                       "thread were not written (lowalloc report " +
                           trace("x") + " names them)\n"))
      << c.run.err;
}

// ---------------------------------------------------------------------------------------------
// Signals sent to end the program (kill, Ctrl-C, a closed pipe, a timer): the recorder's handler
// finishes the trace as the exit does, every thread's events and END, then lets the signal end
// the program. Before, each thread's last block was lost: a pool's workers ended by SIGTERM showed
// 39,000 blocks leaked that they had freed.

// Every event of every thread, a whole trace, and the signal named: the run's blocks were made
// and freed, K kept, and at most one block per churning thread is between its malloc and free.
void expect_whole_end(const crash_run& c, int sig) {
  EXPECT_TRUE(c.a.complete);
  EXPECT_EQ(c.a.truncation, "");
  EXPECT_EQ(c.a.lost_events, 0u);
  EXPECT_EQ(c.a.unmatched_frees, 0u);
  ASSERT_TRUE(c.a.crash.has_value());
  EXPECT_EQ(c.a.crash->signal, sig);
  EXPECT_TRUE(c.a.crash->ended);
  EXPECT_TRUE(c.a.crash->thread_written);
  EXPECT_TRUE(c.a.crash->unwritten.empty());
  EXPECT_FALSE(c.a.crash->more_threads);
}

TEST_F(crash_test, a_signal_sent_to_end_the_program_keeps_every_event) {
  const struct {
    const char* end;
    int sig;
    const char* name;
    const char* description;
  } cases[] = {{"term", SIGTERM, "SIGTERM", "Terminated"},
               {"interrupt", SIGINT, "SIGINT", "Interrupt"},
               {"pipe", SIGPIPE, "SIGPIPE", "Broken pipe"}};
  for (const auto& e : cases) {
    SCOPED_TRACE(e.end);
    const crash_run c = crash(e.end, 128 + e.sig);
    expect_whole_end(c, e.sig);
    EXPECT_EQ(c.own_allocations, static_cast<std::uint64_t>(crash_allocations));
    EXPECT_EQ(c.a.totals.leaked_allocations - read(trace("baseline")).totals.leaked_allocations,
              static_cast<std::uint64_t>(crash_allocations));
    EXPECT_EQ(c.a.crash->tid, c.a.process.pid) << "sent to the main thread";
    const std::string pid = std::to_string(c.a.process.pid);
    const std::string sig = std::to_string(e.sig);
    EXPECT_TRUE(contains(report("text"), "\nthe program was ended by signal " + sig + " (" +
                                             e.name + "), received by thread " + pid +
                                             "; no event is missing: the recorder wrote every "
                                             "thread's events up to the signal\n"))
        << report("text");
    EXPECT_FALSE(contains(report("text"), "did not finish")) << report("text");
    EXPECT_TRUE(contains(report("json"), "  \"crash\": {\"signal\": " + sig +
                                             ", \"signal_name\": \"" + e.name +
                                             "\", \"thread\": " + pid +
                                             ", \"thread_written\": true, \"writer_late\": false, "
                                             "\"more_threads\": false, \"ended\": true, "
                                             "\"unwritten\": []},\n"))
        << report("json");
    const command_result processes =
        run_command({lowalloc_cli, "report", "--processes", "--format", "json", trace("x")}, dir_);
    EXPECT_TRUE(contains(processes.out, "\"ended\": \"signal\"")) << processes.out;
    EXPECT_TRUE(contains(processes.out, std::string("\"signal\": \"") + e.name + "\""))
        << processes.out;
    EXPECT_TRUE(contains(c.run.err, "lowalloc run: " + program("crash") + " was killed by signal " +
                                        sig + " (" + e.description +
                                        "); the recorder wrote every thread's events up to the "
                                        "signal: no event is missing\n"))
        << c.run.err;
  }
}

TEST_F(crash_test, another_threads_last_events_are_written_when_a_signal_ends_the_program) {
  // The other thread makes 1,000 blocks it keeps, then makes and frees blocks while the main
  // thread sends SIGTERM: its block is ended once it is outside an event, and written.
  constexpr std::uint64_t other = 1000;
  const crash_run c = crash("term_thread", 128 + SIGTERM, {std::to_string(other)});
  expect_whole_end(c, SIGTERM);
  EXPECT_FALSE(c.a.crash->deferred);
  EXPECT_GE(c.a.totals.leaked_allocations, crash_allocations + other);
  const std::int64_t own_leaked =
      static_cast<std::int64_t>(c.a.totals.leaked_allocations) -
      static_cast<std::int64_t>(read(trace("baseline")).totals.leaked_allocations);
  EXPECT_LE(std::abs(own_leaked - crash_allocations), 1) << "one block in flight at most";
}

TEST_F(crash_test, a_signal_that_comes_inside_the_recorder_waits_for_the_event_to_end) {
  // A timer's SIGALRM while the main thread makes and frees blocks as fast as it can: as often as
  // not it comes inside the recorder's hook. Runs until it did at least once.
  int deferred = 0, runs = 0;
  while (runs < 30 && deferred == 0) {
    ++runs;
    const crash_run c = crash("alarm", 128 + SIGALRM, {"20000"});
    expect_whole_end(c, SIGALRM);
    const std::int64_t own_leaked =
        static_cast<std::int64_t>(c.a.totals.leaked_allocations) -
        static_cast<std::int64_t>(read(trace("baseline")).totals.leaked_allocations);
    EXPECT_LE(std::abs(own_leaked - crash_allocations), 1) << "one block in flight at most";
    if (c.a.crash.has_value() && c.a.crash->deferred) ++deferred;
    if (HasFailure()) break;
  }
  EXPECT_EQ(deferred, 1) << "in " << runs << " runs";
}

TEST_F(crash_test, the_program_sees_the_default_action_where_the_recorder_stands_in) {
  // sigaction and signal show SIG_DFL; a handler of the program's own replaces the recorder's, and
  // setting SIG_DFL again puts it back: the second SIGTERM ends the program with a whole trace.
  // The same through __sysv_signal (strict ISO C's signal) and sigset, on SIGUSR1.
  const std::string expected = "default default default default\ndefault\nown\ndefault\n";
  const command_result untraced = run_command({program("crash"), "0", "shown"}, dir_);
  EXPECT_EQ(untraced.status, 128 + SIGTERM);
  EXPECT_EQ(untraced.out, expected);
  const crash_run c = crash("shown", 128 + SIGTERM);
  EXPECT_EQ(c.run.out, expected);
  expect_whole_end(c, SIGTERM);
  EXPECT_EQ(c.own_allocations, static_cast<std::uint64_t>(crash_allocations));
}

TEST_F(crash_test, a_vfork_child_leaves_the_parents_actions_as_they_were) {
  // The child shares the parent's memory: its signal(SIGINT, SIG_IGN) sets its own action only,
  // and the parent still sees SIG_DFL, with the recorder's handler standing in for it.
  const command_result untraced = run_command({program("crash"), "0", "vfork"}, dir_);
  EXPECT_EQ(untraced.status, 128 + SIGINT);
  EXPECT_EQ(untraced.out, "default\n");
  const crash_run c = crash("vfork", 128 + SIGINT);
  EXPECT_EQ(c.run.out, "default\n");
  expect_whole_end(c, SIGINT);
  EXPECT_EQ(c.own_allocations, static_cast<std::uint64_t>(crash_allocations));
}

TEST_F(crash_test, a_signal_that_comes_while_the_program_forks_ends_it_with_a_whole_trace) {
  // fork's handlers hold the recorder's locks between the prepare and the parent's return; the
  // exit's path needs them, so a signal there waits for the fork to return (in its handler, it
  // deadlocked). With 64 MiB touched, a fork takes about a millisecond, mostly in the system
  // call, and the signal mostly comes there: runs until one was deferred (the first, mostly).
  // Children untraced, and reaped by the kernel: the parent does little but fork.
  int deferred = 0, runs = 0;
  while (runs < 20 && deferred == 0) {
    ++runs;
    const crash_run c = crash("fork_alarm", 128 + SIGALRM, {"30000"}, {"--no-fork"});
    expect_whole_end(c, SIGALRM);
    EXPECT_GE(c.a.totals.allocations, static_cast<std::uint64_t>(crash_allocations));
    if (c.a.crash.has_value() && c.a.crash->deferred) ++deferred;
    if (HasFailure()) break;
  }
  EXPECT_EQ(deferred, 1) << "in " << runs << " runs";
}

TEST_F(crash_test, a_signal_let_through_by_ppolls_mask_ends_the_program) {
  // SIGTERM blocked but in ppoll: SIG_DFL ends the program there. The recorder's handler raises
  // it again, blocked until the handler returns, which restores the thread's mask; unless the
  // handler takes it out of that mask, ppoll returns EINTR and the program goes on.
  const command_result untraced = run_command({program("crash"), "0", "ppoll"}, dir_);
  EXPECT_EQ(untraced.status, 128 + SIGTERM);
  const crash_run c = crash("ppoll", 128 + SIGTERM);
  EXPECT_EQ(c.run.out, "");
  expect_whole_end(c, SIGTERM);
  EXPECT_EQ(c.own_allocations, static_cast<std::uint64_t>(crash_allocations));
}

TEST_F(crash_test, a_signal_held_until_the_program_sets_sig_dfl_finds_the_recorders_handler) {
  // sigset(SIGTERM, SIG_DFL) after SIG_HOLD delivers the held signal as it returns: the
  // recorder's handler must already stand in then, not the real SIG_DFL for a moment.
  const crash_run c = crash("sigset_hold", 128 + SIGTERM);
  EXPECT_EQ(c.run.out, "");
  expect_whole_end(c, SIGTERM);
  EXPECT_EQ(c.own_allocations, static_cast<std::uint64_t>(crash_allocations));
}

TEST_F(run_failures, python_installs_its_keyboard_interrupt_handler_under_the_recorder) {
  // python3 installs the handler that raises KeyboardInterrupt only when it finds SIGINT at
  // SIG_DFL: shown the recorder's handler, it left Ctrl-C to kill it outright.
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  if (run_command({"/usr/bin/env", "--default-signal=INT", "/bin/true"}, dir_).status != 0)
    GTEST_SKIP() << "env has no --default-signal (coreutils before 8.31)";
  // (env sets the default actions first: a shell's background job starts with SIGINT ignored.)
  const command_result r = run_command(
      {"/usr/bin/env", "--default-signal=INT,TERM,SEGV", lowalloc_cli, "run", "-q", "-o",
       trace("x"), "--", "/usr/bin/python3", "-c",
       "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
       "signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, "
       "signal.getsignal(signal.SIGSEGV) == signal.SIG_DFL)"},
      dir_);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "True True True\n");
  // (And the recorder did run in it.)
  EXPECT_GT(read(trace("x")).totals.allocations, 0u);
}

// ---------------------------------------------------------------------------------------------
// What `lowalloc run` says of a killed program's trace.

TEST_F(run_failures, a_program_killed_without_a_crash_handler_has_its_last_blocks_missing) {
  const std::string output = trace("x");
  const command_result r = run_command(
      {lowalloc_cli, "run", "-q", "-o", output, "--", program("self_kill"), "1000"}, dir_);
  EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
  EXPECT_EQ(r.err, "lowalloc run: " + program("self_kill") +
                       " was killed by signal 9 (Killed); the recorder could not write the "
                       "events of each thread's last block (up to 512 KiB of events per thread "
                       "are missing from " +
                       output + ")\n");
}

TEST_F(run_failures, a_recorder_path_that_is_not_a_file_is_named) {
  // Not "looked in bin/../lib/...": only the variable's value was tried.
  const std::string missing = (dir_ / "no-such-recorder.so").string();
  const command_result r = run_command({"/usr/bin/env", "LOWALLOC_TRACE_LIBRARY=" + missing,
                                        lowalloc_cli, "run", "-q", "-o", trace("x"), "--", "true"},
                                       dir_);
  EXPECT_EQ(r.status, 125) << r.err;
  EXPECT_EQ(r.err, "lowalloc run: LOWALLOC_TRACE_LIBRARY names " + missing +
                       ", which is not a file (true was not run)\n");
}

TEST_F(run_failures, a_program_killed_without_a_trace_says_there_is_none) {
  // A library that is not the recorder: nothing writes a trace.
  setenv("LOWALLOC_TRACE_LIBRARY", not_a_recorder.c_str(), 1);
  const command_result r = run_command(
      {lowalloc_cli, "run", "-q", "-o", trace("x"), "--", program("self_kill"), "10"}, dir_);
  unsetenv("LOWALLOC_TRACE_LIBRARY");
  EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
  EXPECT_TRUE(contains(r.err, "lowalloc run: " + program("self_kill") +
                                  " was killed by signal 9 (Killed); no trace was written\n"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "last complete block")) << r.err;
  EXPECT_FALSE(fs::exists(trace("x")));
}

}  // namespace
