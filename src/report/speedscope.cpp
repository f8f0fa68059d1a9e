// speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json): one
// "sampled" profile per metric, whose samples are the sites' stacks (outermost first, indices
// into one shared table of frames) and whose weights are the sites' counters.
#include "report/common.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#ifndef LOWALLOC_VERSION
#error "LOWALLOC_VERSION is defined by src/report/CMakeLists.txt (the project's version)"
#endif

namespace lowalloc::report {

namespace {

using analyze::frame_table;

struct metric_profile {
  sort_key key;
  const char* name;
  const char* unit;
};

// The profiles in their order in the file; --sort picks the one shown first.
constexpr metric_profile profiles[] = {
    {sort_key::allocations, "allocations", "none"},
    {sort_key::bytes, "bytes allocated", "bytes"},
    {sort_key::temporary, "temporary allocations", "none"},
    {sort_key::leaked, "leaked bytes", "bytes"},
    {sort_key::peak, "live bytes at the peak", "bytes"},
};

// The shared frames: each distinct (name, file, line) once, numbered as the samples first use
// them. A frame of the analysis is named once, however many stacks hold it.
class frame_index {
 public:
  explicit frame_index(bool lines) : lines_(lines) {}

  std::uint64_t of(const frame_table* table, std::uint32_t id, const frame& f) {
    if (table != last_table_) {  // sites share one table, except those made by hand in a test
      last_ = &by_table_[table];
      last_table_ = table;
    }
    std::vector<std::uint32_t>& numbers = *last_;
    if (numbers.size() <= id) numbers.resize(std::max<std::size_t>(table->frames.size(), id + 1));
    std::uint32_t& n = numbers[id];
    if (n == 0) n = add(flame_frame_name(f, lines_), f.file, lines_ ? f.line : f.function_line);
    return n - 1;
  }
  // The frame of the allocations that have no stack.
  std::uint64_t no_stack() {
    if (no_stack_ == 0) no_stack_ = add("[no stack]", {}, 0);
    return no_stack_ - 1;
  }

  /// Site `s` of `a` as a sample, "[outermost, ..., innermost]": made once, though most sites
  /// are in several profiles.
  std::string_view sample(const analysis& a, const site& s) {
    if (samples_.empty()) samples_.resize(a.sites.size());
    std::pair<std::size_t, std::size_t>& at =
        samples_[static_cast<std::size_t>(&s - a.sites.data())];
    if (at.second == 0) {
      at.first = sample_text_.size();
      sample_text_ += '[';
      if (s.stack.empty()) append(no_stack());
      for (std::size_t k = s.stack.size(); k-- > 0;) {
        append(of(s.stack.table(), s.stack.ids()[k], s.stack[k]));
        if (k != 0) sample_text_ += ", ";
      }
      sample_text_ += ']';
      at.second = sample_text_.size() - at.first;
    }
    return std::string_view(sample_text_).substr(at.first, at.second);
  }

  void write(site_writer& out) const {
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const entry& e = frames_[i];
      out << (i == 0 ? "\n    {\"name\": " : ",\n    {\"name\": ") << json_string(e.name);
      if (!e.file.empty()) out << ", \"file\": " << json_string(e.file);
      if (e.line != 0) out << ", \"line\": " << std::uint64_t{e.line};
      out << "}";
    }
    out << (frames_.empty() ? "]" : "\n  ]");
  }

 private:
  struct entry {
    std::string name;
    std::string file;
    unsigned line;
  };

  // The number plus one of the frame (name, file, line), a new one if it has none yet.
  std::uint32_t add(std::string name, const std::string& file, unsigned line) {
    std::string key = name;
    key += '\0';
    key += file;
    key += '\0';
    key += std::to_string(line);
    auto [it, added] = numbers_.try_emplace(std::move(key), 0);
    if (added) {
      frames_.push_back({std::move(name), file, line});
      it->second = static_cast<std::uint32_t>(frames_.size());
    }
    return it->second;
  }

  void append(std::uint64_t n) {
    char buf[20];
    sample_text_.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + 20, n).ptr - buf));
  }

  bool lines_;
  std::unordered_map<const frame_table*, std::vector<std::uint32_t>> by_table_;
  const frame_table* last_table_ = nullptr;
  std::vector<std::uint32_t>* last_ = nullptr;
  std::unordered_map<std::string, std::uint32_t> numbers_;
  std::vector<entry> frames_;
  std::uint32_t no_stack_ = 0;
  // Per site of the analysis, where its sample is in sample_text_ (length 0: not made yet).
  std::vector<std::pair<std::size_t, std::size_t>> samples_;
  std::string sample_text_;
};

void write_profile(site_writer& out, const analysis& a, const report_options& ro,
                   const metric_profile& p, frame_index& frames) {
  const std::vector<const site*> sites = ranked_sites(a, p.key, ro.top);
  std::uint64_t total = 0;
  for (const site* s : sites) total += metric(s->totals, p.key);
  out << "\n    {\"type\": \"sampled\", \"name\": " << json_string(p.name) << ", \"unit\": \""
      << p.unit << "\", \"startValue\": 0, \"endValue\": " << total << ",\n     \"samples\": [";
  for (std::size_t i = 0; i < sites.size(); ++i) {
    out << (i == 0 ? "" : ", ") << frames.sample(a, *sites[i]);
    out.element_done();
  }
  out << "],\n     \"weights\": [";
  for (std::size_t i = 0; i < sites.size(); ++i) {
    out << (i == 0 ? "" : ", ") << metric(sites[i]->totals, p.key);
    out.element_done();
  }
  out << "]}";
}

}  // namespace

void write_speedscope(std::ostream& out, const analysis& a, const report_options& ro) {
  std::size_t active = 0;
  for (std::size_t i = 0; i < std::size(profiles); ++i)
    if (profiles[i].key == ro.sort) active = i;
  site_writer body(out);
  body << "{\n  \"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
       << "  \"exporter\": \"lowalloc " LOWALLOC_VERSION "\",\n  \"name\": "
       << json_string(basename(ro.trace_name))
       << ",\n  \"activeProfileIndex\": " << std::uint64_t{active} << ",\n  \"profiles\": [";
  frame_index frames(ro.lines);
  for (std::size_t i = 0; i < std::size(profiles); ++i) {
    if (i != 0) body << ",";
    write_profile(body, a, ro, profiles[i], frames);
  }
  body << "\n  ],\n  \"shared\": {\"frames\": [";
  frames.write(body);
  body << "}\n}\n";
}

}  // namespace lowalloc::report
