#!/bin/sh
# Runs sinew-ogre headless under Xvfb and checks the PNG it wrote.
#   run_ogre.sh SINEW_OGRE OUT_DIR PNG_CHECK|- [sinew-ogre options...]
# The frames are drawn offscreen with Mesa's GL; OUT_DIR gets the PNG and OGRE's log. The PNG
# must exist and, when PNG_CHECK (tests/render/png_check) is given, be a 320x240 image of more
# than one colour (sinew-ogre itself fails on a frame without the character). Skips (77)
# without xvfb-run, and passes the sample's 77 (test data missing) through.
# SPDX-License-Identifier: MIT
program=$1
out=$2
png_check=$3
shift 3
if ! command -v xvfb-run >/dev/null 2>&1; then
    echo "run_ogre.sh: skipped, xvfb-run is missing (Debian: xvfb xauth)"
    exit 77
fi
mkdir -p "$out" && rm -f "$out/sinew-ogre.png"
xvfb-run -a -s "-screen 0 640x480x24" "$program" --out "$out" --size 320x240 "$@"
code=$?
if [ "$code" -eq 77 ]; then
    exit 77
fi
if [ "$code" -ne 0 ]; then
    echo "run_ogre.sh: sinew-ogre exited with $code; the end of OGRE's log:" >&2
    tail -n 20 "$out/ogre.log" >&2 2>/dev/null
    exit 1
fi
if [ ! -s "$out/sinew-ogre.png" ]; then
    echo "run_ogre.sh: $out/sinew-ogre.png was not written" >&2
    exit 1
fi
if [ "$png_check" != - ]; then
    "$png_check" "$out/sinew-ogre.png" 320 240 || exit 1
fi
exit 0
