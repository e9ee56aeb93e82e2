#!/usr/bin/env bash
# The benchmark set: sinew-bench for every backend on every test character with each thread
# count, in interleaved rounds (each round runs every measurement once, so a drifting clock
# touches them alike; a figure is the median of the rounds' medians), then a crowd of males on
# fps in one world. Writes one JSON file and a PNG plot of step time against simulated vertices
# per backend, and regenerates the marked section of README.md. `./sinew.sh bench` runs it; it
# is not part of `./sinew.sh test`. Plain bash and awk over sinew-bench's JSON (one member per
# line).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=figures_common.sh
. "$ROOT/samples/bench/figures_common.sh"   # json, replace_section
BIN=$ROOT/build/bin
OUT=$ROOT/out/bench
PNG=$ROOT/samples/bench/step_time.png
README=$ROOT/README.md
DATA=${SINEW_DATA_DIR:-$ROOT/../shared/data}
MODELS=${SINEW_ASSIMP_MODELS_DIR:-/usr/share/assimp/models}
BACKENDS=lbs,dqs,ps,fps,pbd,vk-lbs,vk-dqs,fps-cuda
CHARACTERS=cylinder,tbone,BCN_Epileptic,male
THREADS=1,2
ROUNDS=3
FRAMES=60
CROWD=64
CROWD_BACKEND=fps
CROWD_CHARACTER=male
CROWD_FRAMES=20
BEGIN_MARK='<!-- bench-report:begin -->'
END_MARK='<!-- bench-report:end -->'
# sinew-bench's codes for a backend that cannot run here (no device, not built, probe says no)
SKIP_CODES='SINEW_ERROR_(UNKNOWN_BACKEND|BACKEND_UNAVAILABLE|NO_DEVICE|UNSUPPORTED)'

usage() {
    cat <<EOF
usage: bench_report.sh [options]

Runs sinew-bench for each backend on each character with each thread count, ROUNDS rounds of
FRAMES frames (after 10 warm-up frames), then a crowd of N characters in one world; writes
DIR/bench.json, the plot PNG and the section of FILE between its marker lines.
  --bin DIR              folder of sinew-bench and sinew-plot (default build/bin)
  --out DIR              output folder (default out/bench)
  --png FILE             the plot (default samples/bench/step_time.png)
  --readme FILE          README to update (default README.md; "-" for none)
  --backends LIST        comma-separated (default $BACKENDS); one that cannot
                         run here is skipped with its reason in the report
  --characters LIST      cylinder, tbone, male, BCN_Epileptic (default $CHARACTERS)
  --threads LIST         world threads, comma-separated (default $THREADS); the plot shows the first
  --rounds R             interleaved rounds (default $ROUNDS)
  --frames F             timed frames per measurement (default $FRAMES)
  --crowd N              characters of the crowd (default $CROWD; 0: no crowd)
  --crowd-backend NAME   the crowd's backend (default $CROWD_BACKEND)
  --crowd-character NAME the crowd's character (default $CROWD_CHARACTER)
  --crowd-frames F       timed frames of the crowd (default $CROWD_FRAMES)
Environment: SINEW_DATA_DIR (test characters), SINEW_ASSIMP_MODELS_DIR.
EOF
}

fail_usage() { echo "bench_report.sh: $1" >&2; exit 2; }

# A whole number in [MIN, 100000] or a usage error naming OPTION.
count_arg() { # OPTION VALUE MIN
    if ! [[ $2 =~ ^[0-9]{1,6}$ ]] || [ "$2" -lt "$3" ] || [ "$2" -gt 100000 ]; then
        fail_usage "$1 \"$2\" is not a whole number in $3..100000"
    fi
}

# A comma-separated list of words made of letters, digits, '_' and '-', or a usage error.
list_arg() { # OPTION VALUE
    [[ $2 =~ ^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+)*$ ]] ||
        fail_usage "$1 \"$2\" is not a comma-separated list of names"
}

