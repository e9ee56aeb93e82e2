#!/bin/sh
# run_demo.sh DEMO PNG_CHECK OUT W H CHARACTER DATA_DIR [demo options...]: runs sinew-demo
# end to end with the validation layer and checks that every PNG it wrote reads back at the
# right size. CHARACTER is a path under $SINEW_DATA_DIR (else DATA_DIR), or "procedural".
# Exit 77 (skip) passes through from the demo: no Vulkan device, or the character file is
# missing. SPDX-License-Identifier: MIT
demo=$1 check=$2 out=$3 w=$4 h=$5 character=$6 data=$7
shift 7
[ "$character" = procedural ] || character="${SINEW_DATA_DIR:-$data}/$character"
rm -rf "$out"
"$demo" --out "$out" --size "${w}x${h}" --character "$character" --validation "$@"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
# compare.png is as wide as a frame and taller (labels and close-ups: run_demo_compare.sh).
"$check" "$out/compare.png" "$w" 0 || exit 1
"$check" "$out/contact_sheet.png" 0 0 || exit 1
n=0
for f in "$out"/frames/frame_*.png; do
    "$check" "$f" "$w" "$h" || exit 1
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "run_demo.sh: no frames in $out/frames" >&2; exit 1; }
echo "run_demo.sh: $n frames, compare.png and contact_sheet.png are valid PNGs"
