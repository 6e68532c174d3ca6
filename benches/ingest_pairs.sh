#!/usr/bin/env bash
# Import against `gzip -dc`, two binaries alternating, pinned to two cores (issue 24 §1–§2).
#
#   benches/ingest_pairs.sh BEFORE_BIN AFTER_BIN [PAIRS] [TRACES...]
#
# For each trace (default /tmp/perf/x1.json.gz /tmp/perf/x10.json.gz) and each of PAIRS rounds
# (default 5): `gzip -dc TRACE > /dev/null`, then `BIN import TRACE` of both binaries, the side
# that goes first swapping every round, each under `taskset -c 0,1` and `/usr/bin/time`. Prints
# one line per run (trace, side, wall s, user s, sys s, peak RSS KiB), then per trace and side
# the min and median wall, the median (user + sys) ÷ wall (cores busy), and the min and median
# of the per-round ratio import ÷ gzip -dc (the gzip of the same round: a burst of load from
# other jobs falls on both).
set -euo pipefail
before=${1:?before binary}
after=${2:?after binary}
pairs=${3:-5}
shift $(($# < 3 ? $# : 3))
traces=("$@")
[ ${#traces[@]} -eq 0 ] && traces=(/tmp/perf/x1.json.gz /tmp/perf/x10.json.gz)
log=$(mktemp)
t=$(mktemp)
trap 'rm -f "$log" "$t"' EXIT
timed() { # LABEL CMD...: one line "LABEL wall user sys rss"
    local label=$1
    shift
    local rc=0
    /usr/bin/time -f "%e %U %S %M" -o "$t" taskset -c 0,1 "$@" > /dev/null 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "$label failed (exit $rc): $(tail -n 1 "$t")" >&2
        return
    fi
    echo "$label $(cat "$t")" | tee -a "$log"
}
for trace in "${traces[@]}"; do
    name=$(basename "$trace" .json.gz)
    for r in $(seq "$pairs"); do
        timed "$name gzip $r" gzip -dc "$trace"
        if [ $((r % 2)) -eq 1 ]; then order=(before after); else order=(after before); fi
        for side in "${order[@]}"; do
            bin=$before
            [ "$side" = after ] && bin=$after
            timed "$name $side $r" "$bin" import "$trace"
        done
    done
done
echo "--- trace side: wall and CPU (user + sys) min / median; cores busy (median CPU ÷ wall); import ÷ gzip -dc of the same round, min / median"
awk '
function median(a, n,   i, j, x) { # sorts a[1..n] in place
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ wall[$1, $2, $3] = $4; cpu[$1, $2, $3] = $5 + $6; busy[$1, $2, $3] = ($5 + $6) / ($4 > 0 ? $4 : 1); names[$1] = 1; rounds[$3] = 1 }
END {
    for (n in names) for (s = 0; s < 3; s++) {
        side = s == 0 ? "gzip" : s == 1 ? "before" : "after"
        k = 0
        for (r in rounds) if ((n, side, r) in wall) {
            k++; w[k] = wall[n, side, r]; b[k] = busy[n, side, r]; c[k] = cpu[n, side, r]
            q[k] = wall[n, side, r] / wall[n, "gzip", r]; p[k] = cpu[n, side, r] / (cpu[n, "gzip", r] > 0 ? cpu[n, "gzip", r] : 0.01)
        }
        if (!k) continue
        mw = median(w, k); minw = w[1]; mb = median(b, k); mq = median(q, k); minq = q[1]
        mc = median(c, k); minc = c[1]; mp = median(p, k); minp = p[1]
        printf "%s %s: wall %.2f / %.2f s, CPU %.2f / %.2f s; cores busy %.2f; wall ÷ gzip %.2f / %.2f, CPU ÷ gzip %.2f / %.2f\n", n, side, minw, mw, minc, mc, mb, minq, mq, minp, mp
    }
}' "$log"
