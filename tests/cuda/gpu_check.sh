#!/usr/bin/env bash
# The GPU check of fps-cuda, for a machine with an NVIDIA GPU, CUDA and CMake (no Debian
# packages needed): builds the CUDA targets if needed, runs the cuda-labelled tests with
# SINEW_REQUIRE_GPU=1 (a missing device fails; a missing Vulkan driver is a skip), the
# benchmark on the male (alone and 64 batched, each launch mode, with collisions), and
# compute-sanitizer's memcheck, racecheck and synccheck on short runs where it is installed.
# Writes into OUTDIR: summary.txt (device, driver, one PASS/FAIL/SKIP line per check, times),
# ctest.log (every test's output), bench.json, sanitizer.log, build.log.
#   tests/cuda/gpu_check.sh OUTDIR          (./sinew.sh gpu-check OUTDIR)
#   tests/cuda/gpu_check.sh --gather DIR    fills DIR with what a bare machine lacks: the cglm
#                                           and Vulkan headers, the Vulkan loader and the test
#                                           characters, from this Debian machine
# Environment: SINEW_GPU_DEPS (the gathered folder, default .deps/ in the checkout),
# SINEW_GPU_BUILD_DIR (default build-gpu/), SINEW_GPU_BUDGET (seconds after which the
# remaining benchmark and sanitizer runs are skipped, default 240), SINEW_DATA_DIR (default ../shared/data, else
# SINEW_GPU_DEPS/data), SINEW_JOBS, SINEW_CMAKE_ARGS. Exit 0 when no line says FAIL.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEPS=${SINEW_GPU_DEPS:-$ROOT/.deps}
BUILD=${SINEW_GPU_BUILD_DIR:-$ROOT/build-gpu}
JOBS=${SINEW_JOBS:-$(nproc 2>/dev/null || echo 2)}
BUDGET=${SINEW_GPU_BUDGET:-240}

