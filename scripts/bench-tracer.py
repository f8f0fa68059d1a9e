#!/usr/bin/env python3
"""The tracer benchmark: programs run untraced, under `lowalloc run` and under heaptrack, in the
same run, with trace sizes and report times.

Usage: scripts/bench-tracer.py BUILD_DIR [--count N | --total N] [--reps R] [--threads 1,2]
                               [--lowalloc PATH]
       scripts/bench-tracer.py BUILD_DIR --corpus [--only NAME,...] [--reps R] [--quick]
                               [--workdir DIR] [--json OUT] [--pin] [--lowalloc PATH]
       scripts/bench-tracer.py BUILD_DIR [--name NAME] [--fresh PATH] [--reps R] [--json OUT]
                               [--pin] [--lowalloc PATH] -- CMD [ARG...]
  BUILD_DIR  a release build with bin/lowalloc and tests/bench/trace_workload
             (cmake --preset release && cmake --build --preset release)

Default mode: the string workload (tests/bench/trace_workload.cpp) builds COUNT std::strings of
random length 5..40 per thread (or --total of them shared by the threads), keeps 1%; prints a
Markdown table of wall-time and CPU-time medians (min..max) and the ratios that
docs/benchmarks.md quotes. `--threads 1,2,4,8,16,32 --total 1600000` shows whether what a
thread costs the recorder grows with the number of threads.

Corpus mode (--corpus): a corpus of programs, each run untraced, under `lowalloc run -o T --` and
under `heaptrack -o H`:
  string-1t, string-2t  the string workload, 1 and 2 threads
  cc1plus               GCC's compiler proper, -O2, on a generated translation unit of ~370 lines
                        of templates over <regex>, <map>, <unordered_map>, <sstream>, ...
  sqlite                sqlite3 inserting 100k rows in one transaction
  python-dict           python3 (PYTHONMALLOC=malloc) building a dict of 1M strings
  perl-words            perl counting the words of a generated text
  ninja                 ninja -n over a generated 20k-edge build.ninja
  cmake                 cmake configuring a one-executable project (fresh build dir each run)
  xz                    xz -T2 -1 compressing 100 MB of generated text
  deep-churn            std::strings made and destroyed 40 frames deep (tests/bench/corpus)
  distinct-stacks       2^18 x 4 distinct call stacks (tests/bench/corpus)
  distinct-stacks-4t    2^16 x 4 of them, made by each of 4 threads at once: the same stacks in
                        every thread
For each: allocation counts (lowalloc report's "allocations", heaptrack_print's "calls to
allocation functions"), wall and CPU time (user+sys of the process tree) of the three ways and
the traced/untraced ratios (of the medians, and the median of each repetition's own CPU ratio,
"paired"), the peak RSS of the three ways (of the largest process of the tree: the traced
program, or heaptrack_interpret), trace sizes (lowalloc's FILE and the FILE.PID of forked
children), time and peak RSS of `lowalloc report T`, `lowalloc report --format json T` and
`heaptrack_print`.
Inputs are generated deterministically into --workdir once and reused; the corpus programs are
compiled there with g++ -O2. --quick shrinks every workload about 10x (a smoke test; cmake
stays as it is, and cc1plus compiles one block of templates instead of 8, mostly the headers).
heaptrack runs with its address space limited to 8 GiB (see HEAPTRACK_ADDRESS_SPACE); a way that
fails is not run again for that program, and the failure is listed under the table.

One program of your own (`-- CMD [ARG...]`): measured as a corpus program is, the same table,
one row (named --name, default CMD's file name), 3 repetitions unless --reps; --fresh PATH is
removed before each run, for a command that creates an output it refuses to overwrite. CMD runs
in the current directory with the current environment. For example:
  scripts/bench-tracer.py build/release --fresh /tmp/c -- git clone -q --no-local . /tmp/c

Repetitions of the three ways are interleaved, so a burst of load on a shared machine hits them
alike; --pin runs everything on CPU 0.
"""
import argparse
import glob
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_SOURCES = os.path.join(ROOT, "tests", "bench", "corpus")
PYTHON = "/usr/bin/python3"
# heaptrack runs with at most this much address space: heaptrack_interpret 1.4 grew to 19 GB and
# died of std::bad_alloc recording cc1plus, and this machine is shared.
HEAPTRACK_ADDRESS_SPACE = 8 << 30


# --- the string workload, the default mode -------------------------------------------------------

