// wordfreq — counts the words of a text file and prints the most common ones.
//
// A program as many are written: it reads the file line by line, splits each line into a vector
// of lower-cased words, counts them in a hash map and ranks them. Its types are the aliases of
// wordfreq.hpp, so the allocations `lowalloc run` finds are removed by changing those lines
// (build with -DWORDFREQ_FIXED). `make demo` runs both builds on the text wordfreq_text writes.
//
//   wordfreq FILE [TOP]
//
// prints the TOP (10) most common words, then one line for scripts:
//   wordfreq: tokens=N lines=N distinct=N seconds=S
// with S the time of the reading, splitting, counting and ranking (std::chrono::steady_clock).
#include "wordfreq.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

// The characters of a word, and their lower case (0 for the others).
struct word_chars {
  char lower[256] = {};
  word_chars() {
    for (int c = 'a'; c <= 'z'; ++c) lower[c] = static_cast<char>(c);
    for (int c = 'A'; c <= 'Z'; ++c) lower[c] = static_cast<char>(c - 'A' + 'a');
    for (int c = '0'; c <= '9'; ++c) lower[c] = static_cast<char>(c);
  }
};
const word_chars g_chars;

char lower(char c) { return g_chars.lower[static_cast<unsigned char>(c)]; }

wordfreq::token_list split(const std::string& line) {
  wordfreq::token_list words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && lower(line[i]) == 0) ++i;
    const std::size_t start = i;
    while (i < line.size() && lower(line[i]) != 0) ++i;
    if (i == start) break;
    words.emplace_back(line.data() + start, i - start);
    for (char& c : words.back()) c = lower(c);
  }
  return words;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: wordfreq FILE [TOP]\n");
    return 64;
  }
  const std::size_t top = argc == 3 ? std::strtoul(argv[2], nullptr, 10) : 10;
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "wordfreq: cannot read %s\n", argv[1]);
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();

  wordfreq::counts counts;
  long tokens = 0;
  long lines = 0;
  std::string line;
  while (std::getline(in, line)) {
    const wordfreq::token_list words = split(line);
    for (const wordfreq::token& w : words) ++counts[w];
    tokens += static_cast<long>(words.size());
    ++lines;
  }

  std::vector<std::pair<wordfreq::token, long>> ranking(counts.begin(), counts.end());
  const std::size_t shown = std::min(top, ranking.size());
  std::partial_sort(ranking.begin(), ranking.begin() + static_cast<std::ptrdiff_t>(shown),
                    ranking.end(), [](const auto& a, const auto& b) {
                      return a.second != b.second ? a.second > b.second : a.first < b.first;
                    });
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;

  for (std::size_t i = 0; i < shown; ++i) {
    std::printf("%8ld  %s\n", ranking[i].second, ranking[i].first.c_str());
  }
  std::printf("wordfreq: tokens=%ld lines=%ld distinct=%zu seconds=%.6f\n", tokens, lines,
              counts.size(), seconds.count());
  return 0;
}
