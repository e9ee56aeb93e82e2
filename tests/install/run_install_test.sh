#!/usr/bin/env bash
# run_install_test.sh BUILD_DIR CONSUMER_SRC WORK_DIR CC [CFLAGS]
set -euo pipefail
build=$1 consumer=$2 work=$3 cc=$4 cflags=${5:-}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/include/sinew/sinew.h"
test -f "$prefix/include/sinew/sinew_plugin.h"

echo "== find_package(sinew CONFIG)"
cmake -S "$consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" >"$work/configure.log"
cmake --build "$work/cmake-build" >"$work/build.log"
LD_LIBRARY_PATH="$prefix/lib:$prefix/lib64:${LD_LIBRARY_PATH:-}" "$work/cmake-build/consumer"

echo "== pkg-config"
pcdir=$(dirname "$(find "$prefix" -name sinew.pc | head -n 1)")
export PKG_CONFIG_PATH=$pcdir
# A static runtime brings its own dependencies through Libs.private.
static=""
compgen -G "$pcdir/../libsinew.so*" >/dev/null || static=--static
# shellcheck disable=SC2046,SC2086
"$cc" -std=c11 -Wall -Wextra -Werror $cflags "$consumer/main.c" -o "$work/consumer-pc" \
      $(pkg-config $static --cflags --libs sinew) -Wl,-rpath,"$(pkg-config --variable=libdir sinew)"
"$work/consumer-pc"
echo "install test passed"
