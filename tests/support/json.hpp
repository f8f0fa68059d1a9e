// A strict JSON parser (RFC 8259) for tests, enough to check an output's structure: the JSON
// report's, the HTML report's data. Numbers are doubles (exact up to 2^53), \u escapes are kept
// as written.
#ifndef LOWALLOC_TESTS_SUPPORT_JSON_HPP
#define LOWALLOC_TESTS_SUPPORT_JSON_HPP

#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace lowalloc_test {

struct json {
  enum kind_t { null, boolean, number, string, array, object } kind = null;
  bool b = false;
  double n = 0;
  std::string s;
  std::vector<json> items;
  std::map<std::string, json> members;

  const json& operator[](const std::string& key) const {
    static const json missing;
    auto it = members.find(key);
    return it == members.end() ? missing : it->second;
  }
  const json& operator[](std::size_t i) const { return items.at(i); }
  bool has(const std::string& key) const { return members.count(key) != 0; }
};

class json_parser {
 public:
  explicit json_parser(const std::string& text) : t_(text) {}

  bool parse(json& out) {
    ws();
    if (!value(out)) return false;
    ws();
    return i_ == t_.size();
  }
  std::size_t where() const { return i_; }

 private:
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r'))
      ++i_;
  }
  bool lit(const char* word) {
    const std::string w(word);
    if (t_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  bool value(json& v) {
    if (i_ >= t_.size()) return false;
    const char c = t_[i_];
    if (c == '{') return object(v);
    if (c == '[') return array(v);
    if (c == '"') {
      v.kind = json::string;
      return str(v.s);
    }
    if (c == 't' || c == 'f') {
      v.kind = json::boolean;
      v.b = c == 't';
      return lit(c == 't' ? "true" : "false");
    }
    if (c == 'n') return lit("null");
    return num(v);
  }
  bool num(json& v) {
    const std::size_t start = i_;
    if (i_ < t_.size() && t_[i_] == '-') ++i_;
    if (i_ >= t_.size() || !isdigit(t_[i_])) return false;
    if (t_[i_] == '0') {
      ++i_;
    } else {
      while (i_ < t_.size() && isdigit(t_[i_])) ++i_;
    }
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      if (i_ >= t_.size() || !isdigit(t_[i_])) return false;
      while (i_ < t_.size() && isdigit(t_[i_])) ++i_;
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (i_ >= t_.size() || !isdigit(t_[i_])) return false;
      while (i_ < t_.size() && isdigit(t_[i_])) ++i_;
    }
    v.kind = json::number;
    v.n = std::stod(t_.substr(start, i_ - start));
    return true;
  }
  static bool isdigit(char c) { return c >= '0' && c <= '9'; }
  bool str(std::string& out) {
    ++i_;  // opening quote
    while (i_ < t_.size()) {
      const auto c = static_cast<unsigned char>(t_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;  // raw control characters are not allowed
      if (c == '\\') {
        if (i_ >= t_.size()) return false;
        const char e = t_[i_++];
        if (e == 'u') {
          if (i_ + 4 > t_.size()) return false;
          for (int k = 0; k < 4; ++k)
            if (!std::isxdigit(static_cast<unsigned char>(t_[i_ + static_cast<std::size_t>(k)])))
              return false;
          out += "\\u" + t_.substr(i_, 4);
          i_ += 4;
        } else if (std::string("\"\\/bfnrt").find(e) != std::string::npos) {
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else {
          return false;
        }
        continue;
      }
      if (c >= 0x80) {
        // Well-formed UTF-8 only.
        std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
        if (len == 0 || c > 0xF4 || i_ - 1 + len > t_.size()) return false;
        for (std::size_t k = 1; k < len; ++k)
          if ((static_cast<unsigned char>(t_[i_ - 1 + k]) & 0xC0) != 0x80) return false;
        out += t_.substr(i_ - 1, len);
        i_ += len - 1;
        continue;
      }
      out += static_cast<char>(c);
    }
    return false;
  }
  bool array(json& v) {
    v.kind = json::array;
    ++i_;
    ws();
    if (i_ < t_.size() && t_[i_] == ']') {
      ++i_;
      return true;
    }
    for (;;) {
      ws();
      v.items.emplace_back();
      if (!value(v.items.back())) return false;
      ws();
      if (i_ >= t_.size()) return false;
      if (t_[i_] == ']') {
        ++i_;
        return true;
      }
      if (t_[i_++] != ',') return false;
    }
  }
  bool object(json& v) {
    v.kind = json::object;
    ++i_;
    ws();
    if (i_ < t_.size() && t_[i_] == '}') {
      ++i_;
      return true;
    }
    for (;;) {
      ws();
      std::string key;
      if (i_ >= t_.size() || t_[i_] != '"' || !str(key)) return false;
      if (v.members.count(key) != 0) return false;  // duplicate keys are a bug here
      ws();
      if (i_ >= t_.size() || t_[i_++] != ':') return false;
      ws();
      if (!value(v.members[key])) return false;
      ws();
      if (i_ >= t_.size()) return false;
      if (t_[i_] == '}') {
        ++i_;
        return true;
      }
      if (t_[i_++] != ',') return false;
    }
  }

  const std::string& t_;
  std::size_t i_ = 0;
};

inline json parse_json(const std::string& text) {
  json v;
  json_parser p(text);
  EXPECT_TRUE(p.parse(v)) << "invalid JSON at byte " << p.where() << ":\n" << text;
  return v;
}

}  // namespace lowalloc_test

#endif
