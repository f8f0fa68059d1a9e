// Per (thread, stack) counters, the peak share refreshed lazily as the accounting does (an epoch
// per new peak), so a new maximum costs O(1).
#include "analyze/thread_stacks.hpp"

namespace lowalloc::analyze {

void thread_stacks::on_begin() { *this = thread_stacks(); }

void thread_stacks::on_thread(std::uint32_t thread, std::uint64_t tid) {
  if (tids_.size() <= thread) tids_.resize(std::size_t{thread} + 1);
  tids_[thread] = tid;
}

thread_stacks::entry& thread_stacks::of(std::uint32_t thread, std::uint32_t stack) {
  bool inserted = false;
  std::uint32_t& i = index_.get(std::uint64_t{thread} << 32 | stack, inserted);
  if (inserted) {
    i = static_cast<std::uint32_t>(entries_.size());
    entry e;
    e.thread = thread;
    e.stack = stack;
    e.epoch = epoch_;
    entries_.push_back(e);
    if (allocated_.size() <= thread) allocated_.resize(std::size_t{thread} + 1);
    if (!allocated_[thread]) {
      allocated_[thread] = true;
      ++threads_;
    }
  }
  return entries_[i];
}

void thread_stacks::on_alloc(const alloc_event& e) {
  entry& r = of(e.thread, e.stack);
  ++r.allocations;
  r.bytes += e.size;
  if (e.lost) return;
  touch(r);
  r.live_bytes += e.size;
  live_ += e.size;
  if (live_ > peak_) {
    peak_ = live_;
    ++epoch_;
  }
}

void thread_stacks::release(entry& r, std::uint64_t size) noexcept {
  touch(r);
  r.live_bytes -= size;
  live_ -= size;
}

void thread_stacks::on_free(const free_event& e) {
  if (!e.matched) return;
  entry& r = of(e.alloc_thread, e.stack);
  release(r, e.size);
  if (e.temporary) ++r.temporary;
}

// A forgotten block names its stack, not its thread: the first thread with that many bytes live
// from the stack (exact when one thread allocates from it). Rare: a look-up per thread is cheap.
void thread_stacks::on_forgotten(const forgotten_event& e) {
  for (std::size_t t = 0; t < allocated_.size(); ++t) {
    if (!allocated_[t]) continue;
    std::uint32_t* i = index_.find(std::uint64_t{t} << 32 | e.stack);
    if (i != nullptr && entries_[*i].live_bytes >= e.size) {
      release(entries_[*i], e.size);
      return;
    }
  }
}

void thread_stacks::finish() {
  for (entry& r : entries_) touch(r);
}

}  // namespace lowalloc::analyze
