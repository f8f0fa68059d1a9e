# The front door. `make demo`, `make test`, `make bench` and `make package` do all the set-up on a
# fresh Debian/Ubuntu machine, each installing only what it needs (scripts/install-deps.sh).
.PHONY: all deps demo-deps test-deps bench-deps package-deps demo test bench package format clean

PRESETS_TEST ?= release release-cxx20 asan asan-cxx20
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

all: test

# The packages of each level: demo (the tool and the examples) < test < bench; package is demo
# and the .deb tools. `deps` is the first level, as before.
deps: demo-deps
demo-deps:
	@scripts/install-deps.sh demo
test-deps:
	@scripts/install-deps.sh test
bench-deps:
	@scripts/install-deps.sh bench
package-deps:
	@scripts/install-deps.sh package

# The whole loop on examples/wordfreq: trace, report, advise, apply the advice, trace and time
# again (scripts/demo.sh, the `demo` preset: no tests, no benchmarks).
demo: demo-deps
	scripts/demo.sh

test: test-deps
	@set -e; for p in $(PRESETS_TEST); do \
	  echo "=== preset $$p ==="; \
	  cmake --preset $$p >/dev/null; \
	  cmake --build --preset $$p -j $(JOBS); \
	  ctest --preset $$p; \
	done

bench: bench-deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)
	./build/release/examples/demo_vector
	@echo
	./build/release/examples/demo_string
	@echo
	# jemalloc, a peer of bench_memory, is dlopen()ed and needs more static TLS (bench-memory.sh)
	GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 scripts/run-benchmarks.sh build/release
	scripts/bench-tracer.py build/release

# The Debian package of the release build (the `package` preset: what is installed, nothing
# else): build/package/package/lowalloc_VERSION_ARCH.deb.
package: package-deps
	cmake --preset package >/dev/null
	cmake --build --preset package -j $(JOBS)
	cd build/package && cpack -G DEB
	@ls build/package/package/*.deb

format:
	git ls-files '*.hpp' '*.cpp' | xargs clang-format -i

clean:
	rm -rf build
