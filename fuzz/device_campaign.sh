#!/usr/bin/env bash
# A fuzz campaign on the lent 16-core machine, with binaries built here. Two modes:
#
#   fuzz/device_campaign.sh build [DEST]
#       Here (the development machine): builds every target of fuzz/targets.sh with
#       `cargo +nightly fuzz build -O -a -s none` (in $CARGO_TARGET_DIR/fuzz when set, else
#       fuzz/target), strips them, and packs into DEST (default /work/main/.gpu/fuzz, a
#       folder git ignores, carried to the device with `carry: [".gpu"]`): bins.tar.xz (the
#       binaries), seeds/ (fuzz/seeds), this script, targets.sh and COMMIT (the commit built).
#
#   bash .gpu/fuzz/device_campaign.sh run SECONDS [JOBS] [TARGET...]
#       On the device, from the repository root: unpacks the binaries and runs each TARGET
#       (default: all) for SECONDS with JOBS processes (default: every core) sharing one
#       corpus (`-jobs=JOBS -workers=JOBS`), -rss_limit_mb=2048 -timeout=10, TMPDIR on
#       /dev/shm. Prints one line per target:
#           TARGET: JOBS jobs x SECONDS s: E executions, C crashes, peak RSS R MB
#       (E and C summed over the jobs' logs), then writes to $OUT (or ./fuzz-out when OUT
#       is unset): summary.txt (those lines, with the commit), logs.tar.gz (every job's
#       log, every crash input under artifacts/TARGET/) and corpus.tar.gz (the corpora
#       grown, when under 15 MiB; minimise into fuzz/seeds with fuzz/minimize.sh).
#
#   bash .gpu/fuzz/device_campaign.sh run plan [PART] [JOBS]
#       The plan of targets.sh (`PLAN`, `plan_seconds_of`): each target for the seconds that
#       reach 10^7 executions on 16 jobs, scaled by 16/JOBS (JOBS: default every core), cut
#       into pieces of at most 520 s and packed in order into parts of at most 540 s of
#       fuzzing (one call of the `run` tool each, under its 600 s). Without PART it prints the
#       parts and runs nothing (also here: JOBS=128 shows the plan for 128 cores). With PART
#       it runs that part and prints, per target, whether it reached 10^7:
#           TARGET: ... E executions ... | 10^7 reached (or: short by N)
#       A target cut into pieces is run once per piece (each from the seeds): its count is
#       the sum of its pieces' lines, in this part and the others. PIECE_MAX and PART_MAX
#       (seconds) change the 520 and 540 (a short test here).
#
# Every target runs with its flags of targets.sh (`flags_of`: -entropic=0 where it pays).
#
# The lead's commands on the device (carry [".gpu"], timeout_s 600):
#   bash .gpu/fuzz/device_campaign.sh run plan        # here first: how many parts
#   bash .gpu/fuzz/device_campaign.sh run plan 1      # then each part, one call each
#   bash .gpu/fuzz/device_campaign.sh run 35          # every target for 35 s (old style)
set -euo pipefail

