// unwind_capture against glibc backtrace() (libgcc's unwinder) on real stacks: frames with and
// without frame pointers, alloca and realigned frames, glibc and libstdc++ frames, threads.
#include "trace/unwind.hpp"
#include "unwind_test_support.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ios>
#include <locale>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace lt = lowalloc::trace;
using unwind_test::leaf_fn;

// A frame without CFI that keeps a standard frame pointer: the unwinder's fallback.
extern "C" void unwind_test_nocfi_call(void* arg, leaf_fn leaf);
asm(R"(
    .text
    .p2align 4
    .type unwind_test_nocfi_call, @function
unwind_test_nocfi_call:
    push %rbp
    mov %rsp, %rbp
    call *%rsi
    pop %rbp
    ret
    .size unwind_test_nocfi_call, .-unwind_test_nocfi_call
)");

namespace {

constexpr std::size_t max_frames = 256;
using stack = std::vector<std::uintptr_t>;

struct capture {
  std::size_t max = max_frames;  // inputs
  std::uintptr_t skip_lo = 0;
  std::uintptr_t skip_hi = 0;
  std::uintptr_t stack_hi = 0;  // 0: this thread's stack top
  bool clear_cache = false;
  bool invalidate_modules = false;
  std::uintptr_t ours[max_frames] = {};  // outputs
  std::size_t n_ours = 0;
  bool same_as_last = false;     // unwind_capture_from only
  std::uint64_t hash = 0;        // unwind_capture_from only
  std::uint64_t* tag = nullptr;  // unwind_capture_from only
  // What the walk's tag held when it returned (0: a new walk) and after the capture stored its
  // own there, as the recorder stores a stack id: a remembered walk found again has the tag
  // stored with it.
  std::uint64_t recalled = 0;
  std::uint64_t kept = 0;

  void keep_tag() {
    static std::uint64_t next = 0;
    if (tag == nullptr) return;
    recalled = *tag;
    if (*tag == 0) *tag = ++next;
    kept = *tag;
  }

  // The hash unwind_capture_from gives, computed here from the addresses.
  std::uint64_t expected_hash() const {
    std::uint64_t h = lt::stack_hash_seed;
    for (std::size_t i = n_ours; i-- > 0;) h = lt::stack_hash(h, ours[i]);
    return h;
  }
  void* ref[max_frames] = {};
  int n_ref = 0;

  stack ours_stack() const { return stack(ours, ours + n_ours); }
};

std::uintptr_t thread_stack_hi() {
  pthread_attr_t attr;
  void* addr = nullptr;
  std::size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) std::abort();
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  return reinterpret_cast<std::uintptr_t>(addr) + size;
}

// One mmap'd cache per thread, as the recorder does.
struct cache_holder {
  void* memory = nullptr;
  lt::unwind_cache* cache = nullptr;
  std::uintptr_t stack_hi = 0;
  cache_holder() {
    memory = mmap(nullptr, lt::unwind_cache_bytes(), PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) std::abort();
    cache = lt::unwind_cache_init(memory);
    stack_hi = thread_stack_hi();
  }
  ~cache_holder() { munmap(memory, lt::unwind_cache_bytes()); }
  cache_holder(const cache_holder&) = delete;
  cache_holder& operator=(const cache_holder&) = delete;
};

cache_holder& this_thread() {
  thread_local cache_holder holder;
  return holder;
}

// Both captures from one frame: ours[0] and the reference's first entry for this frame are return
// addresses of two neighbouring calls.
__attribute__((noinline)) void capture_both(void* arg) {
  auto* c = static_cast<capture*>(arg);
  cache_holder& t = this_thread();
  if (c->clear_cache) lt::unwind_cache_clear(t.cache);
  if (c->invalidate_modules) lt::unwind_modules_invalidate();
  c->n_ours = lt::unwind_capture(t.cache, c->ours, c->max, c->skip_lo, c->skip_hi,
                                 c->stack_hi != 0 ? c->stack_hi : t.stack_hi);
  c->n_ref = backtrace(c->ref, static_cast<int>(max_frames));
  asm volatile("" ::: "memory");
}

// Runs body on each capture from one call site, so that their stacks compare frame by frame.
#if defined(__clang__)
__attribute__((noinline, optnone))
#else
__attribute__((noipa))
#endif
void at_one_site(void (*body)(capture*), capture* const* cs, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) body(cs[i]);
}

void chain6(capture* c) { unwind_test::nofp::chain(6, capture_both, c); }

