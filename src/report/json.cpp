// The JSON report: everything the analysis holds about the ranked sites, for programs.
#include "report/common.hpp"

#include <charconv>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>

namespace lowalloc::report {

namespace {

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

// The JSON object of each frame, made once: sites share frames (every site's outer frames are
// the same few), and escaping their names again for each was most of the report's time.
class frame_objects {
 public:
  const std::string& of(const frame& f) {
    auto [it, inserted] = text_.try_emplace(&f);
    if (inserted) {
      std::ostringstream o;
      o << "{\"address\": \"" << hex(f.address)
        << "\", \"module\": " << (f.module.empty() ? "null" : json_string(f.module))
        << ", \"offset\": " << f.offset
        << ", \"function\": " << (f.function.empty() ? "null" : json_string(f.function))
        << ", \"file\": " << (f.file.empty() ? "null" : json_string(f.file)) << ", \"line\": ";
      if (f.line == 0)
        o << "null";
      else
        o << f.line;
      o << ", \"inlined\": " << (f.inlined ? "true" : "false") << '}';
      it->second = o.str();
    }
    return it->second;
  }

 private:
  std::unordered_map<const frame*, std::string> text_;
};

// The sites, which are most of a report (a gigabyte for 10^6 sites), made in a buffer with
// to_chars and written in large pieces: an ostream insertion per field, through the stream
// synchronized with stdio, cost more than the analysis.
class site_writer {
 public:
  explicit site_writer(std::ostream& out) : out_(out) { buf_.reserve(flush_at + 4096); }
  ~site_writer() { flush(); }
  site_writer(const site_writer&) = delete;
  site_writer& operator=(const site_writer&) = delete;

  site_writer& operator<<(std::string_view s) {
    buf_ += s;
    return *this;
  }
  site_writer& operator<<(std::uint64_t n) {
    char digits[24];
    buf_.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
    return *this;
  }
  /// Ends an element: the buffer goes out once it is large.
  void element_done() {
    if (buf_.size() >= flush_at) flush();
  }

 private:
  static constexpr std::size_t flush_at = std::size_t{1} << 20;
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

  std::ostream& out_;
  std::string buf_;
};

void json_histogram(site_writer& out, const size_counts& sizes) {
  out << "[";
  for (std::size_t i = 0; i < sizes.buckets.size(); ++i) {
    const std::size_t b = sizes.buckets[i].bucket;
    out << (i == 0 ? "{\"min\": " : ", {\"min\": ") << histogram::bucket_min(b)
        << ", \"max\": " << histogram::bucket_max(b) << ", \"count\": " << sizes.buckets[i].count
        << "}";
  }
  out << "]";
}

void json_site(site_writer& out, const site& s, frame_objects& objects) {
  const counters& c = s.totals;
  out << "    {\"allocations\": " << c.allocations << ", \"bytes_allocated\": " << c.bytes_allocated
      << ", \"frees\": " << c.frees << ", \"temporary\": " << c.temporary
      << ", \"leaked\": {\"allocations\": " << c.leaked_allocations
      << ", \"bytes\": " << c.leaked_bytes << "}, \"peak\": {\"bytes\": " << c.peak_bytes
      << "},\n     \"histogram\": ";
  json_histogram(out, s.sizes);
  out << ",\n     \"folded_frames\": " << std::uint64_t{s.folded_frames} << ",\n     \"stack\": [";
  for (std::size_t k = 0; k < s.stack.size(); ++k)
    out << (k == 0 ? "\n      " : ",\n      ") << objects.of(s.stack[k]);
  out << (s.stack.empty() ? "]}" : "\n     ]}");
}

}  // namespace

void write_json(std::ostream& out, const analysis& a, const report_options& ro) {
  const counters& t = a.totals;
  const process_info& p = a.process;
  out << "{\n  \"format_version\": 1,\n";
  out << "  \"process\": {\"pid\": " << p.pid << ", \"ppid\": " << p.ppid
      << ", \"fork_child\": " << (p.fork_child ? "true" : "false")
      << ", \"exec_child\": " << (p.exec_child ? "true" : "false")
      << ", \"exe\": " << json_string(p.exe) << ", \"argv\": [";
  for (std::size_t i = 0; i < p.argv.size(); ++i)
    out << (i == 0 ? "" : ", ") << json_string(p.argv[i]);
  out << "]},\n";
  out << "  \"complete\": " << (a.complete ? "true" : "false") << ",\n";
  out << "  \"truncation\": " << (a.truncation.empty() ? "null" : json_string(a.truncation))
      << ",\n";
  out << "  \"run_time_seconds\": " << fixed(a.run_time_seconds, 9) << ",\n";
  out << "  \"allocations\": " << t.allocations << ",\n";
  out << "  \"frees\": " << t.frees << ",\n";
  out << "  \"bytes_allocated\": " << t.bytes_allocated << ",\n";
  out << "  \"temporary\": " << t.temporary << ",\n";
  out << "  \"leaked\": {\"allocations\": " << t.leaked_allocations
      << ", \"bytes\": " << t.leaked_bytes << "},\n";
  out << "  \"peak\": {\"bytes\": " << t.peak_bytes << "},\n";
  out << "  \"unmatched_frees\": " << a.unmatched_frees << ",\n";
  out << "  \"lost_events\": " << a.lost_events << ",\n";
  out << "  \"threads\": " << a.threads << ",\n";
  out << "  \"by_function\": {";
  for (std::size_t k = 0; k < a.allocations_by_kind.size(); ++k)
    out << (k == 0 ? "" : ", ") << '"' << kind_names[k] << "\": " << a.allocations_by_kind[k];
  out << "},\n";
  out << "  \"histogram\": ";
  json_histogram(out, a.sizes);
  out << ",\n";
  out << "  \"sort\": " << json_string(sort_key_name(ro.sort)) << ",\n";
  out << "  \"sites\": [";
  const std::vector<const site*> sites = ranked_sites(a, ro.sort, ro.top);
  frame_objects objects;
  {
    site_writer sites_out(out);
    for (std::size_t i = 0; i < sites.size(); ++i) {
      sites_out << (i == 0 ? "\n" : ",\n");
      json_site(sites_out, *sites[i], objects);
      sites_out.element_done();
    }
  }
  out << (sites.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace lowalloc::report
