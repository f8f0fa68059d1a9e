// Allocations that belong to the C and C++ runtimes rather than to the program: the buffer of a
// stdio stream, the locale and time-zone data the C library loads once, the dynamic loader's
// state, the runtimes' own start-up. Most are never freed, by design, and would break a leak
// limit of every program (valgrind keeps default suppressions for the same reason); the report
// shows them apart and `lowalloc check` leaves them out of its leak limit. docs/tracer.md lists
// the rules.
#ifndef LOWALLOC_SRC_ANALYZE_RUNTIME_HPP
#define LOWALLOC_SRC_ANALYZE_RUNTIME_HPP

#include "analyze/model.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>

namespace lowalloc::analyze {

struct analysis;

/// Why a stack's allocations are the runtime's (analysis::stack_runtime); none: the program's.
enum class runtime_reason : std::uint8_t {
  none,
  stdio_buffer,    // _IO_file_doallocate: a stream's buffer, made on its first use
  locale,          // setlocale and the C library's locale loading (_nl_*)
  time_zone,       // the time-zone data tzset reads (localtime, mktime, strftime)
  dynamic_loader,  // allocated by the dynamic loader itself (ld.so: dlopen, TLS, link maps)
  start_up,        // no frame of the program on the stack: the runtimes' own initialisers
  name_service,    // NSS state (__nss_*, nss_*): getpwnam, getaddrinfo
  exit_handlers,   // atexit/__cxa_atexit's list of handlers (__new_exitfn)
};
inline constexpr std::size_t runtime_reasons = 8;

/// "stdio buffer", "locale", ...; "" for none.
std::string_view runtime_reason_text(runtime_reason r) noexcept;
/// "stdio_buffer", "locale", ... (JSON keys); "" for none.
std::string_view runtime_reason_key(runtime_reason r) noexcept;

/// The runtime's part of a site: its counters, and the reason of most of its allocations.
struct site_runtime {
  counters totals;
  runtime_reason reason = runtime_reason::none;
};
/// The sites (index in a.sites) with allocations of the runtime, and their part.
std::unordered_map<std::uint32_t, site_runtime> runtime_by_site(const analysis& a);

/// Tells why stacks are the runtime's, one at a time, each distinct frame of `table` looked at
/// once: build_stacks fills analysis::stack_runtime and analysis::runtime with it as it goes
/// through the stacks.
class runtime_classifier {
 public:
  explicit runtime_classifier(const frame_table& table);
  ~runtime_classifier();
  runtime_classifier(const runtime_classifier&) = delete;
  runtime_classifier& operator=(const runtime_classifier&) = delete;
  /// Why the allocations of the stack whose frames are table.ids[first, first + n), innermost
  /// first, are the runtime's; none if they are the program's.
  runtime_reason of(std::uint32_t first, std::uint32_t n);

 private:
  struct classes;
  std::unique_ptr<classes> classes_;
};

}  // namespace lowalloc::analyze

#endif
