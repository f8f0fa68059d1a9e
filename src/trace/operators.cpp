// The C++ allocation operators, exported so that the program's calls reach them before an
// allocator library's. The C++ library's operator new calls malloc, which the recorder hooks
// already; an allocator library's (libtcmalloc.so, libjemalloc.so) does not, and without these
// the program's C++ allocations went to it unseen (a C++ program linked with -ltcmalloc: 2 of its
// 1,013 allocations recorded, heaptrack the same). So each operator passes the call on to the
// next definition of its own symbol, the C++ library's or the allocator's, and records it only
// when that definition is the allocator's: the object that defines the malloc the recorder calls.
//
// Passing on is a tail call: no frame of the recorder's stays on the stack, the C++ library's
// operator new throws through nothing of ours, and the stacks its malloc records are the ones
// they were without these operators.
#include "trace/block.hpp"
#include "trace/bootstrap.hpp"
#include "trace/format.hpp"
#include "trace/modules.hpp"
#include "trace/thread_state.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace lowalloc::trace {
namespace {

namespace fmt = lowalloc::trace_format;

// The operators, each with its symbol below. The nothrow form of throwing operator new k is
// k + 4.
enum form : unsigned {
  new_plain,          // operator new(size_t)
  new_array,          // operator new[](size_t)
  new_aligned,        // operator new(size_t, align_val_t)
  new_array_aligned,  // operator new[](size_t, align_val_t)
  new_plain_nothrow,
  new_array_nothrow,
  new_aligned_nothrow,
  new_array_aligned_nothrow,
  delete_plain,  // operator delete(void*)
  delete_array,
  delete_sized,  // operator delete(void*, size_t)
  delete_array_sized,
  delete_plain_nothrow,
  delete_array_nothrow,
  delete_aligned,  // operator delete(void*, align_val_t)
  delete_array_aligned,
  delete_sized_aligned,
  delete_array_sized_aligned,
  delete_aligned_nothrow,
  delete_array_aligned_nothrow,
  form_count
};

constexpr const char* symbols[form_count] = {
    "_Znwm",
    "_Znam",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

// The next definition of each operator's symbol, and whether it is the allocator's (then the
// operator records the call). Looked up with the real functions, and again for those not found
// yet when one of them is called (a C program that has loaded a C++ library since).
struct next_operator {
  std::atomic<void*> address{nullptr};
  std::atomic<bool> records{false};
};
next_operator next[form_count];
// The next definition of an operator that only passes its calls on: what its common path reads.
// Null until looked up, and for an operator that records.
std::atomic<void*> pass[form_count];

// A C++ runtime loaded outside the global scope, by a library that a program without one loaded
// with dlopen (python3 loading an extension written in C++, RTLD_LOCAL): that library's calls of
// the operators reach the recorder's first, and the runtime's are what they reached before.
constexpr const char* cxx_runtimes[] = {"libstdc++.so.6", "libc++.so.1", "libc++abi.so.1"};
constexpr std::size_t cxx_runtime_count = sizeof cxx_runtimes / sizeof cxx_runtimes[0];

// The length of a soname up to its version: "libstdc++.so" of "libstdc++.so.6".
std::size_t stem_length(const char* soname) noexcept {
  return static_cast<std::size_t>(std::strstr(soname, ".so") - soname) + 3;
}

// Which runtimes are loaded (bit i: cxx_runtimes[i]), by the file names of the loaded objects. A
// dlopen with RTLD_NOLOAD of a name that no loaded object has searches the library path and opens
// the file it finds: every traced C program searched for each of the three runtimes for each of
// the 20 operators at its start, 60 searches (the loader's LD_DEBUG=libs), most of the recorder's
// cost to a short process (see docs/benchmarks.md).
int note_cxx_runtime(dl_phdr_info* info, std::size_t, void* data) noexcept {
  const char* name = info->dlpi_name;
  if (name == nullptr) return 0;
  const char* base = std::strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  for (std::size_t i = 0; i < cxx_runtime_count; ++i) {
    if (std::strncmp(base, cxx_runtimes[i], stem_length(cxx_runtimes[i])) == 0)
      *static_cast<unsigned*>(data) |= 1u << i;
  }
  return 0;
}

// The loaded runtimes' handles, opened on the first lookup that needs them and closed with this.
class cxx_runtime_handles {
 public:
  cxx_runtime_handles() = default;
  cxx_runtime_handles(const cxx_runtime_handles&) = delete;
  cxx_runtime_handles& operator=(const cxx_runtime_handles&) = delete;
  ~cxx_runtime_handles() {
    for (std::size_t i = 0; i < count_; ++i) real.dlclose(handles_[i]);
  }

  void* find(const char* symbol) {
    if (!opened_) {
      opened_ = true;
      unsigned loaded = 0;
      dl_iterate_phdr(note_cxx_runtime, &loaded);
      for (std::size_t i = 0; i < cxx_runtime_count; ++i) {
        if ((loaded & 1u << i) == 0) continue;
        void* handle = real.dlopen(cxx_runtimes[i], RTLD_LAZY | RTLD_NOLOAD);
        if (handle != nullptr) handles_[count_++] = handle;
      }
    }
    for (std::size_t i = 0; i < count_; ++i) {
      if (void* f = dlsym(handles_[i], symbol)) return f;
    }
    return nullptr;
  }

 private:
  void* handles_[cxx_runtime_count] = {};
  std::size_t count_ = 0;
  bool opened_ = false;
};

}  // namespace

void resolve_operators() {
  // The lookups allocate (a dlsym that fails, its error message): the recorder's own work, which
  // is not the program's to record. A C program that loaded a C++ library had 40 allocations of
  // the lookup at the library's first operator call recorded as its own.
  const bool guard = tls_guard;
  tls_guard = true;
  {
    const void* allocator = object_containing(reinterpret_cast<void*>(real.malloc));
    cxx_runtime_handles runtimes;
    for (unsigned i = 0; i < form_count; ++i) {
      if (next[i].address.load(std::memory_order_acquire) != nullptr) continue;
      void* f = dlsym(RTLD_NEXT, symbols[i]);
      if (f == nullptr) f = runtimes.find(symbols[i]);
      if (f == nullptr) continue;
      const bool records = allocator != nullptr && object_containing(f) == allocator;
      next[i].records.store(records, std::memory_order_relaxed);
      next[i].address.store(f, std::memory_order_release);
      if (!records) pass[i].store(f, std::memory_order_release);
    }
  }
  release_guard(guard);
}

namespace {

template <class F>
__attribute__((always_inline)) inline F next_of(form i) {
  void* f = next[i].address.load(std::memory_order_acquire);
  if (LOWALLOC_UNLIKELY(f == nullptr)) {
    resolve_operators();
    f = next[i].address.load(std::memory_order_acquire);
  }
  return reinterpret_cast<F>(f);
}

// Our own tag: std::nothrow is libstdc++'s object, and the recorder links no C++ library.
constexpr std::nothrow_t nothrow_tag{};

using new_fn = void* (*)(std::size_t);
using new_aligned_fn = void* (*)(std::size_t, std::align_val_t);
using new_nothrow_fn = void* (*)(std::size_t, const std::nothrow_t&);
using new_aligned_nothrow_fn = void* (*)(std::size_t, std::align_val_t, const std::nothrow_t&);

// No next definition at all (no C++ library is loaded, and something called the operator by
// its name): malloc's semantics, the recorder's own malloc recording it; a failure ends the
// program, as an exception nothing can catch would.
void* fallback_new(std::size_t n, std::size_t align, bool nothrow) {
  void* p = nullptr;
  if (align <= alignof(std::max_align_t))
    p = malloc(n != 0 ? n : 1);
  else if (posix_memalign(&p, align, n != 0 ? n : 1) != 0)
    p = nullptr;
  if (p == nullptr && !nothrow) abort();
  return p;
}

// The allocation that a next operator made, recorded when it is the allocator's.
__attribute__((noinline)) void* record_new(void* p, std::size_t n, bool aligned,
                                           const caller_frame& from) {
  if (p == nullptr) return p;
  thread_state* t = enter();
  if (t != nullptr) {
    record_alloc(t, aligned ? fmt::kind_aligned_alloc : fmt::kind_malloc, n, p, from);
    leave(t);
  }
  return p;
}

// A throwing operator new whose next is the allocator's: its nothrow form under the recorder's
// guard (a malloc the allocator calls through its PLT is then not recorded twice; the nothrow
// form throws nothing, so the guard is always released), and only on failure the throwing form,
// outside it, to run the new handler or throw.
template <class Nothrow, class Throwing, class... Align>
void* new_recorded(form throwing, form nothrow, std::size_t n, const caller_frame& from,
                   Align... align) {
  const bool aligned = sizeof...(Align) != 0;
  auto nothrow_next = next_of<Nothrow>(nothrow);
  if (nothrow_next != nullptr && next[nothrow].records.load(std::memory_order_relaxed)) {
    thread_state* t = enter();
    if (t != nullptr) prefetch_walk_set(t, from);
    void* p = nothrow_next(n, align..., nothrow_tag);
    if (t != nullptr) {
      if (p != nullptr)
        record_alloc(t, aligned ? fmt::kind_aligned_alloc : fmt::kind_malloc, n, p, from);
      leave(t);
    }
    if (p != nullptr) return p;
  }
  return record_new(next_of<Throwing>(throwing)(n, align...), n, aligned, from);
}

__attribute__((noinline)) void record_delete(void* p) {
  if (p == nullptr) return;
  thread_state* t = enter();
  if (t != nullptr) {
    record_free(t, p, stamp_event(t));
    leave(t);
  }
}

// The operators' other paths: not looked up yet, an allocator's next, no next at all. Reached by
// a tail call from the operator, so that their return address is the program's: the stack of an
// allocation they record starts at the call of the operator.
// The alignment an operator was given, or `otherwise`.
template <class... Align>
std::size_t alignment(std::size_t otherwise, Align... align) {
  if constexpr (sizeof...(Align) == 0)
    return otherwise;
  else
    return (static_cast<std::size_t>(align) + ...);
}

template <class Throwing, class Nothrow, class... Align>
__attribute__((noinline)) void* new_other(form throwing, form nothrow, std::size_t n,
                                          Align... align) {
  if (LOWALLOC_UNLIKELY(!ready())) return bootstrap_alloc(n, alignment(16, align...));
  const auto f = next_of<Throwing>(throwing);
  if (f == nullptr) return fallback_new(n, alignment(0, align...), false);
  if (!next[throwing].records.load(std::memory_order_relaxed)) return f(n, align...);
  return new_recorded<Nothrow, Throwing>(throwing, nothrow, n, LOWALLOC_CALLER_FRAME(), align...);
}

template <class Nothrow, class... Align>
__attribute__((noinline)) void* new_nothrow_other(form nothrow, std::size_t n, Align... align) {
  if (LOWALLOC_UNLIKELY(!ready())) return bootstrap_alloc(n, alignment(16, align...));
  const auto f = next_of<Nothrow>(nothrow);
  if (f == nullptr) return fallback_new(n, alignment(0, align...), true);
  if (!next[nothrow].records.load(std::memory_order_relaxed)) return f(n, align..., nothrow_tag);
  return record_new(f(n, align..., nothrow_tag), n, sizeof...(Align) != 0, LOWALLOC_CALLER_FRAME());
}

template <class Delete, class... Rest>
__attribute__((noinline)) void delete_other(form i, void* p, Rest... rest) {
  if (p == nullptr || LOWALLOC_UNLIKELY(in_bootstrap(p))) return;
  if (LOWALLOC_UNLIKELY(!ready())) return;
  const auto f = next_of<Delete>(i);
  if (f == nullptr) return free(p);  // from fallback_new
  if (next[i].records.load(std::memory_order_relaxed)) record_delete(p);
  f(p, rest...);
}

template <class F>
__attribute__((always_inline)) inline F passing(form i) {
  return reinterpret_cast<F>(pass[i].load(std::memory_order_acquire));
}

}  // namespace
}  // namespace lowalloc::trace