bool near(std::uintptr_t a, std::uintptr_t b) { return (a > b ? a - b : b - a) < 96; }

// The index of the first reference entry near `first`: 0, or 1 when ASan's backtrace interceptor
// adds its own frame.
std::size_t align_reference(void* const* ref, int n_ref, std::uintptr_t first) {
  for (int k = 0; k < n_ref && k < 3; ++k) {
    if (near(reinterpret_cast<std::uintptr_t>(ref[k]), first)) return static_cast<std::size_t>(k);
  }
  ADD_FAILURE() << "no reference frame near the first captured one";
  return static_cast<std::size_t>(n_ref);
}

std::string module_of(std::uintptr_t address) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(address), &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

std::string describe(const stack& s) {
  std::ostringstream out;
  for (std::uintptr_t a : s) {
    Dl_info info{};
    out << "\n  0x" << std::hex << a << std::dec;
    if (dladdr(reinterpret_cast<void*>(a), &info) != 0) {
      out << " " << (info.dli_fname != nullptr ? info.dli_fname : "?") << " "
          << (info.dli_sname != nullptr ? info.dli_sname : "?");
    }
  }
  return out.str();
}

// Frames 1.. of ours equal the reference's frames above capture_both.
void expect_matches_reference(const capture& c) {
  ASSERT_GE(c.n_ours, 2u);
  ASSERT_GE(c.n_ref, 2);
  const std::size_t k = align_reference(c.ref, c.n_ref, c.ours[0]);
  stack ours(c.ours + 1, c.ours + c.n_ours);
  stack ref;
  for (std::size_t i = k + 1; i < static_cast<std::size_t>(c.n_ref); ++i) {
    ref.push_back(reinterpret_cast<std::uintptr_t>(c.ref[i]));
  }
  EXPECT_EQ(ours, ref) << "ours:" << describe(ours) << "\nreference:" << describe(ref);
}

bool any_in_module(const stack& s, const char* name) {
  for (std::uintptr_t a : s) {
    if (module_of(a).find(name) != std::string::npos) return true;
  }
  return false;
}

void nofp_chain4(void* arg) { unwind_test::nofp::chain(4, capture_both, arg); }

// unwind_capture_from, started from this function's own return address and frame, as the
// recorder's hooks do.
__attribute__((noinline)) void capture_from_own_frame(void* arg) {
  auto* c = static_cast<capture*>(arg);
  cache_holder& t = this_thread();
  const auto* fa = static_cast<const std::uintptr_t*>(__builtin_frame_address(0));
  const std::uintptr_t* ips = nullptr;
  c->n_ours = lt::unwind_capture_from(
      t.cache, &ips, c->max, reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)),
      reinterpret_cast<std::uintptr_t>(fa) + 16, fa[0], c->stack_hi != 0 ? c->stack_hi : t.stack_hi,
      &c->hash, &c->same_as_last, &c->tag);
  if (c->n_ours != 0) std::memcpy(c->ours, ips, c->n_ours * sizeof *ips);
  c->keep_tag();
  asm volatile("" ::: "memory");
}

// Each body through the same chain, from one call site.
#if defined(__clang__)
__attribute__((noinline, optnone))
#else
__attribute__((noipa))
#endif
void chains_at_one_site(void (*const* bodies)(void*), capture* const* cs, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) unwind_test::nofp::chain(6, bodies[i], cs[i]);
}

TEST(Unwind, CaptureFromAKnownFrameSkipsOnlyThatFrame) {
  capture direct, from;
  void (*const bodies[2])(void*) = {capture_both, capture_from_own_frame};
  capture* const cs[2] = {&direct, &from};
  chains_at_one_site(bodies, cs, 2);
  // unwind_capture's first address is the return into capture_both; unwind_capture_from starts
  // one frame out, at the return into the chain, and from there the stacks are the same.
  ASSERT_GE(direct.n_ours, 8u);
  ASSERT_EQ(from.n_ours + 1, direct.n_ours);
  for (std::size_t i = 0; i < from.n_ours; ++i) EXPECT_EQ(from.ours[i], direct.ours[i + 1]) << i;
  EXPECT_EQ(from.hash, from.expected_hash());
  capture truncated;
  truncated.max = 3;
  unwind_test::nofp::chain(6, capture_from_own_frame, &truncated);
  EXPECT_EQ(truncated.n_ours, 3u);
  EXPECT_EQ(truncated.hash, truncated.expected_hash());
}

