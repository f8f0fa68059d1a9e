// Live bytes and allocations per interval: fixed-width intervals in ticks, merged in pairs when
// there would be more than the limit (the chart's resolution halves, nothing else is lost).
#include "analyze/timeline.hpp"

#include <algorithm>

namespace lowalloc::analyze {

timeline::timeline(std::size_t max_intervals)
    : max_intervals_(std::max<std::size_t>(max_intervals, 2)) {}

void timeline::on_begin() { *this = timeline(max_intervals_); }

void timeline::on_time(const time_event& e) { rate_.add(e.ticks, e.ns); }

timeline::interval& timeline::at(std::uint64_t tick) {
  if (!started_) {
    started_ = true;
    first_tick_ = tick;
    last_tick_ = tick;
    intervals_.push_back(interval{});
  }
  // The merge hands events in time order; a stamp before the first (a stream's clock behind)
  // counts in the first interval.
  tick = std::max(tick, first_tick_);
  last_tick_ = std::max(last_tick_, tick);
  std::uint64_t index = (tick - first_tick_) / width_;
  while (index >= max_intervals_) {
    // Twice as wide: intervals 2k and 2k+1 become k.
    const std::size_t n = intervals_.size();
    for (std::size_t k = 0; 2 * k < n; ++k) {
      interval merged = intervals_[2 * k];
      if (2 * k + 1 < n) {
        const interval& b = intervals_[2 * k + 1];
        merged.allocations += b.allocations;
        merged.live_end = b.live_end;
        merged.live_max = std::max(merged.live_max, b.live_max);
      }
      intervals_[k] = merged;
    }
    intervals_.resize((n + 1) / 2);
    width_ *= 2;
    index = (tick - first_tick_) / width_;
  }
  // The intervals without events in between hold what was live.
  while (intervals_.size() <= index) intervals_.push_back(interval{0, live_, live_});
  return intervals_[static_cast<std::size_t>(index)];
}

void timeline::on_alloc(const alloc_event& e) {
  interval& i = at(e.tick);
  ++i.allocations;
  if (e.lost) return;  // never live, as the accounting counts it
  live_ += e.size;
  i.live_end = live_;
  i.live_max = std::max(i.live_max, live_);
  if (live_ > peak_bytes_) {
    peak_bytes_ = live_;
    peak_tick_ = std::max(e.tick, first_tick_);
  }
}

void timeline::on_free(const free_event& e) {
  if (!e.matched) return;
  at(e.tick).live_end = live_ -= e.size;
}

void timeline::on_forgotten(const forgotten_event& e) { at(e.tick).live_end = live_ -= e.size; }

double timeline::ns_per_tick() const noexcept {
  const double rate = rate_.ns_per_tick();
  return rate != 0 ? rate : 1;
}

double timeline::seconds_since_start(std::uint64_t tick) const noexcept {
  if (!started_ || tick < first_tick_) return 0;
  return static_cast<double>(tick - first_tick_) * ns_per_tick() / 1e9;
}

std::vector<timeline::point> timeline::points() const {
  std::vector<point> out;
  out.reserve(intervals_.size());
  double previous = 0;
  for (std::size_t k = 0; k < intervals_.size(); ++k) {
    const interval& i = intervals_[k];
    point p;
    const std::uint64_t end = first_tick_ + (k + 1) * width_;
    p.seconds = seconds_since_start(std::min(end, last_tick_ + 1));
    p.width_seconds = p.seconds - previous;
    previous = p.seconds;
    p.allocations = i.allocations;
    p.live_bytes = i.live_end;
    p.max_live_bytes = i.live_max;
    out.push_back(p);
  }
  return out;
}

}  // namespace lowalloc::analyze
