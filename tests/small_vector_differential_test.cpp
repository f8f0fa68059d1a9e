// small_vector against std::vector: the same random operations on both, compared after every step
// (tests/support/vector_ops.hpp), for int, std::string and counted elements and N in {0, 1, 2, 8,
// 33}; then the allocator model: polymorphic_allocator (uses-allocator construction of the
// elements) and a stateful allocator with every propagation trait on and off.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/small_vector.hpp>

#include "support/element_types.hpp"
#include "support/vector_ops.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using lowalloc_test::counted;
using lowalloc_test::counts;

// ---- differential: random operations -----------------------------------------------------------

template <class T, std::size_t N>
struct config {
  using type = T;
  static constexpr std::size_t n = N;
};

using configs = ::testing::Types<config<int, 0>, config<int, 1>, config<int, 2>, config<int, 8>,
                                 config<int, 33>, config<std::string, 0>, config<std::string, 1>,
                                 config<std::string, 2>, config<std::string, 8>,
                                 config<std::string, 33>, config<counted, 0>, config<counted, 1>,
                                 config<counted, 2>, config<counted, 8>, config<counted, 33>>;
constexpr std::size_t config_count = 15;

struct config_names {
  template <class C>
  static std::string GetName(int) {
    using T = typename C::type;
    const char* t = std::is_same_v<T, int>       ? "int"
                    : std::is_same_v<T, counted> ? "counted"
                                                 : "string";
    return std::string(t) + "_N" + std::to_string(C::n);
  }
};

// Each configuration runs kSequences independent sequences of kSteps operations, each from an
// empty harness; together at least a million operations.
constexpr std::size_t kSequences = 8;
constexpr std::size_t kSteps = 8500;
static_assert(kSequences * kSteps * config_count >= 1000000,
              "the differential test must run at least a million operations");

template <class C>
class SmallVectorDifferential : public ::testing::Test {};
TYPED_TEST_SUITE(SmallVectorDifferential, configs, config_names);

TYPED_TEST(SmallVectorDifferential, RandomOperationsMatchStdVector) {
  using T = typename TypeParam::type;
  constexpr std::size_t N = TypeParam::n;
  const long live_before = counts().live();
  for (std::size_t seq = 0; seq < kSequences; ++seq) {
    const std::uint64_t seed = 0x5eed0000u + seq * 131 + N;
    lowalloc_test::rng_source src(seed);
    lowalloc_test::vector_ops<T, N> ops;
    for (std::size_t i = 0; i < kSteps; ++i) {
      if (!ops.step(src)) {
        FAIL() << "seed " << seed << ": " << ops.failure();
      }
    }
  }
  EXPECT_EQ(counts().live(), live_before);
}

// ---- polymorphic_allocator ---------------------------------------------------------------------

using pmr_alloc = std::pmr::polymorphic_allocator<std::pmr::string>;
using pmr_vector = lowalloc::small_vector<std::pmr::string, 4, pmr_alloc>;

// Long enough that every string owns a block from its allocator.
constexpr const char* kLong = "a string that is far too long for the small-string buffer";

// A monotonic resource over a local buffer with no upstream: every allocation of the vector and of
// its strings must come from it, so a global allocation is a bug in the allocator model.
class SmallVectorPmr : public ::testing::Test {
 protected:
  alignas(std::max_align_t) std::byte buffer_[1 << 16];
  std::pmr::monotonic_buffer_resource mr_{buffer_, sizeof buffer_,
                                          std::pmr::null_memory_resource()};

  ::testing::AssertionResult all_use_resource(const pmr_vector& v) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].get_allocator().resource() != &mr_) {
        return ::testing::AssertionFailure()
               << "element " << i << " of " << v.size() << " does not use the vector's resource";
      }
    }
    return ::testing::AssertionSuccess();
  }
};

