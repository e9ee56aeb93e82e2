#!/usr/bin/env bash
# The full quality sweep: sinew-quality over every animation of the test characters (one loop
# and 30 frames after its jump) and a set of static poses, for each backend. Writes one JSON
# file and a Markdown table, and regenerates the marked section of samples/quality/README.md.
# Runs at most --jobs measurements at once, each on one world thread. Plain bash and awk over
# the tool's JSON (one member per line, one line per frame).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../bench/figures_common.sh
. "$ROOT/samples/bench/figures_common.sh"   # replace_section
BIN=$ROOT/build/bin/sinew-quality
OUT=$ROOT/out/quality
README=$ROOT/samples/quality/README.md
DATA=${SINEW_DATA_DIR:-$ROOT/../shared/data}
MODELS=${SINEW_ASSIMP_MODELS_DIR:-/usr/share/assimp/models}
JOBS=$(nproc 2>/dev/null || echo 2)
BACKENDS=(lbs dqs ps fps)
AFTER=30                        # frames measured after each loop's jump
BEGIN_MARK='<!-- quality-sweep:begin -->'
END_MARK='<!-- quality-sweep:end -->'

usage() {
    cat <<EOF
usage: quality_sweep.sh [--bin PATH] [--out DIR] [--readme FILE] [--jobs N]

Runs sinew-quality for backends ${BACKENDS[*]} over every animation of the male, the tbone and
BCN_Epileptic.X (one loop + $AFTER frames) and over the static poses, then writes
DIR/quality.json, DIR/quality.md and the section of FILE between its marker lines.
  --bin PATH     sinew-quality (default build/bin/sinew-quality)
  --out DIR      output folder (default out/quality)
  --readme FILE  README to update (default samples/quality/README.md; "-" for none)
  --jobs N       measurements at once, one thread each (default: the number of cores)
Environment: SINEW_DATA_DIR (test characters), SINEW_ASSIMP_MODELS_DIR.
EOF
}

fail_usage() { echo "quality_sweep.sh: $1" >&2; exit 2; }

parse_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --bin) [ $# -ge 2 ] || fail_usage "--bin needs a value"; BIN=$2; shift 2 ;;
            --out) [ $# -ge 2 ] || fail_usage "--out needs a value"; OUT=$2; shift 2 ;;
            --readme) [ $# -ge 2 ] || fail_usage "--readme needs a value"; README=$2; shift 2 ;;
            --jobs) [ $# -ge 2 ] || fail_usage "--jobs needs a value"; JOBS=$2; shift 2 ;;
            -h|--help) usage; exit 0 ;;
            *) fail_usage "unknown option $1" ;;
        esac
    done
    [[ $JOBS =~ ^[1-9][0-9]{0,2}$ ]] ||
        fail_usage "--jobs \"$JOBS\" is not a whole number in 1..999"
    [ -x "$BIN" ] || fail_usage "$BIN is not an executable (build sinew-quality first)"
    [ "$README" = "-" ] || [ -f "$README" ] || fail_usage "README $README does not exist"
    if [ -d "$DATA" ]; then DATA=$(cd "$DATA" && pwd); fi
}

# The characters by name.
character_path() {
    case "$1" in
        cylinder|tbone|male) echo "$DATA/characters/$1/$1.ini" ;;
        BCN_Epileptic) echo "$MODELS/X/BCN_Epileptic.X" ;;
    esac
}

# The sweeps (character, animation count) and the static poses (character, joint, pose).
SWEEPS=("male 6" "tbone 2" "BCN_Epileptic 1")
# bend:120 at l_elbow turns the forearm backwards (the bend axis of sinew-quality); bend:-120
# is the elbow's own fold. The knee's bend axis swings the shin sideways (bend:120 through
# the other thigh); axis:1:0:0:120 is the knee's own fold, the heel lifted backwards.
POSES=("cylinder joint2 bend:120" "cylinder joint2 bend:135" "cylinder joint2 twist:180"
       "tbone - bend:120" "male l_elbow bend:120" "male l_elbow bend:-120" "male r_knee bend:120"
       "male r_knee bend:-120" "male r_knee axis:1:0:0:120")

