#!/usr/bin/env bash
# The figures of backends/fps/README.md ("Figures"), as Markdown between its fps-figures markers
# (FPS_README=- prints them instead): the reduced system's solvers on the male
# (sinew-fps-solver-bench) and the step time per frame (sinew-bench, medians of several runs)
# with its defaults, without the joints' volume and without collisions, each solver, one and
# two threads.
#   backends/fps/figures.sh [BUILD_DIR]       (default: $SINEW_BUILD_DIR, else build/)
# Environment: SINEW_DATA_DIR (default ../shared/data beside the checkout), FPS_REPEAT (bench
# runs per case, default 5), FPS_FRAMES (frames per run, default 300), FPS_README (the README to
# write, default backends/fps/README.md; - for standard output).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-${SINEW_BUILD_DIR:-$ROOT/build}}
DATA=${SINEW_DATA_DIR:-$ROOT/../shared/data}
REPEAT=${FPS_REPEAT:-5}
FRAMES=${FPS_FRAMES:-300}
MALE=$DATA/characters/male/male.ini

for tool in sinew-bench sinew-fps-solver-bench; do
    [ -x "$BUILD/bin/$tool" ] || { echo "figures.sh: $BUILD/bin/$tool is not built" >&2; exit 1; }
done
[ -f "$MALE" ] || { echo "figures.sh: no test data at $DATA" >&2; exit 77; }

# The shared helpers: json, bench BACKEND CHARACTER THREADS [ARGS], measured_line,
# replace_section.
. "$ROOT/samples/bench/figures_common.sh"

README=${FPS_README:-$ROOT/backends/fps/README.md}

figures() {
measured_line
echo
echo "The reduced system of the male, one thread, medians of 200 (sinew-fps-solver-bench):"
echo
"$BUILD/bin/sinew-fps-solver-bench" "$MALE" 2>/dev/null | sed "s|^$MALE: ||; s/^/    /"
echo
echo "ms per frame (step and MLS upsampling), the male playing its first animation, medians of"
echo "$REPEAT runs of $FRAMES frames (sinew-bench; each run's median in brackets):"
echo
echo "| solver | collisions | joint_volume | 1 thread | 2 threads |"
echo "|---|---|---|---|---|"
for case in "cholmod 1 1.4" "cholmod 1 0" "cholmod 0 0" "pcg 1 1.4" "pcg 0 0"; do
    set -- $case
    printf '| %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" \
        "$(bench fps "$MALE" 1 --set solver=$1 --set collisions=$2 --set joint_volume=$3)" \
        "$(bench fps "$MALE" 2 --set solver=$1 --set collisions=$2 --set joint_volume=$3)"
done
}

if [ "$README" = - ]; then
    figures
else
    out=$(mktemp)
    trap 'rm -f "$out"' EXIT
    figures >"$out"
    replace_section "$README" "<!-- fps-figures:begin -->" "<!-- fps-figures:end -->" "$out" figures.sh
    echo "figures.sh: wrote the figures into $README"
fi
