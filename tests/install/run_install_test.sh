#!/usr/bin/env bash
# Installs a build into a fresh prefix and checks it as an engine would use it:
#   run_install_test.sh BUILD_DIR CONSUMER_SRC WORK_DIR CC CFLAGS SOURCE_DIR DATA_DIR [TEST_PLUGIN]
# - every installed library has its .pc file, and pkg-config resolves them all;
# - no installed file (binaries included) names the build, source or data folder;
# - tests/install/consumer builds and runs with find_package(sinew) and with pkg-config, once
#   naming only the importers (the runtime must come with them) and once with the Vulkan
#   module and renderer where installed;
# - plugins named by file name alone are found in the runtime's plugin folder (<libdir>/sinew):
#   TEST_PLUGIN copied there, and the fps-cuda plugin where it is installed.
set -euo pipefail
build=$1 consumer=$2 work=$3 cc=$4 cflags=${5:-} source=${6:-} data=${7:-} test_plugin=${8:-}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/include/sinew/sinew.h"
test -f "$prefix/include/sinew/sinew_plugin.h"
libdir=$(dirname "$(find "$prefix" -name 'libsinew.*' | head -n 1)")
pcdir=$libdir/pkgconfig
export PKG_CONFIG_PATH=$pcdir

echo "== pkg-config files"
pcs=()
for lib in "$libdir"/libsinew*.so "$libdir"/libsinew*.a; do
    [ -e "$lib" ] || continue
    name=$(basename "$lib"); name=${name#lib}; name=${name%.*}; name=${name//_/-}
    test -f "$pcdir/$name.pc" || { echo "no $name.pc for $lib" >&2; exit 1; }
    pkg-config --exists --print-errors "$name"
    [ "$(cd "$(pkg-config --variable=libdir "$name")" && pwd -P)" = "$(cd "$libdir" && pwd -P)" ] ||
        { echo "$name.pc: libdir is not the install's" >&2; exit 1; }
    pcs+=("$name")
done
echo "${pcs[*]}"

echo "== no build, source or data path in installed files"
# A sanitized build (never shipped) keeps the source locations of inlined header functions in
# its instrumentation: there only the text files (pkg-config, CMake, headers) are checked.
binaries=-a
[ -z "$cflags" ] || binaries=-I
for path in "$build" "$source" "$data"; do
    [ -n "$path" ] || continue
    for p in "$path" "$(realpath -m "$path")"; do
        if found=$(grep -rlF "$binaries" -- "$p" "$prefix"); then
            echo "installed files name $p:" >&2; echo "$found" >&2; exit 1
        fi
    done
done

# Plugins to load by file name, and the backend each must register.
plugins=()
shared=0
compgen -G "$libdir/libsinew.so*" >/dev/null && shared=1
if [ "$shared" = 1 ] && [ -n "$test_plugin" ] && [ -f "$test_plugin" ]; then
    mkdir -p "$libdir/sinew"
    cp "$test_plugin" "$libdir/sinew/"
    plugins+=("$(basename "$test_plugin")" test-rigid)
fi
[ -f "$libdir/sinew/libsinew_fps_cuda.so" ] && plugins+=(libsinew_fps_cuda.so fps-cuda)
run() { env -u SINEW_PLUGIN_PATH LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH:-}" "$@"; }

echo "== find_package(sinew CONFIG)"
cmake -S "$consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" >"$work/configure.log"
cmake --build "$work/cmake-build" >"$work/build.log"
run "$work/cmake-build/consumer_import"
run "$work/cmake-build/consumer" "${plugins[@]}"

echo "== pkg-config"
# A static runtime brings its own dependencies through Libs.private.
static=""
[ "$shared" = 1 ] || static=--static
modules=(sinew-import)
defines=()
if [ -f "$pcdir/sinew-render.pc" ]; then
    modules+=(sinew-render); defines+=(-DCONSUMER_HAS_RENDER=1 -DCONSUMER_HAS_VULKAN=1)
elif [ -f "$pcdir/sinew-vulkan.pc" ]; then
    modules+=(sinew-vulkan); defines+=(-DCONSUMER_HAS_VULKAN=1)
fi
build_pc() { # build_pc OUTPUT MODULES...
    local out=$1; shift
    # shellcheck disable=SC2046,SC2086
    "$cc" -std=c11 -Wall -Wextra -Werror $cflags "${defines[@]}" "$consumer/main.c" -o "$out" \
          $(pkg-config $static --cflags --libs "$@") -Wl,-rpath,"$libdir"
}
defines_all=("${defines[@]}")
defines=()
build_pc "$work/consumer-pc-import" sinew-import
run "$work/consumer-pc-import"
defines=("${defines_all[@]}")
build_pc "$work/consumer-pc" "${modules[@]}"
run "$work/consumer-pc" "${plugins[@]}"
echo "install test passed"
