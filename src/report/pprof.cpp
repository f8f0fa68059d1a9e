// pprof's profile format (github.com/google/pprof, proto/profile.proto), gzip-compressed, as
// `go tool pprof`, Pyroscope and the other continuous profilers read it: the few messages it
// needs encoded by hand (protobuf's wire format is varints and length-prefixed bytes).
//
// One sample per distinct stack, its frames as the sites show them (allocator and start frames
// folded unless --no-fold), innermost first. A location is one return address: its inlined
// calls are the location's lines, innermost first. docs/tracer.md describes the format.
#include "report/common.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lowalloc::report {

namespace {

// profile.proto's field numbers.
namespace field {
// Profile
constexpr unsigned sample_type = 1, sample = 2, mapping = 3, location = 4, function = 5,
                   string_table = 6, duration_nanos = 10, period_type = 11, period = 12,
                   comment = 13, default_sample_type = 14;
// ValueType
constexpr unsigned type = 1, unit = 2;
// Sample
constexpr unsigned location_id = 1, value = 2;
// Mapping
constexpr unsigned id = 1, memory_start = 2, memory_limit = 3, filename = 5, build_id = 6,
                   has_functions = 7, has_filenames = 8, has_line_numbers = 9,
                   has_inline_frames = 10;
// Location (id = 1)
constexpr unsigned mapping_id = 2, address = 3, line = 4;
// Line
constexpr unsigned function_id = 1, line_number = 2;
// Function (id = 1)
constexpr unsigned name = 2, system_name = 3, function_filename = 4, start_line = 5;
}  // namespace field

// Protobuf's wire format into a string. Scalars equal to 0 (the default) are left out, as
// protobuf's own encoders do.
class proto_writer {
 public:
  void uint(unsigned number, std::uint64_t v) {
    if (v == 0) return;
    key(number, 0);
    varint(v);
  }
  void boolean(unsigned number, bool v) { uint(number, v ? 1 : 0); }
  void bytes(unsigned number, std::string_view s) {
    key(number, 2);
    varint(s.size());
    out_.append(s.data(), s.size());
  }
  void message(unsigned number, const proto_writer& m) { bytes(number, m.out_); }
  /// A repeated integer field, packed (one length-prefixed run of varints).
  void packed(unsigned number, const std::vector<std::uint64_t>& values) {
    if (values.empty()) return;
    proto_writer run;
    for (std::uint64_t v : values) run.varint(v);
    message(number, run);
  }
  void clear() noexcept { out_.clear(); }
  const std::string& data() const noexcept { return out_; }

 private:
  void key(unsigned number, unsigned wire_type) { varint(std::uint64_t{number} << 3 | wire_type); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }

  std::string out_;
};

// `bytes` gzip-compressed onto `out`.
void write_gzip(std::ostream& out, const std::string& bytes) {
  z_stream z{};
  // 15 + 16: the largest window, with a gzip header and trailer.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: deflateInit2 failed");
  std::vector<unsigned char> chunk(1 << 16);
  std::size_t done = 0;
  int status = Z_OK;
  do {
    // avail_in is 32 bits: a larger profile goes in pieces.
    if (z.avail_in == 0 && done < bytes.size()) {
      const std::size_t n = std::min<std::size_t>(bytes.size() - done, 1u << 30);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + done));
      z.avail_in = static_cast<uInt>(n);
      done += n;
    }
    z.next_out = chunk.data();
    z.avail_out = static_cast<uInt>(chunk.size());
    status = deflate(&z, done == bytes.size() ? Z_FINISH : Z_NO_FLUSH);
    if (status == Z_STREAM_ERROR) break;
    out.write(reinterpret_cast<const char*>(chunk.data()),
              static_cast<std::streamsize>(chunk.size() - z.avail_out));
  } while (status != Z_STREAM_END);
  deflateEnd(&z);
  if (status != Z_STREAM_END) throw std::runtime_error("zlib: deflate failed");
}

class profile_builder {
 public:
  explicit profile_builder(const analysis& a) : a_(a) {
    strings_.emplace_back();  // string_table[0] is "", as the format requires
    index_.emplace(std::string(), 0);
    if (a.frames != nullptr) function_of_frame_.assign(a.frames->frames.size(), 0);
  }

  std::uint64_t string_index(const std::string& s) {
    auto [it, added] = index_.try_emplace(s, strings_.size());
    if (added) strings_.push_back(s);
    return it->second;
  }

  void value_type(unsigned number, const char* type, const char* unit) {
    proto_writer m;
    m.uint(field::type, string_index(type));
    m.uint(field::unit, string_index(unit));
    out_.message(number, m);
  }

