// Each trace on its own thread; the analyses share nothing (each has its own symbolizer).
#include "cli/traces.hpp"

#include <cerrno>
#include <cstdlib>
#include <exception>
#include <functional>
#include <new>
#include <system_error>
#include <thread>

namespace lowalloc::cli {

namespace {

void read_one(const std::string& path, const analyze::options& opts, bool places, read_trace& out) {
  try {
    out.a = analyze::analyze_file(path, opts);
    if (places) out.places = analyze::places_of(out.a);
  } catch (const analyze::trace_error& e) {
    out.error = e.what();
  } catch (const std::bad_alloc&) {
    out.error = "out of memory";
  }
}

}  // namespace

std::vector<read_trace> read_traces(const std::vector<std::string>& paths,
                                    const analyze::options& opts, bool places) {
  std::vector<read_trace> out(paths.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < paths.size(); ++i) {
    try {
      threads.emplace_back(read_one, std::cref(paths[i]), std::cref(opts), places,
                           std::ref(out[i]));
    } catch (const std::system_error&) {
      read_one(paths[i], opts, places, out[i]);  // no thread to be had: one after the other
    }
  }
  if (!paths.empty()) read_one(paths[0], opts, places, out[0]);
  for (std::thread& t : threads) t.join();
  return out;
}

bool parse_count(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE) return false;
  const std::string suffix(end);
  std::uint64_t scale = 1;
  if (suffix.empty())
    scale = 1;
  else if (suffix == "k" || suffix == "K")
    scale = 1000;
  else if (suffix == "M")
    scale = 1000 * 1000;
  else if (suffix == "G")
    scale = 1000 * 1000 * 1000;
  else if (suffix == "KiB")
    scale = 1024;
  else if (suffix == "MiB")
    scale = 1024 * 1024;
  else if (suffix == "GiB")
    scale = 1024 * 1024 * 1024;
  else
    return false;
  if (n > ~std::uint64_t{0} / scale) return false;
  out = n * scale;
  return true;
}

}  // namespace lowalloc::cli
