// The size histogram's buckets.
#include "analyze/model.hpp"

namespace lowalloc::analyze {

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

}  // namespace lowalloc::analyze