using namespace lowalloc::trace;

// The common path, a C++ library's operator next: a load, a test and a jump, without a frame.
#define LOWALLOC_OPERATOR __attribute__((visibility("default"), optimize("omit-frame-pointer")))

// --- operator new --------------------------------------------------------------------------------

LOWALLOC_OPERATOR void* operator new(std::size_t n) {
  if (const auto f = passing<new_fn>(new_plain)) return f(n);
  return new_other<new_fn, new_nothrow_fn>(new_plain, new_plain_nothrow, n);
}

LOWALLOC_OPERATOR void* operator new[](std::size_t n) {
  if (const auto f = passing<new_fn>(new_array)) return f(n);
  return new_other<new_fn, new_nothrow_fn>(new_array, new_array_nothrow, n);
}

LOWALLOC_OPERATOR void* operator new(std::size_t n, std::align_val_t a) {
  if (const auto f = passing<new_aligned_fn>(new_aligned)) return f(n, a);
  return new_other<new_aligned_fn, new_aligned_nothrow_fn>(new_aligned, new_aligned_nothrow, n, a);
}

LOWALLOC_OPERATOR void* operator new[](std::size_t n, std::align_val_t a) {
  if (const auto f = passing<new_aligned_fn>(new_array_aligned)) return f(n, a);
  return new_other<new_aligned_fn, new_aligned_nothrow_fn>(new_array_aligned,
                                                           new_array_aligned_nothrow, n, a);
}

