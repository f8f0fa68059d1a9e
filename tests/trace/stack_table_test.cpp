// The recorder's tables of stack ids (src/trace/stack_table.cpp, built into this test: the tracer
// module it belongs to cannot be linked into one): stacks stored as their own frames and the
// outermost frames of the stack stored before them, found again by their frames, in a thread's
// table and through the process's.
#include "trace/stack_table.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace {

using lowalloc::trace::add_stack;
using lowalloc::trace::find_stack;
using lowalloc::trace::first_table_capacity;
using lowalloc::trace::new_stack_id;
using lowalloc::trace::publish_stacks;
using lowalloc::trace::stack_defined;
using lowalloc::trace::stack_entry;
using lowalloc::trace::stack_frames;
using lowalloc::trace::stack_table;

using frames = std::vector<std::uintptr_t>;

// A thread's table, its first entries in memory of the test's as the recorder's are in the
// thread's mapping.
struct thread_table {
  std::vector<stack_entry> first{first_table_capacity};
  stack_table s{};
  thread_table() {
    s.entries = first.data();
    s.capacity = first_table_capacity;
  }
  ~thread_table() { lowalloc::trace::release_stacks(s); }
};

std::uint64_t hash_of(const frames& f) {
  std::uint64_t h = f.size();
  for (std::uintptr_t ip : f) h = (h ^ ip) * 0x9E3779B97F4A7C15u;
  return h ^ h >> 29;
}

// What the recorder's new_stack does: the outermost frames shared with the stack defined last
// are stored as that one's; returns the id.
std::uint32_t add(thread_table& t, const frames& f, bool shared_process = false,
                  std::uint64_t stamp = 1) {
  stack_table& s = t.s;
  std::size_t slot = 0;
  const std::uint64_t hash = hash_of(f);
  EXPECT_EQ(find_stack(s, f.data(), f.size(), hash, slot), 0u);
  const std::size_t common =
      lowalloc::trace::common_outer_frames(f.data(), f.size(), s.written_ips, s.written_n);
  const new_stack_id got =
      add_stack(s, f.data(), f.size(), hash, slot, 0, stamp, 0, shared_process, s.written, common);
  EXPECT_NE(got.id, 0u);
  if (got.define) {
    s.written = got.frames;
    std::copy(f.begin(), f.end(), s.written_ips);
    s.written_n = f.size();
    stack_defined(s, hash, got.id, 0);
  }
  return got.id;
}

std::uint32_t find(thread_table& t, const frames& f) {
  std::size_t slot = 0;
  return find_stack(t.s, f.data(), f.size(), hash_of(f), slot);
}

// Stack i of a deep recursion, as tests/bench/corpus/distinct_stacks.cpp makes them: 30 outer
// frames, then one of two return addresses a level for `bits` levels by the bits of i, then one
// of four call sites.
frames recursion_stack(unsigned i, int bits, unsigned site) {
  frames f;
  f.push_back(0x401000 + 16 * site);
  for (int b = 0; b < bits; ++b) {
    const auto level = static_cast<std::uintptr_t>(b);
    f.push_back((i >> b & 1) != 0 ? 0x402000 + level : 0x403000 + level);
  }
  for (int k = 29; k >= 0; --k) f.push_back(0x7f0000010000u + 0x100u * static_cast<unsigned>(k));
  return f;
}

// A second thread meets each of `made`, stacks another thread published: it finds each in the
// process's table, by the id it was given there, and defines none of them again.
void meet_through_the_process(thread_table& second,
                              const std::vector<std::pair<frames, std::uint32_t>>& made) {
  for (const auto& [f, id] : made) {
    std::size_t slot = 0;
    const std::uint64_t hash = hash_of(f);
    ASSERT_EQ(find_stack(second.s, f.data(), f.size(), hash, slot), 0u);
    const new_stack_id got =
        add_stack(second.s, f.data(), f.size(), hash, slot, 0, 10, 10, true, nullptr, 0);
    ASSERT_EQ(got.id, id);
    EXPECT_FALSE(got.define);
    ASSERT_EQ(find(second, f), id);
  }
}