parse_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
            -h|--help) usage; exit 0 ;;
            --*) [ $# -ge 2 ] || fail_usage "$1 needs a value" ;;
        esac
        case "$1" in
            --bin) BIN=$2 ;;
            --out) OUT=$2 ;;
            --png) PNG=$2 ;;
            --readme) README=$2 ;;
            --backends) list_arg "$1" "$2"; BACKENDS=$2 ;;
            --characters) list_arg "$1" "$2"; CHARACTERS=$2 ;;
            --threads) list_arg "$1" "$2"; THREADS=$2 ;;
            --rounds) count_arg "$1" "$2" 1; ROUNDS=$2 ;;
            --frames) count_arg "$1" "$2" 1; FRAMES=$2 ;;
            --crowd) count_arg "$1" "$2" 0; CROWD=$2 ;;
            --crowd-backend) list_arg "$1" "$2"; CROWD_BACKEND=$2 ;;
            --crowd-character) list_arg "$1" "$2"; CROWD_CHARACTER=$2 ;;
            --crowd-frames) count_arg "$1" "$2" 1; CROWD_FRAMES=$2 ;;
            *) fail_usage "unknown option $1" ;;
        esac
        shift 2
    done
    local name t
    for t in ${THREADS//,/ }; do count_arg --threads "$t" 1; done
    for name in ${CHARACTERS//,/ } $CROWD_CHARACTER; do
        [ -n "$(character_path "$name")" ] || fail_usage "no character named $name"
    done
    for t in sinew-bench sinew-plot; do
        [ -x "$BIN/$t" ] || fail_usage "$BIN/$t is not an executable (build it first)"
    done
    [ "$README" = "-" ] || [ -f "$README" ] || fail_usage "README $README does not exist"
}

character_path() {
    case "$1" in
        cylinder|tbone|male) echo "$DATA/characters/$1/$1.ini" ;;
        BCN_Epileptic) echo "$MODELS/X/BCN_Epileptic.X" ;;
    esac
}

# A top-level member of a run's JSON (json of figures_common.sh), "null" when absent.
member() { # FILE KEY
    local value
    value=$(json "$2" <"$1")
    echo "${value:-null}"
}

# One sinew-bench run into $RUNS/ID.json, its stderr in ID.err, its exit code in ID.rc.
bench_run() { # ID ARGS...
    local id=$1 rc=0
    shift
    "$BIN/sinew-bench" "$@" --json >"$RUNS/$id.json" 2>"$RUNS/$id.err" || rc=$?
    echo "$rc" >"$RUNS/$id.rc"
    return "$rc"
}