mode=${1:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=fuzz/targets.sh
. "$here/targets.sh"

build() {
    local dest=${1:-/work/main/.gpu/fuzz}
    local target_dir=()
    local base=$here/target
    if [ -n "${CARGO_TARGET_DIR:-}" ]; then
        target_dir=(--target-dir "$CARGO_TARGET_DIR/fuzz")
        base=$CARGO_TARGET_DIR/fuzz
    fi
    (cd "$here" && cargo +nightly fuzz build "${target_dir[@]}" -O -a -s none)
    local triple
    triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
    local stage
    stage=$(mktemp -d)
    trap 'rm -rf "$stage"' RETURN
    mkdir -p "$stage/bin"
    for t in "${TARGETS[@]}"; do
        cp "$base/$triple/release/$t" "$stage/bin/$t"
        strip "$stage/bin/$t"
    done
    rm -rf "$dest" && mkdir -p "$dest"
    tar -C "$stage" -cJf "$dest/bins.tar.xz" bin
    cp -r "$here/seeds" "$dest/seeds"
    cp "$here/device_campaign.sh" "$here/targets.sh" "$dest/"
    git -C "$here" rev-parse HEAD >"$dest/COMMIT"
    if ! git -C "$here" diff --quiet HEAD -- "$here/.." 2>/dev/null; then
        echo "(uncommitted changes)" >>"$dest/COMMIT"
    fi
    du -sh "$dest"
    echo "built $(cat "$dest/COMMIT" | head -1) into $dest"
}

# One target's campaign: logs in $work/logs/TARGET, crashes in $work/artifacts/TARGET.
campaign() {
    local t=$1 seconds=$2 jobs=$3 name=${4:-$1} piece=${5:-}
    local logs=$work/logs/$name corpus=$work/corpus/$name art=$work/artifacts/$name
    mkdir -p "$logs" "$corpus" "$art"
    (cd "$logs" && "$work/bin/$t" -jobs="$jobs" -workers="$jobs" \
        -max_total_time="$seconds" -max_len="$(max_len_of "$t")" -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$art/" $(flags_of "$t") \
        "$corpus" "$here/seeds/$t" >main.log 2>&1) || true
    local execs crashes peak
    execs=$(cat "$logs"/fuzz-*.log 2>/dev/null |
        awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
    crashes=$(cat "$logs"/fuzz-*.log 2>/dev/null | grep -c '^SUMMARY: libFuzzer' || true)
    peak=$(cat "$logs"/fuzz-*.log 2>/dev/null |
        awk '/stat::peak_rss_mb/ {if ($2 > m) m = $2} END {print m + 0}')
    local goal=10000000 verdict
    if [ -n "$piece" ]; then
        verdict="$piece: 10^7 is for the sum of its pieces"
    elif [ "$execs" -ge "$goal" ]; then
        verdict="10^7 reached"
    else
        verdict="short of 10^7 by $((goal - execs))"
    fi
    echo "$name: $jobs jobs x $seconds s: $execs executions, $crashes crashes, peak RSS $peak MB | $verdict"
}

# The plan's pieces for JOBS jobs, one line each: PART TARGET SECONDS PIECE PIECES.
plan_pieces() {
    local jobs=$1 piece_max=${PIECE_MAX:-520} part_max=${PART_MAX:-540} overhead=8
    local part=1 used=0 t need n i s
    for t in "${PLAN[@]}"; do
        max_len_of "$t" >/dev/null 2>&1 || continue # not built in this checkout
        need=$(( ($(plan_seconds_of "$t") * 16 + jobs - 1) / jobs ))
        [ "$need" -ge 20 ] || need=20 # libFuzzer reads the seeds first
        n=$(( (need + piece_max - 1) / piece_max ))
        for ((i = 1; i <= n; i++)); do
            s=$(( (need + n - 1) / n ))
            if [ $((used + s + overhead)) -gt "$part_max" ] && [ "$used" -gt 0 ]; then
                part=$((part + 1))
                used=0
            fi
            used=$((used + s + overhead))
            echo "$part $t $s $i $n"
        done
    done
}

# `run plan [PART] [JOBS]`: prints the plan, or runs its part PART.
plan() {
    local part=${1:-} jobs=${2:-${JOBS:-$(nproc)}}
    local pieces
    pieces=$(plan_pieces "$jobs")
    if [ -z "$part" ]; then
        local parts total
        parts=$(echo "$pieces" | awk 'END {print $1}')
        total=$(echo "$pieces" | awk '{s += $3 + 8} END {print s}')
        echo "plan for $jobs jobs: $parts part(s), about $total s of fuzzing in all"
        echo "$pieces" | awk '{printf "  part %s: %-13s %4d s (piece %d of %d)\n", $1, $2, $3, $4, $5}'
        echo "run each part with: bash .gpu/fuzz/device_campaign.sh run plan PART $jobs"
        return 0
    fi
    if ! echo "$pieces" | awk -v p="$part" '$1 == p {found = 1} END {exit !found}'; then
        echo "the plan for $jobs jobs has no part $part (run plan without a part: the parts)" >&2
        rm -rf "$work"
        exit 2
    fi
    echo "$pieces" | awk -v p="$part" '$1 == p {print $2, $3, $4, $5}' | {
        while read -r t s i n; do
            if [ "$n" -eq 1 ]; then
                echo "$t $s $t"
            else
                echo "$t $s $t.piece$i-of-$n piece $i of $n"
            fi
        done
    } >"$work/pieces"
    while read -r t s name piece; do
        campaign "$t" "$s" "$jobs" "$name" "$piece" | tee -a "$summary"
    done <"$work/pieces"
}

run() {
    local seconds=${1:?usage: device_campaign.sh run SECONDS|plan [JOBS] [TARGET...]}
    shift
    if [ "$seconds" = plan ] && [ $# -eq 0 ]; then
        plan # the plan only: nothing to unpack
        return
    fi
    local jobs
    jobs=$(nproc)
    if [ "$seconds" != plan ] && [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
        jobs=$1
        shift
    fi
    local targets=("$@")
    if [ "$seconds" != plan ]; then
        [ ${#targets[@]} -gt 0 ] || targets=("${TARGETS[@]}")
        for t in "${targets[@]}"; do
            known_target "$t" || exit 2
        done
    fi
    out=${OUT:-$PWD/fuzz-out}
    mkdir -p "$out"
    work=$(mktemp -d /dev/shm/fuzz.XXXXXX 2>/dev/null || mktemp -d)
    export TMPDIR=$work/tmp
    mkdir -p "$TMPDIR"
    tar -C "$work" -xJf "$here/bins.tar.xz"
    local summary=$out/summary.txt
    {
        echo "commit $(head -1 "$here/COMMIT" 2>/dev/null || echo unknown)$(sed -n 2p "$here/COMMIT" 2>/dev/null)"
        echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
        echo "started $(date -u +%FT%TZ)"
    } >"$summary"
    if [ "$seconds" = plan ]; then
        plan "${targets[@]}"
    else
        for t in "${targets[@]}"; do
            campaign "$t" "$seconds" "$jobs" | tee -a "$summary"
        done
    fi
    echo "ended $(date -u +%FT%TZ)" >>"$summary"
    tar -C "$work" -czf "$out/logs.tar.gz" logs artifacts
    tar -C "$work" -czf "$out/corpus.tar.gz" corpus
    if [ "$(stat -c %s "$out/corpus.tar.gz")" -gt $((15 << 20)) ]; then
        rm "$out/corpus.tar.gz"
        echo "corpus.tar.gz left out (over 15 MiB)" >>"$summary"
    fi
    find "$work/artifacts" -type f -printf 'artifact: %P\n' >>"$summary"
    rm -rf "$work"
}

case "$mode" in
    build) shift; build "$@" ;;
    run) shift; run "$@" ;;
    *)
        echo "usage: device_campaign.sh build [DEST] | run SECONDS [JOBS] [TARGET...] | run plan [PART] [JOBS]" >&2
        exit 2
        ;;
esac
