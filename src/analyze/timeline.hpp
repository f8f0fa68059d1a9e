// Live heap bytes and allocations over time, one analysis of the event stream (events.hpp) for the
// HTML report's chart: at most `max_intervals` intervals of equal width in ticks, the width
// doubled (neighbouring intervals merged in pairs) whenever the run outgrows them, so the run's
// length need not be known in advance. Each interval keeps its allocations, the live bytes at its
// end and the most live at any moment within it, so the peak is exact however coarse the chart.
#ifndef LOWALLOC_SRC_ANALYZE_TIMELINE_HPP
#define LOWALLOC_SRC_ANALYZE_TIMELINE_HPP

#include "analyze/events.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lowalloc::analyze {

class timeline final : public event_sink {
 public:
  struct point {
    double seconds = 0;        // the end of the interval, since the first event
    double width_seconds = 0;  // the interval's length
    std::uint64_t allocations = 0;
    std::uint64_t live_bytes = 0;  // at the end of the interval
    std::uint64_t max_live_bytes = 0;
  };

  /// `max_intervals` >= 2.
  explicit timeline(std::size_t max_intervals = 2000);

  void on_begin() override;
  void on_time(const time_event& e) override;
  void on_alloc(const alloc_event& e) override;
  void on_free(const free_event& e) override;
  void on_forgotten(const forgotten_event& e) override;

  /// The intervals from the first event to the last, in seconds (the TIME records' rate of
  /// ticks; one tick a nanosecond without two of them).
  std::vector<point> points() const;
  /// The most bytes live at once (equal to the accounting's totals.peak_bytes) and when.
  std::uint64_t peak_bytes() const noexcept { return peak_bytes_; }
  double peak_seconds() const noexcept { return seconds_since_start(peak_tick_); }

 private:
  struct interval {
    std::uint64_t allocations = 0;
    std::uint64_t live_end = 0;
    std::uint64_t live_max = 0;
  };
  // The interval of `tick`, the intervals up to it made (merged while too many).
  interval& at(std::uint64_t tick);
  void live_changed();
  double ns_per_tick() const noexcept;
  double seconds_since_start(std::uint64_t tick) const noexcept;

  std::size_t max_intervals_;
  std::vector<interval> intervals_;
  std::uint64_t width_ = 1;  // ticks per interval
  bool started_ = false;
  std::uint64_t first_tick_ = 0;
  std::uint64_t last_tick_ = 0;
  std::uint64_t live_ = 0;
  std::uint64_t peak_bytes_ = 0;
  std::uint64_t peak_tick_ = 0;
  tick_rate rate_;  // the clock's, from the TIME records
};

}  // namespace lowalloc::analyze

#endif