// Two callers with the same frame layout, called from one site: the frames below them lie at the
// same addresses with the same registers, and only the return address into the caller differs.
struct both_walks {
  capture from;           // unwind_capture_from: may reuse the previous walk
  capture direct;         // unwind_capture: steps every frame
  std::uintptr_t pc = 0;  // the frame unwind_capture_from started from
  std::uintptr_t sp = 0;
  std::uintptr_t rbp = 0;
};

__attribute__((noinline)) void capture_from_and_direct(void* arg) {
  auto* w = static_cast<both_walks*>(arg);
  cache_holder& t = this_thread();
  const auto* fa = static_cast<const std::uintptr_t*>(__builtin_frame_address(0));
  w->pc = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
  w->sp = reinterpret_cast<std::uintptr_t>(fa) + 16;
  w->rbp = fa[0];
  const std::uintptr_t* ips = nullptr;
  w->from.n_ours =
      lt::unwind_capture_from(t.cache, &ips, w->from.max, w->pc, w->sp, w->rbp, t.stack_hi,
                              &w->from.hash, &w->from.same_as_last, &w->from.tag);
  if (w->from.n_ours != 0) std::memcpy(w->from.ours, ips, w->from.n_ours * sizeof *ips);
  w->from.keep_tag();
  w->direct.n_ours = lt::unwind_capture(t.cache, w->direct.ours, w->direct.max, 0, 0, t.stack_hi);
  asm volatile("" ::: "memory");
}

volatile int caller_marker;

__attribute__((noipa)) void caller_a(both_walks* w) {
  caller_marker = 1;
  unwind_test::nofp::chain(5, capture_from_and_direct, w);
  caller_marker = 1;
}

__attribute__((noipa)) void caller_b(both_walks* w) {
  caller_marker = 2;
  unwind_test::nofp::chain(5, capture_from_and_direct, w);
  caller_marker = 2;
}

#if defined(__clang__)
__attribute__((noinline, optnone))
#else
__attribute__((noipa))
#endif
void through_callers(both_walks* walks, std::size_t n) {
  // One argument for every call: the registers of the frames below the callers stay the same.
  static both_walks scratch;
  void (*const callers[2])(both_walks*) = {caller_a, caller_b};
  for (std::size_t i = 0; i < n; ++i) {
    callers[i % 2](&scratch);
    walks[i] = scratch;
  }
}

TEST(Unwind, ThePreviousWalkIsReusedOnlyWhereTheStackIsUnchanged) {
  both_walks walks[6];
  through_callers(walks, 6);
  for (std::size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    const both_walks& w = walks[i];
    ASSERT_GE(w.direct.n_ours, 9u);
    ASSERT_EQ(w.from.n_ours + 1, w.direct.n_ours);
    for (std::size_t k = 0; k < w.from.n_ours; ++k) EXPECT_EQ(w.from.ours[k], w.direct.ours[k + 1]);
    EXPECT_FALSE(w.from.same_as_last);
    EXPECT_EQ(w.from.hash, w.from.expected_hash());
  }
  // The same frames in the same places, apart from the return into caller_a or caller_b.
  std::size_t differ = 0;
  for (std::size_t k = 0; k < walks[0].from.n_ours; ++k)
    differ += walks[0].from.ours[k] != walks[1].from.ours[k];
  EXPECT_EQ(differ, 1u);
  EXPECT_EQ(walks[0].from.ours_stack(), walks[2].from.ours_stack());
  EXPECT_EQ(walks[1].from.ours_stack(), walks[3].from.ours_stack());
  // Both walks from the one leaf frame are remembered when stepped a second time, and each is
  // then found again as itself.
  for (std::size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    if (i < 2) {
      EXPECT_EQ(walks[i].from.tag, nullptr);
      continue;
    }
    ASSERT_NE(walks[i].from.tag, nullptr);
    EXPECT_EQ(walks[i].from.recalled, i < 4 ? 0 : walks[i - 2].from.kept);
  }
  EXPECT_NE(walks[2].from.kept, walks[3].from.kept);
}

