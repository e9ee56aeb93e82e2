#!/bin/sh
# The benchmark report's whole path on a tiny case: the cylinder with lbs, one round of five
# frames and a crowd of four, written into WORK. Checks that the JSON parses, that the plot is
# a 900 x 600 PNG, that the README section was replaced by the table, and that the memory
# figures are positive and grow with the number of characters. No timing is checked.
#   bench_report_check.sh SCRIPT BIN_DIR PNG_CHECK CMAKE WORK DEFAULT_DATA_DIR
# SPDX-License-Identifier: MIT
set -eu
script=$1 bin=$2 png_check=$3 cmake=$4 work=$5
SINEW_DATA_DIR=${SINEW_DATA_DIR:-$6}
export SINEW_DATA_DIR
if [ ! -f "$SINEW_DATA_DIR/characters/cylinder/cylinder.ini" ]; then
    echo "bench_report_check.sh: no cylinder in $SINEW_DATA_DIR" >&2
    [ "${SINEW_REQUIRE_DATA:-0}" = 1 ] && exit 1
    exit 77
fi
rm -rf "$work"
mkdir -p "$work"
printf '# t\n<!-- bench-report:begin -->\nold\n<!-- bench-report:end -->\n' >"$work/README.md"
bash "$script" --bin "$bin" --out "$work" --png "$work/plot.png" --readme "$work/README.md" \
    --backends lbs --characters cylinder --threads 1 --rounds 1 --frames 5 \
    --crowd 4 --crowd-backend lbs --crowd-character cylinder --crowd-frames 5
"$png_check" "$work/plot.png" 900 600
grep -q '^| cylinder | lbs | 800 (800) | [0-9.]* | [0-9.]* ([0-9.]*) |$' "$work/README.md" ||
    { echo "bench_report_check.sh: no table row in $work/README.md" >&2; exit 1; }
if grep -qx old "$work/README.md"; then
    echo "bench_report_check.sh: the README section was not replaced" >&2
    exit 1
fi
"$cmake" -DJSON="$work/bench.json" -P "$(dirname "$0")/bench_report_check.cmake"
echo "bench report: JSON, plot and README section written"