TEST_F(SmallVectorPmr, ElementsUseTheVectorsResource) {
  lowalloc::alloc_counter global;
  pmr_vector v{pmr_alloc(&mr_)};
  EXPECT_EQ(v.get_allocator().resource(), &mr_);
  for (int i = 0; i < 3; ++i) v.emplace_back(kLong);
  EXPECT_TRUE(v.is_inline());
  EXPECT_TRUE(all_use_resource(v));
  v.push_back(v[0]);                           // copy: uses-allocator, inline
  v.push_back(std::pmr::string(kLong, &mr_));  // the spill
  EXPECT_FALSE(v.is_inline());
  EXPECT_TRUE(all_use_resource(v));
  v.insert(v.begin() + 1, v[2]);     // aliasing insert, moves elements up
  v.insert(v.begin(), 3, v.back());  // fill insert with an element as value
  v.resize(20);                      // value-initialised elements
  v.resize(24, v[1]);
  EXPECT_TRUE(all_use_resource(v));
  v.erase(v.begin() + 2, v.begin() + 10);
  v.shrink_to_fit();
  v.assign(3, v[0]);  // fits the heap buffer
  v.shrink_to_fit();  // back to the inline storage
  EXPECT_TRUE(v.is_inline());
  EXPECT_TRUE(all_use_resource(v));
  for (const auto& s : v) EXPECT_EQ(s, kLong);

  pmr_vector copy(v, pmr_alloc(&mr_));  // copy with an allocator
  EXPECT_TRUE(all_use_resource(copy));
  pmr_vector moved(std::move(copy), pmr_alloc(&mr_));
  EXPECT_TRUE(all_use_resource(moved));
  EXPECT_TRUE(copy.empty());

  // Nothing of the above reached the global heap.
  EXPECT_EQ(global.allocations(), 0u);
}

TEST_F(SmallVectorPmr, CopyConstructionUsesTheDefaultResource) {
  // As std::pmr::vector: polymorphic_allocator's select_on_container_copy_construction gives the
  // default resource.
  pmr_vector v{pmr_alloc(&mr_)};
  v.emplace_back(kLong);
  const pmr_vector copy(v);
  EXPECT_EQ(copy.get_allocator().resource(), std::pmr::get_default_resource());
  EXPECT_EQ(copy[0].get_allocator().resource(), std::pmr::get_default_resource());
}

TEST_F(SmallVectorPmr, MoveAssignmentAcrossResourcesMovesElements) {
  std::pmr::monotonic_buffer_resource other;
  pmr_vector a{pmr_alloc(&mr_)};
  pmr_vector b{pmr_alloc(&other)};
  for (int i = 0; i < 6; ++i) b.emplace_back(kLong);
  a = std::move(b);  // polymorphic_allocator does not propagate: elements are moved over
  EXPECT_EQ(a.get_allocator().resource(), &mr_);
  EXPECT_EQ(a.size(), 6u);
  EXPECT_TRUE(all_use_resource(a));
  EXPECT_TRUE(b.empty());
}

// emplace in the middle and insert(pos, count, v[i]) need a temporary; std::vector builds it with
// the allocator (allocator_traits::construct), so a pmr element argument never touches the global
// heap.
TEST_F(SmallVectorPmr, TemporariesUseTheAllocator) {
  pmr_vector v{pmr_alloc(&mr_)};
  v.reserve(16);
  for (int i = 0; i < 3; ++i) v.emplace_back(kLong);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.emplace(v.begin() + 1, kLong));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(v.insert(v.begin() + 1, 2, v[2]));
  EXPECT_TRUE(all_use_resource(v));
}

// ---- a stateful allocator ----------------------------------------------------------------------

// Every block remembers the id of the allocator that made it; a block freed by an allocator with
// another id, or with another size, is a mismatch.
struct block_registry {
  std::map<const void*, std::pair<int, std::size_t>> blocks;
  long mismatches = 0;
  long allocations = 0;
};
block_registry& registry() {
  static block_registry r;
  return r;
}
int owner_of(const void* p) {
  auto it = registry().blocks.find(p);
  return it == registry().blocks.end() ? -1 : it->second.first;
}