  /// One sample: stacks[s] with its four values.
  void sample(std::size_t s, const std::uint64_t (&values)[4]) {
    const analyze::stack& st = a_.stacks[s];
    const analyze::frame_list frames = a_.stack_frames(s);
    std::size_t begin = 0;
    std::size_t end = frames.size();
    if (a_.folded && end != 0) {
      begin = std::min<std::size_t>(st.allocator_frames, end - 1);
      end -= std::min<std::size_t>(st.start_frames, end - begin - 1);
    }
    location_ids_.clear();
    for (std::size_t i = begin; i < end;) {
      // The frames of one address: inlined calls, then the function they are inlined into.
      std::size_t j = i;
      while (j + 1 < end && frames[j].inlined && frames[j + 1].address == frames[i].address) ++j;
      location_ids_.push_back(location(frames, i, j + 1));
      i = j + 1;
    }
    proto_writer m;
    m.packed(field::location_id, location_ids_);
    std::vector<std::uint64_t> v(values, values + 4);
    m.packed(field::value, v);
    out_.message(field::sample, m);
  }

  /// The rest of the profile; then the whole of it.
  const std::string& finish(const report_options& ro) {
    write_mappings();
    proto_writer m;
    for (const location_entry& l : locations_) {
      m.clear();
      m.uint(field::id, l.id);
      if (l.mapping != no_mapping) m.uint(field::mapping_id, mapping_ids_[l.mapping]);
      m.uint(field::address, l.address);
      const analyze::frame_list& frames = l.frames;
      for (std::size_t k = l.first; k < l.last; ++k) {
        const std::uint64_t fn = function_of_frame_[frames.id(k)];
        if (fn == 0) continue;  // not symbolized: the address only
        proto_writer line;
        line.uint(field::function_id, fn);
        line.uint(field::line_number, frames[k].line);
        m.message(field::line, line);
      }
      out_.message(field::location, m);
    }
    for (const std::string& f : functions_) out_.bytes(field::function, f);

    value_type(field::period_type, "space", "bytes");
    out_.uint(field::period, 1);
    out_.uint(field::default_sample_type, string_index("alloc_space"));
    out_.uint(field::duration_nanos, static_cast<std::uint64_t>(a_.run_time_seconds * 1e9));
    std::string command;
    for (const std::string& arg : a_.process.argv) {
      if (!command.empty()) command += ' ';
      command += arg;
    }
    if (!command.empty()) out_.uint(field::comment, string_index(command));
    out_.uint(field::comment,
              string_index(ro.inuse == inuse_at::peak ? "lowalloc: inuse = live at the peak"
                                                      : "lowalloc: inuse = live at the end"));
    for (const std::string& str : strings_) out_.bytes(field::string_table, str);
    return out_.data();
  }

 private:
  static constexpr std::size_t no_mapping = ~std::size_t{0};

  struct location_entry {
    std::uint64_t id;
    std::size_t mapping;
    std::uint64_t address;
    analyze::frame_list frames;  // its frames are frames[first, last)
    std::size_t first;
    std::size_t last;
  };
  struct mapping_entry {
    std::string path;
    std::uint64_t bias = 0;
    std::uint64_t limit = 0;  // past the highest address seen in it
    bool functions = true, filenames = true, line_numbers = true;
  };

  // The id of the location of frames[first, last), one address, made on first use.
  std::uint64_t location(const analyze::frame_list& frames, std::size_t first, std::size_t last) {
    const std::uint64_t key = std::uint64_t{frames.id(first)} << 32 | (last - first);
    auto [it, added] = location_of_.try_emplace(key, locations_.size() + 1);
    if (!added) return it->second;
    const analyze::frame& f = frames[first];
    const std::size_t m = mapping(f);
    for (std::size_t k = first; k < last; ++k) {
      const analyze::frame& fk = frames[k];
      if (m != no_mapping) {
        mapping_entry& me = mappings_[m];
        me.functions = me.functions && !fk.function.empty();
        me.filenames = me.filenames && !fk.file.empty();
        me.line_numbers = me.line_numbers && fk.line != 0;
      }
      if (!fk.function.empty()) function(frames.id(k), fk);
    }
    locations_.push_back(location_entry{it->second, m, f.address, frames, first, last});
    return it->second;
  }

  std::size_t mapping(const analyze::frame& f) {
    if (f.module.empty()) return no_mapping;
    const std::uint64_t bias = f.address - f.offset;
    auto [it, added] = mapping_of_.try_emplace(f.module + '\0' + std::to_string(bias), 0);
    if (added) {
      it->second = mappings_.size();
      mapping_entry e;
      e.path = f.module;
      e.bias = bias;
      mappings_.push_back(std::move(e));
    }
    mapping_entry& e = mappings_[it->second];
    e.limit = std::max(e.limit, f.address + 1);
    return it->second;
  }

