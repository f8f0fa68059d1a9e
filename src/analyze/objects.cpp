// Growth chains: each allocation starts an object, whose number the merge keeps with its block
// (alloc_event::tag); the free of a block continues its object in a new block instead of ending
// it when the new block is a fresh allocation of the same stack
// and thread, larger, among the thread's `recent` latest allocations, with no free by the thread
// since (a growth allocates, moves the elements and then frees the old buffer; a loop that
// makes and destroys objects of one stack frees between them).
//
// Lifetimes in time are differences of the events' stamps, in ticks: TSC cycles / 2^18 or
// CLOCK_MONOTONIC ns / 2^17 (src/trace/clock.hpp), whichever the recorder used; the TIME
// records' (ticks, ns) pairs give the rate either way. The objects alive at the peak are taken
// as the accounting takes each stack's bytes at the peak: an epoch bumped at each new peak, each
// stack's count snapshotted at its first change after it.
#include "analyze/objects.hpp"

#include "analyze/analysis.hpp"

#include <algorithm>

namespace lowalloc::analyze {

std::size_t object_counts::allocation_class(std::uint64_t n) noexcept {
  if (n <= 4) return n == 0 ? 0 : static_cast<std::size_t>(n - 1);
  if (n <= 8) return 4;
  if (n <= 16) return 5;
  if (n <= 64) return 6;
  return 7;
}

std::uint64_t object_counts::allocation_class_min(std::size_t c) noexcept {
  static constexpr std::uint64_t min[allocation_classes] = {1, 2, 3, 4, 5, 9, 17, 65};
  return min[c];
}

std::uint64_t object_counts::allocation_class_max(std::size_t c) noexcept {
  static constexpr std::uint64_t max[allocation_classes] = {1, 2, 3, 4, 8, 16, 64, 0};
  return max[c];
}

std::size_t object_counts::duration_class(double ns) noexcept {
  double limit = 1e6;  // 1 ms, then each class ten times the one before
  std::size_t c = 1;
  while (c < duration_classes - 2 && ns >= limit) {
    ++c;
    limit *= 10;
  }
  return c;
}

std::size_t object_counts::lifetime_class(std::uint64_t between) noexcept {
  if (between == 0) return 0;
  if (between < 16) return 1;
  if (between < 256) return 2;
  if (between < 4096) return 3;
  return 4;
}

void object_counts::add(const object_counts& o) {
  objects += o.objects;
  allocations += o.allocations;
  alive_at_end += o.alive_at_end;
  max_alive += o.max_alive;
  alive_at_peak += o.alive_at_peak;
  for (std::size_t i = 0; i < allocation_classes; ++i) by_allocations[i] += o.by_allocations[i];
  for (std::size_t i = 0; i < lifetime_classes; ++i) by_lifetime[i] += o.by_lifetime[i];
  for (std::size_t i = 0; i < duration_classes; ++i) by_duration[i] += o.by_duration[i];
  for (const size_counts::bucket_count& b : o.first_sizes.buckets)
    first_sizes.add(b.bucket, b.count);
  for (const size_counts::bucket_count& b : o.final_sizes.buckets)
    final_sizes.add(b.bucket, b.count);
}

void object_tracker::on_begin() {
  const std::uint32_t spill_at = spill_at_;
  *this = object_tracker();
  spill_at_ = spill_at;
}

object_tracker::stack_state& object_tracker::stack_of(std::uint32_t stack) {
  if (stack >= now_.size()) now_.resize(std::max<std::size_t>(stack + 1, now_.size() * 3 / 2));
  return now_[stack];
}

void object_tracker::bump(std::uint32_t stack, std::uint32_t& counter) {
  if (counter >= spill_at_) spill(stack);  // (zeroes `counter`)
  ++counter;
}

void object_tracker::add_counts(object_counts& c, const stack_state& s) {
  for (std::size_t k = 0; k < object_counts::allocation_classes; ++k) {
    c.objects += s.by_allocations[k];
    c.by_allocations[k] += s.by_allocations[k];
  }
  c.allocations += s.allocations;
  for (std::size_t k = 0; k < object_counts::lifetime_classes; ++k)
    c.by_lifetime[k] += s.by_lifetime[k];
  c.alive_at_end += s.by_lifetime[object_counts::lifetime_classes - 1];
  for (std::size_t k = 0; k + 1 < object_counts::duration_classes; ++k)
    c.by_duration[k] += s.by_duration[k];
  c.by_duration[object_counts::duration_classes - 1] +=
      s.by_lifetime[object_counts::lifetime_classes - 1];
  if (s.first_run != 0) c.first_sizes.add(s.first_bucket, s.first_run);
  if (s.final_run != 0) c.final_sizes.add(s.final_bucket, s.final_run);
}

void object_tracker::spill(std::uint32_t stack) {
  stack_state& s = now_[stack];
  add_counts(cold_of(stack), s);
  s.allocations = 0;
  s.first_run = s.final_run = 0;
  s.by_allocations = {};
  s.by_lifetime = {};
  s.by_duration = {};
}

object_counts& object_tracker::cold_of(std::uint32_t stack) {
  stack_state& s = now_[stack];
  if (s.cold == 0) {
    cold_.emplace_back();
    s.cold = static_cast<std::uint32_t>(cold_.size());
  }
  return cold_[s.cold - 1];
}

object_counts object_tracker::of(std::uint32_t stack) const {
  object_counts c;
  if (stack >= now_.size()) return c;
  const stack_state& s = now_[stack];
  if (s.cold != 0) c = cold_[s.cold - 1];
  add_counts(c, s);
  c.max_alive = s.max_alive;
  c.alive_at_peak = s.alive_at_peak;
  return c;
}

object_tracker::thread_state& object_tracker::thread_of(std::uint32_t thread) {
  if (thread >= threads_.size()) threads_.resize(std::size_t{thread} + 1);
  return threads_[thread];
}

std::uint32_t object_tracker::new_object() {
  if (!unused_.empty()) {
    const std::uint32_t i = unused_.back();
    unused_.pop_back();
    return i;
  }
  objects_.grow_to(objects_.size() + 1);
  return static_cast<std::uint32_t>(objects_.size() - 1);
}

void object_tracker::on_time(const time_event& e) {
  rate_.add(e.ticks, e.ns);
  // A span of rate_span ticks puts the rate within 0.1 %.
  if (rate_.span() >= rate_span && rate_.ns_per_tick() != 0) {
    ns_per_tick_ = rate_.ns_per_tick();
    if (!pending_.empty()) count_pending();
  }
}

void object_tracker::on_alloc(const alloc_event& e) {
  thread_state& t = thread_of(e.thread);
  if (e.tag != nullptr) {  // (nullptr: never live, no object to follow)
    stack_of(e.stack);     // sized for it
    const std::uint32_t index = new_object();
    if (++serial_ == 0) serial_ = 1;  // (after 2^32 objects: an alive one is never that old)
    objects_[index] = object{t.allocations, e.tick, e.size, e.size, serial_, e.stack, e.thread, 1};
    *e.tag = index + 1;  // the merge keeps it with the block: 0 is no object
    touch(e.stack);
    ++now_[e.stack].alive;
    t.latest[t.next++ % recent] =
        recent_alloc{t.frees, serial_, e.stack, index, static_cast<std::uint32_t>(epoch_)};
  }
  ++t.allocations;
  if (!e.lost) {  // live bytes and their peak, as the accounting counts them
    live_bytes_ += e.size;
    if (live_bytes_ > peak_bytes_) {
      peak_bytes_ = live_bytes_;
      ++epoch_;
    }
  }
}

void object_tracker::on_free(const free_event& e) {
  thread_state& t = thread_of(e.thread);
  const std::uint64_t frees = t.frees++;
  if (e.matched) live_bytes_ -= e.size;
  if (!e.matched || e.tag == 0 || e.tag > objects_.size()) return;
  const std::uint32_t index = e.tag - 1;
  object& o = objects_[index];
  if (o.serial == 0) return;  // not alive (cannot happen with a well-formed trace)
  if (e.thread == o.thread) {
    // The newest fresh allocation of the same stack: the new buffer of a growth. The object
    // goes on in it: the new block's object takes the old one's history.
    std::uint32_t old_epoch = 0;  // the freed block's entry's, when it is newer than the new one
    bool old_newer = false;
    for (std::size_t k = 1; k <= recent && k <= t.next; ++k) {
      recent_alloc& l = t.latest[(t.next - k) % recent];
      if (l.object == index && l.serial == o.serial && !old_newer) {
        old_epoch = l.epoch;
        old_newer = true;
      }
      if (l.serial == 0 || l.stack != o.stack || l.object == index || l.frees != frees) continue;
      object& grown = objects_[l.object];
      if (grown.serial != l.serial || grown.allocations != 1 || grown.thread != o.thread ||
          grown.last_size <= o.last_size)
        continue;
      grown.allocations += o.allocations;
      grown.born = o.born;
      grown.born_tick = o.born_tick;
      grown.first_size = o.first_size;
      // A peak since the later of the two blocks was made found both alive: one object.
      touch(o.stack);
      if (static_cast<std::uint32_t>(epoch_) != (old_newer ? old_epoch : l.epoch) &&
          now_[o.stack].alive_at_peak != 0)
        --now_[o.stack].alive_at_peak;
      --now_[o.stack].alive;
      release(index);
      l.serial = 0;
      return;
    }
  }
  end(index, false, e.tick);
}

void object_tracker::on_forgotten(const forgotten_event& e) {
  live_bytes_ -= e.size;
  if (e.tag != 0 && e.tag <= objects_.size() && objects_[e.tag - 1].serial != 0)
    end(e.tag - 1, false, e.tick);
}

void object_tracker::release(std::uint32_t index) {
  objects_[index].serial = 0;
  unused_.push_back(index);
}

void object_tracker::count_duration(std::uint32_t stack, std::uint64_t ticks) {
  if (ns_per_tick_ == 0) {
    pending_.push_back(pending_duration{ticks, stack});
  } else {
    bump(stack, now_[stack].by_duration[object_counts::duration_class(static_cast<double>(ticks) *
                                                                      ns_per_tick_)]);
  }
}

void object_tracker::count_pending() {
  for (const pending_duration& p : pending_)
    bump(p.stack, now_[p.stack].by_duration[object_counts::duration_class(
                      static_cast<double>(p.ticks) * ns_per_tick_)]);
  pending_ = std::vector<pending_duration>();
}

void object_tracker::end(std::uint32_t index, bool alive, std::uint64_t tick) {
  const object& o = objects_[index];
  const std::uint32_t stack = o.stack;
  stack_state& s = now_[stack];
  // The most alive at once, just before one ends (a growth's new block, alive with the old one
  // until the old one is freed, is never counted as a second object).
  s.max_alive = std::max(s.max_alive, s.alive);
  bump(stack, s.by_allocations[object_counts::allocation_class(o.allocations)]);
  s.allocations += o.allocations;
  if (alive) {
    bump(stack, s.by_lifetime[object_counts::lifetime_classes - 1]);
  } else {
    const std::uint64_t between = threads_[o.thread].allocations - o.born - 1;
    bump(stack, s.by_lifetime[object_counts::lifetime_class(between)]);
    // (Stamps are causal, a free's never before its block's; a damaged order counts as 0.) Most
    // objects end in the tick they were born in, whatever the rate.
    if (tick > o.born_tick)
      count_duration(stack, tick - o.born_tick);
    else
      bump(stack, s.by_duration[0]);
  }
  const auto first = static_cast<std::uint16_t>(histogram::bucket_of(o.first_size));
  const auto final = static_cast<std::uint16_t>(histogram::bucket_of(o.last_size));
  if ((s.first_run != 0 && first != s.first_bucket) ||
      (s.final_run != 0 && final != s.final_bucket) || s.first_run >= spill_at_ ||
      s.final_run >= spill_at_)
    count_runs(stack);
  s.first_bucket = first;
  ++s.first_run;
  s.final_bucket = final;
  ++s.final_run;
  touch(stack);
  --s.alive;
  release(index);
}

void object_tracker::count_runs(std::uint32_t stack) {
  stack_state& s = now_[stack];
  object_counts& c = cold_of(stack);
  if (s.first_run != 0) c.first_sizes.add(s.first_bucket, s.first_run);
  if (s.final_run != 0) c.final_sizes.add(s.final_bucket, s.final_run);
  s.first_run = 0;
  s.final_run = 0;
}

void object_tracker::finish() {
  // The lifetimes still waiting for the rate take the whole trace's, or the fallback.
  if (ns_per_tick_ == 0)
    ns_per_tick_ = rate_.ns_per_tick() != 0 ? rate_.ns_per_tick() : fallback_ns_per_tick;
  count_pending();
  // Every stack's count at the last peak, before the objects alive at the end are counted.
  for (std::uint32_t s = 0; s < now_.size(); ++s) touch(s);
  for (std::uint32_t i = 0; i < objects_.size(); ++i)
    if (objects_[i].serial != 0) end(i, true, 0);
  objects_ = detail::grow_array<object>();
  unused_ = std::vector<std::uint32_t>();
}

std::vector<object_counts> object_tracker::by_site(const analysis& a) const {
  return by_site(a, a.sites.size());
}

std::vector<object_counts> object_tracker::by_site(const analysis& a, std::size_t sites) const {
  std::vector<object_counts> out(std::min(sites, a.sites.size()));
  for (std::size_t si = 0; si < a.stacks.size() && si < now_.size(); ++si)
    if (a.stacks[si].totals.allocations != 0 && a.stacks[si].site < out.size())
      out[a.stacks[si].site].add(of(static_cast<std::uint32_t>(si)));
  return out;
}

}  // namespace lowalloc::analyze
