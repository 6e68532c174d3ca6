#!/usr/bin/env bash
# A 1 GB Kineto trace through `import -o` and back through `check`, `eval` and `render`
# (issue 10, "Large cases readable"; BENCHMARKS.md, "Large cases: a 1 GB trace through
# import and check"). Not run by CI: it needs about 10 GB of memory for the Python copy step,
# several minutes, and 1.3 GB of disk under $WORK.
#
# Usage: scripts/large_trace.sh [COPIES]   (default 20: about 951 MB of JSON)
# Environment:
#   WORKSHEET    the binary (default target/release/worksheet; build it with
#                `cargo build --release` first)
#   MAKE_SCALED  make_scaled_trace.py (default ../shared/tools/make_scaled_trace.py)
#   WORK         where the trace, the case and the logs go (default /tmp/large-trace)
#
# For each command it prints wall time, CPU time (user + system) and peak RSS from
# `/usr/bin/time -v`, and the sizes of the trace and the case.
set -euo pipefail

copies=${1:-20}
worksheet=${WORKSHEET:-target/release/worksheet}
make_scaled=${MAKE_SCALED:-../shared/tools/make_scaled_trace.py}
work=${WORK:-/tmp/large-trace}
trace=tests/data/traces/df_index_resolver.json.gz

[ -x "$worksheet" ] || { echo "no $worksheet: run cargo build --release, or set WORKSHEET" >&2; exit 2; }
[ -f "$make_scaled" ] || { echo "no $make_scaled: set MAKE_SCALED" >&2; exit 2; }
mkdir -p "$work"
big="$work/x$copies.json.gz"
case_file="$work/x$copies-case.json.gz"

if [ ! -f "$big" ]; then
    echo "making $big ($copies copies of $trace)"
    python3 "$make_scaled" "$trace" "$big" "$copies"
fi
echo "trace: $(stat -L -c %s "$big") bytes gzip, $(zcat "$big" | wc -c) bytes of JSON"

# run NAME ARGS...: the command under /usr/bin/time -v, its output to $work/NAME.out.
run() {
    local name=$1
    shift
    local rc=0
    /usr/bin/time -v "$@" > "$work/$name.out" 2> "$work/$name.time" || rc=$?
    awk -v name="$name" -v rc="$rc" '
        /User time/ { user = $NF }
        /System time/ { sys = $NF }
        /Elapsed \(wall clock\)/ { wall = $NF }
        /Maximum resident set size/ { rss = $NF }
        END { printf "%-12s exit %s  wall %s  cpu %.2f s  peak RSS %.1f MiB\n", name, rc, wall, user + sys, rss / 1024 }
    ' "$work/$name.time"
}

rm -f "$case_file"
run import "$worksheet" import "$big" -o "$case_file" --expect
echo "case: $(stat -c %s "$case_file") bytes gzip, $(zcat "$case_file" | wc -c) bytes of JSON"
run check "$worksheet" check "$case_file"
tail -n 2 "$work/check.out"
run check-json "$worksheet" check "$case_file" --format json
run eval "$worksheet" eval "$case_file"
run render-text "$worksheet" render "$case_file" --format text
run render-svg "$worksheet" render "$case_file" -o "$work/x$copies.svg" --force
echo "svg: $(stat -c %s "$work/x$copies.svg") bytes"
