// demo_trace — a program to look at with `lowalloc run`.
//
// It does what many programs do with text: reads lowalloc's own headers (the bundled text),
// splits them into lines and the lines into words, all as std::string, counts the words in a
// std::unordered_map and prints the most common ones. Most words are shorter than 16 characters
// and fit std::string's inline buffer, but many identifiers do not, and every map node is a heap
// allocation. `make demo` runs it under `lowalloc run` and prints `lowalloc report`: the hot
// call sites are the lines below, with their sizes.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#ifndef LOWALLOC_DEMO_TEXT_DIR
#define LOWALLOC_DEMO_TEXT_DIR "include/lowalloc"
#endif

namespace {

std::vector<std::string> read_lines() {
  std::vector<std::string> lines;
  for (const char* name : {"string.hpp", "small_vector.hpp", "inplace_vector.hpp"}) {
    std::ifstream in(std::string(LOWALLOC_DEMO_TEXT_DIR) + "/" + name);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  for (char c : line) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += c;
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

}  // namespace

int main() {
  const std::vector<std::string> lines = read_lines();
  if (lines.empty()) {
    std::fprintf(stderr, "demo_trace: cannot read the text in %s\n", LOWALLOC_DEMO_TEXT_DIR);
    return 1;
  }
  std::unordered_map<std::string, int> counts;
  std::size_t words = 0;
  for (int pass = 0; pass < 20; ++pass) {
    for (const std::string& line : lines) {
      for (const std::string& w : split_words(line)) {
        ++counts[w];
        ++words;
      }
    }
  }
  std::vector<std::pair<std::string, int>> top(counts.begin(), counts.end());
  std::partial_sort(top.begin(), top.begin() + 5, top.end(),
                    [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("demo_trace: %zu lines, %zu words, %zu distinct; most common:", lines.size(), words,
              counts.size());
  for (std::size_t i = 0; i < 5; ++i) std::printf(" %s (%d)", top[i].first.c_str(), top[i].second);
  std::printf("\n");
  return 0;
}
