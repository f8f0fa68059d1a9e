// Each trace on its own thread; the analyses share nothing (each has its own symbolizer).
#include "cli/traces.hpp"

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

}  // namespace lowalloc::cli
