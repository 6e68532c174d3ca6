#!/usr/bin/env bash
# A lab lesson and pinned lab runs on a deliberately loaded machine (issue 28, "done means").
#
# Starts CPU burners (one more than the cores, or $BURNERS), lets the load average climb,
# then runs the `warmup-statistics` lesson beside them: the run either measures the work it
# asked for, or its report, handout and `lesson check` say that it could not (a `caution`)
# and what to do. Then the lab itself: a calibrated run under load, the same work pinned with
# `--passes` under load and again with the burners stopped, and `compare` of the two pinned
# runs (a verdict, not `incomparable`).
#
# Usage: scripts/loaded_lesson.sh [OUT_DIR]   (WORKSHEET=path/to/worksheet to pick a binary;
# default target/release/worksheet). Only the burners this script starts are stopped, by pid.
set -euo pipefail

W=${WORKSHEET:-target/release/worksheet}
OUT=${1:-$(mktemp -d)}
mkdir -p "$OUT"
CPUS=$(nproc)
BURNERS=${BURNERS:-$((CPUS + 1))}
WARM_S=${WARM_S:-30}

pids=()
stop_burners() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap stop_burners EXIT

echo "== machine: $CPUS CPU(s), load $(cut -d' ' -f1-3 /proc/loadavg); starting $BURNERS burner(s)"
for _ in $(seq "$BURNERS"); do
  (while :; do :; done) &
  pids+=("$!")
done
sleep "$WARM_S"
echo "== after ${WARM_S} s of burning: load $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "== 1. lesson start warmup-statistics beside the burners"
rm -rf "$OUT/student"
"$W" lesson start warmup-statistics -o "$OUT/student"
echo
echo "-- the handout's opening (caution, if any):"
sed -n '1,/^## Goals/p' "$OUT/student/handout.md"

echo
echo "== 2. lesson check with the key's answers (what the student would write from the data)"
# Every sheet line of the key, answered as the key says (the teacher's view, for the demo).
"$W" lesson key "$OUT/student" \
  | awk -F'|' 'NR > 3 && NF > 4 { gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $4); if ($2 != "") print $2 ": " $4 }' \
  > "$OUT/student/answers.txt"
"$W" lesson check "$OUT/student" || true

echo
echo "== 3. lab executor, calibrated, under load"
"$W" lab executor --runs 12 --warmup 2 --target-ms 20 -q --export-json "$OUT/calibrated.json" --force \
  | grep -E '^(machine|work|calibration|caution|    )|work \(on worker\)' || true
PASSES=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['calibration']['passes'])" "$OUT/calibrated.json")

echo
echo "== 4. the same work pinned (--passes $PASSES): once under load, once with the burners stopped"
"$W" lab executor --runs 12 --warmup 2 --passes "$PASSES" -q --export-json "$OUT/pinned-loaded.json" --force \
  | grep -E '^(calibration|caution)|work \(on worker\)' || true
stop_burners
sleep "$WARM_S"
echo "-- burners stopped; load $(cut -d' ' -f1-3 /proc/loadavg)"
"$W" lab executor --runs 12 --warmup 2 --passes "$PASSES" -q --export-json "$OUT/pinned-quiet.json" --force \
  | grep -E '^(calibration|caution)|work \(on worker\)' || true

echo
echo "== 5. compare the two pinned runs"
"$W" compare "$OUT/pinned-loaded.json" "$OUT/pinned-quiet.json" || true
echo
echo "== and runs of different passes stay incomparable, naming the flag:"
"$W" lab executor --runs 3 --warmup 0 --passes "$((PASSES + 1))" -q --export-json "$OUT/other.json" --force >/dev/null
"$W" compare "$OUT/pinned-quiet.json" "$OUT/other.json" | tail -2 || true
echo "outputs in $OUT"