# The backends that run here: each tried for one frame on the first character with data; one
# that fails with a code of SKIP_CODES is left out, its reason kept in $RUNS/skipped.
probe_backends() {
    local backend name path="" reason
    for name in ${CHARACTERS//,/ }; do
        [ -f "$(character_path "$name")" ] && { path=$(character_path "$name"); break; }
    done
    RUNNABLE=()
    for backend in ${BACKENDS//,/ }; do
        if [ -z "$path" ] || bench_run "probe.$backend" --character "$path" --backend "$backend" \
            --frames 1 --threads 1 || ! grep -Eq "$SKIP_CODES" "$RUNS/probe.$backend.err"; then
            RUNNABLE+=("$backend")
        else
            reason=$(grep -E "$SKIP_CODES" "$RUNS/probe.$backend.err" | tail -n 1)
            echo "$backend|$reason" >>"$RUNS/skipped"
            echo "bench_report.sh: $backend skipped: $reason" >&2
        fi
    done
}

# Every measurement of one round: character, backend, threads.
run_round() { # ROUND
    local name backend t id rc
    for name in ${CHARACTERS//,/ }; do
        for backend in "${RUNNABLE[@]}"; do
            for t in ${THREADS//,/ }; do
                id="$name.$backend.$t.r$1"
                rc=0
                bench_run "$id" --character "$(character_path "$name")" --backend "$backend" \
                    --threads "$t" --frames "$FRAMES" || rc=$?
                if [ "$rc" = 77 ] && ! grep -q "^$name|" "$RUNS/skipped"; then
                    echo "$name|$(tail -n 1 "$RUNS/$id.err")" >>"$RUNS/skipped"
                elif [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
                    echo "bench_report.sh: $id failed: $(tail -n 1 "$RUNS/$id.err")" >&2
                fi
            done
        done
    done
}

# The median of the numbers on stdin, one per line ("null" for none).
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "null"; else if (NR % 2) print v[(NR + 1) / 2]
                                       else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# KEY of every round's run of PREFIX that succeeded, one per line.
round_values() { # PREFIX KEY
    local r
    for ((r = 1; r <= ROUNDS; ++r)); do
        [ "$(cat "$RUNS/$1.r$r.rc" 2>/dev/null)" = 0 ] && member "$RUNS/$1.r$r.json" "$2"
    done
    return 0
}

# One result: backend, character, threads, the rounds' medians and their median; the memory
# figures are medians over the rounds too. Appends a JSON object to $RUNS/results.
collect_one() { # CHARACTER BACKEND THREADS
    local prefix="$1.$2.$3" ms rounds first="" r
    for ((r = ROUNDS; r >= 1; --r)); do
        [ "$(cat "$RUNS/$prefix.r$r.rc" 2>/dev/null)" = 0 ] && first=$RUNS/$prefix.r$r.json
    done
    [ -n "$first" ] || return 0
    ms=$(round_values "$prefix" ms_per_frame_median | median)
    rounds=$(round_values "$prefix" ms_per_frame_median | paste -sd, - | sed 's/,/, /g')
    printf '    {"backend": "%s", "character": "%s", "threads": %s, "vertices": %s, ' \
        "$2" "$1" "$(member "$first" threads)" "$(member "$first" vertices)"
    printf '"simulated_vertices": %s, "ms_per_frame_median": %s, "round_medians_ms": [%s], ' \
        "$(member "$first" simulated_vertices)" "$ms" "$rounds"
    printf '"prepare_ms": %s, "resident_bytes_per_character": %s, ' \
        "$(round_values "$prefix" prepare_ms | median)" \
        "$(round_values "$prefix" resident_bytes_per_character | median)"
    printf '"allocated_bytes_per_character": %s, "rig_resident_bytes": %s}\n' \
        "$(round_values "$prefix" allocated_bytes_per_character | median)" \
        "$(round_values "$prefix" rig_resident_bytes | median)"
}

collect_results() {
    local name backend t
    : >"$RUNS/results"
    for name in ${CHARACTERS//,/ }; do
        for backend in "${RUNNABLE[@]}"; do
            for t in ${THREADS//,/ }; do collect_one "$name" "$backend" "$t" >>"$RUNS/results"; done
        done
    done
}

# A member of one result line of $RUNS/results.
field() { # LINE KEY
    sed -n "s/.*\"$2\": \(\[[^]]*\]\|\"[^\"]*\"\|[^,}]*\).*/\1/p" <<<"$1" | tr -d '"'
}

# The plot: one series per backend (in the order of --backends), the first thread count,
# points in order of vertices; a character's name labels the lowest of the points it shares a
# vertex count with.
write_plot() {
    local t=${THREADS%%,*} line i
    while read -r line; do
        [ "$(field "$line" threads)" = "$t" ] || continue
        for i in "${!RUNNABLE[@]}"; do [ "${RUNNABLE[$i]}" = "$(field "$line" backend)" ] && break; done
        echo "$i $(field "$line" backend) $(field "$line" simulated_vertices)" \
             "$(field "$line" ms_per_frame_median) $(field "$line" character | cut -c1-8)"
    done <"$RUNS/results" | sort -k3,3n -k4,4g |
        awk '{ key = $5 " " $3; if (key in seen) $5 = ""; seen[key] = 1; print }' |
        sort -k1,1n -k3,3n | cut -d' ' -f2- >"$RUNS/points"
    [ -s "$RUNS/points" ] || { echo "bench_report.sh: nothing measured, no plot" >&2; return 1; }
    mkdir -p "$(dirname "$PNG")"
    "$BIN/sinew-plot" --out "$PNG" --log-y \
        --title "STEP TIME, $(threads_words "$t" | tr '[:lower:]' '[:upper:]'), MEDIANS OF $ROUNDS ROUNDS" \
        --x-label "SIMULATED VERTICES" --y-label "MS PER STEP" <"$RUNS/points"
}

figure() { awk -v v="$1" 'BEGIN { printf (v >= 100 ? "%.0f\n" : "%.3g\n"), v }'; }

threads_words() { if [ "$1" = 1 ]; then echo "1 thread"; else echo "$1 threads"; fi; }

# A whole number of bytes as MiB with two decimals, "-" for null.
mib() { awk -v v="$1" 'BEGIN { if (v == "null" || v == "") print "-"; else printf "%.2f\n", v / 1048576 }'; }

# The Markdown section: the table of results, the crowd's line and the skipped backends.
write_markdown() { # SECONDS LOAD_BEFORE
    local name backend t line cells ms
    {
        echo "Generated by \`./sinew.sh bench\` (samples/bench/bench_report.sh) in $1 s."
        echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores, load average $2 at the start and"
        echo "$(cut -d' ' -f1-3 /proc/loadavg) at the end; the machine is shared, so single figures move"
        echo "by tens of percent. Each step time is the median of $ROUNDS interleaved rounds, each the"
        echo "median of $FRAMES frames after 10 warm-up frames (ms per \`sinew_world_update\` of one"
        echo "character at 60 Hz, its first animation; BCN_Epileptic's is 3.3 s). Memory per"
        echo "character: the growth of the process's resident memory over the skin's preparation"
        echo "(MiB; the shared rig apart), and in brackets what the runtime holds through the"
        echo "world's allocator (CHOLMOD's factors and device memory not in it)."
        echo ""
        printf '| character | backend | vertices (simulated) |'
        for t in ${THREADS//,/ }; do printf ' ms per step, %s |' "$(threads_words "$t")"; done
        echo " MiB per character |"
        printf '|---|---|---|'
        for t in ${THREADS//,/ }; do printf -- '---|'; done
        echo "---|"
        for name in ${CHARACTERS//,/ }; do
            for backend in "${RUNNABLE[@]}"; do
                line=$(grep -F "\"backend\": \"$backend\", \"character\": \"$name\"," \
                       "$RUNS/results" | head -n 1) || true
                [ -n "$line" ] || continue
                cells=""
                for t in ${THREADS//,/ }; do
                    ms=$(grep -F "\"backend\": \"$backend\", \"character\": \"$name\", \"threads\": $t," \
                         "$RUNS/results" | head -n 1) || true
                    if [ -n "$ms" ]; then
                        ms=$(awk -v v="$(field "$ms" ms_per_frame_median)" 'BEGIN { printf "%.3f", v }')
                    else
                        ms="-"
                    fi
                    cells+=" $ms |"
                done
                echo "| $name | $backend | $(field "$line" vertices) ($(field "$line" simulated_vertices)) |$cells" \
                     "$(mib "$(field "$line" resident_bytes_per_character)")" \
                     "($(mib "$(field "$line" allocated_bytes_per_character)")) |"
            done
        done
        write_crowd_line
        if [ -s "$RUNS/skipped" ]; then
            echo ""
            while IFS='|' read -r backend line; do
                echo "Skipped $backend: \`$line\`"
                echo ""
            done <"$RUNS/skipped"
        fi
        [ -s "$RUNS/skipped" ] || echo ""
        echo "![Step time against simulated vertices]($(realpath -m --relative-to="$(dirname "$README_PATH")" "$PNG"))"
    } >"$OUT/bench.md"
}

write_crowd_line() {
    local c=$RUNS/crowd.json
    [ "$CROWD" -gt 0 ] || return 0
    echo ""
    if [ "$(cat "$RUNS/crowd.rc" 2>/dev/null)" != 0 ]; then
        echo "Crowd of $CROWD $CROWD_CHARACTER on $CROWD_BACKEND: failed (\`$(tail -n 1 "$RUNS/crowd.err")\`)."
        return 0
    fi
    echo "Crowd: $CROWD ${CROWD_CHARACTER}s on $CROWD_BACKEND in one world," \
         "$(threads_words "$(member "$c" threads)"), median of $CROWD_FRAMES frames:" \
         "$(figure "$(member "$c" ms_per_frame_median)") ms per frame," \
         "$(figure "$(member "$c" ms_per_character_median)") ms per character;" \
         "$(mib "$(member "$c" resident_bytes_per_character)")" \
         "MiB resident per character, $(mib "$(member "$c" characters_resident_bytes)") MiB for all" \
         "(the rig $(mib "$(member "$c" rig_resident_bytes)") MiB), peak resident" \
         "$(mib "$(member "$c" peak_resident_bytes)") MiB for the whole process."
}

# Joins the lines of a file with ",\n".
join_lines() { awk 'NR > 1 { print prev "," } { prev = $0 } END { if (NR) print prev }' "$1"; }

quote_list() { printf '"%s"' "${1//,/\", \"}"; }

write_json() { # SECONDS LOAD_BEFORE
    local backend reason sep=""
    {
        echo "{"
        echo "  \"tool\": \"sinew-bench\","
        echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
        echo "  \"cores\": $(nproc),"
        echo "  \"load_average_start\": \"$2\","
        echo "  \"load_average_end\": \"$(cut -d' ' -f1-3 /proc/loadavg)\","
        echo "  \"seconds\": $1,"
        echo "  \"rounds\": $ROUNDS,"
        echo "  \"frames\": $FRAMES,"
        echo "  \"backends\": [$(quote_list "$BACKENDS")],"
        echo "  \"characters\": [$(quote_list "$CHARACTERS")],"
        echo "  \"threads\": [${THREADS//,/, }],"
        printf '  "skipped": ['
        if [ -s "$RUNS/skipped" ]; then
            while IFS='|' read -r backend reason; do
                printf '%s{"what": "%s", "reason": "%s"}' "$sep" "$backend" "${reason//\"/\'}"
                sep=", "
            done <"$RUNS/skipped"
        fi
        echo "],"
        echo "  \"results\": ["
        join_lines "$RUNS/results"
        echo "  ],"
        if [ "$CROWD" -gt 0 ] && [ "$(cat "$RUNS/crowd.rc" 2>/dev/null)" = 0 ]; then
            printf '  "crowd": '
            awk 'NR > 1 { printf "\n  " } { printf "%s", $0 } END { print "" }' "$RUNS/crowd.json"
        else
            echo "  \"crowd\": null"
        fi
        echo "}"
    } >"$OUT/bench.json"
}

# Replaces the lines between the README's marker lines with the Markdown section.
update_readme() {
    [ "$README" = "-" ] && return 0
    replace_section "$README" "$BEGIN_MARK" "$END_MARK" "$OUT/bench.md" bench_report.sh
}

run_crowd() {
    [ "$CROWD" -gt 0 ] || return 0
    echo "bench_report.sh: crowd of $CROWD $CROWD_CHARACTER on $CROWD_BACKEND" >&2
    bench_run crowd --character "$(character_path "$CROWD_CHARACTER")" \
        --backend "$CROWD_BACKEND" --characters "$CROWD" --frames "$CROWD_FRAMES" \
        --threads "${THREADS##*,}" ||
        echo "bench_report.sh: the crowd failed: $(tail -n 1 "$RUNS/crowd.err")" >&2
}

main() {
    parse_args "$@"
    README_PATH=$README
    [ "$README" != "-" ] || README_PATH=$OUT/bench.md
    mkdir -p "$OUT"
    RUNS=$(mktemp -d "${TMPDIR:-/tmp}/sinew-bench.XXXXXX")
    trap 'rm -rf "$RUNS"' EXIT
    : >"$RUNS/skipped"
    local start load r seconds
    start=$(date +%s)
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    echo "bench_report.sh: $(nproc) cores, load average $load; the machine may be shared, so" \
         "figures move from run to run" >&2
    probe_backends
    echo "bench_report.sh: ${#RUNNABLE[@]} backends x characters $CHARACTERS x threads $THREADS," \
         "$ROUNDS rounds of $FRAMES frames (fewer than sinew-bench's default 600, to keep" \
         "the set short)" >&2
    for ((r = 1; r <= ROUNDS; ++r)); do
        echo "bench_report.sh: round $r of $ROUNDS" >&2
        run_round "$r"
    done
    run_crowd
    seconds=$(($(date +%s) - start))
    collect_results
    write_json "$seconds" "$load"
    write_plot
    write_markdown "$seconds" "$load"
    update_readme
    echo "bench_report.sh: wrote $OUT/bench.json, $OUT/bench.md and $PNG in $seconds s" >&2
}

main "$@"
