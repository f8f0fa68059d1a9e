// The JSON report: everything the analysis holds about the ranked sites, for programs.
#include "report/common.hpp"

#include "analyze/runtime.hpp"

#include <charconv>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lowalloc::report {

namespace {

using analyze::frame_list;
using analyze::frame_table;
using analyze::operation;
using analyze::process_info;

void json_bucket(std::ostream& out, bool first, std::size_t b, std::uint64_t count) {
  out << (first ? "" : ", ") << "{\"min\": " << histogram::bucket_min(b)
      << ", \"max\": " << histogram::bucket_max(b) << ", \"count\": " << count << '}';
}

// The non-empty buckets, in bucket order: of the whole trace's histogram, or of a site's.
void json_histogram(std::ostream& out, const histogram& h) {
  out << '[';
  bool first = true;
  for (std::size_t b = 0; b < h.counts.size(); ++b) {
    if (h.counts[b] == 0) continue;
    json_bucket(out, first, b, h.counts[b]);
    first = false;
  }
  out << ']';
}

// The frames of the printed sites, each once, numbered in the order the ranked sites first use
// them; a site's stack lists the numbers, and the frames follow the sites. Written out in every
// stack that has them, the frames of 10^6 sites made a report of a gigabyte and a half, though the
// sites share most of them.
class frame_numbers {
 public:
  /// The numbers given so far to the frames of `table`, plus one (0: none yet), by index.
  std::vector<std::uint32_t>& of(const frame_table* table) {
    if (table != last_table_) {
      std::vector<std::uint32_t>& numbers = numbers_[table];
      if (numbers.empty()) numbers.resize(table->frames.size());
      last_table_ = table;
      last_ = &numbers;
    }
    return *last_;
  }
  /// The number of frame `f`, index `id` of the table whose numbers are `numbers`; a new one if
  /// it has none yet.
  std::uint32_t number(std::vector<std::uint32_t>& numbers, std::uint32_t id, const frame& f) {
    std::uint32_t& n = numbers[id];
    if (n == 0) {
      frames_.push_back(&f);
      n = static_cast<std::uint32_t>(frames_.size());
      // "," and the number, once: a site's stack writes each of its frames' as one word (262,145
      // sites write 5.8 million of them).
      text_.emplace_back();
      number_text& t = text_.back();
      t.bytes[0] = ',';
      t.size = static_cast<std::uint8_t>(
          std::to_chars(t.bytes + 1, t.bytes + sizeof t.bytes, std::uint64_t{n - 1}).ptr - t.bytes);
    }
    return n - 1;
  }
  /// A frame's number as its stack writes it after the first: a comma and the digits, `size`
  /// bytes of `bytes` (one word up to 7 digits).
  struct number_text {
    char bytes[24];
    std::uint8_t size;
  };
  const number_text& text(std::uint32_t n) const noexcept { return text_[n]; }
  const std::vector<const frame*>& frames() const noexcept { return frames_; }