// A walk longer than the last one, and one shorter: the frames they share are reused in place.
TEST(Unwind, DeeperAndShallowerWalksAfterEachOther) {
  const int depths[6] = {3, 12, 5, 40, 40, 39};
  std::uint64_t previous_kept = 0;
  for (int i = 0; i < 6; ++i) {
    const int depth = depths[i];
    both_walks w;
    unwind_test::nofp::chain(depth, capture_from_and_direct, &w);
    SCOPED_TRACE(depth);
    // The walk 40 deep again is the previous walk, and a remembered one.
    EXPECT_EQ(w.from.same_as_last || w.from.recalled != 0, i == 4);
    if (i == 4) {
      EXPECT_EQ(w.from.recalled, previous_kept);
    }
    previous_kept = w.from.kept;
    EXPECT_EQ(w.from.hash, w.from.expected_hash());
    ASSERT_GE(w.direct.n_ours, static_cast<std::size_t>(depth));
    ASSERT_EQ(w.from.n_ours + 1, w.direct.n_ours);
    for (std::size_t k = 0; k < w.from.n_ours; ++k) EXPECT_EQ(w.from.ours[k], w.direct.ours[k + 1]);
  }
}

// Three walks from one call site, one after the other.
#if defined(__clang__)
__attribute__((noinline, optnone))
#else
__attribute__((noipa))
#endif
void walk_three_times(void* arg) {
  auto* walks = static_cast<both_walks*>(arg);
  // The count hidden from the compiler: an unrolled loop would make three call sites, its last
  // call a tail call.
  for (std::size_t i = 0; i < 3; ++i) {
    unwind_test::nofp::chain(3, capture_from_and_direct, &walks[i]);
    asm volatile("" : "+r"(i));
  }
}

// The same walk three times below a frame whose CFA is computed from rbp (alloca), with the same
// rbp each time: the second is the previous walk again, proven through that frame by the check of
// the previous walk, and the third is the remembered walk, found again through it too.
TEST(Unwind, AWalkThroughAnRbpFrameIsReusedWhenItsRbpIsTheSame) {
  for (int bytes : {40, 1000}) {
    SCOPED_TRACE(bytes);
    // Else the walks of the second size (another stack pointer, the same return addresses) are
    // remembered when first stepped: their stack is noted as seen already.
    lt::unwind_cache_clear(this_thread().cache);
    both_walks walks[3];
    unwind_test::nofp::alloca_frame(bytes, walk_three_times, walks);
    for (std::size_t i = 0; i < 3; ++i) {
      SCOPED_TRACE(i);
      const both_walks& w = walks[i];
      ASSERT_GE(w.direct.n_ours, 7u);
      ASSERT_EQ(w.from.n_ours + 1, w.direct.n_ours);
      for (std::size_t k = 0; k < w.from.n_ours; ++k)
        EXPECT_EQ(w.from.ours[k], w.direct.ours[k + 1]);
      EXPECT_EQ(w.from.hash, w.from.expected_hash());
      EXPECT_EQ(w.rbp, walks[0].rbp);
      EXPECT_EQ(w.sp, walks[0].sp);
    }
    // The precondition: the walks pass through alloca_frame (its return into walk_three_times's
    // caller is in them), and they are one stack.
    EXPECT_TRUE(any_in_module(walks[0].from.ours_stack(), "unwind_test"));
    EXPECT_EQ(walks[1].from.ours_stack(), walks[0].from.ours_stack());
    EXPECT_EQ(walks[2].from.ours_stack(), walks[0].from.ours_stack());
    EXPECT_FALSE(walks[0].from.same_as_last);
    EXPECT_TRUE(walks[1].from.same_as_last);
    ASSERT_NE(walks[2].from.tag, nullptr);
    EXPECT_EQ(walks[2].from.recalled, walks[1].from.kept);
  }
}

// One call site of both frames below, so that the return address into this frame sits at the same
// address whichever it calls.
__attribute__((noipa)) void enter_alloca_frame(long (*frame)(std::uintptr_t, leaf_fn, void*),
                                               std::uintptr_t anchor, leaf_fn leaf, void* arg) {
  caller_marker = 3;
  frame(anchor, leaf, arg);
  caller_marker = 3;
}

// Calls alloca_down_to, then alloca_down_to_one_deeper, n times in turn; the one either calls
// leaf(arg), which walks into *scratch.
#if defined(__clang__)
__attribute__((noinline, optnone))
#else
__attribute__((noipa))
#endif
void through_alloca_frames(both_walks* walks, std::size_t n, leaf_fn leaf, void* arg,
                           const both_walks* scratch) {
  // Below this frame by more than the frames between it and the alloca: 16-aligned, the same for
  // every call.
  const std::uintptr_t anchor =
      (reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) - 1024) & ~std::uintptr_t{15};
  long (*const frames[2])(std::uintptr_t, leaf_fn, void*) = {
      unwind_test::fp::alloca_down_to, unwind_test::fp::alloca_down_to_one_deeper};
  for (std::size_t i = 0; i < n; ++i) {
    enter_alloca_frame(frames[i % 2], anchor, leaf, arg);
    walks[i] = *scratch;
  }
}

