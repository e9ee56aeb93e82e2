#!/usr/bin/env bash
# Quality against step time for ps, fps and pbd on the male at several iteration counts (the
# comparison of the projective skinning paper's Fig. 6): for each backend and count K, the step
# time (sinew-bench, median of 300 frames, 2 threads) and how far the shape at frame 40 of
# animation 0 lies from the same backend's at 64 iterations (largest vertex distance over the
# bounding-box diagonal, sinew-quality --positions-out). Prints the Markdown table of
# backends/pbd/README.md ("Quality against step time") and writes the plot.
#   backends/pbd/iterations.sh [BUILD_DIR] [PNG]   (defaults: build/, backends/pbd/iterations.png)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-${SINEW_BUILD_DIR:-$ROOT/build}}
PNG=${2:-$ROOT/backends/pbd/iterations.png}
DATA=${SINEW_DATA_DIR:-$ROOT/../shared/data}
MALE=$DATA/characters/male/male.ini
COUNTS="1 2 4 8 16"
REFERENCE=64
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for tool in sinew-quality sinew-bench sinew-plot; do
    [ -x "$BUILD/bin/$tool" ] || { echo "iterations.sh: $BUILD/bin/$tool is not built" >&2; exit 1; }
done
[ -f "$MALE" ] || { echo "iterations.sh: no test data at $DATA" >&2; exit 77; }

shape() { # shape BACKEND K: the render mesh after 40 updates of animation 0
    "$BUILD/bin/sinew-quality" --character "$MALE" --backend "$1" --pose anim:0:40 \
        --set iterations="$2" --positions-out "$TMP/$1_$2.off" >/dev/null 2>&1
}
step_ms() { # step_ms BACKEND K
    "$BUILD/bin/sinew-bench" --character "$MALE" --backend "$1" --set iterations="$2" \
        --frames 300 --threads 2 2>/dev/null | sed -n 's/.*: \([0-9.]*\) ms per frame median.*/\1/p'
}
# The shared helpers (off_error: the largest vertex distance over the diagonal).
. "$ROOT/samples/bench/figures_common.sh"

echo "| backend | iterations | ms per step | distance from $REFERENCE iterations (of the diagonal) |"
echo "|---|---|---|---|"
: >"$TMP/points"
for backend in ps fps pbd; do
    shape "$backend" "$REFERENCE"
    for k in $COUNTS; do
        shape "$backend" "$k"
        ms=$(step_ms "$backend" "$k")
        err=$(off_error "$TMP/${backend}_$k.off" "$TMP/${backend}_$REFERENCE.off")
        echo "| $backend | $k | $ms | $err |"
        echo "$backend $ms $err $k" >>"$TMP/points"
    done
done
"$BUILD/bin/sinew-plot" --out "$PNG" --log-y --title "MALE, ANIMATION 0, FRAME 40 (LABELS: ITERATIONS)" \
    --x-label "MS PER STEP (2 THREADS)" --y-label "DISTANCE FROM 64 ITERATIONS, OF THE DIAGONAL" <"$TMP/points"