LOWALLOC_OPERATOR void* operator new(std::size_t n, const std::nothrow_t& tag) noexcept {
  if (const auto f = passing<new_nothrow_fn>(new_plain_nothrow)) return f(n, tag);
  return new_nothrow_other<new_nothrow_fn>(new_plain_nothrow, n);
}

LOWALLOC_OPERATOR void* operator new[](std::size_t n, const std::nothrow_t& tag) noexcept {
  if (const auto f = passing<new_nothrow_fn>(new_array_nothrow)) return f(n, tag);
  return new_nothrow_other<new_nothrow_fn>(new_array_nothrow, n);
}

LOWALLOC_OPERATOR void* operator new(std::size_t n, std::align_val_t a,
                                     const std::nothrow_t& tag) noexcept {
  if (const auto f = passing<new_aligned_nothrow_fn>(new_aligned_nothrow)) return f(n, a, tag);
  return new_nothrow_other<new_aligned_nothrow_fn>(new_aligned_nothrow, n, a);
}

LOWALLOC_OPERATOR void* operator new[](std::size_t n, std::align_val_t a,
                                       const std::nothrow_t& tag) noexcept {
  if (const auto f = passing<new_aligned_nothrow_fn>(new_array_aligned_nothrow))
    return f(n, a, tag);
  return new_nothrow_other<new_aligned_nothrow_fn>(new_array_aligned_nothrow, n, a);
}