// The outermost frames two stacks share, as new_stack counts them before storing a stack: four at
// a time, then one by one. Against a frame-by-frame count, for every pair of lengths up to 13 and
// a first difference at every depth (and none), so that it falls in each lane of a step of four
// and in the frames left after the steps.
TEST(StackTable, CommonOuterFramesCountsEveryLaneAndTheRest) {
  const auto expected = [](const frames& a, const frames& b) {
    std::size_t k = 0;
    while (k < a.size() && k < b.size() && a[a.size() - 1 - k] == b[b.size() - 1 - k]) ++k;
    return k;
  };
  std::size_t checked = 0;
  for (std::size_t na = 0; na <= 13; ++na) {
    for (std::size_t nb = 0; nb <= 13; ++nb) {
      const std::size_t limit = std::min(na, nb);
      for (std::size_t differ = 0; differ <= limit; ++differ) {  // limit: no difference
        frames a(na), b(nb);
        // Outermost first: frame k from the outside is 0x1000 + k in both, but for `differ`.
        for (std::size_t k = 0; k < na; ++k) a[na - 1 - k] = 0x1000 + k;
        for (std::size_t k = 0; k < nb; ++k) b[nb - 1 - k] = k == differ ? 0x9000 + k : 0x1000 + k;
        const std::size_t got = lowalloc::trace::common_outer_frames(a.data(), na, b.data(), nb);
        ASSERT_EQ(got, expected(a, b))
            << na << " and " << nb << " frames, first differing at " << differ;
        ASSERT_EQ(got, differ < limit ? differ : limit);
        ASSERT_EQ(lowalloc::trace::common_outer_frames(b.data(), nb, a.data(), na), got);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 800u);
}

// Every stack is found by its frames with the id it was given, through chains of stored frames,
// and a stack that differs in one frame, at any depth, is not.
TEST(StackTable, FindsChainedStacksByTheirFrames) {
  thread_table t;
  constexpr int bits = 11;
  std::map<frames, std::uint32_t> ids;
  std::size_t all_frames = 0;
  for (unsigned i = 0; i < 1u << bits; ++i) {
    for (unsigned site = 0; site < 4; ++site) {
      frames f = recursion_stack(i, bits, site);
      ids[f] = add(t, f);
      all_frames += f.size();
    }
  }
  ASSERT_EQ(ids.size(), 4u << bits);
  // What is stored: each stack's own frames, and a stack stored whole at least every max_hops.
  std::map<std::uint32_t, std::size_t> lengths;
  for (const auto& [f, id] : ids) lengths[id] = f.size();
  std::size_t stored = 0;
  for (std::size_t i = 0; i < t.s.capacity; ++i) {
    const stack_entry& e = t.s.entries[i];
    if (e.id == 0) continue;
    ASSERT_LE(e.frames->hops, stack_frames::max_hops);
    ASSERT_EQ(e.n(), lengths.at(e.id));
    stored += e.frames->added;
  }
  EXPECT_LT(stored * 4, all_frames) << stored << " of " << all_frames << " frames stored";
  for (const auto& [f, id] : ids) {
    ASSERT_EQ(find(t, f), id);
    for (std::size_t k = 0; k < f.size(); ++k) {
      frames other = f;
      other[k] ^= 0x8;
      ASSERT_EQ(find(t, other), 0u) << "frame " << k << " changed";
    }
    frames shorter(f.begin(), f.end() - 1);
    ASSERT_EQ(find(t, shorter), 0u);
  }
}

// An entry keeps the low 32 bits of its stack's hash and finds its frame count in its frames:
// stacks whose hashes agree in those bits, or altogether, are told apart by their frames, a stack
// and its caller's (one frame fewer) by their counts.
TEST(StackTable, StacksOfOneHashAreToldApartByTheirFramesAndCounts) {
  thread_table t;
  const frames a = recursion_stack(5, 8, 1);
  const frames caller(a.begin() + 1, a.end());
  frames other = a;
  other[0] ^= 0x10;
  constexpr std::uint64_t low = 0x9abcdef0u;
  const std::pair<frames, std::uint64_t> stacks[] = {
      {a, low}, {caller, low}, {other, std::uint64_t{0x12345678} << 32 | low}};
  std::uint32_t ids[3] = {};
  for (int k = 0; k < 3; ++k) {
    const auto& [f, hash] = stacks[k];
    std::size_t slot = 0;
    ASSERT_EQ(find_stack(t.s, f.data(), f.size(), hash, slot), 0u) << k;
    const new_stack_id got =
        add_stack(t.s, f.data(), f.size(), hash, slot, 0, 1, 0, false, nullptr, 0);
    ASSERT_NE(got.id, 0u);
    ids[k] = got.id;
  }
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_NE(ids[0], ids[2]);
  EXPECT_NE(ids[1], ids[2]);
  for (int k = 0; k < 3; ++k) {
    const auto& [f, hash] = stacks[k];
    std::size_t slot = 0;
    EXPECT_EQ(find_stack(t.s, f.data(), f.size(), hash, slot), ids[k]) << k;
  }
}

// Stacks that share no outer frames, or too few to save anything, are stored whole.
TEST(StackTable, StacksSharingFewFramesAreStoredWhole) {
  thread_table t;
  const frames a{0x1000, 0x2000, 0x3000, 0x4000, 0x5000};
  const frames b{0x1100, 0x2100, 0x3100, 0x4000, 0x5000};  // 2 shared: not worth a header
  const frames c{0x1200, 0x2200, 0x3000, 0x4000, 0x5000};  // 3 shared with a, not with b
  const std::uint32_t ia = add(t, a), ib = add(t, b), ic = add(t, c);
  EXPECT_EQ(find(t, a), ia);
  EXPECT_EQ(find(t, b), ib);
  EXPECT_EQ(find(t, c), ic);
  for (std::size_t i = 0; i < t.s.capacity; ++i) {
    const stack_entry& e = t.s.entries[i];
    if (e.id == 0) continue;
    EXPECT_EQ(e.frames->parent, nullptr) << e.id;
    EXPECT_EQ(e.frames->added, e.n());
  }
}

// A second thread finds the first one's stacks in the process's table, which reads them through
// their chains: it names them by the first thread's ids and defines none of them again.
TEST(StackTable, AnotherThreadFindsChainedStacksInTheProcessTable) {
  thread_table first;
  constexpr int bits = 8;
  std::vector<std::pair<frames, std::uint32_t>> made;
  for (unsigned i = 0; i < 1u << bits; ++i) {
    const frames f = recursion_stack(i, bits, i % 4);
    made.emplace_back(f, add(first, f));
  }
  publish_stacks(first.s, 0, 0);
  thread_table second;
  ASSERT_NO_FATAL_FAILURE(meet_through_the_process(second, made));
  // A stack new to both: a new id, stored by the second thread and defined by it.
  const frames fresh = recursion_stack(3, bits + 1, 2);
  const std::uint32_t id = add(second, fresh, true, 20);
  for (const auto& entry : made) ASSERT_NE(entry.second, id);
  EXPECT_EQ(find(second, fresh), id);
}

}  // namespace

// A thread's table past its first one grows where it was first mapped (table_space.hpp), and the
// process's table as it takes them: every stack is found by both after their growths.
TEST(StackTable, TablesGrowWhereTheyAre) {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur != RLIM_INFINITY)
    GTEST_SKIP() << "the address space is limited (ulimit -v)";
  thread_table first;
  constexpr int bits = 13;
  std::vector<std::pair<frames, std::uint32_t>> made;
  const stack_entry* mapped = nullptr;
  for (unsigned i = 0; i < 1u << bits; ++i) {
    const frames f = recursion_stack(i, bits, i % 4);
    made.emplace_back(f, add(first, f));
    if (first.s.capacity > first_table_capacity) {
      if (mapped == nullptr) mapped = first.s.entries;
      ASSERT_EQ(first.s.entries, mapped) << i << " stacks, " << first.s.capacity << " slots";
    }
  }
  EXPECT_EQ(first.s.capacity, std::size_t{1} << (bits + 1));
  for (const auto& [f, id] : made) ASSERT_EQ(find(first, f), id);
  // The process's table takes them all, growing from nothing.
  publish_stacks(first.s, 0, 0);
  thread_table second;
  ASSERT_NO_FATAL_FAILURE(meet_through_the_process(second, made));
}

