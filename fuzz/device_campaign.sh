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
# The lead's command on the device (kind nvidia-h200, carry [".gpu"], timeout_s 600):
#   bash .gpu/fuzz/device_campaign.sh run 35
# runs the 14 targets for 35 s each (about 8.5 minutes) on 16 cores.
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
    local t=$1 seconds=$2 jobs=$3
    local logs=$work/logs/$t corpus=$work/corpus/$t art=$work/artifacts/$t
    mkdir -p "$logs" "$corpus" "$art"
    (cd "$logs" && "$work/bin/$t" -jobs="$jobs" -workers="$jobs" \
        -max_total_time="$seconds" -max_len="$(max_len_of "$t")" -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$art/" \
        "$corpus" "$here/seeds/$t" >main.log 2>&1) || true
    local execs crashes peak
    execs=$(cat "$logs"/fuzz-*.log 2>/dev/null |
        awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
    crashes=$(cat "$logs"/fuzz-*.log 2>/dev/null | grep -c '^SUMMARY: libFuzzer' || true)
    peak=$(cat "$logs"/fuzz-*.log 2>/dev/null |
        awk '/stat::peak_rss_mb/ {if ($2 > m) m = $2} END {print m + 0}')
    echo "$t: $jobs jobs x $seconds s: $execs executions, $crashes crashes, peak RSS $peak MB"
}

run() {
    local seconds=${1:?usage: device_campaign.sh run SECONDS [JOBS] [TARGET...]}
    shift
    local jobs
    jobs=$(nproc)
    if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
        jobs=$1
        shift
    fi
    local targets=("$@")
    [ ${#targets[@]} -gt 0 ] || targets=("${TARGETS[@]}")
    for t in "${targets[@]}"; do
        known_target "$t" || exit 2
    done
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
    for t in "${targets[@]}"; do
        campaign "$t" "$seconds" "$jobs" | tee -a "$summary"
    done
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
        echo "usage: device_campaign.sh build [DEST] | run SECONDS [JOBS] [TARGET...]" >&2
        exit 2
        ;;
esac
