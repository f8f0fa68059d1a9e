// demo_string — what lowalloc::small_string buys when a program keeps many short strings.
//
// Splits lowalloc's own headers (the bundled text: C++ identifiers, keywords and numbers, most of
// them shorter than 16 characters, some much longer) into tokens and keeps them in a
// std::vector: once as std::string, once as lowalloc::small_string<32>. Prints the token length
// distribution, the heap allocations of one pass (counted by lowalloc::alloc_count; the vector is
// reused) and the best time per pass. `make bench` builds and runs it; the tokenizer benchmark
// against the peers is in tests/bench/bench_string.cpp.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/string.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#ifndef LOWALLOC_DEMO_TEXT_DIR
#define LOWALLOC_DEMO_TEXT_DIR "include/lowalloc"
#endif

namespace {

std::string read_text() {
  std::string text;
  for (const char* name : {"string.hpp", "small_vector.hpp", "inplace_vector.hpp",
                           "detail/string_storage.hpp", "detail/inplace_vector_storage.hpp"}) {
    std::ifstream in(std::string(LOWALLOC_DEMO_TEXT_DIR) + "/" + name);
    std::ostringstream buf;
    buf << in.rdbuf();
    text += buf.str();
  }
  return text;
}

// Letters, digits, '_' and ':' make tokens (a table: the scan should cost little next to the
// strings).
struct token_chars {
  bool table[256] = {};
  token_chars() {
    for (int c = 0; c < 256; ++c) table[c] = std::isalnum(c) != 0 || c == '_' || c == ':';
  }
};
const token_chars g_token_chars;

bool is_token_char(char c) { return g_token_chars.table[static_cast<unsigned char>(c)]; }

// Appends the tokens of text to tokens.
template <class String>
void tokenize(std::string_view text, std::vector<String>& tokens) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !is_token_char(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && is_token_char(text[i])) ++i;
    if (i > start) tokens.emplace_back(text.data() + start, i - start);
  }
}

volatile std::size_t g_sink;

struct result {
  std::size_t tokens;
  std::size_t allocations;
  double us_per_pass;  // best of 15 passes: the machine may be busy
};

template <class String>
result measure(std::string_view text) {
  result r{0, 0, 1e300};
  std::vector<String> tokens;  // reused: the passes measure the strings, not the vector
  tokenize(text, tokens);
  r.tokens = tokens.size();
  {
    tokens.clear();
    lowalloc::alloc_counter counter;
    tokenize(text, tokens);
    r.allocations = counter.allocations();
  }
  for (int pass = 0; pass < 15; ++pass) {
    tokens.clear();
    const auto start = std::chrono::steady_clock::now();
    tokenize(text, tokens);
    g_sink = tokens.size();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    r.us_per_pass = std::min(r.us_per_pass, took.count());
  }
  return r;
}

}  // namespace

int main() {
  const std::string text = read_text();
  if (text.empty()) {
    std::fprintf(stderr, "demo_string: cannot read the headers in %s\n", LOWALLOC_DEMO_TEXT_DIR);
    return 1;
  }
  std::vector<std::string> tokens;
  tokenize(text, tokens);
  std::size_t over15 = 0, over31 = 0, total = 0;
  for (const std::string& t : tokens) {
    total += t.size();
    over15 += t.size() > 15;
    over31 += t.size() > 31;
  }
  std::printf(
      "%zu tokens from %zu bytes of lowalloc's headers: %.1f characters on average,\n"
      "%zu longer than 15 (std::string allocates), %zu longer than 31 (small_string<32> "
      "allocates)\n\n",
      tokens.size(), text.size(), double(total) / double(tokens.size()), over15, over31);

  const result a = measure<std::string>(text);
  const result b = measure<lowalloc::small_string<32>>(text);
  std::printf("%-30s %12s %12s\n", "string type", "allocations", "time/pass");
  std::printf("%-30s %12zu %9.1f us\n", "std::string", a.allocations, a.us_per_pass);
  std::printf("%-30s %12zu %9.1f us\n", "lowalloc::small_string<32>", b.allocations, b.us_per_pass);
  std::printf("%-30s %11.1fx %11.2fx\n", "std::string / small_string",
              double(a.allocations) / double(std::max<std::size_t>(b.allocations, 1)),
              a.us_per_pass / b.us_per_pass);
  return 0;
}
