// Growth chains: each allocation starts an object, whose number the merge keeps with its block
// (alloc_event::tag); the free of a block continues its object in a new block instead of ending
// it when the new block is a fresh allocation of the same stack
// and thread, larger, among the thread's `recent` latest allocations, with no free by the thread
// since (a growth allocates, moves the elements and then frees the old buffer; a loop that
// makes and destroys objects of one stack frees between them).
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
  for (std::size_t i = 0; i < allocation_classes; ++i) by_allocations[i] += o.by_allocations[i];
  for (std::size_t i = 0; i < lifetime_classes; ++i) by_lifetime[i] += o.by_lifetime[i];
  for (const size_counts::bucket_count& b : o.first_sizes.buckets)
    first_sizes.add(b.bucket, b.count);
  for (const size_counts::bucket_count& b : o.final_sizes.buckets)
    final_sizes.add(b.bucket, b.count);
}

void object_tracker::on_begin() { *this = object_tracker(); }

object_counts& object_tracker::stack_of(std::uint32_t stack) {
  if (stack >= stacks_.size()) {
    stacks_.resize(std::max<std::size_t>(stack + 1, stacks_.size() * 3 / 2));
    alive_.resize(stacks_.size());
  }
  return stacks_[stack];
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

void object_tracker::on_alloc(const alloc_event& e) {
  thread_state& t = thread_of(e.thread);
  if (e.tag == nullptr) {  // never live: no object to follow
    ++t.allocations;
    return;
  }
  stack_of(e.stack);  // sized for it
  const std::uint32_t index = new_object();
  if (++serial_ == 0) serial_ = 1;  // (after 2^32 objects: an alive one is never that old)
  objects_[index] = object{t.allocations, e.size, e.size, serial_, e.stack, e.thread, 1};
  ++t.allocations;
  *e.tag = index + 1;  // the merge keeps it with the block: 0 is no object
  ++alive_[e.stack];
  t.latest[t.next++ % recent] = recent_alloc{t.frees, serial_, e.stack, index};
}

void object_tracker::on_free(const free_event& e) {
  thread_state& t = thread_of(e.thread);
  const std::uint64_t frees = t.frees++;
  if (!e.matched || e.tag == 0 || e.tag > objects_.size()) return;
  const std::uint32_t index = e.tag - 1;
  object& o = objects_[index];
  if (o.serial == 0) return;  // not alive (cannot happen with a well-formed trace)
  if (e.thread == o.thread) {
    // The newest fresh allocation of the same stack: the new buffer of a growth. The object
    // goes on in it: the new block's object takes the old one's history.
    for (std::size_t k = 1; k <= recent && k <= t.next; ++k) {
      recent_alloc& l = t.latest[(t.next - k) % recent];
      if (l.serial == 0 || l.stack != o.stack || l.object == index || l.frees != frees) continue;
      object& grown = objects_[l.object];
      if (grown.serial != l.serial || grown.allocations != 1 || grown.thread != o.thread ||
          grown.last_size <= o.last_size)
        continue;
      grown.allocations += o.allocations;
      grown.born = o.born;
      grown.first_size = o.first_size;
      --alive_[o.stack];
      release(index);
      l.serial = 0;
      return;
    }
  }
  end(index, false);
}

void object_tracker::on_forgotten(const forgotten_event& e) {
  if (e.tag != 0 && e.tag <= objects_.size() && objects_[e.tag - 1].serial != 0)
    end(e.tag - 1, false);
}

void object_tracker::release(std::uint32_t index) {
  objects_[index].serial = 0;
  unused_.push_back(index);
}

void object_tracker::end(std::uint32_t index, bool alive) {
  const object& o = objects_[index];
  object_counts& c = stacks_[o.stack];
  // The most alive at once, just before one ends (a growth's new block, alive with the old one
  // until the old one is freed, is never counted as a second object).
  c.max_alive = std::max(c.max_alive, alive_[o.stack]);
  ++c.objects;
  c.allocations += o.allocations;
  ++c.by_allocations[object_counts::allocation_class(o.allocations)];
  if (alive) {
    ++c.alive_at_end;
    ++c.by_lifetime[object_counts::lifetime_classes - 1];
  } else {
    const std::uint64_t between = threads_[o.thread].allocations - o.born - 1;
    ++c.by_lifetime[object_counts::lifetime_class(between)];
  }
  c.first_sizes.add(histogram::bucket_of(o.first_size), 1);
  c.final_sizes.add(histogram::bucket_of(o.last_size), 1);
  --alive_[o.stack];
  release(index);
}

void object_tracker::finish() {
  for (std::uint32_t i = 0; i < objects_.size(); ++i)
    if (objects_[i].serial != 0) end(i, true);
  objects_ = detail::grow_array<object>();
  unused_ = std::vector<std::uint32_t>();
}

std::vector<object_counts> object_tracker::by_site(const analysis& a) const {
  std::vector<object_counts> out(a.sites.size());
  for (std::size_t si = 0; si < a.stacks.size() && si < stacks_.size(); ++si)
    if (a.stacks[si].totals.allocations != 0 && a.stacks[si].site < out.size())
      out[a.stacks[si].site].add(stacks_[si]);
  return out;
}

}  // namespace lowalloc::analyze