  void function(std::uint32_t frame_id, const analyze::frame& f) {
    std::uint64_t& id = function_of_frame_[frame_id];
    if (id != 0) return;
    key_.clear();
    key_ += f.function;
    key_ += '\0';
    key_ += f.file;
    key_ += '\0';
    key_ += std::to_string(f.function_line);
    auto [it, added] = function_of_key_.try_emplace(key_, functions_.size() + 1);
    id = it->second;
    if (!added) return;
    proto_writer m;
    m.uint(field::id, id);
    m.uint(field::name, string_index(readable(f.function)));
    m.uint(field::system_name, string_index(f.function));
    m.uint(field::function_filename, string_index(f.file));
    m.uint(field::start_line, f.function_line);
    functions_.push_back(m.data());
  }

  // The mappings, numbered with the program's own first (pprof takes the first as the main
  // binary), each with its build id when a MODULE_ID record gave one.
  void write_mappings() {
    std::vector<std::size_t> order(mappings_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_partition(order.begin(), order.end(),
                          [&](std::size_t i) { return mappings_[i].path == a_.process.exe; });
    mapping_ids_.assign(mappings_.size(), 0);
    proto_writer m;
    for (std::size_t n = 0; n < order.size(); ++n) {
      const mapping_entry& e = mappings_[order[n]];
      mapping_ids_[order[n]] = n + 1;
      std::string build_id;
      for (const analyze::module_desc& d : a_.modules)
        if (d.path == e.path && d.bias == e.bias && !d.build_id.empty()) {
          build_id = hex_bytes(d.build_id);
          break;
        }
      m.clear();
      m.uint(field::id, n + 1);
      m.uint(field::memory_start, e.bias);
      m.uint(field::memory_limit, e.limit);
      m.uint(field::filename, string_index(e.path));
      m.uint(field::build_id, string_index(build_id));
      m.boolean(field::has_functions, e.functions);
      m.boolean(field::has_filenames, e.filenames);
      m.boolean(field::has_line_numbers, e.line_numbers);
      // Inlined calls come with the line information (DWARF's scopes).
      m.boolean(field::has_inline_frames, e.filenames && e.line_numbers);
      out_.message(field::mapping, m);
    }
  }

  static std::string hex_bytes(const std::string& bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (const char byte : bytes) {
      const auto c = static_cast<unsigned char>(byte);
      out += digits[c >> 4];
      out += digits[c & 15];
    }
    return out;
  }

  const analysis& a_;
  proto_writer out_;  // the Profile, its messages appended as they are made
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint64_t> index_;
  std::vector<std::uint64_t> location_ids_;
  std::unordered_map<std::uint64_t, std::uint64_t> location_of_;  // (first frame id, count)
  std::vector<location_entry> locations_;
  std::unordered_map<std::string, std::size_t> mapping_of_;  // path '\0' bias
  std::vector<mapping_entry> mappings_;
  std::vector<std::uint64_t> mapping_ids_;        // per mapping, its id in the profile
  std::vector<std::uint64_t> function_of_frame_;  // per frame of the table, its function id
  std::unordered_map<std::string, std::uint64_t> function_of_key_;
  std::vector<std::string> functions_;  // encoded Function messages
  std::string key_;
};

}  // namespace

void write_pprof(std::ostream& out, const analysis& a, const report_options& ro) {
  profile_builder b(a);
  // Go's heap profiles' sample types, in their order; the period is one byte: every allocation
  // is in the trace, none is sampled. The default view is alloc_space (Go's is inuse_space,
  // which for a program that ran to its end is its leaks).
  b.value_type(field::sample_type, "alloc_objects", "count");
  b.value_type(field::sample_type, "alloc_space", "bytes");
  b.value_type(field::sample_type, "inuse_objects", "count");
  b.value_type(field::sample_type, "inuse_space", "bytes");
  for (std::size_t s = 0; s < a.stacks.size(); ++s) {
    const counters& c = a.stacks[s].totals;
    if (c.allocations == 0) continue;
    const bool peak = ro.inuse == inuse_at::peak;
    const std::uint64_t values[4] = {c.allocations, c.bytes_allocated,
                                     peak ? c.peak_allocations : c.leaked_allocations,
                                     peak ? c.peak_bytes : c.leaked_bytes};
    b.sample(s, values);
  }
  const std::string& bytes = b.finish(ro);
  write_gzip(out, bytes);
}

}  // namespace lowalloc::report
