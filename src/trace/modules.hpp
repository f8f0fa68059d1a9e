// The loaded ELF objects, as the trace names them: a MODULE record (load bias, path, PT_LOAD
// ranges) when an object appears in dl_iterate_phdr, UNMODULE when it is gone. An unload also
// voids every thread's unwind rules and stack ids (module_generation), since its addresses may
// be reused.
#ifndef LOWALLOC_SRC_TRACE_MODULES_HPP
#define LOWALLOC_SRC_TRACE_MODULES_HPP

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

struct thread_state;

// Writes MODULE records for new objects (or all: a new file) and UNMODULE for objects gone since
// last time.
void write_module_records(thread_state* t, bool all);

// After dlopen or dlclose: the calling thread writes what changed.
void after_module_change();

// The loaded object whose PT_LOAD segments hold `address`: its program headers, which tell
// objects apart (nullptr if none holds it), and its name as the loader gives it ("" for the
// executable) in `*name`. Cheaper than dladdr, which also searches the object's symbols.
const void* object_containing(const void* address, const char** name = nullptr);

// Around fork: the module table's lock is taken first and held across it.
void modules_fork_prepare();
void modules_fork_parent();
void modules_fork_child();

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_MODULES_HPP