// Six walks from one frame, of two stacks in turn: each is the stack stepped frame by frame, and
// a remembered walk is found again only in the stack it was remembered in (two walks back).
void expect_each_stack_found_again_alone(const both_walks (&walks)[6], std::size_t min_frames) {
  for (std::size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    const both_walks& w = walks[i];
    ASSERT_GE(w.direct.n_ours, min_frames);
    const stack from = w.from.ours_stack();
    const stack direct(w.direct.ours + 1, w.direct.ours + w.direct.n_ours);
    EXPECT_EQ(from, direct) << "unwind_capture_from:" << describe(from)
                            << "\nunwind_capture:" << describe(direct);
    EXPECT_EQ(w.from.hash, w.from.expected_hash());
    if (i > 0) {
      EXPECT_FALSE(w.from.same_as_last);
    }
    // Remembered when stepped a second time, found again only in the same stack.
    EXPECT_EQ(w.from.tag != nullptr, i >= 2);
    EXPECT_EQ(w.from.recalled, i < 4 ? 0 : walks[i - 2].from.kept);
    EXPECT_EQ(w.pc, walks[0].pc);
    EXPECT_EQ(w.sp, walks[0].sp);
    EXPECT_EQ(w.direct.n_ours, walks[i % 2].direct.n_ours);
  }
  EXPECT_NE(walks[2].from.kept, walks[3].from.kept);
  EXPECT_EQ(walks[1].direct.n_ours, walks[0].direct.n_ours + 1);
}

// The walks start from alloca_down_to at the same pc and sp, entered alternately straight from
// enter_alloca_frame and through one frame more, so with another rbp, another CFA (rbp + 16) and
// other frames outer to it. The return address the previous walk read at its CFA - 8 is still
// there (enter_alloca_frame's call lies at that address either way) and so is the rbp it read at
// CFA - 16: only the frame's rbp shows that the previous walk's outer frames are not this one's.
TEST(Unwind, TheSamePcAndSpWithAnotherRbpIsNotReused) {
  static both_walks scratch;
  both_walks walks[6];
  through_alloca_frames(walks, 6, capture_from_and_direct, &scratch, &scratch);
  expect_each_stack_found_again_alone(walks, 5);
  // The precondition: the same frame in the same place with another rbp, and one frame more.
  for (std::size_t i = 1; i < 6; ++i) EXPECT_EQ(walks[i].rbp, walks[i % 2].rbp) << i;
  EXPECT_LT(walks[1].rbp, walks[0].rbp);
  // Past the extra frame, the return into enter_alloca_frame and all outer to it are the same.
  const stack shallow = walks[0].direct.ours_stack();
  const stack deep = walks[1].direct.ours_stack();
  EXPECT_EQ(stack(shallow.begin() + 2, shallow.end()), stack(deep.begin() + 3, deep.end()));
}

// As above, with the walks starting one frame further in, at relay, which alloca_down_to calls:
// that frame is the same on every walk, its rbp too, and alloca_down_to's rbp, which differs
// from one walk to the next, is the word relay saved in its frame. A remembered walk is found
// again only where that word is the one it read.
TEST(Unwind, AnotherRbpSavedInAnInnerFrameIsNotReused) {
  static both_walks scratch;
  unwind_test::fp::relay_args args{capture_from_and_direct, &scratch};
  both_walks walks[6];
  through_alloca_frames(walks, 6, unwind_test::fp::relay, &args, &scratch);
  expect_each_stack_found_again_alone(walks, 6);
  // The precondition: the first frame's rbp is the same on every walk.
  for (std::size_t i = 1; i < 6; ++i) EXPECT_EQ(walks[i].rbp, walks[0].rbp) << i;
}

