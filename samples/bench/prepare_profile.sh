#!/usr/bin/env bash
# Where the time of the volumetric backends goes, phase by phase: runs `sinew-bench --profile`
# per backend and prints the two markdown tables of samples/bench/README.md ("Profile"): the
# preparation on each test character (the backends' "profile: preparation" lines) and the
# step on the male over 300 frames (their per-step lines).
#   samples/bench/prepare_profile.sh [--bin PATH] [--data DIR] [--threads T]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$ROOT/build/bin/sinew-bench
DATA=${SINEW_DATA_DIR:-$ROOT/../shared/data}
THREADS=2
while [ $# -gt 0 ]; do
    case $1 in
        --bin) BIN=$2; shift 2 ;;
        --data) DATA=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        *) echo "prepare_profile.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
echo "| character | backend | prepare_ms | decimation | weld | skeleton | shrinking | sliding | tissue | upsampling | collision candidates | MLS weights | system |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for character in cylinder tbone male; do
    for backend in ps fps pbd; do
        out=$("$BIN" --character "$DATA/characters/$character/$character.ini" --backend "$backend" \
              --frames 1 --threads "$THREADS" --profile 2>&1)
        line=$(grep -m1 "$backend profile: preparation" <<<"$out")
        prepared=$(sed -n 's/.*prepared in \([0-9.]*\) ms.*/\1/p' <<<"$out")
        # "... decimation 0.0, weld 0.7, ..." -> "| 0.0 | 0.7 | ..."
        phases=$(sed 's/.*ms: //; s/[a-zA-Z ]* \([0-9.]*\)/\1/g; s/,/ | /g' <<<"$line")
        echo "| $character | $backend | $prepared | $phases |"
    done
done
echo
echo "| backend (male, $THREADS threads, 300 frames) | ms per frame, median | the backend's per-step profile |"
echo "|---|---|---|"
for backend in ps fps pbd; do
    out=$("$BIN" --character "$DATA/characters/male/male.ini" --backend "$backend" --frames 300 \
          --threads "$THREADS" --profile 2>&1)
    median=$(sed -n 's/.*: \([0-9.]*\) ms per frame median.*/\1/p' <<<"$out")
    steps=$(grep "$backend profile: [0-9]* steps, per step" <<<"$out" | sed 's/.*per step: //' |
            paste -sd ';' -)
    echo "| $backend | $median | $steps |"
done
