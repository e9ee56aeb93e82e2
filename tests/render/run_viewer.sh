#!/bin/sh
# run_viewer.sh VIEWER [viewer options...]: starts sinew-viewer under Xvfb (xvfb-run -a) for a
# few frames with the validation layer. Skips (77) without xvfb-run, a display or a Vulkan
# surface, unless SINEW_REQUIRE_VULKAN=1 makes that a failure. SPDX-License-Identifier: MIT
viewer=$1
shift
if ! command -v xvfb-run >/dev/null 2>&1; then
    if [ "${SINEW_REQUIRE_VULKAN:-0}" = 1 ]; then
        echo "run_viewer.sh: xvfb-run is missing (SINEW_REQUIRE_VULKAN=1)" >&2
        exit 1
    fi
    echo "run_viewer.sh: skipped, xvfb-run is missing (Debian: xvfb xauth)"
    exit 77
fi
exec xvfb-run -a -s "-screen 0 1024x768x24" "$viewer" --validation "$@"
