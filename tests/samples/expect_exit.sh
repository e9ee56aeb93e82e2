#!/bin/sh
# Runs a command and passes when it exits with the expected code. Exit 77 (the samples' "test
# data missing") is passed through as a skip unless SINEW_REQUIRE_DATA=1.
#   expect_exit.sh EXPECTED_CODE PROGRAM [ARGS...]
# SPDX-License-Identifier: MIT
expected=$1
shift
"$@"
code=$?
if [ "$code" -eq "$expected" ]; then
    echo "exit code $code as expected"
    exit 0
fi
if [ "$code" -eq 77 ] && [ "${SINEW_REQUIRE_DATA:-}" != 1 ]; then
    exit 77
fi
echo "exit code $code, expected $expected" >&2
exit 1