def timed(cmd, env=None, cpu=None):
    """Wall seconds of cmd; its CPU seconds (user + system of it and its children) are appended
    to `cpu` if given."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def spread(values):
    return statistics.median(values), min(values), max(values)


def fmt(values, unit="s", scale=1.0):
    med, lo, hi = spread([v * scale for v in values])
    return f"{med:.3f} {unit} ({lo:.3f}..{hi:.3f})"


def fmt_ratio(values):
    med, lo, hi = spread(values)
    return f"{med:.2f}x ({lo:.2f}..{hi:.2f})"


def heaptrack_counts(path):
    out = subprocess.run(["heaptrack_print", "--print-peaks", "0", "--print-allocators", "0",
                          "--print-temporary", "0", "--print-leaks", "0", path],
                         check=True, capture_output=True, text=True).stdout
    return parse_heaptrack_calls(out)


def parse_heaptrack_calls(text):
    calls = re.search(r"calls to allocation functions: (\d+)", text)
    return int(calls.group(1)) if calls else None


def have_heaptrack():
    if shutil.which("heaptrack") and shutil.which("heaptrack_print"):
        return True
    print("bench-tracer: heaptrack not found (apt package heaptrack); measuring without it",
          file=sys.stderr)
    return False


def string_mode(args, lowalloc, workload):
    with_heaptrack = have_heaptrack()
    tmp = tempfile.mkdtemp(prefix="lowalloc-bench-")
    rows = []
    try:
        for threads in [int(t) for t in args.threads.split(",")]:
            count = args.total // threads if args.total else args.count
            prog = [workload, str(count), str(threads)]
            plain, ours, theirs = [], [], []
            cpu = ([], [], [])  # untraced, lowalloc, heaptrack
            ours_report, theirs_report = [], []
            ours_bytes = theirs_bytes = 0
            ours_allocs = theirs_allocs = None
            for rep in range(args.reps):
                plain.append(timed(prog, cpu=cpu[0]))
                trace = os.path.join(tmp, "l.trace")
                ours.append(timed([lowalloc, "run", "-q", "-o", trace, "--"] + prog, cpu=cpu[1]))
                ours_bytes = os.path.getsize(trace)
                ours_report.append(timed([lowalloc, "report", trace]))
                if ours_allocs is None:
                    j = json.loads(subprocess.run([lowalloc, "report", "--format", "json", "--top", "0",
                                                   trace], check=True, capture_output=True,
                                                  text=True).stdout)
                    ours_allocs = j["allocations"]
                if with_heaptrack:
                    for f in glob.glob(os.path.join(tmp, "h.*")):
                        os.remove(f)
                    theirs.append(timed(["heaptrack", "-o", os.path.join(tmp, "h")] + prog,
                                        cpu=cpu[2]))
                    hfile = glob.glob(os.path.join(tmp, "h.*"))[0]
                    theirs_bytes = os.path.getsize(hfile)
                    theirs_report.append(timed(["heaptrack_print", hfile]))
                    if theirs_allocs is None:
                        theirs_allocs = heaptrack_counts(hfile)
            rows.append((threads, plain, ours, theirs, ours_report, theirs_report, ours_bytes,
                         theirs_bytes, ours_allocs, theirs_allocs, count, cpu))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    if args.total:
        print(f"workload: {args.total:,} strings shared by the threads, {args.reps} repetitions, "
              "median (min..max)\n")
    else:
        print(f"workload: {args.count:,} strings per thread, {args.reps} repetitions, "
              "median (min..max)\n")
    print("| threads | strings per thread | untraced | lowalloc run | ratio | heaptrack | ratio | "
          "CPU untraced | CPU ratio lowalloc | CPU ratio heaptrack | "
          "bytes/alloc lowalloc | bytes/alloc heaptrack | report | heaptrack_print |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base_ratio = base_cpu = None
    for (threads, plain, ours, theirs, orep, trep, obytes, tbytes, oallocs, tallocs, count,
         cpu) in rows:
        p = statistics.median(plain)
        r_ours = statistics.median(ours) / p
        r_theirs = statistics.median(theirs) / p if theirs else float("nan")
        # CPU ratios of the repetitions (each against the untraced run of its own repetition).
        c_ours = [t / u for u, t in zip(cpu[0], cpu[1])]
        c_theirs = [t / u for u, t in zip(cpu[0], cpu[2])]
        if base_ratio is None:
            base_ratio, base_cpu = r_ours, statistics.median(c_ours)
        print(f"| {threads} | {count:,} | {fmt(plain)} | {fmt(ours)} | {r_ours:.2f}x | "
              f"{fmt(theirs) if theirs else '-'} | {r_theirs:.2f}x | {fmt(cpu[0])} | "
              f"{fmt_ratio(c_ours)} | {fmt_ratio(c_theirs) if c_theirs else '-'} | "
              f"{obytes / oallocs:.3f} ({oallocs:,} allocs) | "
              f"{(tbytes / tallocs) if tallocs else float('nan'):.3f} "
              f"({tallocs if tallocs else 0:,} allocs) | "
              f"{fmt(orep)} | {fmt(trep) if trep else '-'} |")
    if len(rows) > 1:
        last = statistics.median(rows[-1][2]) / statistics.median(rows[-1][1])
        last_cpu = statistics.median([t / u for u, t in zip(rows[-1][11][0], rows[-1][11][1])])
        print(f"\nlowalloc slowdown with {rows[-1][0]} threads vs 1: "
              f"{last:.2f}x / {base_ratio:.2f}x = {(last / base_ratio - 1) * 100:+.1f}% wall, "
              f"{last_cpu:.2f}x / {base_cpu:.2f}x = {(last_cpu / base_cpu - 1) * 100:+.1f}% CPU")


# --- generated inputs ----------------------------------------------------------------------------

def write_once(path, make_text):
    """Writes make_text() to path unless it is there (a finished file: written aside, renamed)."""
    if not os.path.exists(path):
        with open(path + ".part", "w") as f:
            f.write(make_text())
        os.replace(path + ".part", path)
    return path


def vocabulary(rng, size):
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(size)]


def text_lines(seed, nbytes):
    """Lines of 12 words drawn from 50k words by a Zipf-like law, about nbytes in all."""
    rng = random.Random(seed)
    words = vocabulary(rng, 50000)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    chunks, size = [], 0
    while size < nbytes:
        drawn = rng.choices(words, weights=weights, k=120000)
        chunk = "\n".join(" ".join(drawn[i:i + 12]) for i in range(0, len(drawn), 12)) + "\n"
        chunks.append(chunk)
        size += len(chunk)
    return "".join(chunks)[:nbytes].rsplit("\n", 1)[0] + "\n"


TU_HEADER = """\
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
"""

TU_BLOCK = """
namespace block{k} {{
template <typename T, int N>
struct table {{
  std::map<std::string, std::vector<T>> rows;
  std::unordered_map<T, std::string> names;
  void add(const std::string& key, T value) {{
    rows[key].push_back(static_cast<T>(value * N));
    names.emplace(value, key);
  }}
  std::vector<std::pair<std::string, T>> sorted() const {{
    std::vector<std::pair<std::string, T>> out;
    for (const auto& [key, values] : rows)
      for (T v : values) out.emplace_back(key, v);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {{
      return a.second < b.second || (a.second == b.second && a.first < b.first);
    }});
    return out;
  }}
}};

std::string run(const std::string& text) {{
  static const std::regex word(R"(([a-z]+)-{k}([0-9]*))");
  table<{type}, {k}> t;
  std::istringstream in(text);
  std::string token;
  while (in >> token) {{
    std::smatch m;
    if (std::regex_match(token, m, word)) t.add(m[1].str(), static_cast<{type}>(m[2].length()));
  }}
  std::ostringstream out;
  std::function<void(const std::pair<std::string, {type}>&)> emit = [&out](const auto& p) {{
    out << p.first << '=' << p.second << '\\n';
  }};
  auto rows = t.sorted();
  std::for_each(rows.begin(), rows.end(), emit);
  auto longest = std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {{
    return a.first.size() < b.first.size();
  }});
  if (longest != rows.end()) out << "longest " << longest->first << '\\n';
  return out.str();
}}
}}  // namespace block{k}
"""


def translation_unit(blocks):
    types = ["long", "int", "unsigned", "short", "long long", "unsigned long"]
    parts = [TU_HEADER]
    parts += [TU_BLOCK.format(k=k, type=types[k % len(types)]) for k in range(blocks)]
    calls = "".join(f"  total += block{k}::run(text).size();\n" for k in range(blocks))
    parts.append("\nint main() {\n  std::string text;\n  std::getline(std::cin, text);\n"
                 f"  std::size_t total = 0;\n{calls}  std::cout << total << '\\n';\n}}\n")
    return "".join(parts)


def sql_script(rows):
    rng = random.Random(3)
    words = vocabulary(rng, 5000)
    lines = ["PRAGMA journal_mode=OFF;", "PRAGMA synchronous=OFF;", "BEGIN;",
             "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, value REAL);"]
    lines += [f"INSERT INTO t VALUES({i}, '{rng.choice(words)}-{rng.choice(words)}-{i}', "
              f"{rng.randrange(1000)}, {rng.randrange(10**6) / 100});" for i in range(rows)]
    lines += ["CREATE INDEX t_name ON t(name);", "COMMIT;",
              "SELECT grp, count(*), sum(value) FROM t GROUP BY grp ORDER BY 3 DESC LIMIT 5;"]
    return "\n".join(lines) + "\n"


def ninja_file(sources):
    """sources gen edges, as many cc edges (each with an implicit input) and one link per 100."""
    out = ["rule gen\n  command = touch $out\n", "rule cc\n  command = cc -c $in -o $out\n",
           "rule link\n  command = cc $in -o $out\n"]
    out += [f"build src/f{i}.c: gen\n" for i in range(sources)]
    out += [f"build obj/f{i}.o: cc src/f{i}.c | src/f{i * 7919 % sources}.c\n"
            for i in range(sources)]
    programs = []
    for p in range(0, sources, 100):
        objs = " ".join(f"obj/f{i}.o" for i in range(p, min(p + 100, sources)))
        out.append(f"build bin/p{p // 100}: link {objs}\n")
        programs.append(f"bin/p{p // 100}")
    out.append(f"build all: phony {' '.join(programs)}\ndefault all\n")
    return "".join(out)


PYTHON_DICT = """\
import sys
d = {}
for i in range(int(sys.argv[1])):
    d["key-%d" % i] = str(i * 7919) + "-value"