// --- operator delete -----------------------------------------------------------------------------
// Recorded (when the allocator's is next) before the block is released, as free is. With no next
// definition, the block came from fallback_new: free releases it.

#define LOWALLOC_DELETE(form_, params, type, args)                       \
  LOWALLOC_OPERATOR void operator params noexcept {                      \
    if (const auto f = passing<void(*) type>(form_)) return f args;      \
    return delete_other<void(*) type> LOWALLOC_DELETE_ARGS(form_, args); \
  }
#define LOWALLOC_DELETE_ARGS(form_, args) (form_, LOWALLOC_UNPAREN args)
#define LOWALLOC_UNPAREN(...) __VA_ARGS__

LOWALLOC_DELETE(delete_plain, delete (void* p), (void*), (p))
LOWALLOC_DELETE(delete_array, delete[](void* p), (void*), (p))
LOWALLOC_DELETE(delete_sized, delete (void* p, std::size_t n), (void*, std::size_t), (p, n))
LOWALLOC_DELETE(delete_array_sized, delete[](void* p, std::size_t n), (void*, std::size_t), (p, n))
LOWALLOC_DELETE(delete_plain_nothrow, delete (void* p, const std::nothrow_t& tag),
                (void*, const std::nothrow_t&), (p, tag))
LOWALLOC_DELETE(delete_array_nothrow, delete[](void* p, const std::nothrow_t& tag),
                (void*, const std::nothrow_t&), (p, tag))
LOWALLOC_DELETE(delete_aligned, delete (void* p, std::align_val_t a), (void*, std::align_val_t),
                (p, a))
LOWALLOC_DELETE(delete_array_aligned, delete[](void* p, std::align_val_t a),
                (void*, std::align_val_t), (p, a))
LOWALLOC_DELETE(delete_sized_aligned, delete (void* p, std::size_t n, std::align_val_t a),
                (void*, std::size_t, std::align_val_t), (p, n, a))
LOWALLOC_DELETE(delete_array_sized_aligned, delete[](void* p, std::size_t n, std::align_val_t a),
                (void*, std::size_t, std::align_val_t), (p, n, a))
LOWALLOC_DELETE(delete_aligned_nothrow,
                delete (void* p, std::align_val_t a, const std::nothrow_t& tag),
                (void*, std::align_val_t, const std::nothrow_t&), (p, a, tag))
LOWALLOC_DELETE(delete_array_aligned_nothrow,
                delete[](void* p, std::align_val_t a, const std::nothrow_t& tag),
                (void*, std::align_val_t, const std::nothrow_t&), (p, a, tag))

#undef LOWALLOC_UNPAREN
#undef LOWALLOC_DELETE_ARGS
#undef LOWALLOC_DELETE
