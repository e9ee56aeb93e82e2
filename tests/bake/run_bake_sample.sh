#!/bin/sh
# sinew-bake end to end: bake the cylinder for lbs, then measure the baked file with
# sinew-quality (dqs, twist:90) and time it with sinew-bench. The baked rig is the imported one
# bit for bit, so sinew-quality must report exactly the figures it reports for the .ini.
# Also the exit codes of sinew-bake's error paths.
#   run_bake_sample.sh SINEW_BAKE SINEW_QUALITY SINEW_BENCH DEFAULT_DATA_DIR
# SPDX-License-Identifier: MIT
bake=$1
quality=$2
bench=$3
data=${SINEW_DATA_DIR:-$4}
character=$data/characters/cylinder/cylinder.ini

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect CODE COMMAND...: runs the command (output kept in $dir/out.txt) and checks its exit code.
expect() {
    want=$1
    shift
    "$@" > "$dir/out.txt" 2>&1
    got=$?
    [ "$got" -eq "$want" ] || { cat "$dir/out.txt" >&2; fail "exit $got, expected $want: $*"; }
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/sinew-bake-sample.XXXXXX") || fail "mktemp -d"
trap 'rm -rf "$dir"' EXIT

# Command-line errors need no data.
expect 0 "$bake" --help
grep -q "usage: sinew-bake" "$dir/out.txt" || fail "--help prints no usage"
expect 2 "$bake" --no-such-option
expect 2 "$bake" --character x.ini --backend lbs
expect 2 "$bake" --character x.ini --backend lbs --out
expect 2 "$bake" --character x.ini --backend lbs --out y.sinew --threads 0
expect 2 "$bake" --character x.ini --backend lbs --out y.sinew --set novalue
expect 1 "$bake" --character x.ini --backend no-such-backend --out "$dir/y.sinew"
grep -q "SINEW_ERROR_UNKNOWN_BACKEND" "$dir/out.txt" || fail "unknown backend not named"
expect 77 env SINEW_REQUIRE_DATA=0 "$bake" --character /nonexistent/x.ini --backend lbs \
    --out "$dir/y.sinew"
expect 1 env SINEW_REQUIRE_DATA=1 "$bake" --character /nonexistent/x.ini --backend lbs \
    --out "$dir/y.sinew"
[ ! -e "$dir/y.sinew" ] || fail "a failed run left $dir/y.sinew"

if [ ! -f "$character" ]; then
    [ "${SINEW_REQUIRE_DATA:-}" = 1 ] && fail "$character is missing and SINEW_REQUIRE_DATA=1"
    echo "skipped: $character is missing"
    exit 77
fi

out=$dir/cylinder.sinew
"$bake" --character "$character" --backend lbs --out "$out" > "$dir/summary.txt" \
    2> "$dir/progress.txt" || { cat "$dir/progress.txt" >&2; fail "sinew-bake failed"; }
cat "$dir/progress.txt" "$dir/summary.txt"
for phase in "importing" "imported" "computing automatic weights" "rig created in" \
             "has no bake function" "wrote [0-9]* bytes" "baked and written in" "read back in"; do
    grep -q "$phase" "$dir/progress.txt" || fail "no progress line with \"$phase\""
done
grep -q "rig \"cylinder\" only" "$dir/summary.txt" || fail "summary: $(cat "$dir/summary.txt")"
[ -f "$out" ] || fail "no $out"
[ ! -e "$out.tmp" ] || fail "$out.tmp left behind"

"$quality" --character "$out" --backend dqs --pose twist:90 --json > "$dir/baked.json" ||
    fail "sinew-quality on the baked file failed"
"$quality" --character "$character" --backend dqs --pose twist:90 --json > "$dir/ini.json" ||
    fail "sinew-quality on the character failed"
cat "$dir/baked.json"
grep -q '"nonfinite_vertices": 0' "$dir/baked.json" || fail "non-finite vertices"
grep -q "\"character\": \"$out\"" "$dir/baked.json" || fail "the report does not name $out"
grep -v '"character"' "$dir/baked.json" > "$dir/baked.cut"
grep -v '"character"' "$dir/ini.json" > "$dir/ini.cut"
cmp -s "$dir/baked.cut" "$dir/ini.cut" || {
    diff "$dir/ini.cut" "$dir/baked.cut" >&2
    fail "the baked file measures differently from the character"
}

"$bench" --character "$out" --backend lbs --frames 10 --json > "$dir/bench.json" ||
    fail "sinew-bench on the baked file failed"
grep -q '"ms_per_frame_median": [0-9]' "$dir/bench.json" || fail "sinew-bench printed no timing"

# The baked file baked again (for dqs) from itself; then a corrupt copy is refused.
"$bake" --quiet --character "$out" --backend dqs --out "$dir/again.sinew" > /dev/null ||
    fail "re-baking the baked file failed"
cmp -s "$out" "$dir/again.sinew" || fail "the re-baked rig-only file differs"
# A list of backends without blobs gives the same rig-only file; a name twice is refused.
"$bake" --quiet --character "$character" --backend lbs,dqs --out "$dir/list.sinew" > /dev/null ||
    fail "baking for lbs,dqs failed"
cmp -s "$out" "$dir/list.sinew" || fail "the lbs,dqs file differs from the lbs one"
expect 1 "$bake" --character "$character" --backend lbs,lbs --out "$dir/twice.sinew"
grep -q "named twice" "$dir/out.txt" || fail "a repeated backend is not named"
cp "$out" "$dir/bad.sinew"
printf 'X' | dd of="$dir/bad.sinew" bs=1 seek=100 conv=notrunc 2> /dev/null
expect 1 "$quality" --character "$dir/bad.sinew" --backend dqs --pose twist:90
grep -q "checksum" "$dir/out.txt" || fail "corrupt file: no checksum line"
echo "sinew-bake end to end: ok"