print(len(d))
"""

PERL_WORDS = ('my %c; while (<>) { $c{$_}++ for split } '
              'my @top = (sort { $c{$b} <=> $c{$a} || $a cmp $b } keys %c)[0..9]; '
              'print scalar(keys %c), " words, top: @top\\n";')

CMAKE_PROJECT = "cmake_minimum_required(VERSION 3.16)\nproject(x CXX)\nadd_executable(x main.cpp)\n"


def compiled(workdir, name):
    """tests/bench/corpus/NAME.cpp built with g++ -O2 into the workdir (again when it changed)."""
    source = os.path.join(CORPUS_SOURCES, name + ".cpp")
    binary = os.path.join(workdir, name)
    if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(source):
        subprocess.run(["g++", "-O2", "-pthread", "-o", binary, source], check=True)
    return binary


def cc1plus_command(source, output):
    """cc1plus's own command line for `g++ -O2 -c source`, writing its assembly to output."""
    lines = subprocess.run(["g++", "-O2", "-c", source, "-###"], check=True, capture_output=True,
                           text=True).stderr.splitlines()
    cmd = next(argv for argv in map(shlex.split, lines)
               if argv and os.path.basename(argv[0]) == "cc1plus")
    cmd[cmd.index("-o") + 1] = output
    return cmd


