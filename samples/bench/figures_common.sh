# Shell helpers of the README figure scripts (backends/*/figures.sh, bench_report.sh here,
# samples/quality/quality_sweep.sh),
# sourced by them: bench reads BUILD (the build folder), FRAMES and REPEAT from the sourcing
# script. Not run on its own.

# The value of a top-level key of the tools' JSON (one key per line).
json() { sed -n "s/^ *\"$1\": *\([^,]*\),\{0,1\}$/\1/p" | head -n 1; }

# Median ms per frame of backend $1 on character $2 with $3 threads, and each run's median in
# brackets (sinew-bench, REPEAT runs of FRAMES frames); further arguments go to sinew-bench
# (--set KEY=VALUE).
bench() {
    local out
    out=$("$BUILD/bin/sinew-bench" --character "$2" --backend "$1" --threads "$3" \
        --frames "$FRAMES" --repeat "$REPEAT" --json "${@:4}" 2>/dev/null) ||
        { printf 'failed'; return; }
    printf '%.2f (runs %s)' "$(json ms_per_frame_median <<<"$out")" \
        "$(tr -d '\n' <<<"$out" | sed -n 's/.*"run_medians_ms": *\[\([^]]*\)\].*/\1/p' |
           awk -F', *' '{for (i = 1; i <= NF; ++i) printf "%s%.2f", (i > 1 ? " " : ""), $i}')"
}

# The line that opens every generated table: the date, the cores and the load.
measured_line() {
    echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)."
}

# The largest distance between the vertices of two OFF meshes (sinew-quality --positions-out)
# over the second one's bounding-box diagonal.
off_error() {
    python3 - "$1" "$2" <<'PY'
import sys
def read(path):
    words = open(path).read().split()
    assert words[0] == "OFF"
    n = int(words[1])
    v = [tuple(map(float, words[4 + 3 * i:7 + 3 * i])) for i in range(n)]
    return v
a, b = read(sys.argv[1]), read(sys.argv[2])
lo = [min(p[k] for p in b) for k in range(3)]
hi = [max(p[k] for p in b) for k in range(3)]
diag = sum((hi[k] - lo[k]) ** 2 for k in range(3)) ** 0.5
print("%.3g" % (max(sum((p[k] - q[k]) ** 2 for k in range(3)) ** 0.5 for p, q in zip(a, b)) / diag))
PY
}

# Replaces the lines of README $1 between its marker lines $2 and $3 with the contents of file
# $4; $5 names the caller in the error line when a marker is missing (exit status 1).
replace_section() {
    local readme=$1 begin=$2 end=$3 section=$4 who=$5
    if ! grep -qxF "$begin" "$readme" || ! grep -qxF "$end" "$readme"; then
        echo "$who: $readme lacks the lines $begin and $end" >&2
        return 1
    fi
    awk -v begin="$begin" -v end="$end" -v table="$section" '
        $0 == begin { print; while ((getline line < table) > 0) print line; skip = 1; next }
        $0 == end { skip = 0 }
        !skip { print }' "$readme" >"$readme.tmp"
    mv "$readme.tmp" "$readme"
}
