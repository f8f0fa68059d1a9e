// wordfreq_text — writes the text that examples/wordfreq counts in `make demo`.
//
//   wordfreq_text FILE [TOKENS [SEED]]
//
// writes about TOKENS (3,000,000) words of English-like prose to FILE, the same text for the same
// arguments: std::mt19937_64, whose sequence the standard fixes, and distributions written out
// here (the standard library's differ between implementations). A vocabulary of 30,000 words, the
// 100 most common English ones and then made-up ones, is drawn with Zipf frequencies (the k-th most
// common word is 1/k as frequent as the first), and a made-up word's length grows with its rank,
// as in natural languages: the common words are short, the rare ones long (6.2 characters on
// average, 3.9 % longer than 15, the longest 40). Sentences of 4 to 24 words, the first
// capitalised, some commas, paragraphs of 2 to 7 sentences, lines filled up to 72 columns. It
// prints the words' length distribution.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

class rng {
 public:
  explicit rng(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  int between(int lo, int hi) { return lo + static_cast<int>(uniform() * (hi - lo + 1)); }
  double normal() {  // Box-Muller
    const double u = 1.0 - uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * uniform());
  }

 private:
  std::mt19937_64 engine_;
};

// The most common words of English, most common first.
const char* const common_words[] = {
    "the",   "of",     "and",   "to",   "a",    "in",     "is",   "it",    "you",  "that",
    "he",    "was",    "for",   "on",   "are",  "with",   "as",   "i",     "his",  "they",
    "be",    "at",     "one",   "have", "this", "from",   "or",   "had",   "by",   "not",
    "word",  "but",    "what",  "some", "we",   "can",    "out",  "other", "were", "all",
    "there", "when",   "up",    "use",  "your", "how",    "said", "an",    "each", "she",
    "which", "do",     "their", "time", "if",   "will",   "way",  "about", "many", "then",
    "them",  "write",  "would", "like", "so",   "these",  "her",  "long",  "make", "thing",
    "see",   "him",    "two",   "has",  "look", "more",   "day",  "could", "go",   "come",
    "did",   "number", "sound", "no",   "most", "people", "my",   "over",  "know", "water",
    "than",  "call",   "first", "who",  "may",  "down",   "side", "been",  "now",  "find"};

// The common words, then made-up words of alternating consonant and vowel groups; the one at
// rank r has a lognormal length whose median grows with log(r).
std::vector<std::string> vocabulary(rng& random, std::size_t size) {
  static const char* const consonants[] = {"b", "c", "d", "f", "g", "h",  "l",  "m",  "n",  "p",
                                           "r", "s", "t", "v", "w", "st", "th", "ch", "tr", "nd"};
  static const char* const vowels[] = {"a", "e", "i", "o", "u", "ea", "ou", "y"};
  std::vector<std::string> words;
  std::unordered_set<std::string> seen;
  for (const char* word : common_words) {
    words.push_back(word);
    seen.insert(word);
  }
  while (words.size() < size) {
    const double median = 2.6 + 0.8 * std::log(static_cast<double>(words.size()) + 1.0);
    const double drawn = median * std::exp(0.38 * random.normal());
    const std::size_t length = static_cast<std::size_t>(std::clamp(drawn + 0.5, 1.0, 40.0));
    std::string word;
    bool vowel = random.uniform() < 0.3;
    while (word.size() < length) {
      word += vowel ? vowels[random.between(0, 7)] : consonants[random.between(0, 19)];
      vowel = !vowel;
    }
    word.resize(length);
    if (seen.insert(word).second) words.push_back(word);
  }
  return words;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: wordfreq_text FILE [TOKENS [SEED]]\n");
    return 64;
  }
  const long tokens = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 3000000;
  const std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 20240601;
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) {
    std::fprintf(stderr, "wordfreq_text: cannot write %s\n", argv[1]);
    return 1;
  }

  rng random(seed);
  const std::vector<std::string> words = vocabulary(random, 30000);
  std::vector<double> cumulative(words.size());
  double sum = 0;
  for (std::size_t r = 0; r < words.size(); ++r) {
    sum += 1.0 / static_cast<double>(r + 1);
    cumulative[r] = sum;
  }

  long written = 0;
  long longer_than_15 = 0;
  long longer_than_31 = 0;
  long characters = 0;
  std::string line;
  while (written < tokens) {
    const int sentences = random.between(2, 7);
    for (int s = 0; s < sentences; ++s) {
      const int length = random.between(4, 24);
      for (int i = 0; i < length; ++i) {
        const double u = random.uniform() * sum;
        const std::size_t r = static_cast<std::size_t>(
            std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
        std::string word = words[std::min(r, words.size() - 1)];
        if (i == 0) word[0] = static_cast<char>(word[0] - 'a' + 'A');
        ++written;
        characters += static_cast<long>(word.size());
        longer_than_15 += word.size() > 15;
        longer_than_31 += word.size() > 31;
        if (i + 1 == length) {
          word += '.';
        } else if (random.uniform() < 0.08) {
          word += ',';
        }
        if (!line.empty() && line.size() + 1 + word.size() > 72) {
          std::fprintf(out, "%s\n", line.c_str());
          line.clear();
        }
        if (!line.empty()) line += ' ';
        line += word;
      }
    }
    std::fprintf(out, "%s\n\n", line.c_str());
    line.clear();
  }
  if (std::fclose(out) != 0) {
    std::fprintf(stderr, "wordfreq_text: cannot write %s\n", argv[1]);
    return 1;
  }
  const double n = static_cast<double>(written);
  std::printf(
      "wordfreq_text: %ld words (%zu distinct in the vocabulary), %.1f characters on average, "
      "%.1f %% longer than 15, %.2f %% longer than 31\n",
      written, words.size(), static_cast<double>(characters) / n,
      100.0 * static_cast<double>(longer_than_15) / n,
      100.0 * static_cast<double>(longer_than_31) / n);
  return 0;
}
