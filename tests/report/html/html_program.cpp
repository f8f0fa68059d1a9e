// The program the HTML report's browser test traces: two threads, each calling a function with
// a name found nowhere else (html_report_known_function) that allocates through std::vector and
// new, plus a few blocks kept to the end (leaked) so every metric of the page has values. With the
// argument "fork" it first forks a child that calls html_report_fork_child_function, so that the
// child's own trace has a page too.
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace {

std::vector<std::unique_ptr<int[]>> kept;  // filled by the main thread only
int* volatile leaked = nullptr;            // never freed

}  // namespace

// Not static and not inlined: the frame keeps its name in the trace.
__attribute__((noinline)) std::size_t html_report_known_function(int rounds) {
  std::size_t sum = 0;
  for (int i = 0; i < rounds; ++i) {
    std::vector<int> values;
    for (int j = 0; j < 40; ++j) values.push_back(j);  // growth: several reallocations
    sum += values.size();
    auto block = std::make_unique<char[]>(static_cast<std::size_t>(16 + i % 200));
    block[0] = static_cast<char>(i);
    sum += static_cast<unsigned char>(block[0]);
  }
  return sum;
}

__attribute__((noinline)) void html_report_keep(int count) {
  for (int i = 0; i < count; ++i) kept.push_back(std::make_unique<int[]>(64));
}

__attribute__((noinline)) std::size_t html_report_fork_child_function(int rounds) {
  std::size_t sum = 0;
  for (int i = 0; i < rounds; ++i) sum += std::make_unique<long[]>(8)[0] == 0 ? 1 : 0;
  return sum;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "fork") == 0) {
    const pid_t child = ::fork();
    if (child < 0) return 2;
    if (child == 0) _exit(html_report_fork_child_function(500) == 500 ? 0 : 1);
    int status = 0;
    if (::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return 3;
  }
  std::size_t a = 0;
  std::size_t b = 0;
  std::thread first([&a] { a = html_report_known_function(2000); });
  std::thread second([&b] { b = html_report_known_function(1000); });
  first.join();
  second.join();
  html_report_keep(10);
  leaked = new int[100];
  return a + b == 0 ? 1 : 0;
}
