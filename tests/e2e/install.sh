#!/usr/bin/env bash
# An installed libmapscope is found and linked the ways users do: a DESTDIR
# install, then examples/regcache.c and its test program built with
# `pkg-config --cflags --libs mapscope` (shared), with `--static` (static),
# and by a CMake project through find_package(mapscope); each program runs.
# The shared build needs nothing but libmapscope.so.0 and libc. The watch
# part alone (mapscope-watch.pc) builds the same program, shared and static:
# it needs libmapscope-watch.so.0 alone, which needs libtracefs and libc
# alone (no elfutils, zstd, protobuf-c, capstone), and exports the watch API.
source "$(dirname "$0")/lib.sh"
build=$(dirname "$MAPSCOPE")
command -v pkg-config >/dev/null || skip "pkg-config is not installed"
cd "$TMP"

DESTDIR=$TMP/root cmake --install "$build" --prefix /usr/local >install.log 2>&1 || fail "cmake --install failed: $(tail -5 install.log)"
prefix=$TMP/root/usr/local
for f in lib/libmapscope.so.0 lib/libmapscope.a lib/pkgconfig/mapscope.pc lib/libmapscope-watch.so.0 \
	lib/libmapscope-watch.a lib/pkgconfig/mapscope-watch.pc lib/cmake/mapscope/mapscopeConfig.cmake \
	include/mapscope/watch.h include/mapscope/version.h share/man/man3/ms_watch_open.3 share/man/man3/ms_session_run.3; do
	[ -e "$prefix/$f" ] || fail "the install has no $f"
done
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$TMP/root
[ "$(pkg-config --modversion mapscope)" = "$("$MAPSCOPE" --version | awk '{ print $2 }')" ] ||
	fail "pkg-config says version $(pkg-config --modversion mapscope), mapscope $("$MAPSCOPE" --version)"

# A library built with the sanitizers needs their runtime in whatever links it.
san=()
if nm -D "$prefix/lib/libmapscope.so.0" | grep ' U __asan_' >/dev/null; then  # not -q: an early exit would fail nm under pipefail
	san=(-fsanitize=address,undefined)
fi
src=("$SRC_DIR/tests/watch/regcache-test.c" "$SRC_DIR/examples/regcache.c")

# run NAME PROGRAM: runs a built regcache test; 77 (no privileges) counts as a build that works.
run() {
	local rc=0
	"${@:2}" >"$1.out" 2>&1 || rc=$?
	case $rc in
	0) grep -q '^ok: munmap' "$1.out" || fail "$1: no unmap checked: $(head -5 "$1.out")" ;;
	77) echo "note: $1 built and started; the watch needs privileges here: $(tail -1 "$1.out")" ;;
	*) fail "$1 exited $rc: $(grep -m3 FAIL "$1.out" || tail -3 "$1.out")" ;;
	esac
}

# shellcheck disable=SC2046
gcc -D_GNU_SOURCE "${san[@]}" -I"$SRC_DIR/examples" $(pkg-config --cflags mapscope) "${src[@]}" -o rc-shared \
	$(pkg-config --libs mapscope) -pthread 2>shared.err || fail "the shared build failed: $(head -5 shared.err)"
needed=$(readelf -d rc-shared | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v -e '^libc\.so' -e '^ld-linux' \
	-e '^libasan' -e '^libubsan' -e '^libm\.so' | tr '\n' ' ')
[ "$needed" = "libmapscope.so.0 " ] || fail "the shared build needs more than libmapscope.so.0: $needed"
run shared env LD_LIBRARY_PATH="$prefix/lib" ./rc-shared
ldd_lib=$(LD_LIBRARY_PATH="$prefix/lib" ldd ./rc-shared | awk '/libmapscope/ { print $3 }')
[ "$ldd_lib" = "$prefix/lib/libmapscope.so.0" ] || fail "rc-shared loads libmapscope from $ldd_lib"
pass "shared: pkg-config --cflags --libs mapscope builds and runs examples/regcache.c"

# The watch part alone.
# shellcheck disable=SC2046
gcc -D_GNU_SOURCE "${san[@]}" -I"$SRC_DIR/examples" $(pkg-config --cflags mapscope-watch) "${src[@]}" -o rcw-shared \
	$(pkg-config --libs mapscope-watch) -pthread 2>watch.err || fail "the build against mapscope-watch failed: $(head -5 watch.err)"
needed=$(readelf -d rcw-shared | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v -e '^libc\.so' -e '^ld-linux' \
	-e '^libasan' -e '^libubsan' -e '^libm\.so' | tr '\n' ' ')
[ "$needed" = "libmapscope-watch.so.0 " ] || fail "the watch-part build needs more than libmapscope-watch.so.0: $needed"
needed=$(readelf -d "$prefix/lib/libmapscope-watch.so.0" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
	grep -v -e '^libc\.so' -e '^ld-linux' -e '^libasan' -e '^libubsan' -e '^libm\.so' -e '^libstdc' -e '^libgcc' | tr '\n' ' ')
