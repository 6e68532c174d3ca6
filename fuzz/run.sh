#!/usr/bin/env bash
# A fuzz campaign for one target: fuzz/run.sh TARGET SECONDS [more libFuzzer flags]
#
# Targets: see fuzz/targets.sh (every target in Cargo.toml) and fuzz/README.md.
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# The working corpus grows in fuzz/corpus/TARGET (not committed); fuzz/seeds/TARGET is read
# only. Crashes land in fuzz/artifacts/TARGET. Builds go to $CARGO_TARGET_DIR/fuzz when
# CARGO_TARGET_DIR is set, else fuzz/target. One process, one core: fits a 2-core machine.
# The last lines printed are libFuzzer's final stats (stat::number_of_executed_units ...).
#
# JOBS=N runs N processes at once on one shared corpus (libFuzzer's -jobs/-workers), each
# for SECONDS; their logs go to fuzz/logs/TARGET/ and the script ends with the total:
# `TARGET: N jobs x SECONDS s: E executions, C crashes, peak RSS R MB`. TMPDIR defaults to
# /dev/shm (a tmpfs) for the targets that write every input to a scratch file.
set -euo pipefail
cd "$(dirname "$0")"
if [ $# -lt 2 ]; then
    echo "usage: fuzz/run.sh TARGET SECONDS [libFuzzer flags]" >&2
    exit 2
fi
target=$1
seconds=$2
shift 2
# shellcheck source=fuzz/targets.sh
. ./targets.sh
known_target "$target" || exit 2
max_len=$(max_len_of "$target")
target_dir=()
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    target_dir=(--target-dir "$CARGO_TARGET_DIR/fuzz")
fi
mkdir -p "corpus/$target"
# Scratch files (nsys, ranks, export, compare, audit, kineto_paths write each input to one) in
# memory unless TMPDIR says otherwise.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    export TMPDIR=/dev/shm
fi
# -O -a: optimised, with debug assertions and overflow checks; -s none: no ASan (the
# library has no unsafe parsing code; ASan would halve the speed).
# Plus the target's own flags of targets.sh (`flags_of`: -entropic=0 where it pays); a flag
# given on the command line comes later and wins.
read -r -a own <<<"$(flags_of "$target")"
flags=(-max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 -timeout=10
       -print_final_stats=1 "${own[@]}")
jobs=${JOBS:-1}
if [ "$jobs" -le 1 ]; then
    exec cargo +nightly fuzz run "${target_dir[@]}" -O -a -s none "$target" \
        "corpus/$target" "seeds/$target" -- "${flags[@]}" "$@"
fi
logs=logs/$target
rm -rf "$logs" && mkdir -p "$logs" "artifacts/$target"
# libFuzzer writes fuzz-<job>.log into the working directory: run from the log folder.
cargo +nightly fuzz build "${target_dir[@]}" -O -a -s none "$target"
base=${CARGO_TARGET_DIR:+$CARGO_TARGET_DIR/fuzz}
bin=$(ls "${base:-$PWD/target}"/*/release/"$target")
here=$PWD
(cd "$logs" && "$bin" -jobs="$jobs" -workers="$jobs" "${flags[@]}" \
    -artifact_prefix="$here/artifacts/$target/" "$here/corpus/$target" "$here/seeds/$target" \
    "$@" > main.log 2>&1) || true
executions=$(cat "$logs"/fuzz-*.log | awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
crashes=$(cat "$logs"/fuzz-*.log | grep -c 'deadly signal\|ERROR: libFuzzer' || true)
peak=$(cat "$logs"/fuzz-*.log | awk '/stat::peak_rss_mb/ {if ($2 > m) m = $2} END {print m + 0}')
echo "$target: $jobs jobs x $seconds s: $executions executions, $crashes crashes, peak RSS $peak MB"
[ "$crashes" -eq 0 ]
