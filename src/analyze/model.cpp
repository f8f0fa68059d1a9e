// Counters added up, the size histogram's buckets, a site's sparse sizes, and frame lists made by
// hand.
#include "analyze/model.hpp"

#include <algorithm>

namespace lowalloc::analyze {

void add_counters(counters& into, const counters& c) noexcept {
  into.allocations += c.allocations;
  into.bytes_allocated += c.bytes_allocated;
  into.frees += c.frees;
  into.temporary += c.temporary;
  into.leaked_allocations += c.leaked_allocations;
  into.leaked_bytes += c.leaked_bytes;
  into.peak_bytes += c.peak_bytes;
  into.max_live_bytes += c.max_live_bytes;
  into.peak_allocations += c.peak_allocations;
}

std::size_t histogram::bucket_of(std::uint64_t size) noexcept {
  if (size < exact_sizes) return static_cast<std::size_t>(size);
  // (2^k, 2^(k+1)] holds the sizes whose size - 1 has k + 1 significant bits.
  const auto bits = static_cast<std::size_t>(64 - __builtin_clzll(size - 1));
  return exact_sizes + bits - 9;
}

std::uint64_t histogram::bucket_min(std::size_t bucket) noexcept {
  if (bucket < exact_sizes) return bucket;
  return (std::uint64_t{1} << (bucket - exact_sizes + 8)) + 1;
}

std::uint64_t histogram::bucket_max(std::size_t bucket) noexcept {
  if (bucket < exact_sizes) return bucket;
  const std::size_t k = bucket - exact_sizes + 9;
  return k >= 64 ? ~std::uint64_t{0} : std::uint64_t{1} << k;
}

namespace {

bool bucket_before(const size_counts::bucket_count& x, std::size_t bucket) noexcept {
  return x.bucket < bucket;
}

}  // namespace

std::uint64_t size_counts::count(std::size_t bucket) const noexcept {
  const auto it = std::lower_bound(buckets.begin(), buckets.end(), bucket, bucket_before);
  return it != buckets.end() && it->bucket == bucket ? it->count : 0;
}

void size_counts::add(std::size_t bucket, std::uint64_t n) {
  auto it = std::lower_bound(buckets.begin(), buckets.end(), bucket, bucket_before);
  if (it == buckets.end() || it->bucket != bucket)
    it = buckets.insert(it, bucket_count{static_cast<std::uint32_t>(bucket), 0});
  it->count += n;
}

frame_list::frame_list(std::vector<frame> frames) {
  auto table = std::make_shared<frame_table>();
  table->frames = std::move(frames);
  for (std::size_t i = 0; i < table->frames.size(); ++i)
    table->ids.push_back(static_cast<std::uint32_t>(i));
  count_ = static_cast<std::uint32_t>(table->frames.size());
  table_ = std::move(table);
}

}  // namespace lowalloc::analyze
