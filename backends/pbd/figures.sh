#!/usr/bin/env bash
# The figures of backends/pbd/README.md ("Figures"), printed as Markdown: the colours of the
# constraint graph without and with the bending constraints (sinew-pbd-profile), quality against the other backends (sinew-quality:
# intersecting render pairs / volume ratio / largest edge stretch) and step times
# (sinew-bench, medians of several runs); then vk-pbd's against pbd's on the first Vulkan device
# (lavapipe where there is no GPU): the distance between their shapes, their quality, and
# their step times, with vk-pbd at fewer sweeps for the quality at equal step time.
#   backends/pbd/figures.sh [BUILD_DIR]       (default: $SINEW_BUILD_DIR, else build/)
# Environment: SINEW_DATA_DIR (default ../shared/data beside the checkout), PBD_REPEAT (bench
# runs per case, default 5), PBD_FRAMES (frames per run, default 600), PBD_SECTIONS ("cpu vk",
# the default, or either), PBD_VK_FRAMES (frames per vk-pbd run, default 60).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-${SINEW_BUILD_DIR:-$ROOT/build}}
DATA=${SINEW_DATA_DIR:-$ROOT/../shared/data}
REPEAT=${PBD_REPEAT:-5}
FRAMES=${PBD_FRAMES:-600}
SECTIONS=${PBD_SECTIONS:-cpu vk}
VK_FRAMES=${PBD_VK_FRAMES:-60}
CYLINDER=$DATA/characters/cylinder/cylinder.ini
TBONE=$DATA/characters/tbone/tbone.ini
MALE=$DATA/characters/male/male.ini

for tool in sinew-quality sinew-bench sinew-pbd-profile; do
    [ -x "$BUILD/bin/$tool" ] || { echo "figures.sh: $BUILD/bin/$tool is not built" >&2; exit 1; }
done
[ -f "$MALE" ] || { echo "figures.sh: no test data at $DATA" >&2; exit 77; }

# The shared helpers: json, bench BACKEND CHARACTER THREADS [ARGS], measured_line.
. "$ROOT/samples/bench/figures_common.sh"

# Is backend $1 registered in this build? (ps needs CHOLMOD.)
have() {
    "$BUILD/bin/sinew-quality" --character "$CYLINDER" --backend "$1" --pose bend:0 \
        --threads 1 --settle 1 >/dev/null 2>&1
}

# "pairs / volume ratio / largest edge stretch" of backend $1 on character $2, pose $3, joint $4
# (further arguments go to sinew-quality).
quality() {
    local out
    out=$("$BUILD/bin/sinew-quality" --character "$2" --backend "$1" --pose "$3" --joint "$4" \
        --threads 1 --json "${@:5}" 2>/dev/null) || { printf 'failed'; return; }
    printf '%s / %.3f / %.2f' "$(json self_intersections <<<"$out")" \
        "$(json volume_ratio <<<"$out")" "$(json max_edge_stretch <<<"$out")"
}

# The render mesh of backend $1 on character $2 at pose $3 (joint $4, "" for an animation)
# with further sinew-quality arguments, into OFF file $5.
shape() {
    local joint=()
    [ -z "$4" ] || joint=(--joint "$4")
    "$BUILD/bin/sinew-quality" --character "$2" --backend "$1" --pose "$3" "${joint[@]}" \
        --threads 1 --positions-out "$5" "${@:6}" >/dev/null 2>&1
}

# Median ms per frame of backend $1 on character $2, 1 thread, frames through a Vulkan output
# (the device's work waited for), PBD_VK_FRAMES frames; further arguments go to sinew-bench.
bench_vk() {
    local out
    out=$("$BUILD/bin/sinew-bench" --character "$2" --backend "$1" --threads 1 --output vulkan \
        --frames "$VK_FRAMES" --json "${@:3}" 2>/dev/null) || { printf 'failed'; return; }
    printf '%.2f' "$(json ms_per_frame_median <<<"$out")"
}