template <class T, bool Pocca, bool Pocma, bool Pocs>
class tracking_allocator {
 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::bool_constant<Pocca>;
  using propagate_on_container_move_assignment = std::bool_constant<Pocma>;
  using propagate_on_container_swap = std::bool_constant<Pocs>;
  using is_always_equal = std::false_type;
  template <class U>
  struct rebind {
    using other = tracking_allocator<U, Pocca, Pocma, Pocs>;
  };

  explicit tracking_allocator(int id = 0) noexcept : id_(id) {}
  template <class U>
  tracking_allocator(const tracking_allocator<U, Pocca, Pocma, Pocs>& o) noexcept  // NOLINT
      : id_(o.id()) {}

  T* allocate(std::size_t n) {
    T* p = std::allocator<T>().allocate(n);
    registry().blocks[p] = {id_, n};
    ++registry().allocations;
    return p;
  }
  void deallocate(T* p, std::size_t n) noexcept {
    auto it = registry().blocks.find(p);
    if (it == registry().blocks.end() || it->second.first != id_ || it->second.second != n) {
      ++registry().mismatches;
    }
    if (it != registry().blocks.end()) registry().blocks.erase(it);
    std::allocator<T>().deallocate(p, n);
  }
  int id() const noexcept { return id_; }

  friend bool operator==(const tracking_allocator& x, const tracking_allocator& y) {
    return x.id_ == y.id_;
  }
  friend bool operator!=(const tracking_allocator& x, const tracking_allocator& y) {
    return x.id_ != y.id_;
  }

 private:
  int id_;
};

template <bool Pocca, bool Pocma, bool Pocs>
struct traits_config {
  static constexpr bool pocca = Pocca, pocma = Pocma, pocs = Pocs;
  using alloc = tracking_allocator<counted, Pocca, Pocma, Pocs>;
  template <std::size_t N>
  using vec = lowalloc::small_vector<counted, N, alloc>;
};

template <class C>
class SmallVectorStatefulAllocator : public ::testing::Test {
 protected:
  void SetUp() override {
    registry() = block_registry{};
    lowalloc_test::reset_counts();
  }
  void TearDown() override {
    EXPECT_EQ(registry().mismatches, 0) << "a block was freed by another allocator than its own";
    EXPECT_TRUE(registry().blocks.empty()) << registry().blocks.size() << " blocks leaked";
    EXPECT_EQ(counts().live(), 0);
  }

 public:
  using alloc = typename C::alloc;
  template <std::size_t N>
  using vec = typename C::template vec<N>;

  template <std::size_t N>
  static vec<N> filled(int id, int count, int first_value = 0) {
    vec<N> v{alloc(id)};
    for (int i = 0; i < count; ++i) v.emplace_back(first_value + i);
    return v;
  }
  template <std::size_t N>
  static ::testing::AssertionResult storage_from(const vec<N>& v, int id) {
    if (v.get_allocator().id() != id) {
      return ::testing::AssertionFailure()
             << "allocator id " << v.get_allocator().id() << ", expected " << id;
    }
    if (!v.is_inline() && owner_of(v.data()) != id) {
      return ::testing::AssertionFailure()
             << "heap buffer from allocator " << owner_of(v.data()) << ", expected " << id;
    }
    return ::testing::AssertionSuccess();
  }
  static std::vector<int> values(const lowalloc::small_vector_base<counted, alloc>& v) {
    std::vector<int> out;
    for (const auto& e : v) out.push_back(e.value());
    return out;
  }
  static std::vector<int> iota(int first, int count) {
    std::vector<int> out;
    for (int i = 0; i < count; ++i) out.push_back(first + i);
    return out;
  }
};

using traits_configs =
    ::testing::Types<traits_config<false, false, false>, traits_config<true, true, true>,
                     traits_config<true, false, false>, traits_config<false, true, false>,
                     traits_config<false, false, true>>;