// The two tests above in a thread whose every frame outer to alloca_down_to computes its CFA from
// the stack pointer: alloca_down_to's step is then the outermost that computes it from rbp, and
// the check of a remembered walk must reach it. (With the check stopping one frame short, the
// walk remembered in one stack was found again in the other.)
TEST(Unwind, AnotherRbpInTheOutermostRbpFrameIsNotReused) {
  struct run {
    both_walks scratch;
    both_walks walks[6];
    static void after(std::size_t i, void* context) {
      auto* r = static_cast<run*>(context);
      r->walks[i] = r->scratch;
    }
  };
  for (const bool from_relay : {false, true}) {
    SCOPED_TRACE(from_relay ? "from relay" : "from alloca_down_to");
    const auto r = std::make_unique<run>();
    unwind_test::fp::relay_args relay{capture_from_and_direct, &r->scratch};
    unwind_test::nofp::alternate_args args{
        6,
        {unwind_test::fp::alloca_down_to, unwind_test::fp::alloca_down_to_one_deeper},
        from_relay ? unwind_test::fp::relay : capture_from_and_direct,
        from_relay ? static_cast<void*>(&relay) : &r->scratch,
        run::after,
        r.get()};
    pthread_t thread;
    ASSERT_EQ(pthread_create(&thread, nullptr, unwind_test::nofp::alternate_in_thread, &args), 0);
    ASSERT_EQ(pthread_join(thread, nullptr), 0);
    expect_each_stack_found_again_alone(r->walks, from_relay ? 5 : 4);
  }
}

TEST(Unwind, OmitFramePointerChain) {
  capture c;
  unwind_test::nofp::chain(8, capture_both, &c);
  expect_matches_reference(c);
  EXPECT_GE(c.n_ours, 9u);
}

TEST(Unwind, FramePointerChain) {
  capture c;
  unwind_test::fp::chain(8, capture_both, &c);
  expect_matches_reference(c);
  EXPECT_GE(c.n_ours, 9u);
}

TEST(Unwind, MixedChain) {
  capture c;
  unwind_test::fp::chain(4, nofp_chain4, &c);
  expect_matches_reference(c);
  EXPECT_GE(c.n_ours, 9u);
}

TEST(Unwind, Recursion100Deep) {
  capture c;
  unwind_test::nofp::chain(100, capture_both, &c);
  expect_matches_reference(c);
  EXPECT_GE(c.n_ours, 101u);
}

TEST(Unwind, AllocaFrameAndRbpAsGeneralRegister) {
  for (int bytes : {40, 1000}) {
    capture c;
    unwind_test::nofp::alloca_frame(bytes, nofp_chain4, &c);
    expect_matches_reference(c);
  }
}

TEST(Unwind, RealignedFrameDrap) {
  capture c;
  unwind_test::nofp::drap_frame(100, nofp_chain4, &c);
  expect_matches_reference(c);
}

capture* g_qsort_capture = nullptr;