# One line per measurement: ID, then sinew-quality's arguments.
job_list() {
    local entry name count k backend joint pose path
    for entry in "${SWEEPS[@]}"; do
        read -r name count <<<"$entry"
        path=$(character_path "$name")
        for ((k = 0; k < count; ++k)); do
            for backend in "${BACKENDS[@]}"; do
                echo "anim.$name.$k.$backend --character $path --backend $backend" \
                     "--pose anim:$k --sweep loop+$AFTER"
            done
        done
    done
    for entry in "${POSES[@]}"; do
        read -r name joint pose <<<"$entry"
        path=$(character_path "$name")
        local joint_args=""
        [ "$joint" = "-" ] || joint_args="--joint $joint"
        for backend in "${BACKENDS[@]}"; do
            echo "pose.$name.$joint.${pose/:/}.$backend --character $path" \
                 "--backend $backend --pose $pose $joint_args"
        done
    done
}

# Runs one measurement into $RUNS/ID.json (stderr beside it, exit code in ID.rc).
run_job() {
    local id=$1; shift
    local rc=0
    "$BIN" "$@" --threads 1 --json >"$RUNS/$id.json" 2>"$RUNS/$id.err" || rc=$?
    echo "$rc" >"$RUNS/$id.rc"
    echo "  $id: exit $rc" >&2
}

# Every measurement, at most $JOBS at once.
run_all() {
    local running=0 line
    while read -r line; do
        # shellcheck disable=SC2086
        run_job $line &
        running=$((running + 1))
        if [ "$running" -ge "$JOBS" ]; then
            wait -n || true
            running=$((running - 1))
        fi
    done < <(job_list)
    wait
}

# ID's exit code: 0 measured, 77 data absent, else failed.
job_rc() { cat "$RUNS/$1.rc" 2>/dev/null || echo 1; }

# A top-level member of a run's JSON ("null" when absent).
json_value() {
    awk -v key="\"$2\":" '$1 == key { v = $2; sub(/,$/, "", v); print v; found = 1; exit }
                          END { if (!found) print "null" }' "$RUNS/$1.json"
}

# The frames of a sweep as "frame pairs max_edge_stretch" lines.
frames_tsv() {
    awk '/^ *\{"frame": / { gsub(/[{}",]/, ""); print $2, $4, $6 }' "$RUNS/$1.json"
}

# "sum worst_excess stretch_ratio" of backend run B against lbs run L, frame by frame.
compare_to_lbs() {
    awk 'NR == FNR { pairs[$1] = $2; stretch[$1] = $3; next }
         { s += $2; d = $2 - pairs[$1]; if (!n++ || d > worst) worst = d
           if ($3 != "null" && stretch[$1] != "null" && stretch[$1] > 0) {
               r = $3 / stretch[$1]; if (!seen++ || r > ratio) ratio = r } }
         END { printf "%d %d %s\n", s, worst, seen ? sprintf("%.3f", ratio) : "null" }' \
        <(frames_tsv "$1") <(frames_tsv "$2")
}

# A number to three decimals, "-" for null.
fmt3() { awk -v v="$1" 'BEGIN { if (v == "null" || v == "") print "-"; else printf "%.3f\n", v }'; }

# The figures of one animation row for one backend, as JSON members, and its Markdown cell.
animation_figures() { # ID LBS_ID -> "json|cell"
    local id=$1 lbs=$2 rc lrc sum worst ratio
    rc=$(job_rc "$id"); lrc=$(job_rc "$lbs")
    if [ "$rc" = 77 ]; then echo 'null|n/a (data absent)'; return; fi
    if [ "$rc" != 0 ] || [ "$lrc" != 0 ]; then echo 'null|failed'; return; fi
    read -r sum worst ratio < <(compare_to_lbs "$lbs" "$id")
    printf '{"sum_pairs": %s, "max_pairs": %s, "worst_excess_over_lbs": %s, ' \
        "$sum" "$(json_value "$id" max_self_intersections)" "$worst"
    printf '"max_stretch_ratio_to_lbs": %s, "max_edge_stretch": %s, "nonfinite_total": %s}' \
        "$ratio" "$(json_value "$id" max_edge_stretch)" "$(json_value "$id" nonfinite_total)"
    printf '|%s / %+d / %s\n' "$sum" "$worst" "$(fmt3 "$ratio")"
}