struct traits_names {
  template <class C>
  static std::string GetName(int) {
    return std::string("pocca") + (C::pocca ? "1" : "0") + "_pocma" + (C::pocma ? "1" : "0") +
           "_pocs" + (C::pocs ? "1" : "0");
  }
};
TYPED_TEST_SUITE(SmallVectorStatefulAllocator, traits_configs, traits_names);

TYPED_TEST(SmallVectorStatefulAllocator, CopyConstructionKeepsTheAllocator) {
  auto a = this->template filled<2>(1, 5);
  const auto copy(a);  // select_on_container_copy_construction: a copy of the allocator
  EXPECT_TRUE(this->storage_from(copy, 1));
  typename TestFixture::template vec<2> with(a, typename TestFixture::alloc(2));
  EXPECT_TRUE(this->storage_from(with, 2));
  EXPECT_EQ(this->values(with), this->iota(0, 5));
}

TYPED_TEST(SmallVectorStatefulAllocator, CopyAssignment) {
  for (int src_size : {1, 5}) {
    for (int dst_size : {1, 7}) {
      auto a = this->template filled<2>(1, src_size);
      auto b = this->template filled<2>(2, dst_size, 100);
      b = a;
      const int expected = TypeParam::pocca ? 1 : 2;
      EXPECT_TRUE(this->storage_from(b, expected)) << src_size << " into " << dst_size;
      EXPECT_EQ(this->values(b), this->iota(0, src_size));
      EXPECT_TRUE(this->storage_from(a, 1));
    }
  }
}

