#!/usr/bin/env bash
# The figures of backends/ps/README.md ("Figures"), as Markdown between its ps-figures markers
# (PS_README=- prints them instead): the step time per frame of ps on the male (sinew-bench,
# medians of several runs) with its defaults, without the joints' volume, without the global
# collisions and without any collisions, one and two threads, and where a default step goes
# (sinew-bench --profile).
#   backends/ps/figures.sh [BUILD_DIR]        (default: $SINEW_BUILD_DIR, else build/)
# Environment: SINEW_DATA_DIR (default ../shared/data beside the checkout), PS_REPEAT (bench
# runs per case, default 5), PS_FRAMES (frames per run, default 300), PS_README (the README to
# write, default backends/ps/README.md; - for standard output).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-${SINEW_BUILD_DIR:-$ROOT/build}}
DATA=${SINEW_DATA_DIR:-$ROOT/../shared/data}
REPEAT=${PS_REPEAT:-5}
FRAMES=${PS_FRAMES:-300}
MALE=$DATA/characters/male/male.ini

[ -x "$BUILD/bin/sinew-bench" ] || { echo "figures.sh: $BUILD/bin/sinew-bench is not built" >&2; exit 1; }
[ -f "$MALE" ] || { echo "figures.sh: no test data at $DATA" >&2; exit 77; }

# The shared helpers: json, bench BACKEND CHARACTER THREADS [ARGS], measured_line,
# replace_section.
. "$ROOT/samples/bench/figures_common.sh"

README=${PS_README:-$ROOT/backends/ps/README.md}

figures() {
measured_line
echo
echo "ms per frame (step and upsampling), the male playing its first animation, medians of"
echo "$REPEAT runs of $FRAMES frames (sinew-bench; each run's median in brackets):"
echo
echo "| collisions (local, global), joint_volume | 1 thread | 2 threads |"
echo "|---|---|---|"
for case in "1 1 1" "1 1 0" "1 0 0" "0 0 0"; do
    set -- $case
    printf '| %s, %s, %s | %s | %s |\n' "$1" "$2" "$3" \
        "$(bench ps "$MALE" 1 --set collisions=$1 --set global_collisions=$2 --set joint_volume=$3)" \
        "$(bench ps "$MALE" 2 --set collisions=$1 --set global_collisions=$2 --set joint_volume=$3)"
done
echo
echo "A default step with 2 threads, per step (\`sinew-bench --profile\`, one run):"
echo
"$BUILD/bin/sinew-bench" --character "$MALE" --backend ps --threads 2 --frames "$FRAMES" \
    --profile 2>&1 | sed -n "s/^sinew info: ps profile: \([0-9]* steps, per step.*\|collisions per step.*\)/    \1/p"
}

if [ "$README" = - ]; then
    figures
else
    out=$(mktemp)
    trap 'rm -f "$out"' EXIT
    figures >"$out"
    replace_section "$README" "<!-- ps-figures:begin -->" "<!-- ps-figures:end -->" "$out" figures.sh
    echo "figures.sh: wrote the figures into $README"
fi