// Stacks whose hashes put a quarter of them at the table's last slot, whatever its size: their run
// crosses the table's end into its first slots, and a growth in place holds those aside (more of
// them than fit the thread's stack). Every stack is found again after each growth.
TEST(StackTable, ARunAcrossTheEndSurvivesGrowthsInPlace) {
  thread_table t;
  std::vector<std::pair<frames, std::uint64_t>> made;
  std::vector<std::uint32_t> ids;
  for (unsigned i = 0; i < 6000; ++i) {
    const frames f = recursion_stack(i, 13, i % 4);
    const std::uint64_t hash = i % 4 == 0 ? ~std::uint64_t{0} : hash_of(f);
    std::size_t slot = 0;
    ASSERT_EQ(find_stack(t.s, f.data(), f.size(), hash, slot), 0u) << i;
    const new_stack_id got =
        add_stack(t.s, f.data(), f.size(), hash, slot, 0, 1, 0, false, nullptr, 0);
    ASSERT_NE(got.id, 0u);
    made.emplace_back(f, hash);
    ids.push_back(got.id);
    if ((i & (i - 1)) == 0 || i + 1 == 6000) {  // after the growths, and at the end
      for (std::size_t j = 0; j <= i; ++j) {
        std::size_t at = 0;
        ASSERT_EQ(find_stack(t.s, made[j].first.data(), made[j].first.size(), made[j].second, at),
                  ids[j])
            << "stack " << j << " of " << i + 1 << ", " << t.s.capacity << " slots";
      }
    }
  }
  EXPECT_EQ(t.s.capacity, std::size_t{16384});
}