# The figures of one static pose for one backend, as JSON members, and its Markdown cell.
pose_figures() { # ID -> "json|cell"
    local id=$1 rc volume local_ratio triangles pairs
    rc=$(job_rc "$id")
    if [ "$rc" = 77 ]; then echo 'null|n/a (data absent)'; return; fi
    if [ "$rc" != 0 ]; then echo 'null|failed'; return; fi
    volume=$(json_value "$id" volume_ratio); local_ratio=$(json_value "$id" local_volume_ratio)
    triangles=$(json_value "$id" local_triangles); pairs=$(json_value "$id" self_intersections)
    printf '{"volume_ratio": %s, "local_volume_ratio": %s, "local_triangles": %s, ' \
        "$volume" "$local_ratio" "$triangles"
    printf '"local_radius": %s, "self_intersections": %s, "settled": %s}' \
        "$(json_value "$id" local_radius)" "$pairs" "$(json_value "$id" settled)"
    printf '|%s / %s (%s) / %s\n' "$(fmt3 "$volume")" "$(fmt3 "$local_ratio")" "$triangles" "$pairs"
}

# Appends one row's JSON object to $JSON_ROWS and its Markdown line to $MD_ROWS.
add_row() { # JSON_HEAD MD_HEAD ID_PREFIX KIND
    local json=$1 md=$2 prefix=$3 kind=$4 backend figures sep=""
    json+=", "
    for backend in "${BACKENDS[@]}"; do
        if [ "$kind" = anim ]; then figures=$(animation_figures "$prefix.$backend" "$prefix.lbs")
        else figures=$(pose_figures "$prefix.$backend"); fi
        json+="$sep\"$backend\": ${figures%%|*}"
        md+=" ${figures#*|} |"
        sep=", "
    done
    echo "    {$json}" >>"$JSON_ROWS.$kind"
    echo "$md" >>"$MD_ROWS.$kind"
}

collect_rows() {
    local entry name count k prefix joint pose loop frames head
    : >"$JSON_ROWS.anim"; : >"$JSON_ROWS.pose"; : >"$MD_ROWS.anim"; : >"$MD_ROWS.pose"
    for entry in "${SWEEPS[@]}"; do
        read -r name count <<<"$entry"
        for ((k = 0; k < count; ++k)); do
            prefix="anim.$name.$k"
            loop=null; frames=null
            if [ "$(job_rc "$prefix.lbs")" = 0 ]; then
                loop=$(json_value "$prefix.lbs" loop_frames)
                frames=$(grep -c '^ *{"frame": ' "$RUNS/$prefix.lbs.json" || true)
            fi
            head="\"character\": \"$name\", \"animation\": $k, \"loop_frames\": $loop"
            add_row "$head, \"frames\": $frames" "| $name | $k | $frames |" "$prefix" anim
        done
    done
    for entry in "${POSES[@]}"; do
        read -r name joint pose <<<"$entry"
        prefix="pose.$name.$joint.${pose/:/}"
        [ "$joint" = "-" ] && joint=$(json_value "$prefix.lbs" joint | tr -d '"')
        add_row "\"character\": \"$name\", \"joint\": \"$joint\", \"pose\": \"$pose\"" \
            "| $name | $joint | $pose |" "$prefix" pose
    done
}

# Joins the lines of a file with ",\n".
join_lines() { awk 'NR > 1 { print prev "," } { prev = $0 } END { if (NR) print prev }' "$1"; }

# One run's JSON as the member "ID" of the runs object, indented; "," after all but the last.
embed_run() { # ID LAST
    awk -v id="$1" -v last="$2" 'NR == 1 { printf "    \"%s\": %s", id, $0; next }
                                 { printf "\n    %s", $0 }
                                 END { print last ? "" : "," }' "$RUNS/$1.json"
}

