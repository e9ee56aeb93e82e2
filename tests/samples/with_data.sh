#!/bin/sh
# Runs a sample with `--character` pointing into the test-data folder, resolved when the test
# runs: $SINEW_DATA_DIR when set, else the build's default.
#   with_data.sh RELATIVE_PATH DEFAULT_DATA_DIR PROGRAM [ARGS...]
# SPDX-License-Identifier: MIT
relative=$1
default_dir=$2
shift 2
program=$1
shift
exec "$program" --character "${SINEW_DATA_DIR:-$default_dir}/$relative" "$@"
