// The counters of each (thread, stack), one analysis of the event stream (events.hpp) for the
// HTML report's thread filter: allocations, bytes, temporary, leaked bytes and bytes live at the
// process-wide peak, each counted for the thread that allocated. Memory grows with the distinct
// (thread, stack) pairs, not with events.
#ifndef LOWALLOC_SRC_ANALYZE_THREAD_STACKS_HPP
#define LOWALLOC_SRC_ANALYZE_THREAD_STACKS_HPP

#include "analyze/events.hpp"
#include "analyze/flat_map.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lowalloc::analyze {

class thread_stacks final : public event_sink {
 public:
  struct entry {
    std::uint32_t thread = 0;  // the merge's stream number
    std::uint32_t stack = 0;
    std::uint64_t allocations = 0;
    std::uint64_t bytes = 0;
    std::uint64_t temporary = 0;
    std::uint64_t live_bytes = 0;  // after finish(): leaked bytes
    std::uint64_t peak_bytes = 0;  // after finish(): live at the process-wide peak
    std::uint64_t epoch = 0;
  };

  void on_begin() override;
  void on_thread(std::uint32_t thread, std::uint64_t tid) override;
  void on_alloc(const alloc_event& e) override;
  void on_free(const free_event& e) override;
  void on_forgotten(const forgotten_event& e) override;

  /// Once the merge is done: each entry's share of the last peak.
  void finish();

  /// Every (thread, stack) that allocated, in order of first allocation.
  const std::vector<entry>& entries() const noexcept { return entries_; }
  /// The thread id of each stream (0 when its THREAD record was not seen).
  const std::vector<std::uint64_t>& tids() const noexcept { return tids_; }
  /// The streams that allocated.
  std::size_t threads() const noexcept { return threads_; }

 private:
  entry& of(std::uint32_t thread, std::uint32_t stack);
  void touch(entry& r) noexcept {
    if (r.epoch != epoch_) {
      r.peak_bytes = r.live_bytes;
      r.epoch = epoch_;
    }
  }
  void release(entry& r, std::uint64_t size) noexcept;

  detail::u64_map<std::uint32_t> index_;  // thread << 32 | stack -> entries_ index
  std::vector<entry> entries_;
  std::vector<std::uint64_t> tids_;
  std::vector<bool> allocated_;  // by stream
  std::size_t threads_ = 0;
  std::uint64_t live_ = 0;
  std::uint64_t peak_ = 0;
  std::uint64_t epoch_ = 0;
};

}  // namespace lowalloc::analyze

#endif
