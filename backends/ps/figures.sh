#!/usr/bin/env bash
# The figures of backends/ps/README.md ("Figures"), printed as Markdown: the step time per frame
# of ps on the male (sinew-bench, medians of several runs) with and without its local
# collisions, one and two threads, and where a default step goes (sinew-bench --profile).
#   backends/ps/figures.sh [BUILD_DIR]        (default: $SINEW_BUILD_DIR, else build/)
# Environment: SINEW_DATA_DIR (default ../shared/data beside the checkout), PS_REPEAT (bench
# runs per case, default 5), PS_FRAMES (frames per run, default 300).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-${SINEW_BUILD_DIR:-$ROOT/build}}
DATA=${SINEW_DATA_DIR:-$ROOT/../shared/data}
REPEAT=${PS_REPEAT:-5}
FRAMES=${PS_FRAMES:-300}
MALE=$DATA/characters/male/male.ini

[ -x "$BUILD/bin/sinew-bench" ] || { echo "figures.sh: $BUILD/bin/sinew-bench is not built" >&2; exit 1; }
[ -f "$MALE" ] || { echo "figures.sh: no test data at $DATA" >&2; exit 77; }

# The value of a top-level key of sinew-bench's JSON (one key per line).
json() { sed -n "s/^ *\"$1\": *\([^,]*\),\{0,1\}$/\1/p" | head -n 1; }

# Median ms per frame of ps on the male with $1 threads (and the run medians); further
# arguments go to sinew-bench (--set KEY=VALUE).
bench() {
    local out
    out=$("$BUILD/bin/sinew-bench" --character "$MALE" --backend ps --threads "$1" \
        --frames "$FRAMES" --repeat "$REPEAT" --json "${@:2}" 2>/dev/null) ||
        { printf 'failed'; return; }
    printf '%.2f (runs %s)' "$(json ms_per_frame_median <<<"$out")" \
        "$(tr -d '\n' <<<"$out" | sed -n 's/.*"run_medians_ms": *\[\([^]]*\)\].*/\1/p' |
           awk -F', *' '{for (i = 1; i <= NF; ++i) printf "%s%.2f", (i > 1 ? " " : ""), $i}')"
}

echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "ms per frame (step and upsampling), the male playing its first animation, medians of"
echo "$REPEAT runs of $FRAMES frames (sinew-bench; each run's median in brackets):"
echo
echo "| collisions | 1 thread | 2 threads |"
echo "|---|---|---|"
for collisions in 1 0; do
    printf '| %s | %s | %s |\n' "$collisions" \
        "$(bench 1 --set collisions=$collisions)" "$(bench 2 --set collisions=$collisions)"
done
echo
echo "A default step with 2 threads, per step (\`sinew-bench --profile\`, one run):"
echo
"$BUILD/bin/sinew-bench" --character "$MALE" --backend ps --threads 2 --frames "$FRAMES" \
    --profile 2>&1 | sed -n "s/^sinew info: ps profile: \([0-9]* steps, per step.*\|collisions per step.*\)/    \1/p"
