// The program the HTML report's browser test traces: two threads, each calling a function with
// a name found nowhere else (html_report_known_function) that allocates through std::vector and
// new, plus a few blocks kept to the end (leaked) so every metric of the page has values.
#include <cstddef>
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

int main() {
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