[ "$needed" = "libtracefs.so.1 " ] || fail "libmapscope-watch.so.0 needs more than libtracefs and libc: $needed"
nm -D --defined-only "$prefix/lib/libmapscope-watch.so.0" | awk '$2 == "T" { print $3 }' | sed 's/@.*//' | sort >watch-exports.txt
grep -x ms_watch_open watch-exports.txt >/dev/null && ! grep -x -e ms_session_open -e ms_report_new watch-exports.txt >/dev/null ||
	fail "libmapscope-watch exports other than the watch API: $(tr '\n' ' ' <watch-exports.txt)"
run watch-shared env LD_LIBRARY_PATH="$prefix/lib" ./rcw-shared
pass "watch part: pkg-config mapscope-watch builds and runs examples/regcache.c, needing libmapscope-watch.so.0 alone (it needs libtracefs, libc)"

# The recorder pulls in every private dependency (capstone for --prefetches included): a static
# program that records must link from what the .pc file lists alone.
cat >rec.c <<'C'
#include <mapscope/record.h>
int main(void)
{
	struct ms_record_opts o = { 0 };
	struct ms_record *r = ms_record_new(&o);
	return r ? ms_record_start(r, -1) : 1;
}
C
if [ ${#san[@]} -eq 0 ]; then
	# shellcheck disable=SC2046
	gcc -D_GNU_SOURCE -static -I"$SRC_DIR/examples" $(pkg-config --cflags mapscope-watch) "${src[@]}" -o rcw-static \
		$(pkg-config --static --libs mapscope-watch) 2>wstatic.err || fail "the static watch-part build failed: $(grep -v warning wstatic.err | head -5)"
	run watch-static ./rcw-static
	pass "watch part, static: pkg-config --static --libs mapscope-watch builds and runs examples/regcache.c"
	# shellcheck disable=SC2046
	gcc -D_GNU_SOURCE -static -I"$SRC_DIR/examples" $(pkg-config --cflags mapscope) "${src[@]}" -o rc-static \
		$(pkg-config --static --libs mapscope) 2>static.err || fail "the static build failed: $(grep -v warning static.err | head -5)"
	readelf -d rc-static 2>/dev/null | grep NEEDED >/dev/null && fail "rc-static is not static"
	run static ./rc-static
	pass "static: pkg-config --static --libs mapscope builds and runs examples/regcache.c"
	# shellcheck disable=SC2046
	gcc -D_GNU_SOURCE -static $(pkg-config --cflags mapscope) rec.c -o rec-static \
		$(pkg-config --static --libs mapscope) 2>rec.err || fail "a static program that records does not link from pkg-config --static --libs mapscope: $(grep -v warning rec.err | head -5)"
	pass "static: a program that records links from pkg-config --static --libs mapscope alone"
else
	echo "note: the static build is not tried: a static binary cannot carry the sanitizers this library was built with"
fi

mkdir cm && cat >cm/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(rc C)
find_package(mapscope 0.1 REQUIRED)
# rc-cmake links the whole library, rcw-cmake the watch part alone.
foreach(t rc-cmake=mapscope::mapscope rcw-cmake=mapscope::watch)
  string(REPLACE "=" ";" t \${t})
  list(GET t 0 exe)
  list(GET t 1 lib)
  add_executable(\${exe} $SRC_DIR/tests/watch/regcache-test.c $SRC_DIR/examples/regcache.c)
  target_include_directories(\${exe} PRIVATE $SRC_DIR/examples)
  target_compile_definitions(\${exe} PRIVATE _GNU_SOURCE)
  target_compile_options(\${exe} PRIVATE ${san[*]})
  target_link_options(\${exe} PRIVATE ${san[*]})
  target_link_libraries(\${exe} PRIVATE \${lib} pthread)
endforeach()
if(NOT TARGET mapscope::mapscope_static)
  message(FATAL_ERROR "no mapscope::mapscope_static")
endif()
add_executable(rec-cmake-static $PWD/rec.c)
target_compile_options(rec-cmake-static PRIVATE ${san[*]})
target_link_options(rec-cmake-static PRIVATE ${san[*]})
target_link_libraries(rec-cmake-static PRIVATE mapscope::mapscope_static)
CMAKE
# The sysroot above is for mapscope.pc alone; the dependencies mapscope::mapscope_static asks pkg-config for are the system's.
env -u PKG_CONFIG_SYSROOT_DIR cmake -S cm -B cm/build -DCMAKE_PREFIX_PATH="$prefix" >cm.log 2>&1 || fail "find_package(mapscope) failed: $(grep -v "^--" cm.log | head -8)"
cmake --build cm/build >>cm.log 2>&1 || fail "the CMake build failed: $(grep -m5 -i error cm.log)"
run cmake env LD_LIBRARY_PATH="$prefix/lib" cm/build/rc-cmake
run cmake-watch env LD_LIBRARY_PATH="$prefix/lib" cm/build/rcw-cmake
pass "CMake: find_package(mapscope), mapscope::mapscope and mapscope::watch build and run examples/regcache.c; a program that records links against mapscope::mapscope_static"
