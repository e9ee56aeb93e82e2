#!/usr/bin/env bash
# sinew's one entry point: installs what is missing (Debian), configures, builds, runs.
#   ./sinew.sh demo [..]  build and run the main job, sinew-demo (options go to it; images in out/)
#   ./sinew.sh test       build and run every test (ctest)
#   ./sinew.sh sanitize   build with AddressSanitizer + UndefinedBehaviorSanitizer and run the tests
#   ./sinew.sh quality [..] build sinew-quality and run the full quality sweep (not part of test;
#                         options go to samples/quality/quality_sweep.sh): out/quality/ and the
#                         table in samples/quality/README.md
#   ./sinew.sh bench [..] build sinew-bench and sinew-plot and run the benchmark set (not part of
#                         test; options go to samples/bench/bench_report.sh): every backend on
#                         every test character with 1 and 2 threads and a crowd of 64 males on
#                         fps; out/bench/bench.json, samples/bench/step_time.png and the table
#                         in README.md
#   ./sinew.sh tsan       build with ThreadSanitizer and run the threaded tests (world, Vulkan,
#                         the several-worlds stress with every CPU backend); any report fails
#   ./sinew.sh fuzz [S]   build the libFuzzer harnesses (clang, ASan + UBSan) and run each for S
#                         seconds (default 60) from its committed seeds (tests/fuzz/README.md)
#   ./sinew.sh gpu-check OUT  on a machine with an NVIDIA GPU, CUDA and CMake (no Debian packages
#                         needed): build the CUDA targets, run the gpu tests, the benchmark and
#                         compute-sanitizer; summary and figures in OUT (tests/cuda/gpu_check.sh;
#                         `gpu-check --gather DIR` collects here what a bare machine lacks)
#   ./sinew.sh build      install dependencies and build only
#   ./sinew.sh deps       install dependencies only
# Environment: SINEW_BUILD_DIR (default build/), SINEW_JOBS (default: cores),
# SINEW_DATA_DIR (test characters, default ../shared/data), SINEW_REQUIRE_DATA=1 (fail, not
# skip, when test data is missing), SINEW_CMAKE_ARGS (extra configure arguments),
# SINEW_DEMO_OUT (the demo's output folder, default out/).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${SINEW_BUILD_DIR:-$ROOT/build}
JOBS=${SINEW_JOBS:-$(nproc 2>/dev/null || echo 2)}
PACKAGES=(build-essential cmake pkg-config libcglm-dev libcmocka-dev libassimp-dev
          libsuitesparse-dev libmeshoptimizer-dev
          libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers
          libpng-dev libglfw3-dev xvfb xauth libogre-1.12-dev
          assimp-testmodels locales)

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "sinew.sh: need root to run: $*" >&2; return 1; fi
}

deps() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "sinew.sh: installing ${missing[*]}" >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}"
    fi
}

fuzz_deps() { # clang and its libFuzzer runtime, for ./sinew.sh fuzz only
    local missing=()
    for p in clang libclang-rt-14-dev; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "sinew.sh: installing ${missing[*]}" >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}"
    fi
}

configure() { # configure DIR [cmake args...]
    local dir=$1; shift
    # shellcheck disable=SC2086
    cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" ${SINEW_CMAKE_ARGS:-}
}

