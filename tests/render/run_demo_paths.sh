#!/bin/sh
# run_demo_paths.sh DEMO PNG_DIFF OUT W H CHARACTER DATA_DIR [demo options...]: runs sinew-demo
# twice with the validation layer, drawing from each skin's Vulkan output buffers (the
# default) and from host arrays (--host-arrays), and checks with png_diff that every image
# (compare.png, contact_sheet.png, each frame) agrees between the two within a mean absolute
# difference of MAX_DIFF. A negative control checks that the same comparison rejects two
# different images (compare.png against the first frame). CHARACTER is a path under
# $SINEW_DATA_DIR (else DATA_DIR), or "procedural". Exit 77 (skip) passes through from the
# demo. SPDX-License-Identifier: MIT
demo=$1 diff=$2 out=$3 w=$4 h=$5 character=$6 data=$7
shift 7
MAX_DIFF=0.001
[ "$character" = procedural ] || character="${SINEW_DATA_DIR:-$data}/$character"
rm -rf "$out"
for path in buffers host; do
    flag=
    [ "$path" = host ] && flag=--host-arrays
    "$demo" --out "$out/$path" --size "${w}x${h}" --character "$character" --validation \
        $flag "$@" > "$out.$path.log" 2>&1
    rc=$?
    cat "$out.$path.log"
    [ "$rc" -eq 0 ] || exit "$rc"
done
# Each run must say which path it drew from, so that the comparison is not of one path twice.
grep -q "drawn from each skin's Vulkan output buffers" "$out.buffers.log" || {
    echo "run_demo_paths.sh: the default run did not draw from output buffers" >&2; exit 1; }
grep -q "drawn from host arrays" "$out.host.log" || {
    echo "run_demo_paths.sh: the --host-arrays run did not draw from host arrays" >&2; exit 1; }
n=0
for f in compare.png contact_sheet.png $(cd "$out/buffers" && ls frames/frame_*.png); do
    "$diff" "$out/buffers/$f" "$out/host/$f" "$MAX_DIFF" || exit 1
    n=$((n + 1))
done
[ -e "$out/buffers/frames" ] && [ "$n" -gt 2 ] || {
    echo "run_demo_paths.sh: no frames in $out/buffers/frames" >&2; exit 1; }
# The host run wrote the same set of frames (none missing on either side).
[ "$(ls "$out/host/frames" | wc -l)" -eq $((n - 2)) ] || {
    echo "run_demo_paths.sh: the two runs wrote different numbers of frames" >&2; exit 1; }
first=$(cd "$out/buffers" && ls frames/frame_*.png | head -n 1)
if "$diff" "$out/buffers/compare.png" "$out/host/$first" "$MAX_DIFF"; then
    echo "run_demo_paths.sh: negative control: compare.png and $first passed as equal" >&2
    exit 1
fi
echo "run_demo_paths.sh: $n images agree between output buffers and host arrays (mean abs" \
     "diff <= $MAX_DIFF); the negative control differs"
