#!/usr/bin/env bash
# worksheet import vs HTA 0.5.0 (TraceAnalysis load + temporal breakdown) on the same Kineto
# trace, run in alternation (worksheet, HTA, worksheet, HTA, ...; the first of each pair
# swaps every round) so a burst of load from other jobs falls on both tools. For every run:
# wall time, CPU (user + sys), peak RSS (GNU time), and the 1-minute load average; then the
# medians and the ratios. Built on the shared tools' run_perf.sh (issue 10).
#
# Usage: benches/vs_hta.sh TRACE.json[.gz] [ROUNDS]          (ROUNDS default 3)
#   env WORKSHEET  worksheet binary      (default target/release/worksheet)
#       HTA_PY     python of a venv with holistictraceanalysis==0.5.0 (default python3)
#       HTA_EXTRA  extra arguments for hta_load.py, e.g. --include-last-step
# HTA needs a venv: python3 -m venv /tmp/hta && /tmp/hta/bin/pip install holistictraceanalysis==0.5.0
# Scaled copies of a trace (x10): ../shared/tools/make_scaled_trace.py IN OUT 10
set -euo pipefail
TRACE=${1:?usage: vs_hta.sh TRACE [ROUNDS]}
ROUNDS=${2:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
WORKSHEET=${WORKSHEET:-target/release/worksheet}
HTA_PY=${HTA_PY:-python3}
export HTA_DISABLE_NS_ROUNDING=${HTA_DISABLE_NS_ROUNDING:-1}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

json_bytes=$(zcat -f "$TRACE" | wc -c)
echo "trace $(basename "$TRACE"): $(stat -c %s "$TRACE") bytes on disk, $json_bytes bytes of JSON; $(nproc) CPUs; $(uptime)"

run() { # tool, round: appends "tool wall cpu rss_kib load" to $OUT/rows
  local tool=$1 load; load=$(cut -d' ' -f1 /proc/loadavg)
  if [ "$tool" = worksheet ]; then
    /usr/bin/time -f '%e %U %S %M' -o "$OUT/t" "$WORKSHEET" import "$TRACE" --format json >"$OUT/ws.json" 2>"$OUT/ws.err" \
      || { cat "$OUT/ws.err" >&2; exit 1; }
  else
    /usr/bin/time -f '%e %U %S %M' -o "$OUT/t" "$HTA_PY" "$HERE/hta_load.py" "$TRACE" ${HTA_EXTRA:-} >"$OUT/hta.out" 2>"$OUT/hta.err" \
      || { cat "$OUT/hta.err" >&2; exit 1; }
  fi
  read -r wall user sys rss <"$OUT/t"
  cpu=$(echo "$user + $sys" | bc -l)
  printf '%-9s %3s %8.2f %8.2f %10.1f %6s\n' "$tool" "$2" "$wall" "$cpu" "$(echo "$rss / 1024" | bc -l)" "$load"
  echo "$tool $wall $cpu $rss" >>"$OUT/rows"
}

printf '%-9s %3s %8s %8s %10s %6s\n' tool rnd wall_s cpu_s rss_MiB load1
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then run worksheet "$r"; run hta "$r"; else run hta "$r"; run worksheet "$r"; fi
done

med() { # tool, column (2 wall, 3 cpu, 4 rss): the median
  awk -v t="$1" -v c="$2" '$1==t{print $c}' "$OUT/rows" | sort -g | awk '{v[NR]=$1} END{print (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'
}
ws_wall=$(med worksheet 2); hta_wall=$(med hta 2)
ws_cpu=$(med worksheet 3); hta_cpu=$(med hta 3)
ws_rss=$(med worksheet 4); hta_rss=$(med hta 4)
ratio() { echo "scale=2; $1 / $2" | bc -l; }
echo "medians: worksheet ${ws_wall} s wall, ${ws_cpu} s CPU, $((ws_rss / 1024)) MiB; HTA ${hta_wall} s wall, ${hta_cpu} s CPU, $((hta_rss / 1024)) MiB"
echo "HTA / worksheet: wall $(ratio "$hta_wall" "$ws_wall")x, CPU $(ratio "$hta_cpu" "$ws_cpu")x"
echo "peak RSS / JSON bytes: worksheet $(ratio "$ws_rss * 1024" "$json_bytes"), HTA $(ratio "$hta_rss * 1024" "$json_bytes")"
echo "load after: $(uptime)"
"$HTA_PY" - "$OUT/hta.out" "$OUT/ws.json" <<'PY'
import json, sys
hta = next(json.loads(l[4:]) for l in open(sys.argv[1]) if l.startswith("HTA "))
ws = json.load(open(sys.argv[2]))["hta"][0]
b = hta["breakdown"]
for h, w in [("kernel_time(us)", "kernel_time_ns"), ("idle_time(us)", "idle_ns"),
             ("compute_time(us)", "compute_ns"), ("non_compute_time(us)", "non_compute_ns")]:
    print(f"{h:22s} HTA {b[h]:>16,.3f}  worksheet {ws[w] / 1000:>16,.3f}")
print(f"HTA inside: import {hta['import_s']} s, load {hta['load_s']} s, breakdown {hta['breakdown_s']} s")
PY
