# The front door. `make demo` and `make test` do all the set-up on a fresh Debian/Ubuntu machine.
.PHONY: all deps demo test bench format clean

PRESETS_TEST ?= release release-cxx20 asan asan-cxx20
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

all: test

deps:
	@scripts/install-deps.sh build

build/%/build.ninja: | deps
	cmake --preset $*

# The whole loop on examples/wordfreq: trace, report, advise, apply the advice, trace and time
# again (scripts/demo.sh).
demo: deps
	scripts/demo.sh

test: deps
	@set -e; for p in $(PRESETS_TEST); do \
	  echo "=== preset $$p ==="; \
	  cmake --preset $$p >/dev/null; \
	  cmake --build --preset $$p -j $(JOBS); \
	  ctest --preset $$p; \
	done

bench: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)
	./build/release/examples/demo_vector
	@echo
	./build/release/examples/demo_string
	@echo
	# jemalloc, a peer of bench_memory, is dlopen()ed and needs more static TLS (bench-memory.sh)
	GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 scripts/run-benchmarks.sh build/release
	scripts/bench-tracer.py build/release

format:
	git ls-files '*.hpp' '*.cpp' | xargs clang-format -i

clean:
	rm -rf build
