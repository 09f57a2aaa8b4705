#!/usr/bin/env bash
# Installs every Debian package that building and testing mapscope needs.
# Idempotent: it asks apt only for what is missing, so `make demo` and
# `make check` can call it on every run.
set -euo pipefail

packages=(
	gcc make cmake pkg-config
	libelf-dev libdw-dev          # elfutils: symbols (libdwfl)
	libiberty-dev                 # C++ and Rust demangling (libiberty's demanglers, GCC linking exception)
	zlib1g-dev libbz2-dev liblzma-dev   # static libdw (the static watch test)
	libtraceevent-dev libtracefs-dev
	libpfm4-dev libzstd-dev libncurses-dev
	libcmocka-dev                 # unit tests
	libcapstone-dev               # record --prefetches: finds prefetch instructions
	clang libclang-rt-14-dev      # the libFuzzer harnesses (make check runs each for 60 s)
	linux-perf                    # the peer our files must satisfy
	hotspot                       # its perfparser reads our recordings in the interop test
	python3                       # end-to-end checkers
	zstd                          # compresses hostile recordings (tests/e2e/perfdata-craft.py)
	binutils                      # objcopy: unit/namer compresses a binary's DWARF
	nodejs                        # a runtime for the freeze oracle (tests/e2e/runtime-node.sh)
	procps util-linux             # pgrep, setpriv in tests
	time                          # /usr/bin/time: peak memory in bench/
	libxml2-utils bsdutils        # xmllint (the heatmap's SVG), script (a pseudo-terminal)
	libjemalloc2                  # mapscope run with a program whose malloc is another allocator
	libprotobuf-c-dev protobuf-c-compiler   # report --format pprof
	golang-go                     # go tool pprof reads our profiles in the tests
	chromium fonts-dejavu-core    # headless, it opens report --format html in the tests
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
