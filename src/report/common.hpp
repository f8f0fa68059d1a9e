// What the report formats share: ranking sites, the text of a frame, and number formatting.
#ifndef LOWALLOC_SRC_REPORT_COMMON_HPP
#define LOWALLOC_SRC_REPORT_COMMON_HPP

#include "analyze/model.hpp"
#include "report/report.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace lowalloc::report {

using analyze::counters;
using analyze::frame;
using analyze::histogram;
using analyze::site;
using analyze::size_counts;

/// "allocations", "bytes", "temporary", "leaked" or "peak"; false for anything else.
bool parse_sort_key(std::string_view name, sort_key& out) noexcept;
std::string_view sort_key_name(sort_key key) noexcept;

/// The ranked value of a site: allocations, bytes allocated, temporary allocations, leaked
/// bytes, or live bytes at the peak.
std::uint64_t metric(const counters& c, sort_key key) noexcept;

/// The sites with a non-zero `key` metric, largest first (ties: more allocations first, then
/// the order of `a.sites`), at most `top`.
std::vector<const site*> ranked_sites(const analysis& a, sort_key key, std::size_t top);

/// The names of trace_format::alloc_kind.
extern const char* const kind_names[8];

/// 1234567 as "1,234,567".
std::string thousands(std::uint64_t n);
/// `singular` for a count of 1, else `plural` (empty: `singular` + "s"): every count a text
/// output prints next to its noun goes through it ("1 allocation", "2 allocations").
std::string noun(std::uint64_t n, std::string_view singular, std::string_view plural = {});
/// thousands(n), a space and noun(n, ...): "1 byte", "1,024 bytes".
std::string counted(std::uint64_t n, std::string_view singular, std::string_view plural = {});
/// `v` with `decimals` digits after the point.
std::string fixed(double v, int decimals);
/// "12 %", "1.5 %", "100 %".
std::string percent(std::uint64_t part, std::uint64_t whole);
/// "512 B", "1.5 KiB", "240 MiB".
std::string human_bytes(std::uint64_t n);
/// "12.5 us", "3.2 ms", "1.250 s".
std::string duration(double seconds);
/// "0x1f".
std::string hex(std::uint64_t v);
/// The last component of a path.
std::string_view basename(std::string_view path);
/// A histogram bucket: "24" or "257..512".
std::string bucket_label(std::size_t bucket);

/// The common spellings of std::string shortened, and lowalloc's types as their users write them
/// (lowalloc::small_string<32>), for text and flame graphs (JSON keeps the demangler's names).
std::string readable(std::string name);
/// A frame's name in a flame graph: its function (readable()), else "module+0xoff", else
/// "0xaddr"; with `line`, a known line appended as "function:line".
std::string flame_frame_name(const frame& f, bool line);
/// "fn (file:line)", "fn (module+0xoff)", "module+0xoff" or "0xaddr", control characters
/// replaced.
std::string frame_text(const frame& f);

/// `s` with its control characters replaced by '?', as frame_text() does: a trace's own strings
/// (the command line, the executable's path) on a terminal, which would act on an escape.
std::string terminal_text(std::string_view s);

/// The length of the well-formed UTF-8 sequence at s[at] (1 for an ASCII byte), 0 if the bytes
/// there are not one (a stray byte, an overlong form, a surrogate, a sequence cut short).
std::size_t utf8_length(std::string_view s, std::size_t at);

/// `s` as a JSON string literal, quotes included: control characters escaped, invalid UTF-8
/// bytes replaced by U+FFFD.
std::string json_string(std::string_view s);

/// What a SHADOWED record means for the counts, in a sentence: "the program's calls to malloc and
/// free were not recorded: ...".
std::string shadowed_text(const analyze::shadowed_functions& s);

/// The sites and frames of a report, which are most of it (a hundred megabytes for 10^6 sites),
/// made in a buffer with to_chars and written in large pieces: an ostream insertion per field,
/// through the stream synchronized with stdio, cost more than the analysis.
class site_writer {
 public:
  explicit site_writer(std::ostream& out) : out_(out), buf_(new char[capacity]) {}
  ~site_writer() { flush(); }
  site_writer(const site_writer&) = delete;
  site_writer& operator=(const site_writer&) = delete;

  site_writer& operator<<(std::string_view s) {
    if (s.size() > capacity - size_) {
      flush();
      if (s.size() > capacity) {
        out_.write(s.data(), static_cast<std::streamsize>(s.size()));
        return *this;
      }
    }
    std::memcpy(buf_.get() + size_, s.data(), s.size());
    size_ += s.size();
    return *this;
  }
  site_writer& operator<<(const char* s) { return *this << std::string_view(s); }
  /// A literal: copied at its size known when compiled (no call to memcpy for ", ").
  template <std::size_t N>
  site_writer& operator<<(const char (&s)[N]) {
    if (N - 1 > capacity - size_) return *this << std::string_view(s, N - 1);
    std::memcpy(buf_.get() + size_, s, N - 1);
    size_ += N - 1;
    return *this;
  }
  site_writer& operator<<(std::uint64_t n) {
    if (capacity - size_ < 20) flush();
    char* p = buf_.get() + size_;
    size_ = static_cast<std::size_t>(std::to_chars(p, p + 20, n).ptr - buf_.get());
    return *this;
  }
  /// The first `size` (at most 8) of the 8 bytes at `bytes`, stored as one word.
  site_writer& put_word(const char* bytes, std::size_t size) {
    if (capacity - size_ < 8) flush();
    std::memcpy(buf_.get() + size_, bytes, 8);
    size_ += size;
    return *this;
  }
  /// Ends an element: the buffer goes out once it is large.
  void element_done() {
    if (size_ >= flush_at) flush();
  }

 private:
  static constexpr std::size_t flush_at = std::size_t{1} << 20;
  static constexpr std::size_t capacity = flush_at + (std::size_t{64} << 10);
  void flush() {
    out_.write(buf_.get(), static_cast<std::streamsize>(size_));
    size_ = 0;
  }

  std::ostream& out_;
  std::unique_ptr<char[]> buf_;
  std::size_t size_ = 0;
};

}  // namespace lowalloc::report

#endif
