// One read of a trace: the merge with the accounting (and any further analyses) as its sinks,
// then symbolized stacks, then (with the merge's memory released) sites.
#include "analyze/analysis.hpp"

#include "analyze/accounting.hpp"
#include "analyze/merge.hpp"
#include "analyze/sites.hpp"
#include "analyze/trace_reader.hpp"
#include "trace/format.hpp"
#include "trace/records.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lowalloc::analyze {

namespace {

analysis collect(event_merge& merge, accounting& acc, const options& opts) {
  acc.finish();
  analysis a;
  a.process = std::move(acc.process);
  a.totals = acc.totals;
  a.allocations_by_kind = acc.allocations_by_kind;
  a.unmatched_frees = acc.unmatched_frees;
  a.lost_events = acc.lost_events;
  a.frees_not_seen = acc.frees_not_seen;
  a.threads = merge.threads();
  a.stacks_lost = merge.undefined_stack_events();
  a.run_time_seconds = merge.run_time_seconds();
  a.complete = acc.complete;
  a.exec_path = std::move(acc.exec_path);
  a.crash = std::move(acc.crash);
  a.stopped = std::move(acc.stopped);
  a.shadowed = std::move(acc.shadowed);
  a.sizes = acc.sizes;
  build_stacks(merge.stacks(), merge.modules(), acc, opts, a);
  a.modules.reserve(merge.modules().size());
  for (const recorded_module& m : merge.modules()) a.modules.push_back(m.desc);
  return a;
}

// The trace at `data`; `file` is its mapping when it is a file's (its pages are released as the
// blocks are read: the file's size does not count in the report's memory).
analysis analyze_bytes(const void* data, std::size_t size, const options& opts,
                       const std::vector<event_sink*>& sinks, const detail::file_bytes* file) {
  static const std::uint8_t empty = 0;
  const auto* bytes = size == 0 ? &empty : static_cast<const std::uint8_t*>(data);
  const detail::file_index index = detail::index_blocks(bytes, size, file);

  // Damage stops reading at the damaged block: blocks before it in the file are read, the
  // ones after it are not. Decoding finds damage in merge order, not file order, so on damage
  // the merge runs again without the damaged block and what follows it (only a damaged file
  // pays for this).
  std::size_t limit = index.blocks.size();
  bool damaged = index.damaged;
  std::string damage = index.damage;
  std::uint64_t damage_offset = index.damage_offset;
  for (;;) {
    if (limit == 0) {
      if (damaged) throw trace_error(damage, damage_offset);
      throw trace_error(
          "no blocks: the traced process wrote no events (it ended before its recorder wrote "
          "its first block: killed, or by the exit_group system call, as Go programs end)",
          trace_format::file_header_size);
    }
    analysis a;
    {
      event_merge merge(bytes, index, limit, file);
      accounting acc;
      merge.add_sink(acc);
      for (event_sink* sink : sinks) merge.add_sink(*sink);
      try {
        merge.run();
      } catch (const block_damage& d) {
        limit = d.block;
        damaged = true;
        damage = d.message;
        damage_offset = index.blocks[d.block].offset;
        continue;
      }
      a = collect(merge, acc, opts);
    }
    // The merge's recorded stacks and the accounting are gone: the sites are built without them.
    build_sites(a, opts.fold_allocator);
    if (damaged) a.truncation = trace_error(damage, damage_offset).what();
    return a;
  }
}

// Whether the traced process still writes the trace at `path`, of which `size_read` bytes were
// read: the process `pid` (from the PROCESS record) has the file open, or the file grew while it
// was read (the descriptors of another user's process cannot be seen).
bool still_running(const std::string& path, std::uint64_t pid, std::size_t size_read) {
  struct stat traced {};
  if (::stat(path.c_str(), &traced) != 0) return false;
  if (static_cast<std::uint64_t>(traced.st_size) > size_read) return true;
  if (pid == 0) return false;
  std::string dir = "/proc/";
  dir += std::to_string(pid);
  dir += "/fd";
  DIR* fds = ::opendir(dir.c_str());
  if (fds == nullptr) return false;
  bool open = false;
  while (const dirent* e = ::readdir(fds)) {
    if (e->d_name[0] == '.') continue;
    std::string fd = dir;
    fd += '/';
    fd += e->d_name;
    struct stat st {};
    if (::stat(fd.c_str(), &st) == 0 && st.st_dev == traced.st_dev && st.st_ino == traced.st_ino) {
      open = true;
      break;
    }
  }
  ::closedir(fds);
  return open;
}

}  // namespace

counters analysis::runtime_totals() const noexcept {
  counters t;
  for (const counters& c : runtime) add_counters(t, c);
  return t;
}

analysis analyze_buffer(const void* data, std::size_t size, const options& opts,
                        const std::vector<event_sink*>& sinks) {
  return analyze_bytes(data, size, opts, sinks, nullptr);
}

analysis analyze_buffer(const void* data, std::size_t size, const options& opts) {
  return analyze_buffer(data, size, opts, {});
}

analysis analyze_file(const std::string& path, const options& opts,
                      const std::vector<event_sink*>& sinks) {
  const detail::file_bytes file(path);
  analysis a = analyze_bytes(file.data(), file.size(), opts, sinks, &file);
  if (!a.complete && !a.stopped) a.running = still_running(path, a.process.pid, file.size());
  return a;
}

analysis analyze_file(const std::string& path, const options& opts) {
  return analyze_file(path, opts, {});
}

namespace {

// Takes the PROCESS record of a block; skips every other.
struct process_visitor {
  std::optional<process_info>& found;

  template <class Items>
  void operator()(const trace_format::process_record& r, Items& argv) {
    found = process_of(r, argv);
  }
  template <class Record>
  void operator()(const Record&) {}
  template <class Record, class Items>
  void operator()(const Record&, Items&) {}
};

}  // namespace

std::optional<process_info> read_process(const std::string& path) {
  try {
    const detail::file_bytes file(path);
    const detail::file_index index = detail::index_blocks(file.data(), file.size());
    // The first block of the process's first thread has PROCESS before any event. Other threads'
    // blocks may come before it in the file (threads that ended first): the first block of each
    // stream is read until one has it. A stream's first block is never compressed against a
    // previous one.
    detail::decompressor decompressor;
    std::vector<std::uint32_t> streams_read;
    std::vector<std::uint8_t> payload;
    for (const detail::block_ref& block : index.blocks) {
      if (block.prefixed ||
          std::find(streams_read.begin(), streams_read.end(), block.stream) != streams_read.end())
        continue;
      streams_read.push_back(block.stream);
      payload.resize(block.decompressed);
      decompressor.decompress(file.data(), block, payload.data());
      trace_format::block_decoding decoding(index.version);
      std::size_t records = payload.size();
      if (decoding.ticks_at_end &&
          trace_format::open_ticks(payload.data(), payload.size(), &records, decoding) != nullptr)
        return std::nullopt;
      detail::payload_reader reader(payload.data(), payload.data() + records);
      std::optional<process_info> found;
      while (!found && !reader.done())
        trace_format::decode_record(reader, decoding, process_visitor{found});
      if (found) return found;
    }
    return std::nullopt;
  } catch (const trace_error&) {
    return std::nullopt;
  } catch (const detail::payload_error&) {
    return std::nullopt;
  }
}

}  // namespace lowalloc::analyze