build_targets() { # build_targets DIR TARGET... -- [cmake args...]
    local dir=$1 targets=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do targets+=("$1"); shift; done
    [ $# -eq 0 ] || shift
    configure "$dir" "$@"
    cmake --build "$dir" -j "$JOBS" --target "${targets[@]}"
}

build() { # build DIR [cmake args...]
    configure "$@"
    cmake --build "$1" -j "$JOBS"
}

run_tests() { # run_tests DIR
    ctest --test-dir "$1" --output-on-failure -j "$JOBS" --timeout 900
}

demo() {
    local bin=$BUILD/bin
    local out=${SINEW_DEMO_OUT:-$ROOT/out}
    # The main job: every backend side by side, rendered headless with Vulkan (lavapipe on a
    # machine without a GPU). The character defaults to the male test character.
    echo "== sinew-demo: writes $out/compare.png, $out/frames/ and $out/contact_sheet.png"
    "$bin/sinew-demo" --out "$out" "$@"
}

fuzz_one() { # fuzz_one DIR HARNESS SECONDS: one libFuzzer run; its log in DIR/fuzz/HARNESS.log
    local dir=$1 h=$2 secs=$3 kind=${2#fuzz_}
    local corpus=$dir/fuzz/corpus/$kind crashes=$dir/fuzz/crashes
    mkdir -p "$corpus" "$crashes"
    # assimp's frames need the slow unwinder for its suppression (tests/fuzz/lsan.supp)
    local unwind=1
    [ "$h" != fuzz_assimp ] || unwind=0
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:quarantine_size_mb=64:fast_unwind_on_malloc=$unwind \
        LSAN_OPTIONS=suppressions="$ROOT/tests/fuzz/lsan.supp" \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$dir/bin/$h" "$corpus" "$ROOT/tests/fuzz/seeds/$kind" -max_total_time="$secs" \
        -timeout=20 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$crashes/$h-" > "$dir/fuzz/$h.log" 2>&1 && touch "$dir/fuzz/$h.ok"
}

fuzz_in_assimp() { # fuzz_in_assimp LOG: did the run stop inside assimp's import call?
    # sinew's code runs only before and after aiImportFile: a failure with that call on the
    # stack is assimp's own (its readers crash or hang on some malformed files)
    grep -Eq "^==[0-9]+== ?ERROR" "$1" && grep -q "in aiImportFile" "$1"
}

fuzz() { # fuzz [seconds]: every harness for that long, as many at once as there are jobs
    local secs=${1:-60} dir=${SINEW_FUZZ_BUILD_DIR:-$ROOT/build-fuzz} status=0
    local harnesses=(fuzz_text fuzz_bake fuzz_assimp fuzz_plugin) pids=() h i
    CC=clang configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSINEW_FUZZ=ON \
        -DSINEW_SANITIZE=address,undefined -DSINEW_WITH_CUDA=OFF
    cmake --build "$dir" -j "$JOBS" --target "${harnesses[@]}" fuzz_plugin_table
    mkdir -p "$dir/fuzz"
    rm -f "$dir"/fuzz/*.ok
    for i in "${!harnesses[@]}"; do
        echo "== ${harnesses[$i]}: $secs s from tests/fuzz/seeds/${harnesses[$i]#fuzz_}"
        fuzz_one "$dir" "${harnesses[$i]}" "$secs" &
        pids[$i]=$!
        while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 1; done
    done
    for i in "${!harnesses[@]}"; do
        h=${harnesses[$i]}
        if ! wait "${pids[$i]}" && fuzz_in_assimp "$dir/fuzz/$h.log"; then
            echo "sinew.sh: $h stopped on a failure inside assimp's own reader (third-party;" \
                 "the input is in $dir/fuzz/crashes)" >&2
        elif [ ! -f "$dir/fuzz/$h.ok" ]; then
            tail -n 60 "$dir/fuzz/$h.log" >&2
            echo "sinew.sh: $h failed (the input is in $dir/fuzz/crashes)" >&2
            status=1
        fi
        echo "$h: $(grep -E "stat::(number_of_executed_units|new_units_added)" "$dir/fuzz/$h.log" |
            tr -s ' ' | tr '\n' ' ')"
    done
    return $status
}

tsan() {
    local dir=${SINEW_TSAN_BUILD_DIR:-$ROOT/build-tsan}
    # ps and fps run threaded inside the stress (the male's ps and fps world tests and the
    # soak take minutes under TSan; they run threaded in the other builds)
    local tests=(test_world test_swap test_reentrancy test_stress test_vk_skin test_vk_output
                 test_vk_world_map test_vk_threads test_vk_record test_ldl)
    build_targets "$dir" "${tests[@]}" -- -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DSINEW_SANITIZE=thread -DSINEW_WITH_CUDA=OFF
    local regex
    regex="^($(IFS='|'; echo "${tests[*]}"))\$"
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$ROOT/tests/soak/tsan.supp" \
        ctest --test-dir "$dir" --output-on-failure -j "$JOBS" --timeout 900 -R "$regex"
}

quality() {
    # Every backend over the test characters' animations and static poses, one measurement
    # per core at a time (samples/quality/README.md).
    configure "$BUILD"
    cmake --build "$BUILD" -j "$JOBS" --target sinew-quality
    "$ROOT/samples/quality/quality_sweep.sh" --bin "$BUILD/bin/sinew-quality" --jobs "$JOBS" "$@"
}

bench() {
    # Every backend on every test character, in interleaved rounds, one measurement at a time
    # (samples/bench/README.md); the CUDA plugin too where this build has it.
    local targets=(sinew-bench sinew-plot)
    configure "$BUILD"
    if cmake --build "$BUILD" --target help | grep -q "sinew_fps_cuda$"; then
        targets+=(sinew_fps_cuda)
    fi
    cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}"
    "$ROOT/samples/bench/bench_report.sh" --bin "$BUILD/bin" "$@"
}

cmd=${1:-}
case "$cmd" in
    deps) deps ;;
    build) deps; build "$BUILD" ;;
    test) deps; build "$BUILD"; run_tests "$BUILD" ;;
    sanitize)
        deps
        build "${SINEW_ASAN_BUILD_DIR:-$ROOT/build-asan}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DSINEW_SANITIZE=address,undefined
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            run_tests "${SINEW_ASAN_BUILD_DIR:-$ROOT/build-asan}" ;;
    demo) deps; build "$BUILD"; shift; demo "$@" ;;
    quality) deps; shift; quality "$@" ;;
    bench) deps; shift; bench "$@" ;;
    fuzz) deps; fuzz_deps; shift; fuzz "$@" ;;
    tsan) deps; tsan ;;
    gpu-check) shift; exec "$ROOT/tests/cuda/gpu_check.sh" "$@" ;;
    *) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
       [ -z "$cmd" ] || exit 2 ;;
esac