# --- the corpus ----------------------------------------------------------------------------------

class Program:
    """A corpus entry: its command (from prepare), the tools it needs as {executable: apt package}."""

    def __init__(self, name, tools, prepare):
        self.name, self.tools, self.prepare = name, tools, prepare


class Command:
    def __init__(self, argv, env=None, fresh=None):
        self.argv = argv
        self.env = env
        self.fresh = fresh  # a path removed before each run


def string_workload(threads):
    def prepare(ctx):
        count = int(1_000_000 * ctx.scale)
        return Command([ctx.workload, str(count), str(threads)])
    return prepare


def prepare_cc1plus(ctx):
    source = write_once(os.path.join(ctx.workdir, "big.cpp"),
                        lambda: translation_unit(8 if ctx.scale == 1 else 1))
    return Command(cc1plus_command(source, os.path.join(ctx.tmp, "big.s")))


def prepare_sqlite(ctx):
    rows = int(100_000 * ctx.scale)
    script = write_once(os.path.join(ctx.workdir, f"insert-{rows}.sql"), lambda: sql_script(rows))
    db = os.path.join(ctx.tmp, "corpus.db")
    return Command(["sqlite3", db, f".read {script}"], fresh=db)


def prepare_python(ctx):
    env = dict(os.environ, PYTHONMALLOC="malloc")
    return Command([PYTHON, "-c", PYTHON_DICT, str(int(1_000_000 * ctx.scale))], env=env)


def prepare_perl(ctx):
    nbytes = int(6_000_000 * ctx.scale)
    text = write_once(os.path.join(ctx.workdir, f"words-{nbytes}.txt"),
                      lambda: text_lines(5, nbytes))
    return Command(["perl", "-e", PERL_WORDS, text])


def prepare_ninja(ctx):
    sources = int(10_000 * ctx.scale)
    directory = os.path.join(ctx.workdir, f"ninja-{sources}")
    os.makedirs(directory, exist_ok=True)
    write_once(os.path.join(directory, "build.ninja"), lambda: ninja_file(sources))
    return Command(["ninja", "-n", "-C", directory], fresh=os.path.join(directory, ".ninja_log"))


def prepare_cmake(ctx):
    project = os.path.join(ctx.workdir, "cmake-project")
    os.makedirs(project, exist_ok=True)
    write_once(os.path.join(project, "CMakeLists.txt"), lambda: CMAKE_PROJECT)
    write_once(os.path.join(project, "main.cpp"), lambda: "int main() { return 0; }\n")
    build = os.path.join(ctx.tmp, "cmake-build")
    return Command(["cmake", "-S", project, "-B", build], fresh=build)


def prepare_xz(ctx):
    nbytes = int(100_000_000 * ctx.scale)
    data = write_once(os.path.join(ctx.workdir, f"text-{nbytes}.txt"),
                      lambda: text_lines(8, nbytes))
    return Command(["xz", "-T2", "-1", "-c", data])