TYPED_TEST(SmallVectorStatefulAllocator, MoveAssignmentFromHeap) {
  auto a = this->template filled<2>(1, 5);
  auto b = this->template filled<2>(2, 3, 100);
  const counted* buffer = a.data();
  const long moves = counts().moves;
  b = std::move(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(this->values(b), this->iota(0, 5));
  if (TypeParam::pocma) {
    // The allocator moves with the buffer: nothing is moved element by element.
    EXPECT_TRUE(this->storage_from(b, 1));
    EXPECT_EQ(b.data(), buffer);
    EXPECT_EQ(counts().moves, moves);
  } else {
    // Unequal allocators that do not propagate: the buffer cannot change hands; the elements
    // are moved into storage of b's own allocator.
    EXPECT_TRUE(this->storage_from(b, 2));
    EXPECT_NE(b.data(), buffer);
    EXPECT_GE(counts().moves - moves, 5);
  }
}

TYPED_TEST(SmallVectorStatefulAllocator, MoveAssignmentWithEqualAllocatorsStealsTheBuffer) {
  auto a = this->template filled<2>(1, 5);
  auto b = this->template filled<2>(1, 3, 100);
  const counted* buffer = a.data();
  const long moves = counts().moves;
  b = std::move(a);
  EXPECT_EQ(b.data(), buffer);
  EXPECT_EQ(counts().moves, moves);
  EXPECT_TRUE(this->storage_from(b, 1));
}

TYPED_TEST(SmallVectorStatefulAllocator, MoveAssignmentFromInline) {
  auto a = this->template filled<8>(1, 5);
  auto b = this->template filled<8>(2, 20, 100);
  b = std::move(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(this->values(b), this->iota(0, 5));
  EXPECT_TRUE(this->storage_from(b, TypeParam::pocma ? 1 : 2));
}

TYPED_TEST(SmallVectorStatefulAllocator, MoveConstruction) {
  auto a = this->template filled<2>(1, 5);
  const counted* buffer = a.data();
  typename TestFixture::template vec<2> b(std::move(a));  // takes the buffer and the allocator
  EXPECT_EQ(b.data(), buffer);
  EXPECT_TRUE(this->storage_from(b, 1));
  EXPECT_TRUE(a.empty());

  const long moves = counts().moves;
  typename TestFixture::template vec<2> c(std::move(b), typename TestFixture::alloc(3));
  EXPECT_NE(c.data(), buffer);  // unequal allocator: elements are moved, not the buffer
  EXPECT_GE(counts().moves - moves, 5);
  EXPECT_TRUE(this->storage_from(c, 3));
  EXPECT_TRUE(b.empty());

  const counted* c_buffer = c.data();
  typename TestFixture::template vec<2> d(std::move(c), typename TestFixture::alloc(3));
  EXPECT_EQ(d.data(), c_buffer);  // equal allocator: the buffer changes hands
  EXPECT_EQ(this->values(d), this->iota(0, 5));
}

// Swap of two vectors of sizes (x, y), inline capacities 2 and 8 (through the base), allocators 1
// and 2. With propagate_on_container_swap the allocators change places together with whatever
// storage they made; without it the allocators must be equal (as for std::vector), so both use 1.
template <class Fixture, class Config>
void check_swap(Fixture& f, int x, int y) {
  const int id_b = Config::pocs ? 2 : 1;
  const long mismatches = registry().mismatches;
  auto a = f.template filled<2>(1, x);
  auto b = f.template filled<8>(id_b, y, 100);
  lowalloc::small_vector_base<counted, typename Config::alloc>& ba = a;
  ba.swap(b);
  EXPECT_EQ(Fixture::values(a), Fixture::iota(100, y)) << x << " <-> " << y;
  EXPECT_EQ(Fixture::values(b), Fixture::iota(0, x)) << x << " <-> " << y;
  EXPECT_TRUE(Fixture::storage_from(a, id_b)) << x << " <-> " << y;
  EXPECT_TRUE(Fixture::storage_from(b, 1)) << x << " <-> " << y;
  EXPECT_EQ(registry().mismatches - mismatches, 0)
      << x << " <-> " << y << ": a block was freed by another allocator than its own";
}

TYPED_TEST(SmallVectorStatefulAllocator, Swap) {
  // heap/heap, heap/inline (fits), inline/inline, and heap/inline where the inline side's
  // elements do not fit in the heap side's inline storage.
  check_swap<TestFixture, TypeParam>(*this, 5, 20);
  check_swap<TestFixture, TypeParam>(*this, 5, 1);
  check_swap<TestFixture, TypeParam>(*this, 1, 8);
  check_swap<TestFixture, TypeParam>(*this, 2, 1);
  check_swap<TestFixture, TypeParam>(*this, 3, 5);
  check_swap<TestFixture, TypeParam>(*this, 3, 8);
  check_swap<TestFixture, TypeParam>(*this, 0, 9);
}

// Minimal reproduction of the heap/inline swap with propagate_on_container_swap when the inline
// side does not fit the heap side's inline storage: a (N = 2) holds 3 elements on the heap from
// allocator 1, b (N = 8) holds 5 inline elements with allocator 2.
TEST(SmallVectorStatefulAllocatorSwap, PropagatingSwapHeapWithLargerInlineVector) {
  registry() = block_registry{};
  using alloc = tracking_allocator<int, false, false, true>;
  {
    lowalloc::small_vector<int, 2, alloc> a{alloc(1)};
    lowalloc::small_vector<int, 8, alloc> b{alloc(2)};
    for (int i = 0; i < 3; ++i) a.push_back(i);
    for (int i = 0; i < 5; ++i) b.push_back(10 + i);
    a.swap(b);
    EXPECT_EQ(a.get_allocator().id(), 2);
    EXPECT_EQ(b.get_allocator().id(), 1);
    if (!a.is_inline()) {
      EXPECT_EQ(owner_of(a.data()), 2) << "a's buffer is not from a's allocator";
    }
    if (!b.is_inline()) {
      EXPECT_EQ(owner_of(b.data()), 1) << "b's buffer is not from b's allocator";
    }
    EXPECT_EQ(registry().mismatches, 0) << "a block was freed by another allocator than its own";
  }
  EXPECT_EQ(registry().mismatches, 0) << "a block was freed by another allocator than its own";
  EXPECT_TRUE(registry().blocks.empty());
}

}  // namespace