int compare_and_capture(const void* a, const void* b) {
  if (g_qsort_capture != nullptr) {
    capture_both(g_qsort_capture);
    g_qsort_capture = nullptr;
  }
  const int x = *static_cast<const int*>(a);
  const int y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

__attribute__((noinline)) void sort_and_capture(capture* c) {
  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = (i * 37) % 64;
  g_qsort_capture = c;
  std::qsort(values, 64, sizeof(int), compare_and_capture);
  asm volatile("" ::: "memory");
}

TEST(Unwind, ThroughGlibcQsortComparator) {
  capture c;
  sort_and_capture(&c);
  expect_matches_reference(c);
  EXPECT_TRUE(any_in_module(c.ours_stack(), "libc.so")) << describe(c.ours_stack());
}

TEST(Unwind, CallOnceThroughPthreadOnce) {
  capture c;
  std::once_flag flag;
  std::call_once(flag, [&c] { unwind_test::nofp::chain(2, capture_both, &c); });
  expect_matches_reference(c);
  EXPECT_TRUE(any_in_module(c.ours_stack(), "libc.so")) << describe(c.ours_stack());
}

capture* g_ios_capture = nullptr;

void ios_callback(std::ios_base::event e, std::ios_base&, int) {
  if (e == std::ios_base::imbue_event && g_ios_capture != nullptr) {
    unwind_test::nofp::chain(2, capture_both, g_ios_capture);
    g_ios_capture = nullptr;
  }
}

// basic_ios<char>::imbue and ios_base::_M_call_callbacks live in libstdc++.so.
TEST(Unwind, ThroughLibstdcxxIosCallback) {
  capture c;
  std::ostringstream stream;
  stream.register_callback(ios_callback, 0);
  g_ios_capture = &c;
  stream.imbue(std::locale::classic());
  ASSERT_EQ(g_ios_capture, nullptr);
  expect_matches_reference(c);
  EXPECT_TRUE(any_in_module(c.ours_stack(), "libstdc++")) << describe(c.ours_stack());
}

TEST(Unwind, SecondThreadUsesItsOwnStackBounds) {
  capture c;
  std::thread t([&c] { unwind_test::fp::chain(3, nofp_chain4, &c); });
  t.join();
  expect_matches_reference(c);
  EXPECT_TRUE(any_in_module(c.ours_stack(), "libstdc++")) << describe(c.ours_stack());
}

struct asm_case {
  capture inner;
  void* outer[max_frames];
  int n_outer = 0;
};

// The reference for the frames above: libgcc cannot unwind through the frame without CFI.
__attribute__((noinline)) void call_through_nocfi(asm_case* x) {
  x->n_outer = backtrace(x->outer, static_cast<int>(max_frames));
  unwind_test_nocfi_call(&x->inner, capture_both);
  asm volatile("" ::: "memory");
}

TEST(Unwind, NoCfiFrameFallsBackToFramePointer) {
  static asm_case a;  // large: keep it off the test's stack
  a = asm_case{};
  call_through_nocfi(&a);
  const capture& c = a.inner;
  ASSERT_GE(c.n_ours, 4u);
  const auto start = reinterpret_cast<std::uintptr_t>(&unwind_test_nocfi_call);
  EXPECT_TRUE(c.ours[1] > start && c.ours[1] < start + 16) << describe(c.ours_stack());
  const std::size_t k = align_reference(a.outer, a.n_outer, c.ours[2]);
  stack ours(c.ours + 3, c.ours + c.n_ours);
  stack ref;
  for (std::size_t i = k + 1; i < static_cast<std::size_t>(a.n_outer); ++i) {
    ref.push_back(reinterpret_cast<std::uintptr_t>(a.outer[i]));
  }
  EXPECT_EQ(ours, ref) << "ours:" << describe(c.ours_stack()) << "\nreference:" << describe(ref);
}

// Captures at one call site with different limits give prefixes of each other.
TEST(Unwind, MaxTruncates) {
  capture c[4];
  const std::size_t limits[4] = {max_frames, 1, 3, 7};
  capture* cs[4];
  for (std::size_t i = 0; i < 4; ++i) {
    c[i].max = limits[i];
    cs[i] = &c[i];
  }
  at_one_site(chain6, cs, 4);
  const stack full = c[0].ours_stack();
  ASSERT_GE(full.size(), 8u);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(c[i].ours_stack(),
              stack(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(limits[i])));
  }
}

// The expected result of a skip range: drop the leading frames inside it.
stack skip_leading(const stack& full, std::uintptr_t lo, std::uintptr_t hi) {
  std::size_t i = 0;
  while (i < full.size() && full[i] >= lo && full[i] < hi) ++i;
  return stack(full.begin() + static_cast<std::ptrdiff_t>(i), full.end());
}

TEST(Unwind, SkipRangeOnlyAtTheTop) {
  // The ranges come from a first capture; the comparison from a second one at the call site of the
  // skipping captures (the frames from this test body up differ between call sites).
  capture first;
  capture* one[1] = {&first};
  at_one_site(chain6, one, 1);
  const stack top = first.ours_stack();
  ASSERT_GE(top.size(), 8u);
  struct range {
    std::uintptr_t lo, hi;
  };
  const std::uintptr_t hull_lo = std::min(top[0], top[1]);
  const std::uintptr_t hull_hi = std::max(top[0], top[1]) + 1;
  const range ranges[] = {
      {top[0], top[0] + 1},  // the innermost frame only
      {hull_lo, hull_hi},    // capture_both, chain and the code between them
      {top[3], top[3] + 1},  // a frame below the top: nothing skipped
      {top[0], top[0]},      // empty
  };
  capture c[5];
  capture* cs[5];
  for (std::size_t i = 0; i < 5; ++i) {
    if (i < 4) {
      c[i].skip_lo = ranges[i].lo;
      c[i].skip_hi = ranges[i].hi;
    }
    cs[i] = &c[i];
  }
  at_one_site(chain6, cs, 5);
  const stack full = c[4].ours_stack();
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(c[i].ours_stack(), skip_leading(full, ranges[i].lo, ranges[i].hi)) << i;
  }
  EXPECT_EQ(c[2].ours_stack(), full);
  EXPECT_LT(c[1].ours_stack().size(), full.size() - 1);  // the recursion was skipped too
}

