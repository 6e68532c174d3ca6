#!/usr/bin/env bash
# The CI fuzz smoke: every target runs a fixed number of inputs (default 2000) from its
# seeds, mutating them, with the same checks as a campaign. Nothing is written to
# fuzz/corpus. Usage: fuzz/smoke.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=fuzz/targets.sh
. ./targets.sh
runs=${1:-2000}
# Every [[bin]] of Cargo.toml is a target the scripts know, and the other way round.
declared=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^worksheet-fuzz$' | sort)
known=$(printf '%s\n' "${TARGETS[@]}" | sort)
if [ "$declared" != "$known" ]; then
    echo "fuzz/targets.sh and Cargo.toml list different targets:" >&2
    diff <(echo "$known") <(echo "$declared") >&2 || true
    exit 1
fi
target_dir=()
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    target_dir=(--target-dir "$CARGO_TARGET_DIR/fuzz")
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in "${TARGETS[@]}"; do
    mkdir -p "$scratch/$target"
    echo "-- fuzz smoke: $target ($runs runs)"
    rc=0
    cargo +nightly fuzz run "${target_dir[@]}" -O -a -s none "$target" \
        "$scratch/$target" "seeds/$target" -- \
        -runs="$runs" -seed=1 -max_len="$(max_len_of "$target")" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 >"$scratch/$target.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        tail -n 60 "$scratch/$target.log"
        echo "fuzz smoke: $target failed (exit $rc)" >&2
        exit 1
    fi
    grep -E "stat::number_of_executed_units" "$scratch/$target.log"
done
