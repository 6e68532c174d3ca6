#!/usr/bin/env bash
# Mutation testing of the core with cargo-mutants, one file at a time, lib tests only.
#
#   scripts/mutants.sh                    # every core file (long: hours on 2 cores)
#   scripts/mutants.sh src/schedule.rs    # one file (or several)
#
# Each file gets its own run and its own report, mutants.out/<file>/mutants.out/
# (caught.txt, missed.txt, unviable.txt, timeout.txt, outcomes.json); the script ends
# with one line of counts per file. docs/TESTING.md records the runs made so far and
# explains every surviving mutant.
#
# The mutants are made in a copy of the tree (so the checkout is never left mutated) and
# built in their own target directory, $MUTANTS_TARGET_DIR (default target/mutants), so
# that dependencies are built once and reused by later runs. `cargo install cargo-mutants`
# first (https://mutants.rs). Never point an ordinary build at that directory: its last
# artifacts may be built from a mutant, and cargo sees them as fresh for an older checkout.
#
# Environment: MUTANTS_TIMEOUT (seconds per test run, default 60), MUTANTS_BUILD_TIMEOUT
# (seconds per build, default 600), MUTANTS_RE (a regex: only the mutants whose names, as
# `cargo mutants --list` prints them, match it). Mutants are tested one at a time (`--in-place`).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

core=(src/units.rs src/interval.rs src/verdict.rs src/schedule.rs src/engine.rs
      src/case/validate.rs 'src/stats/*.rs')
files=("$@")
[ ${#files[@]} -eq 0 ] && files=("${core[@]}")

command -v cargo-mutants >/dev/null || {
    echo "mutants.sh: cargo-mutants is not installed (cargo install cargo-mutants)" >&2
    exit 2
}

target=${MUTANTS_TARGET_DIR:-$root/target/mutants}
out=$root/mutants.out
work=$(mktemp -d "${TMPDIR:-/tmp}/worksheet-mutants.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$target"

# A copy of the tree: tracked and untracked-but-not-ignored files, as git sees them.
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work" 2>/dev/null \
    || { echo "mutants.sh: could not copy the tree" >&2; exit 2; }

export CARGO_TARGET_DIR=$target
# Without debug info a mutant's lib-test rebuild takes ~3 s instead of ~20 s (idle machine).
export CARGO_PROFILE_TEST_DEBUG=${CARGO_PROFILE_TEST_DEBUG:-0} CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-0}
echo "== baseline: cargo test --lib (the unmutated tree must pass)"
(cd "$work" && cargo test --quiet --lib) >/dev/null

re_args=()
[ -n "${MUTANTS_RE:-}" ] && re_args=(--re "$MUTANTS_RE")

# Tests that compare two reading paths of the importer over the real traces (tens of seconds
# each in a debug build): both paths run the same core code, so a core mutant changes both
# alike and these tests cannot catch it. Skipped to keep each mutant's run short.
skip_args=(--skip import::kineto::fast_tests --skip import::ranks::read::tests::streamed_events)

summary=()
reports=()
for file in "${files[@]}"; do
    name=$(echo "$file" | tr '/*' '__')
    rm -rf "${out:?}/$name"
    echo "== $file"
    start=$(date +%s)
    status=0
    (cd "$work" && cargo mutants --in-place --baseline skip --no-shuffle \
        --file "$file" "${re_args[@]}" \
        --timeout "${MUTANTS_TIMEOUT:-60}" --build-timeout "${MUTANTS_BUILD_TIMEOUT:-600}" \
        --output "$out/$name" -- --lib -- "${skip_args[@]}") || status=$?
    # cargo-mutants exits 0 (all caught), 2 (some missed), 3 (some timed out); else it failed.
    case $status in 0|2|3) ;; *) echo "mutants.sh: cargo mutants failed on $file ($status)" >&2; exit "$status";; esac
    seconds=$(( $(date +%s) - start ))
    dir=$out/$name/mutants.out
    reports+=("$dir")
    count() { if [ -s "$dir/$1.txt" ]; then grep -c . "$dir/$1.txt"; else echo 0; fi; }
    total=$(cd "$work" && cargo mutants --list --file "$file" "${re_args[@]}" 2>/dev/null | grep -c . || true)
    summary+=("$file: $total mutants, $(count caught) caught, $(count missed) missed, $(count unviable) unviable, $(count timeout) timeouts, ${seconds}s")
done

echo
printf '%s\n' "${summary[@]}"
survivors=$(for dir in "${reports[@]}"; do cat "$dir/missed.txt" "$dir/timeout.txt" 2>/dev/null; done)
if [ -n "$survivors" ]; then
    echo
    echo "missed or timed out (kill each with a test, or explain it in docs/TESTING.md):"
    echo "$survivors"
    exit 1
fi
