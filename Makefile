# Thin wrapper around CMake. `make demo` and `make check` install what is
# missing first, so both work on a fresh Debian machine as root.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)
PREFIX     ?= /usr/local
DEPS_STAMP := $(BUILD)/.deps-ok

.PHONY: all build deps demo check check-plain check-fuzz check-asan install clean

all: build

$(DEPS_STAMP): scripts/install-deps.sh
	bash scripts/install-deps.sh
	@mkdir -p $(BUILD) && touch $@

deps:
	bash scripts/install-deps.sh

build: $(DEPS_STAMP)
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	bash scripts/demo.sh $(BUILD)

# The whole suite, twice: plain, then under ASan+UBSan; between them each
# libFuzzer harness runs for FUZZ_SECONDS. The last line is ctest's summary
# of the sanitized run; the plain run's summary comes first.
check: check-plain check-fuzz check-asan

check-plain: build
	cd $(BUILD) && ctest --output-on-failure

check-fuzz: $(DEPS_STAMP)
	cmake -S . -B $(FUZZ_BUILD) -DMS_FUZZ=ON -DCMAKE_C_COMPILER=clang -DMS_STATIC_DEPS=OFF >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_reader fuzz_tracing fuzz_cli fuzz_jitfiles fuzz_namecache
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

check-asan: $(DEPS_STAMP)
	cmake -S . -B $(ASAN_BUILD) -DMS_SANITIZE=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