def prepare_deep_churn(ctx):
    return Command([compiled(ctx.workdir, "deep_churn"), str(int(4_000_000 * ctx.scale))])


def prepare_distinct_stacks(ctx):
    return Command([compiled(ctx.workdir, "distinct_stacks"), "18" if ctx.scale == 1 else "15"])


def prepare_distinct_stacks_4t(ctx):
    return Command([compiled(ctx.workdir, "distinct_stacks"), "16" if ctx.scale == 1 else "13",
                    "4"])


CORPUS = [
    Program("string-1t", {}, string_workload(1)),
    Program("string-2t", {}, string_workload(2)),
    Program("cc1plus", {"g++": "g++"}, prepare_cc1plus),
    Program("sqlite", {"sqlite3": "sqlite3"}, prepare_sqlite),
    Program("python-dict", {PYTHON: "python3"}, prepare_python),
    Program("perl-words", {"perl": "perl"}, prepare_perl),
    Program("ninja", {"ninja": "ninja-build"}, prepare_ninja),
    Program("cmake", {"cmake": "cmake", "g++": "g++"}, prepare_cmake),
    Program("xz", {"xz": "xz-utils"}, prepare_xz),
    Program("deep-churn", {"g++": "g++"}, prepare_deep_churn),
    Program("distinct-stacks", {"g++": "g++"}, prepare_distinct_stacks),
    Program("distinct-stacks-4t", {"g++": "g++"}, prepare_distinct_stacks_4t),
]


# --- measuring -----------------------------------------------------------------------------------

class Run:
    """One process tree's wall time, CPU time (user+sys) and peak RSS (KiB), and its exit code."""

    def __init__(self, wall, cpu, rss_kib, code):
        self.wall, self.cpu, self.rss_kib, self.code = wall, cpu, rss_kib, code


def limit_address_space(size):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (size, size))


def measure(argv, stdout=subprocess.DEVNULL, env=None, pin=False, address_space=None):
    """Runs argv under GNU time for its peak RSS: wait4's ru_maxrss of a child forked from this
    (large) Python process starts at this process's own RSS."""
    if pin:
        argv = ["taskset", "-c", "0"] + argv
    with tempfile.NamedTemporaryFile(mode="r", prefix="bench-tracer-rss-") as rss:
        start = time.perf_counter()
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss.name] + argv,
                                stdout=stdout, stderr=subprocess.DEVNULL, env=env,
                                preexec_fn=address_space and limit_address_space(address_space))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        lines = rss.read().split()
    rss_kib = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    return Run(wall, usage.ru_utime + usage.ru_stime, rss_kib, proc.returncode)


def exit_text(code):
    if code > 128 and code - 128 in signal.valid_signals():
        return f"{code} ({signal.Signals(code - 128).name})"
    return str(code)


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def traced_files(prefix):
    """FILE and the FILE.PID of the forked children that `lowalloc run -o FILE` traced."""
    children = glob.glob(glob.escape(prefix) + ".[0-9]*")
    return ([prefix] if os.path.exists(prefix) else []) + sorted(children)


class Result:
    """The measurements of one corpus program over the repetitions."""

    def __init__(self, name, argv):
        self.name, self.argv, self.notes, self.failed = name, argv, [], set()
        self.wall = {"untraced": [], "lowalloc": [], "heaptrack": []}
        self.cpu = {"untraced": [], "lowalloc": [], "heaptrack": []}
        self.rss_kib = {"untraced": [], "lowalloc": [], "heaptrack": []}  # the tree's largest
        # Each repetition's CPU traced / untraced, for the repetitions where both ran: a ratio
        # within one repetition, whose runs follow each other, is not moved by the machine's
        # load drifting between repetitions as a ratio of the medians is.
        self.paired = {"lowalloc": [], "heaptrack": []}
        self.allocs = {"lowalloc": [], "heaptrack": []}
        self.trace_bytes = {"lowalloc": [], "heaptrack": []}
        self.trace_files = []
        self.report = {w: {"wall": [], "rss_kib": []}
                       for w in ("lowalloc report", "lowalloc report json", "heaptrack_print")}
        self.lowalloc_by_function = None

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def add_report(self, way, runs):
        self.report[way]["wall"].append(sum(r.wall for r in runs))
        self.report[way]["rss_kib"].append(max(r.rss_kib for r in runs))


def run_way(result, way, argv, command, pin, address_space=None):
    """Runs one way of the program; after a failure, that way is not tried again."""
    if way in result.failed:
        return False
    if command.fresh:
        remove(command.fresh)
    run = measure(argv, env=command.env, pin=pin, address_space=address_space)
    if run.code != 0:
        result.failed.add(way)
        result.note(f"{way} exited {exit_text(run.code)} after {run.wall:.1f} s; not run again")
        return False
    result.wall[way].append(run.wall)
    result.cpu[way].append(run.cpu)
    result.rss_kib[way].append(run.rss_kib)
    return True