 private:
  // Sites share one table, except those made by hand in a test.
  std::unordered_map<const frame_table*, std::vector<std::uint32_t>> numbers_;
  const frame_table* last_table_ = nullptr;
  std::vector<std::uint32_t>* last_ = nullptr;
  std::vector<const frame*> frames_;
  std::vector<number_text> text_;  // by number
};

void json_frame(site_writer& out, const frame& f) {
  out << "    {\"address\": \"" << hex(f.address)
      << "\", \"module\": " << (f.module.empty() ? "null" : json_string(f.module))
      << ", \"offset\": " << f.offset
      << ", \"function\": " << (f.function.empty() ? "null" : json_string(f.function))
      << ", \"file\": " << (f.file.empty() ? "null" : json_string(f.file)) << ", \"line\": ";
  if (f.line == 0)
    out << "null";
  else
    out << std::uint64_t{f.line};
  out << ", \"inlined\": " << (f.inlined ? "true" : "false") << "}";
}

void json_histogram(site_writer& out, const size_counts& sizes) {
  out << "[";
  for (std::size_t i = 0; i < sizes.buckets.size(); ++i) {
    const std::size_t b = sizes.buckets[i].bucket;
    if (i != 0) out << ",";
    out << "{\"min\":" << histogram::bucket_min(b) << ",\"max\":" << histogram::bucket_max(b)
        << ",\"count\":" << sizes.buckets[i].count << "}";
  }
  out << "]";
}

void json_objects(site_writer& out, const analyze::object_counts& o) {
  using analyze::object_counts;
  out << ",\"objects\":{\"count\":" << o.objects << ",\"allocations\":" << o.allocations
      << ",\"alive_at_end\":" << o.alive_at_end << ",\"max_alive\":" << o.max_alive
      << ",\"alive_at_peak\":" << o.alive_at_peak << ",\"allocations_per_object\":[";
  bool first = true;
  for (std::size_t k = 0; k < object_counts::allocation_classes; ++k) {
    if (o.by_allocations[k] == 0) continue;
    out << (first ? "" : ",") << "{\"min\":" << object_counts::allocation_class_min(k)
        << ",\"max\":";
    if (object_counts::allocation_class_max(k) == 0)
      out << "null";
    else
      out << object_counts::allocation_class_max(k);
    out << ",\"count\":" << o.by_allocations[k] << "}";
    first = false;
  }
  out << "],\"lifetime\":{\"temporary\":" << o.by_lifetime[0]
      << ",\"under_16\":" << o.by_lifetime[1] << ",\"under_256\":" << o.by_lifetime[2]
      << ",\"under_4096\":" << o.by_lifetime[3] << ",\"longer\":" << o.by_lifetime[4]
      << ",\"alive_at_end\":" << o.by_lifetime[5] << "},\"duration\":{";
  static constexpr const char* durations[object_counts::duration_classes] = {
      "same_tick", "under_1ms", "under_10ms", "under_100ms", "under_1s", "longer", "alive_at_end"};
  for (std::size_t k = 0; k < object_counts::duration_classes; ++k)
    out << (k == 0 ? "\"" : ",\"") << durations[k] << "\":" << o.by_duration[k];
  out << "},\"first_sizes\":";
  json_histogram(out, o.first_sizes);
  out << ",\"final_sizes\":";
  json_histogram(out, o.final_sizes);
  out << "}";
}

void json_site(site_writer& out, const site& s, const analysis& a, frame_numbers& numbers,
               const report_options& ro) {
  const counters& c = s.totals;
  out << "    {\"allocations\":" << c.allocations << ",\"bytes_allocated\":" << c.bytes_allocated
      << ",\"frees\":" << c.frees << ",\"temporary\":" << c.temporary
      << ",\"leaked\":{\"allocations\":" << c.leaked_allocations << ",\"bytes\":" << c.leaked_bytes
      << "},\"peak\":{\"bytes\":" << c.peak_bytes
      << "},\"max_live\":{\"bytes\":" << c.max_live_bytes << ",\"at_least\":" << s.max_live_at_least
      << "},\"histogram\":";
  json_histogram(out, s.sizes);
  out << ",\"operations\":[";
  const std::size_t i = static_cast<std::size_t>(&s - a.sites.data());
  if (i + 1 < a.site_operation_first.size()) {
    for (std::size_t k = a.site_operation_first[i]; k < a.site_operation_first[i + 1]; ++k) {
      const analyze::site_operation& so = a.site_operations[k];
      const operation& op = a.operations[so.op];
      if (k != a.site_operation_first[i]) out << ",";
      out << "{\"kind\":\"" << op.kind
          << "\",\"container\":" << (op.container.empty() ? "null" : json_string(op.container))
          << ",\"member\":" << (op.member.empty() ? "null" : json_string(op.member))
          << ",\"allocations\":" << so.allocations << "}";
    }
  }
  out << "]";
  if (ro.objects != nullptr) json_objects(out, (*ro.objects)[i]);
  if (ro.advice != nullptr) {
    // The site's advice, best first, as lowalloc advise's JSON in short.
    out << ",\"advice\":[";
    bool first = true;
    for (const analyze::advice_item& it : *ro.advice) {
      if (it.site != i || it.kind == "none") continue;
      out << (first ? "" : ",") << "{\"kind\":\"" << it.kind << "\",\"confidence\":\""
          << it.confidence << "\",\"suggestion\":" << json_string(it.chosen.suggestion)
          << ",\"allocations\":" << it.allocations
          << ",\"allocations_after\":" << it.chosen.allocations_after << "}";
      first = false;
    }
    out << "]";
  }
  out << ",\"folded_frames\":" << std::uint64_t{s.folded_frames}
      << ",\"folded_start_frames\":" << std::uint64_t{s.folded_start_frames} << ",\"stack\":[";
  if (!s.stack.empty()) {
    const std::uint32_t* ids = s.stack.ids();
    std::vector<std::uint32_t>& table = numbers.of(s.stack.table());
    out << std::uint64_t{numbers.number(table, ids[0], s.stack[0])};
    for (std::size_t k = 1; k < s.stack.size(); ++k) {
      const auto& t = numbers.text(numbers.number(table, ids[k], s.stack[k]));
      if (t.size <= 8)
        out.put_word(t.bytes, t.size);
      else
        out << std::string_view(t.bytes, t.size);
    }
  }
  out << "]}";
}

// "crash": the CRASH record, when the recorder's crash handler wrote one (the key is absent
// otherwise).
void write_json_crash(std::ostream& out, const analyze::crash_info& c) {
  out << "  \"crash\": {\"signal\": " << c.signal
      << ", \"signal_name\": " << json_string(c.signal_name()) << ", \"thread\": " << c.tid
      << ", \"thread_written\": " << (c.thread_written ? "true" : "false")
      << ", \"writer_late\": " << (c.writer_late ? "true" : "false")
      << ", \"more_threads\": " << (c.more_threads ? "true" : "false")
      << ", \"ended\": " << (c.ended ? "true" : "false") << ", \"unwritten\": [";
  for (std::size_t i = 0; i < c.unwritten.size(); ++i) {
    const analyze::crash_info::thread& t = c.unwritten[i];
    out << (i == 0 ? "" : ", ") << "{\"thread\": " << t.tid
        << ", \"allocations\": " << t.allocations << ", \"max_frees\": " << c.max_frees(t)
        << ", \"bytes\": " << t.bytes << "}";
  }
  out << "]},\n";
}

}  // namespace