write_json() { # SECONDS
    local ids=() id i
    while read -r id _; do
        [ "$(job_rc "$id")" = 0 ] && ids+=("$id")
    done < <(job_list)
    {
        echo "{"
        echo "  \"tool\": \"sinew-quality\","
        printf '  "backends": ["%s"],\n' "$(printf '%s", "' "${BACKENDS[@]}" | sed 's/", "$//')"
        echo "  \"frames_after_jump\": $AFTER,"
        echo "  \"parallel_jobs\": $JOBS,"
        echo "  \"seconds\": $1,"
        echo "  \"animations\": ["; join_lines "$JSON_ROWS.anim"; echo "  ],"
        echo "  \"poses\": ["; join_lines "$JSON_ROWS.pose"; echo "  ],"
        echo "  \"runs\": {"
        for ((i = 0; i < ${#ids[@]}; ++i)); do
            embed_run "${ids[$i]}" $((i + 1 == ${#ids[@]}))
        done
        echo "  }"
        echo "}"
    } >"$OUT/quality.json"
}

write_markdown() { # SECONDS MEASUREMENTS
    local header="" rule="" backend
    for backend in "${BACKENDS[@]}"; do header+=" $backend |"; rule+="---|"; done
    {
        echo "Generated by \`./sinew.sh quality\` (samples/quality/quality_sweep.sh): $2"
        echo "measurements, $JOBS at once with one world thread each, in $1 s. Pairs are"
        echo "intersecting triangle pairs (\`self_intersections\`); every backend runs with its"
        echo "default parameters."
        echo ""
        echo "Animations, every frame of one loop and the $AFTER frames after its jump. Each cell:"
        echo "pairs summed over the frames / the worst frame's excess over LBS on the same frame /"
        echo "the largest ratio of the frame's \`max_edge_stretch\` to LBS's on the same frame."
        echo ""
        echo "| Character | Animation | Frames |$header"
        echo "|---|---|---|$rule"
        cat "$MD_ROWS.anim"
        echo ""
        echo "Static poses, settled. Each cell: \`volume_ratio\` / \`local_volume_ratio\`"
        echo "(\`local_triangles\`) / pairs; \"-\" where the figure is null (an open mesh, or a"
        echo "region without triangles)."
        echo ""
        echo "| Character | Joint | Pose |$header"
        echo "|---|---|---|$rule"
        cat "$MD_ROWS.pose"
    } >"$OUT/quality.md"
}

# Replaces the lines between the README's marker lines with the Markdown table.
update_readme() {
    [ "$README" = "-" ] && return 0
    replace_section "$README" "$BEGIN_MARK" "$END_MARK" "$OUT/quality.md" quality_sweep.sh
}

main() {
    parse_args "$@"
    mkdir -p "$OUT"
    RUNS=$(mktemp -d "${TMPDIR:-/tmp}/sinew-quality.XXXXXX")
    trap 'rm -rf "$RUNS"' EXIT
    JSON_ROWS=$RUNS/rows.json
    MD_ROWS=$RUNS/rows.md
    local count start seconds failed=0 id
    count=$(job_list | wc -l)
    echo "quality_sweep.sh: $count measurements, $JOBS at once" >&2
    start=$(date +%s)
    run_all
    seconds=$(($(date +%s) - start))
    collect_rows
    write_json "$seconds"
    write_markdown "$seconds" "$count"
    update_readme
    while read -r id _; do
        case "$(job_rc "$id")" in
            0) ;;
            77) echo "quality_sweep.sh: $id skipped: $(tail -1 "$RUNS/$id.err")" >&2 ;;
            *) failed=$((failed + 1))
               echo "quality_sweep.sh: $id failed: $(tail -1 "$RUNS/$id.err")" >&2 ;;
        esac
    done < <(job_list)
    echo "quality_sweep.sh: wrote $OUT/quality.json and $OUT/quality.md in $seconds s" >&2
    [ "$failed" = 0 ]
}

main "$@"