gather() { # gather DIR: headers, loader and data for a bare GPU machine
    local dir=$1 data=${SINEW_DATA_DIR:-$ROOT/../shared/data}
    local lib=/usr/lib/x86_64-linux-gnu
    mkdir -p "$dir/include/vulkan" "$dir/lib" "$dir/data"
    cp -r /usr/include/cglm "$dir/include/"
    cp /usr/include/vulkan/*.h "$dir/include/vulkan/"
    cp -r /usr/include/vk_video "$dir/include/"
    cp -L "$lib/libvulkan.so.1" "$dir/lib/libvulkan.so.1"
    cp -L "$lib/libvulkan.so.1" "$dir/lib/libvulkan.so"
    local so # the GL vendor-neutral dispatch libraries the NVIDIA Vulkan driver loads
    for so in libGLdispatch.so.0 libEGL.so.1 libGLX.so.0 libGL.so.1 libOpenGL.so.0 libGLESv2.so.2; do
        [ -e "$lib/$so" ] && cp -L "$lib/$so" "$dir/lib/$so"
    done
    cp -r "$data/characters" "$dir/data/"
    du -sh "$dir"
}

if [ "${1:-}" = --gather ]; then
    gather "${2:?usage: gpu_check.sh --gather DIR}"
    exit 0
fi
OUT=${1:?usage: gpu_check.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
START=$SECONDS
say() { echo "$*" | tee -a "$SUMMARY"; }
phase() { say "-- $1 (at $((SECONDS - START)) s)"; }
in_time() { # in_time WHAT: false, with a SKIP line, once the budget is spent
    [ $((SECONDS - START)) -lt "$BUDGET" ] && return 0
    say "SKIP $1: the check's budget of $BUDGET s is spent"
    return 1
}

environment() { # data folder, carried libraries, the NVIDIA Vulkan driver's manifest
    if [ -z "${SINEW_DATA_DIR:-}" ]; then
        if [ -d "$ROOT/../shared/data/characters" ]; then export SINEW_DATA_DIR=$ROOT/../shared/data
        else export SINEW_DATA_DIR=$DEPS/data; fi
    fi
    [ -d "$DEPS/lib" ] && export LD_LIBRARY_PATH=$DEPS/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    local icd
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
               /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
        if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -f "$icd" ]; then
            export VK_DRIVER_FILES=$icd
        fi
    done
    local egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && [ -f "$egl" ]; then
        export __EGL_VENDOR_LIBRARY_FILENAMES=$egl
    fi
    export PATH=$PATH:/usr/local/cuda/bin
}

device_info() {
    say "date: $(date -u +%FT%TZ)"
    if ! command -v nvidia-smi >/dev/null; then
        say "FAIL device: nvidia-smi not found"
        return 1
    fi
    say "device: $(nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total \
        --format=csv,noheader 2>&1 | head -1)"
    say "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
    say "cmake: $(cmake --version | head -1)"
    say "vulkan driver manifest: ${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-none found}}"
    say "data: $SINEW_DATA_DIR"
}

configure_args() { # the minimal build, with the gathered headers where the system has none
    local arch
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
    ARGS=(-DCMAKE_BUILD_TYPE=Release -DSINEW_WITH_CHOLMOD=OFF -DSINEW_WITH_ASSIMP=OFF)
    [ -n "$arch" ] && ARGS+=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
    if [ ! -f /usr/include/cglm/cglm.h ] && [ -f "$DEPS/include/cglm/cglm.h" ]; then
        ARGS+=(-DCGLM_INCLUDE_DIR="$DEPS/include")
    fi
    if [ ! -f /usr/include/vulkan/vulkan.h ] && [ -f "$DEPS/include/vulkan/vulkan.h" ]; then
        ARGS+=(-DVulkan_INCLUDE_DIR="$DEPS/include" -DVulkan_LIBRARY="$DEPS/lib/libvulkan.so")
    fi
}

build() { # the CUDA tests' executables and the benchmark
    configure_args
    # shellcheck disable=SC2086
    if ! cmake -S "$ROOT" -B "$BUILD" "${ARGS[@]}" ${SINEW_CMAKE_ARGS:-} >"$OUT/build.log" 2>&1; then
        say "FAIL configure (build.log)"
        return 1
    fi
    local targets=() t known
    known=$(cmake --build "$BUILD" --target help 2>/dev/null)
    for t in $(ctest --test-dir "$BUILD" -N -L cuda | sed -n 's/^ *Test *#[0-9]*: //p'); do
        grep -qw -- "$t" <<<"$known" && targets+=("$t")
    done
    if ! cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}" >>"$OUT/build.log" 2>&1; then
        say "FAIL build (build.log)"
        return 1
    fi
    say "PASS build: ${targets[*]}"
}

skip_reason() { # the first SKIP line of one test's output in ctest.log
    awk -v t="$1" '$0 ~ "^[0-9]+/[0-9]+ Test: " t "$" {on = 1}
        on && /^SKIP/ {sub(/^SKIP: /, ""); print; exit}
        on && /^<end of output>/ {exit}' "$OUT/ctest.log"
}

# One line per test from ctest's output, with the reason of each skip.
tests() {
    VK_LOADER_DEBUG=error,warn,driver SINEW_REQUIRE_GPU=1 SINEW_REQUIRE_DATA=1 timeout 200 ctest --test-dir "$BUILD" -L cuda --timeout 120 \
        -j 2 >"$OUT/ctest.out" 2>&1
    cp "$BUILD/Testing/Temporary/LastTest.log" "$OUT/ctest.log" 2>/dev/null
    local name status
    while read -r name status; do
        case $status in
            Passed*) say "PASS test $name ${status#Passed}" ;;
            *Skipped*|*Not\ Run*) say "SKIP test $name: $(skip_reason "$name")" ;;
            *) say "FAIL test $name: $status" ;;
        esac
    done < <(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) \.*\** *\(.*\)$/\1 \2/p' \
             "$OUT/ctest.out")
    cat "$OUT/ctest.out" >>"$OUT/ctest.log"
}

bench() { # bench NAME ARGS...: one JSON object per run into bench.json
    local name=$1
    shift
    in_time "bench $name" || return
    local json
    if json=$(timeout 90 "$BUILD/bin/sinew-cuda-bench" "$@" 2>>"$OUT/bench.err"); then
        [ -s "$OUT/bench.json" ] && echo "," >>"$OUT/bench.json"
        printf '{"run": "%s", "result": %s}\n' "$name" "$json" >>"$OUT/bench.json"
        say "PASS bench $name: $(tr -d '\n' <<<"$json" | sed -n 's/.*"alone": *{\([^}]*\)}.*"batched": *{\([^}]*\)}.*/alone {\1} batched {\2}/p')"
    else
        say "FAIL bench $name (exit $?; bench.err)"
    fi
}

sanitize() { # sanitize TOOL ARGS...: compute-sanitizer on a short benchmark run
    local tool=$1
    shift
    in_time "$tool $*" || return
    local sanitizer
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    if [ ! -x "$sanitizer" ]; then
        say "SKIP $tool: compute-sanitizer is not installed"
        return
    fi
    echo "== $tool $*" >>"$OUT/sanitizer.log"
    if timeout 90 "$sanitizer" --tool "$tool" --error-exitcode 3 \
        "$BUILD/bin/sinew-cuda-bench" "$@" >>"$OUT/sanitizer.log" 2>&1; then
        say "PASS $tool: $*"
    else
        say "FAIL $tool (exit $?): $* ($(grep -c '=========   ' "$OUT/sanitizer.log") report lines)"
    fi
}

environment
device_info || exit 1
phase build
build || exit 1
phase tests
tests
phase bench
: >"$OUT/bench.json"
for launch in auto graph cooperative stream; do
    bench "male-$launch" --frames 200 --copies 64 --launch "$launch"
done
bench male-collisions --frames 100 --copies 64 --collisions 1
{ echo "["; cat "$OUT/bench.json"; echo "]"; } >"$OUT/bench.json.tmp" &&
    mv "$OUT/bench.json.tmp" "$OUT/bench.json"
phase sanitizers
for launch in graph cooperative stream; do
    sanitize memcheck --character cylinder --frames 3 --copies 2 --launch "$launch"
done
sanitize memcheck --character male --frames 2 --copies 2 --collisions 1
sanitize racecheck --character cylinder --frames 2 --copies 2
sanitize synccheck --character cylinder --frames 2 --copies 2 --launch cooperative
phase done
if grep -q '^FAIL' "$SUMMARY"; then exit 1; fi
exit 0