void write_json(std::ostream& out, const analysis& a, const report_options& ro) {
  const counters& t = a.totals;
  const process_info& p = a.process;
  out << "{\n  \"format_version\": 2,\n";
  out << "  \"process\": {\"pid\": " << p.pid << ", \"ppid\": " << p.ppid
      << ", \"fork_child\": " << (p.fork_child ? "true" : "false")
      << ", \"exec_child\": " << (p.exec_child ? "true" : "false")
      << ", \"exe\": " << json_string(p.exe) << ", \"argv\": [";
  for (std::size_t i = 0; i < p.argv.size(); ++i)
    out << (i == 0 ? "" : ", ") << json_string(p.argv[i]);
  out << "]},\n";
  out << "  \"complete\": " << (a.complete ? "true" : "false") << ",\n";
  if (a.running) out << "  \"running\": true,\n";  // only then: the golden files stay as they are
  if (a.stopped) out << "  \"stopped\": {\"reason\": " << json_string(*a.stopped) << "},\n";
  if (!a.exec_path.empty()) {  // only then, as "running"
    out << "  \"exec\": {\"path\": " << json_string(a.exec_path)
        << ", \"trace\": " << (ro.exec_trace.empty() ? "null" : json_string(ro.exec_trace))
        << "},\n";
  }
  out << "  \"truncation\": " << (a.truncation.empty() ? "null" : json_string(a.truncation))
      << ",\n";
  if (a.crash) write_json_crash(out, *a.crash);
  out << "  \"run_time_seconds\": " << fixed(a.run_time_seconds, 9) << ",\n";
  out << "  \"allocations\": " << t.allocations << ",\n";
  out << "  \"frees\": " << t.frees << ",\n";
  out << "  \"bytes_allocated\": " << t.bytes_allocated << ",\n";
  out << "  \"temporary\": " << t.temporary << ",\n";
  out << "  \"leaked\": {\"allocations\": " << t.leaked_allocations
      << ", \"bytes\": " << t.leaked_bytes << "},\n";
  // The runtime's own allocations (analyze/runtime.hpp), all reasons and each.
  const counters rt = a.runtime_totals();
  out << "  \"runtime\": {\"allocations\": " << rt.allocations
      << ", \"bytes_allocated\": " << rt.bytes_allocated
      << ", \"leaked\": {\"allocations\": " << rt.leaked_allocations
      << ", \"bytes\": " << rt.leaked_bytes << "}, \"by_reason\": {";
  for (std::size_t r = 1; r < a.runtime.size(); ++r) {
    const counters& c = a.runtime[r];
    out << (r == 1 ? "" : ", ") << '"'
        << analyze::runtime_reason_key(static_cast<analyze::runtime_reason>(r))
        << "\": {\"allocations\": " << c.allocations
        << ", \"leaked\": {\"allocations\": " << c.leaked_allocations
        << ", \"bytes\": " << c.leaked_bytes << "}}";
  }
  out << "}},\n";
  out << "  \"peak\": {\"bytes\": " << t.peak_bytes << "},\n";
  out << "  \"unmatched_frees\": " << a.unmatched_frees << ",\n";
  out << "  \"lost_events\": " << a.lost_events << ",\n";
  out << "  \"stacks_lost\": " << a.stacks_lost << ",\n";
  if (!a.shadowed.empty()) {  // only then: the golden files stay as they are
    out << "  \"shadowed\": [";
    for (std::size_t i = 0; i < a.shadowed.size(); ++i) {
      out << (i == 0 ? "" : ", ") << "{\"module\": " << json_string(a.shadowed[i].module)
          << ", \"functions\": [";
      for (std::size_t k = 0; k < a.shadowed[i].functions.size(); ++k)
        out << (k == 0 ? "" : ", ") << json_string(a.shadowed[i].functions[k]);
      out << "]}";
    }
    out << "],\n";
  }
  out << "  \"frees_not_seen\": " << a.frees_not_seen << ",\n";
  out << "  \"threads\": " << a.threads << ",\n";
  out << "  \"by_function\": {";
  for (std::size_t k = 0; k < a.allocations_by_kind.size(); ++k)
    out << (k == 0 ? "" : ", ") << '"' << kind_names[k] << "\": " << a.allocations_by_kind[k];
  out << "},\n";
  out << "  \"histogram\": ";
  json_histogram(out, a.sizes);
  out << ",\n";
  out << "  \"sort\": " << json_string(sort_key_name(ro.sort)) << ",\n";
  const std::vector<const site*> sites = ranked_sites(a, ro.sort, ro.top);
  // The sites first, numbering their frames as they go; then the frames.
  frame_numbers numbers;
  site_writer body(out);
  body << "  \"sites\": [";
  for (std::size_t i = 0; i < sites.size(); ++i) {
    // Ranked sites lie all over memory, and so do their runs of frame indices: those of the sites
    // a few places ahead are fetched (2% of the time to write 262,145 sites; numbering all the
    // sites' frames first, in a loop of their own, was 9% slower). Written here, not in a
    // function of their own: GCC found such a function free of effects and dropped its calls.
    if (i + 16 < sites.size()) __builtin_prefetch(sites[i + 16]);
    if (i + 8 < sites.size() && !sites[i + 8]->stack.empty()) {
      const frame_list& ahead = sites[i + 8]->stack;
      for (std::size_t k = 0; k < ahead.size(); k += 16) __builtin_prefetch(ahead.ids() + k);
    }
    body << (i == 0 ? "\n" : ",\n");
    json_site(body, *sites[i], a, numbers, ro);
    body.element_done();
  }
  body << (sites.empty() ? "],\n" : "\n  ],\n");
  body << "  \"frames\": [";
  const std::vector<const frame*>& frames = numbers.frames();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    body << (i == 0 ? "\n" : ",\n");
    json_frame(body, *frames[i]);
    body.element_done();
  }
  body << (frames.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace lowalloc::report