def lowalloc_reports(result, lowalloc, files, tmp, pin):
    text, js, allocs = [], [], 0
    by_function = {}
    for f in files:
        text.append(measure([lowalloc, "report", f], pin=pin))
        out = os.path.join(tmp, "report.json")
        with open(out, "w") as sink:
            js.append(measure([lowalloc, "report", "--format", "json", f], stdout=sink, pin=pin))
        if text[-1].code or js[-1].code:
            result.note(f"lowalloc report exited {exit_text(text[-1].code or js[-1].code)} on {f}")
            return
        with open(out) as source:
            report = json.load(source)
        os.remove(out)
        allocs += report["allocations"]
        for fn, n in report.get("by_function", {}).items():
            by_function[fn] = by_function.get(fn, 0) + n
        if not report.get("complete", True) or report.get("lost_events") or report.get("truncation"):
            result.note(f"lowalloc trace {os.path.basename(f)}: complete={report.get('complete')} "
                        f"lost_events={report.get('lost_events')} "
                        f"truncation={report.get('truncation')}")
    result.add_report("lowalloc report", text)
    result.add_report("lowalloc report json", js)
    result.allocs["lowalloc"].append(allocs)
    result.lowalloc_by_function = by_function


def heaptrack_report(result, path, tmp, pin):
    out = os.path.join(tmp, "heaptrack_print.txt")
    with open(out, "w") as sink:
        run = measure(["heaptrack_print", path], stdout=sink, pin=pin)
    with open(out, errors="replace") as source:
        calls = parse_heaptrack_calls(source.read())
    os.remove(out)
    if run.code or calls is None:
        result.note(f"heaptrack_print exited {exit_text(run.code)}, no allocation count")
        return
    result.add_report("heaptrack_print", [run])
    result.allocs["heaptrack"].append(calls)


def measure_program(program, ctx):
    command = program.prepare(ctx)
    result = Result(program.name, command.argv)
    trace = os.path.join(ctx.tmp, "l.trace")
    heap = os.path.join(ctx.tmp, "h")
    for _ in range(ctx.reps):
        if not run_way(result, "untraced", command.argv, command, ctx.pin):
            break
        untraced_cpu = result.cpu["untraced"][-1]
        for f in traced_files(trace):
            os.remove(f)
        if run_way(result, "lowalloc", [ctx.lowalloc, "run", "-q", "-o", trace, "--"] +
                   command.argv, command, ctx.pin):
            if untraced_cpu > 0:
                result.paired["lowalloc"].append(result.cpu["lowalloc"][-1] / untraced_cpu)
            files = traced_files(trace)
            result.trace_files.append(len(files))
            result.trace_bytes["lowalloc"].append(sum(os.path.getsize(f) for f in files))
            lowalloc_reports(result, ctx.lowalloc, files, ctx.tmp, ctx.pin)
        for f in traced_files(trace):
            os.remove(f)
        if not ctx.heaptrack:
            continue
        for f in glob.glob(heap + ".*"):
            os.remove(f)
        if run_way(result, "heaptrack", ["heaptrack", "-o", heap] + command.argv, command,
                   ctx.pin, HEAPTRACK_ADDRESS_SPACE):
            if untraced_cpu > 0:
                result.paired["heaptrack"].append(result.cpu["heaptrack"][-1] / untraced_cpu)
            hfile = (glob.glob(heap + ".*") or [None])[0]
            if hfile is None:
                result.note("heaptrack wrote no file")
                continue
            result.trace_bytes["heaptrack"].append(os.path.getsize(hfile))
            heaptrack_report(result, hfile, ctx.tmp, ctx.pin)
            os.remove(hfile)
    if command.fresh:
        remove(command.fresh)
    return result


# --- the table -----------------------------------------------------------------------------------

def median(values):
    return statistics.median(values) if values else None


def ratio(traced, untraced):
    return median(traced) / median(untraced) if traced and untraced else None


def cell_time(values):
    if not values:
        return "-"
    med, lo, hi = spread(values)
    return f"{med:.2f} ({lo:.2f}..{hi:.2f})"


def cell_ratio(value):
    return "-" if value is None else f"{value:.2f}x"


def cell_paired(values):
    return fmt_ratio(values) if values else "-"


def cell_count(values):
    if not values:
        return "-"
    med = int(median(values))
    return f"{med:,}" if min(values) == max(values) else f"{med:,} ({min(values):,}..{max(values):,})"