# vk-pbd against pbd (vulkan/vk_pbd.c, README.md "vk-pbd").
vk_section() {
    local tmp
    tmp=$(mktemp -d)
    echo
    echo "vk-pbd against pbd (defaults; shapes and quality from sinew-quality, 1 thread):"
    echo
    echo "| case | largest vertex distance, of the diagonal | pbd | vk-pbd |"
    echo "|---|---|---|---|"
    local c name joint pose file
    for c in "cylinder joint2 bend:90" "cylinder - anim:0:90" "male - anim:0:40" \
             "male l_elbow bend:-120"; do
        read -r name joint pose <<<"$c"
        [ "$joint" = - ] && joint=
        file=$CYLINDER
        [ "$name" = male ] && file=$MALE
        shape pbd "$file" "$pose" "$joint" "$tmp/cpu.off"
        shape vk-pbd "$file" "$pose" "$joint" "$tmp/vk.off"
        local q=("-" "-")
        if [ -n "$joint" ]; then
            q=("$(quality pbd "$file" "$pose" "$joint")" "$(quality vk-pbd "$file" "$pose" "$joint")")
        fi
        echo "| $name ${joint:+$joint }$pose | $(off_error "$tmp/vk.off" "$tmp/cpu.off") | ${q[0]} | ${q[1]} |"
    done
    rm -rf "$tmp"
    echo
    echo "| step time, ms per frame through a Vulkan output (median of $VK_FRAMES frames, 1 thread) | cylinder | male |"
    echo "|---|---|---|"
    echo "| pbd | $(bench_vk pbd "$CYLINDER") | $(bench_vk pbd "$MALE") |"
    local k
    for k in 10 2 1; do
        echo "| vk-pbd iterations=$k | $(bench_vk vk-pbd "$CYLINDER" --set iterations=$k) |" \
             "$(bench_vk vk-pbd "$MALE" --set iterations=$k) |"
    done
    echo
    echo "Quality at fewer sweeps (pairs / volume ratio / largest edge stretch):"
    echo
    echo "| case | pbd iterations=10 | vk-pbd iterations=2 | vk-pbd iterations=1 |"
    echo "|---|---|---|---|"
    for c in "cylinder joint2 bend:90" "male l_elbow bend:-120"; do
        read -r name joint pose <<<"$c"
        file=$CYLINDER
        [ "$name" = male ] && file=$MALE
        echo "| $name $joint $pose | $(quality pbd "$file" "$pose" "$joint") |" \
             "$(quality vk-pbd "$file" "$pose" "$joint" --set iterations=2) |" \
             "$(quality vk-pbd "$file" "$pose" "$joint" --set iterations=1) |"
    done
}

measured_line
if [[ " $SECTIONS " != *" cpu "* ]]; then
    if [[ " $SECTIONS " == *" vk "* ]] && have vk-pbd; then vk_section; fi
    exit 0
fi
echo
echo "| character | bending | constraints and colours (INFO line of prepare) |"
echo "|---|---|---|"
for ch in "$CYLINDER" "$TBONE" "$MALE"; do
    for b in 0 1; do
        line=$("$BUILD/bin/sinew-pbd-profile" "$ch" 1 1 bending=$b 2>/dev/null |
            sed -n 's/^pbd: prepared //p')
        echo "| $(basename "$ch" .ini) | $b | ${line%%; model*} |"
    done
done

backends=(lbs)
have ps && backends+=(ps)
backends+=(fps pbd)
echo
printf '| case |'; printf ' %s |' "${backends[@]}"; echo
printf '|---|'; printf -- '---|%.0s' "${backends[@]}"; echo
cases=("cylinder joint2 bend:90" "cylinder joint2 bend:120" "cylinder joint2 bend:150"
       "male l_elbow bend:-120" "male r_knee bend:-120" "male r_shoulder bend:120")
for c in "${cases[@]}"; do
    read -r name joint pose <<<"$c"
    file=$CYLINDER
    [ "$name" = male ] && file=$MALE
    printf '| %s %s %s |' "$name" "$joint" "$pose"
    for b in "${backends[@]}"; do printf ' %s |' "$(quality "$b" "$file" "$pose" "$joint")"; done
    echo
done

echo
echo "| step time, ms per step (median of $REPEAT runs of $FRAMES frames) | 1 thread | 2 threads |"
echo "|---|---|---|"
for b in pbd fps; do
    echo "| $b, male (animation 0) | $(bench "$b" "$MALE" 1) | $(bench "$b" "$MALE" 2) |"
done
echo "| pbd grain=1024, male | $(bench pbd "$MALE" 1 --set grain=1024) |" \
     "$(bench pbd "$MALE" 2 --set grain=1024) |"
echo "| pbd, cylinder (animation 0) | $(bench pbd "$CYLINDER" 1) | $(bench pbd "$CYLINDER" 2) |"
echo
echo "Where a pbd step goes on the male (1 thread, sinew-pbd-profile, $FRAMES frames):"
echo
"$BUILD/bin/sinew-pbd-profile" "$MALE" 1 "$FRAMES" 2>/dev/null | sed -n 's/^pbd profile: /- /p'
if [[ " $SECTIONS " == *" vk "* ]] && have vk-pbd; then vk_section; fi
