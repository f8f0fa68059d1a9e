// The runtime's own allocations, told by the frames between the allocation and the program: the
// shared objects they are in (the C library, the dynamic loader, the C++ runtime) and a few
// functions of the C library by name. Each distinct frame is looked at once.
#include "analyze/runtime.hpp"

#include "analyze/analysis.hpp"
#include "analyze/fold.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <tuple>
#include <vector>

namespace lowalloc::analyze {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}

template <std::size_t N>
bool one_of(std::string_view s, const std::string_view (&list)[N]) noexcept {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

std::string_view module_base(std::string_view path) noexcept {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// What one frame tells.
enum frame_bits : std::uint8_t {
  system_module = 1,   // the C or C++ runtime's shared objects, the loader, the recorder
  loader_module = 2,   // the dynamic loader
  allocator_call = 4,  // malloc and friends, operator new: skipped to find who allocated
  owner_call = 8,      // newlocale, duplocale: the caller owns what they allocate
};

constexpr std::string_view system_prefixes[] = {
    "libc.so",      "ld-linux",     "ld64.so", "libstdc++.so",         "libc++.so",
    "libc++abi.so", "libgcc_s.so",  "libm.so", "libpthread.so",        "libdl.so",
    "librt.so",     "libresolv.so", "libnss_", "liblowalloc_trace.so",
};

constexpr std::string_view locale_functions[] = {"setlocale", "__libc_setlocale",
                                                 "new_composite_name"};
constexpr std::string_view locale_owners[] = {"newlocale", "__newlocale", "duplocale",
                                              "__duplocale"};
// tzset's entry points are exported, for a C library without debug symbols.
constexpr std::string_view time_zone_functions[] = {
    "__tzfile_read", "tzset_internal", "__tzstring", "__tzset",
    "tzset",         "__tz_convert",   "localtime",  "localtime_r",
    "__localtime_r", "mktime",         "timelocal",  "__mktime_internal"};
constexpr std::string_view exit_functions[] = {"__new_exitfn", "__internal_atexit"};

struct frame_class {
  std::uint8_t bits = 0;
  runtime_reason reason = runtime_reason::none;  // told by its function's name
};

frame_class classify_frame(const frame& f) {
  frame_class c;
  const std::string_view module = module_base(f.module);
  for (std::string_view prefix : system_prefixes)
    if (starts_with(module, prefix)) c.bits |= system_module;
  if (starts_with(module, "ld-linux") || starts_with(module, "ld64.so")) c.bits |= loader_module;
  if (f.function.empty()) return c;
  // glibc's debug symbols name its internal calls __GI_NAME.
  std::string name = detail::base_name(f.function);
  if (starts_with(name, "__GI_")) name.erase(0, 5);
  if (detail::is_allocation_function(name)) c.bits |= allocator_call;
  if (one_of(name, locale_owners)) c.bits |= owner_call;
  if (name == "_IO_file_doallocate" || name == "_IO_doallocbuf" ||
      name == "_IO_new_file_doallocate")
    c.reason = runtime_reason::stdio_buffer;
  else if (starts_with(name, "_nl_") || one_of(name, locale_functions))
    c.reason = runtime_reason::locale;
  else if (one_of(name, time_zone_functions))
    c.reason = runtime_reason::time_zone;
  else if (starts_with(name, "__nss_") || starts_with(name, "nss_"))
    c.reason = runtime_reason::name_service;
  else if (one_of(name, exit_functions))
    c.reason = runtime_reason::exit_handlers;
  return c;
}

// Frame classes of a table, made on first use of each frame.
class frame_classes {
 public:
  explicit frame_classes(const frame_table& table)
      : table_(table), done_(table.frames.size(), false), classes_(table.frames.size()) {}
  const frame_class& operator()(std::uint32_t id) {
    if (!done_[id]) {
      classes_[id] = classify_frame(table_.frames[id]);
      done_[id] = true;
    }
    return classes_[id];
  }

 private:
  const frame_table& table_;
  std::vector<bool> done_;
  std::vector<frame_class> classes_;
};

// The frames of the runtime from the innermost on, up to the program's first.
template <class ClassOf>
runtime_reason classify(std::size_t frames, ClassOf&& class_of) {
  std::size_t i = 0;
  while (i < frames && (class_of(i).bits & allocator_call) != 0) ++i;
  if (i == frames) return runtime_reason::none;
  const frame_class allocating = class_of(i);
  if ((allocating.bits & system_module) == 0) return runtime_reason::none;
  if ((allocating.bits & loader_module) != 0) return runtime_reason::dynamic_loader;
  const bool owned = (allocating.bits & owner_call) != 0;
  for (; i < frames; ++i) {
    const frame_class c = class_of(i);
    if ((c.bits & system_module) == 0) return runtime_reason::none;
    if (c.reason == runtime_reason::locale && owned) continue;
    if (c.reason != runtime_reason::none) return c.reason;
  }
  // Not one frame of the program: the runtimes' initialisers, run by the loader.
  return runtime_reason::start_up;
}

}  // namespace

std::string_view runtime_reason_text(runtime_reason r) noexcept {
  switch (r) {
    case runtime_reason::none:
      return "";
    case runtime_reason::stdio_buffer:
      return "stdio buffers";
    case runtime_reason::locale:
      return "locale";
    case runtime_reason::time_zone:
      return "time zone";
    case runtime_reason::dynamic_loader:
      return "dynamic loader";
    case runtime_reason::start_up:
      return "runtime start-up";
    case runtime_reason::name_service:
      return "name service";
    case runtime_reason::exit_handlers:
      return "exit handlers";
  }
  return "";
}

std::string_view runtime_reason_key(runtime_reason r) noexcept {
  switch (r) {
    case runtime_reason::none:
      return "";
    case runtime_reason::stdio_buffer:
      return "stdio_buffer";
    case runtime_reason::locale:
      return "locale";
    case runtime_reason::time_zone:
      return "time_zone";
    case runtime_reason::dynamic_loader:
      return "dynamic_loader";
    case runtime_reason::start_up:
      return "start_up";
    case runtime_reason::name_service:
      return "name_service";
    case runtime_reason::exit_handlers:
      return "exit_handlers";
  }
  return "";
}

struct runtime_classifier::classes {
  explicit classes(const frame_table& t) : table(t), of(t) {}
  const frame_table& table;
  frame_classes of;
};

runtime_classifier::runtime_classifier(const frame_table& table)
    : classes_(std::make_unique<classes>(table)) {}

runtime_classifier::~runtime_classifier() = default;

runtime_reason runtime_classifier::of(std::uint32_t first, std::uint32_t n) {
  const std::uint32_t* ids = classes_->table.ids.data() + first;
  return classify(n, [&](std::size_t i) { return classes_->of(ids[i]); });
}

std::unordered_map<std::uint32_t, site_runtime> runtime_by_site(const analysis& a) {
  std::unordered_map<std::uint32_t, site_runtime> out;
  std::unordered_map<std::uint32_t, std::array<std::uint64_t, runtime_reasons>> by_reason;
  for (std::size_t s = 0; s < a.stack_runtime.size() && s < a.stacks.size(); ++s) {
    if (a.stack_runtime[s] == 0) continue;
    const stack& st = a.stacks[s];
    add_counters(out[st.site].totals, st.totals);
    by_reason[st.site][a.stack_runtime[s]] += st.totals.allocations;
  }
  for (auto& [site, part] : out) {
    const auto& counts = by_reason[site];
    part.reason = static_cast<runtime_reason>(std::max_element(counts.begin(), counts.end()) -
                                              counts.begin());
  }
  return out;
}

static_assert(std::tuple_size<decltype(analysis::runtime)>::value == runtime_reasons,
              "analysis::runtime has one entry per runtime_reason");

}  // namespace lowalloc::analyze