def cell_trace(sizes, allocs):
    if not sizes:
        return "-"
    size = median(sizes)
    per = f" {size / median(allocs):.1f} B/a" if allocs and median(allocs) else ""
    return (f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB") + per


def cell_peaks(rss_kib):
    """The median peak RSS of each way, in MB."""
    return " / ".join("-" if not rss_kib[w] else f"{median(rss_kib[w]) / 1024:.0f}"
                      for w in ("untraced", "lowalloc", "heaptrack"))


def cell_report(report):
    if not report["wall"]:
        return "-"
    return f"{median(report['wall']):.2f} s {max(report['rss_kib']) / 1024:.0f} MB"


def ratios(result):
    return {"wall lowalloc": ratio(result.wall["lowalloc"], result.wall["untraced"]),
            "wall heaptrack": ratio(result.wall["heaptrack"], result.wall["untraced"]),
            "cpu lowalloc": ratio(result.cpu["lowalloc"], result.cpu["untraced"]),
            "cpu heaptrack": ratio(result.cpu["heaptrack"], result.cpu["untraced"]),
            "cpu paired lowalloc": median(result.paired["lowalloc"]),
            "cpu paired heaptrack": median(result.paired["heaptrack"])}


def diff_cell(result):
    ours, theirs = median(result.allocs["lowalloc"]), median(result.allocs["heaptrack"])
    if ours is None or theirs is None:
        return "-"
    return f"{int(ours - theirs):+,}"


def print_table(results, ctx):
    print(f"lowalloc: {ctx.lowalloc}; {ctx.reps} repetitions, "
          f"{'quick (~1/10 workloads), ' if ctx.scale != 1 else ''}"
          f"{'pinned to CPU 0, ' if ctx.pin else ''}times in s as median (min..max); "
          "CPU = user+sys of the process tree; x = traced/untraced median; paired = the median "
          "(min..max) of each repetition's CPU traced/untraced; "
          "peak MB = the median peak RSS of the largest process of the tree, untraced / "
          "lowalloc / heaptrack; reports: median time, peak RSS\n")
    print("| program | allocs lowalloc | allocs heaptrack | diff | wall untraced | wall lowalloc | x "
          "| wall heaptrack | x | CPU untraced | CPU x lowalloc | CPU x heaptrack "
          "| CPU paired lowalloc | CPU paired heaptrack | peak MB "
          "| trace lowalloc | trace heaptrack | report | report json | heaptrack_print |")
    print("|---|" + "---:|" * 19)
    for r in results:
        x = ratios(r)
        print(f"| {r.name} | {cell_count(r.allocs['lowalloc'])} | "
              f"{cell_count(r.allocs['heaptrack'])} | {diff_cell(r)} | "
              f"{cell_time(r.wall['untraced'])} | {cell_time(r.wall['lowalloc'])} | "
              f"{cell_ratio(x['wall lowalloc'])} | {cell_time(r.wall['heaptrack'])} | "
              f"{cell_ratio(x['wall heaptrack'])} | {cell_time(r.cpu['untraced'])} | "
              f"{cell_ratio(x['cpu lowalloc'])} | {cell_ratio(x['cpu heaptrack'])} | "
              f"{cell_paired(r.paired['lowalloc'])} | {cell_paired(r.paired['heaptrack'])} | "
              f"{cell_peaks(r.rss_kib)} | "
              f"{cell_trace(r.trace_bytes['lowalloc'], r.allocs['lowalloc'])} | "
              f"{cell_trace(r.trace_bytes['heaptrack'], r.allocs['heaptrack'])} | "
              f"{cell_report(r.report['lowalloc report'])} | "
              f"{cell_report(r.report['lowalloc report json'])} | "
              f"{cell_report(r.report['heaptrack_print'])} |")
    summary = corpus_medians(results)
    print("\nmedian over the corpus of the traced/untraced ratios: " + ", ".join(
        f"{k} {cell_ratio(v)}" for k, v in summary.items()))
    for r in results:
        for n in r.notes:
            print(f"- {r.name}: {n}")
        if r.trace_files and max(r.trace_files) > 1:
            print(f"- {r.name}: lowalloc wrote {max(r.trace_files)} trace files (forked children)")


def corpus_medians(results):
    all_ratios = [ratios(r) for r in results]
    return {k: median([x[k] for x in all_ratios if x[k] is not None])
            for k in ("wall lowalloc", "wall heaptrack", "cpu lowalloc", "cpu heaptrack",
                      "cpu paired lowalloc", "cpu paired heaptrack")}


def write_json(path, results, ctx):
    doc = {"lowalloc": ctx.lowalloc, "reps": ctx.reps, "scale": ctx.scale, "pin": ctx.pin,
           "summary": corpus_medians(results),
           "programs": [{"name": r.name, "argv": r.argv, "notes": r.notes, "wall": r.wall,
                         "cpu": r.cpu, "cpu_paired": r.paired, "ratios": ratios(r),
                         "peak_rss_kib": r.rss_kib,
                         "allocations": r.allocs,
                         "lowalloc_by_function": r.lowalloc_by_function,
                         "trace_bytes": r.trace_bytes, "lowalloc_trace_files": r.trace_files,
                         "reports": r.report} for r in results]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


# --- corpus mode ---------------------------------------------------------------------------------

class Context:
    """What every corpus program's preparation and measurement needs."""

    def __init__(self, args, lowalloc, workload, tmp):
        self.lowalloc, self.workload, self.tmp = lowalloc, workload, tmp
        self.reps, self.pin = args.reps, args.pin
        self.scale = 0.1 if args.quick else 1
        self.workdir = os.path.join(os.path.abspath(args.workdir), "quick" if args.quick else "full")
        self.heaptrack = have_heaptrack()


def selected(only, command=None):
    if command is not None:
        return [command]
    if not only:
        return CORPUS
    names = only.split(",")
    unknown = set(names) - {p.name for p in CORPUS}
    if unknown:
        sys.exit(f"bench-tracer: no corpus program {', '.join(sorted(unknown))}; the corpus: "
                 + ", ".join(p.name for p in CORPUS))
    return [p for p in CORPUS if p.name in names]


def missing_tools(program):
    return [f"{tool} (apt package {package})" for tool, package in program.tools.items()
            if not shutil.which(tool)]


def corpus_mode(args, lowalloc, workload):
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("bench-tracer: /usr/bin/time not found (apt package time); it measures peak RSS")
    os.makedirs(args.workdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="lowalloc-bench-", dir=args.workdir)
    ctx = Context(args, lowalloc, workload, tmp)
    os.makedirs(ctx.workdir, exist_ok=True)
    results = []
    try:
        for program in selected(args.only, getattr(args, "program", None)):
            missing = missing_tools(program)
            if missing:
                print(f"bench-tracer: skipping {program.name}: missing {', '.join(missing)}",
                      file=sys.stderr)
                continue
            print(f"bench-tracer: {program.name}", file=sys.stderr)
            results.append(measure_program(program, ctx))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_table(results, ctx)
    if args.json:
        write_json(args.json, results, ctx)


def split_command(argv, tool):
    """The options before `--` and the command after it (None without `--`)."""
    if "--" not in argv:
        return argv, None
    command = argv[argv.index("--") + 1:]
    if not command:
        sys.exit(f"{tool}: nothing after --; give the command to measure")
    return argv[:argv.index("--")], command


def main():
    # `-- CMD [ARG...]`: one program of the user's, measured as a corpus program is.
    argv, command = split_command(sys.argv[1:], "bench-tracer")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--count", type=int, default=1000000, help="strings per thread (default mode)")
    ap.add_argument("--reps", type=int, help="repetitions (default 7, with --corpus 3)")
    ap.add_argument("--threads", default="1,2", help="thread counts (default mode)")
    ap.add_argument("--total", type=int,
                    help="strings in all, shared by the threads (default mode; instead of --count):"
                         " the same work at every thread count, so that the CPU ratios show what"
                         " a thread costs as threads are added")
    ap.add_argument("--lowalloc", help="the lowalloc binary (default BUILD_DIR/bin/lowalloc)")
    ap.add_argument("--corpus", action="store_true", help="measure the corpus of programs")
    ap.add_argument("--only", help="corpus programs to measure, comma-separated")
    ap.add_argument("--quick", action="store_true", help="corpus workloads ~10x smaller")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "lowalloc-bench-corpus"),
                    help="where the corpus inputs are generated and kept")
    ap.add_argument("--json", help="also write the corpus measurements to this file")
    ap.add_argument("--pin", action="store_true", help="run the corpus on CPU 0 (taskset)")
    ap.add_argument("--name", help="with -- CMD: the name of its row (default: CMD's file name)")
    ap.add_argument("--fresh", help="with -- CMD: a path removed before each run (an output CMD"
                                    " creates, such as a directory git clone makes)")
    args = ap.parse_args(argv)
    if command is not None:
        if args.corpus or args.only:
            sys.exit("bench-tracer: -- CMD measures one program; not with --corpus or --only")
        name = args.name or os.path.basename(command[0])
        fresh = os.path.abspath(args.fresh) if args.fresh else None
        args.program = Program(name, {}, lambda ctx: Command(command, fresh=fresh))
        args.corpus = True
    elif args.name or args.fresh:
        sys.exit("bench-tracer: --name and --fresh go with -- CMD")
    if args.reps is None:
        args.reps = 3 if args.corpus else 7

    lowalloc = os.path.abspath(args.lowalloc or os.path.join(args.build, "bin", "lowalloc"))
    workload = os.path.abspath(os.path.join(args.build, "tests", "bench", "trace_workload"))
    for f in (lowalloc, workload):
        if not os.access(f, os.X_OK):
            sys.exit(f"bench-tracer: {f} not found; build the release preset first")
    if args.corpus:
        corpus_mode(args, lowalloc, workload)
    else:
        string_mode(args, lowalloc, workload)


if __name__ == "__main__":
    main()
