#!/bin/sh
# run_demo_compare.sh DEMO CHECK OUT W H CHARACTER DATA_DIR COLUMNS CLOSEUPS COLOR [demo
# options...]: runs sinew-demo with the validation layer (any message fails the run) and
# checks its compare.png with compare_check: the size of the layout for COLUMNS backends,
# CLOSEUPS close-up rows and, with COLOR 1, the colour bar; the label band; the close-ups.
# CHARACTER is a path under $SINEW_DATA_DIR (else DATA_DIR), or "procedural". Exit 77 (skip)
# passes through from the demo. SPDX-License-Identifier: MIT
demo=$1 check=$2 out=$3 w=$4 h=$5 character=$6 data=$7 columns=$8 closeups=$9 color=${10}
shift 10
[ "$character" = procedural ] || character="${SINEW_DATA_DIR:-$data}/$character"
rm -rf "$out"
"$demo" --out "$out" --size "${w}x${h}" --character "$character" --validation "$@"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
"$check" "$out/compare.png" "$w" "$h" "$columns" "$closeups" "$color" || exit 1
echo "run_demo_compare.sh: compare.png has the labels, $closeups close-up row(s) and colour" \
     "bar $color"