TEST(Unwind, SkipOwnModuleFromInsideQsort) {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
  ASSERT_TRUE(lt::module_text_range(reinterpret_cast<const void*>(&capture_both), &lo, &hi));
  capture full;
  capture skipped;
  skipped.skip_lo = lo;
  skipped.skip_hi = hi;
  capture* cs[2] = {&full, &skipped};
  at_one_site(sort_and_capture, cs, 2);
  const stack expected = skip_leading(full.ours_stack(), lo, hi);
  EXPECT_EQ(skipped.ours_stack(), expected);
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(expected[0] < lo || expected[0] >= hi);
  EXPECT_NE(module_of(expected[0]).find("lib"), std::string::npos);  // libc (or ASan's wrapper)
  bool ours_later = false;  // frames of this executable below qsort are kept
  for (std::uintptr_t a : expected) ours_later |= a >= lo && a < hi;
  EXPECT_TRUE(ours_later) << describe(expected);
}

// Cold, warm, after clearing the cache, after dropping the module table: the same stack.
TEST(Unwind, WarmCacheAndClearGiveTheSameStack) {
  capture c[6];
  capture* cs[6];
  for (std::size_t i = 0; i < 6; ++i) cs[i] = &c[i];
  c[3].clear_cache = true;
  c[4].invalidate_modules = true;
  c[5].clear_cache = true;
  c[5].invalidate_modules = true;
  at_one_site(sort_and_capture, cs, 6);
  expect_matches_reference(c[0]);
  for (std::size_t i = 1; i < 6; ++i) EXPECT_EQ(c[i].ours_stack(), c[0].ours_stack()) << i;
}

TEST(Unwind, StackBoundStopsTheWalk) {
  capture full;
  capture bounded;
  // This frame's own CFA lies above its frame address: the walk ends at the return address into it.
  bounded.stack_hi = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  capture* cs[2] = {&full, &bounded};
  at_one_site(chain6, cs, 2);
  ASSERT_GE(bounded.n_ours, 8u);
  EXPECT_LT(bounded.n_ours, full.n_ours);
  const stack f = full.ours_stack();
  EXPECT_EQ(bounded.ours_stack(),
            stack(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(bounded.n_ours)));

  capture none;
  none.stack_hi = 8;  // below every stack address
  capture_both(&none);
  EXPECT_EQ(none.n_ours, 0u);
}

void chain6_from_own_frame(capture* c) { unwind_test::nofp::chain(6, capture_from_own_frame, c); }

// A walk that its stack bound ended, not its outermost frame: found again, its last frame is
// stepped again (with the rbp its remembered frames give) and must stop there again.
TEST(Unwind, AWalkEndedByItsBoundIsFoundAgain) {
  capture full;
  capture bounded[4];
  capture* cs[5] = {&full, &bounded[0], &bounded[1], &bounded[2], &bounded[3]};
  for (capture& b : bounded)
    b.stack_hi = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  at_one_site(chain6_from_own_frame, cs, 5);
  ASSERT_GE(bounded[0].n_ours, 6u);
  ASSERT_LT(bounded[0].n_ours, full.n_ours);
  const stack f = full.ours_stack();
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(bounded[i].ours_stack(),
              stack(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(bounded[0].n_ours)));
    EXPECT_EQ(bounded[i].hash, bounded[i].expected_hash());
    // Remembered when stepped a second time, then found again.
    EXPECT_EQ(bounded[i].tag != nullptr, i >= 1);
    EXPECT_EQ(bounded[i].recalled, i < 2 ? 0 : bounded[1].kept);
  }
}

TEST(Unwind, ModuleTextRange) {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
  const auto self = reinterpret_cast<std::uintptr_t>(&capture_both);
  ASSERT_TRUE(lt::module_text_range(reinterpret_cast<const void*>(self), &lo, &hi));
  EXPECT_TRUE(self >= lo && self < hi);
  std::uintptr_t libc_lo = 0;
  std::uintptr_t libc_hi = 0;
  const auto libc_fn = reinterpret_cast<std::uintptr_t>(dlsym(RTLD_NEXT, "getpid"));
  ASSERT_NE(libc_fn, 0u);
  ASSERT_TRUE(lt::module_text_range(reinterpret_cast<const void*>(libc_fn), &libc_lo, &libc_hi));
  EXPECT_TRUE(libc_fn >= libc_lo && libc_fn < libc_hi);
  EXPECT_TRUE(libc_hi <= lo || libc_lo >= hi);
  int local = 0;
  EXPECT_FALSE(lt::module_text_range(&local, &lo, &hi));
  EXPECT_FALSE(lt::module_text_range(nullptr, &lo, &hi));
}

}  // namespace
