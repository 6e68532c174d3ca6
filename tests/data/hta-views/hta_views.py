#!/usr/bin/env python3
"""HTA 0.5.0's own numbers for the audit's HTA views (`tests/hta_views.rs`).

Usage: python hta_views.py TRACE... > hta_views.json   (run with HTA 0.5.0 installed; the
project's CI never runs it: its output is committed as `hta_views.json`).

For every trace, HTA's four first-page analyses are run in three variants, each in its own
process (HTA reads its environment and patches at load time):

- `defaults`: the trace as it is, `TraceAnalysis(trace_files={0: TRACE})` with HTA's defaults;
  times in the trace's µs (HTA rounds starts up and ends down to whole µs when `ts` has a
  fraction), thresholds `consecutive_kernel_delay=30`, `runtime_cutoff=50`,
  `launch_delay_cutoff=100` (µs).
- `ns`: the same trace with every `ts` and `dur` rewritten as an integer number of ns (read
  from the number's decimal text, never through a float), so HTA works in exact int64 ns and
  does not round; thresholds scaled by 1000. Only the µs rounding is off.
- `ns_all_steps`: as `ns`, with `Trace._filter_irrelevant_gpu_kernels` replaced by a no-op:
  the last-ProfilerStep filter (and its drop of GPU rows without a host correlation) off too.

Per variant: the idle-time breakdown per stream (`get_idle_time_breakdown`), the queue length
per stream (`get_queue_length_time_series`: its max, and the time at queue length >= 1 summed
over the series' steps as `get_time_spent_blocked_on_full_queue` sums them), the launch
statistics (`get_cuda_kernel_launch_stats`, summed here: count, sums of cpu_duration,
gpu_duration, launch_delay, and the counts HTA's plots select), and the memory bandwidth
summary (`get_memory_bw_summary`: count, min, max per kind). In the `ns` variants every
number is an exact integer (HTA's int64 arithmetic; the sums here are Python ints).
"""
import decimal
import gzip
import json
import logging
import os
import subprocess
import sys
import tempfile

VARIANTS = ["defaults", "ns", "ns_all_steps"]


def rescale(src, dst):
    """Writes `src` with every event's ts and dur as integer ns (exact decimal arithmetic)."""
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        data = json.load(f, parse_float=decimal.Decimal)
    events = data["traceEvents"] if isinstance(data, dict) else data
    for e in events:
        for k in ("ts", "dur"):
            v = e.get(k)
            if isinstance(v, (int, decimal.Decimal)) and not isinstance(v, bool):
                ns = decimal.Decimal(v) * 1000
                if ns != ns.to_integral_value():
                    raise SystemExit(f"{src}: {k}={v} is not a whole ns")
                e[k] = int(ns)

    def default(o):
        if isinstance(o, decimal.Decimal):
            return float(o)
        raise TypeError(o)

    with gzip.open(dst, "wt") as f:
        json.dump(data, f, default=default)


def num(v):
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float) and v == int(v) and abs(v) < 2**53:
        return int(v)
    return v


def run(path, variant):
    logging.getLogger("hta").setLevel(logging.ERROR)
    from hta.common.trace import Trace
    from hta.trace_analysis import TraceAnalysis

    scale = 1 if variant == "defaults" else 1000
    if variant == "ns_all_steps":
        Trace._filter_irrelevant_gpu_kernels = lambda self, include_last_profiler_step=False: None
    an = TraceAnalysis(trace_files={0: path}, trace_dir=os.path.dirname(path))
    out = {}
    idle, _ = an.get_idle_time_breakdown(
        ranks=[0], consecutive_kernel_delay=30 * scale, visualize=False
    )
    out["idle"] = {}
    for _, r in idle.iterrows():
        out["idle"].setdefault(str(int(r["stream"])), {})[r["idle_category"]] = num(r["idle_time"])
    series = an.get_queue_length_time_series(ranks=[0]).get(0)
    out["queue"] = {}
    if series is not None:
        for stream, s in series.groupby("stream"):
            s = s.copy()
            s["dur"] = s.ts.shift(-1) - s.ts
            busy = s.loc[s.queue_length >= 1, "dur"].fillna(0)
            out["queue"][str(int(stream))] = {
                "max": num(s.queue_length.max()),
                "time_at_1_or_more": num(sum(int(x) if scale > 1 else x for x in busy)),
                "points": len(s),
            }
    stats = an.get_cuda_kernel_launch_stats(
        ranks=[0], runtime_cutoff=50 * scale, launch_delay_cutoff=100 * scale, visualize=False
    )[0]
    cpu, gpu, delay = stats["cpu_duration"], stats["gpu_duration"], stats["launch_delay"]
    total = (lambda col: sum(int(x) for x in col)) if scale > 1 else (lambda col: num(col.sum()))
    out["launch"] = {
        "count": len(stats),
        "cpu_duration_sum": total(cpu),
        "gpu_duration_sum": total(gpu),
        "launch_delay_sum": total(delay),
        "short_kernels": int(((cpu <= 50 * scale) & (gpu < cpu)).sum()),
        "runtime_outliers": int((cpu > 50 * scale).sum()),
        "launch_delay_outliers": int((delay > 100 * scale).sum()),
    }
    bw = an.get_memory_bw_summary(ranks=[0])
    out["memory_bw"] = {}
    if bw is not None:
        for (_, name), r in bw.iterrows():
            out["memory_bw"][name] = {
                "count": int(r[("memory_bw_gbps", "count")]),
                "min_gbps": float(r[("memory_bw_gbps", "min")]),
                "max_gbps": float(r[("memory_bw_gbps", "max")]),
            }
    return out


def main():
    if len(sys.argv) == 3 and sys.argv[1].startswith("--variant="):
        variant, path = sys.argv[1].split("=", 1)[1], sys.argv[2]
        print(json.dumps(run(path, variant)))
        return
    import hta
    import pandas

    result = {
        "provenance": {
            "tool": "holistictraceanalysis",
            "version": getattr(hta, "__version__", None) or "0.5.0",
            "pandas": pandas.__version__,
            "python": sys.version.split()[0],
            "command": "python tests/data/hta-views/hta_views.py tests/data/traces/*.json.gz > tests/data/hta-views/hta_views.json",
            "variants": {
                "defaults": "HTA's defaults on the trace as it is; µs (rounded to whole µs by HTA where ts has a fraction)",
                "ns": "the trace rewritten with integer-ns ts/dur (exact), thresholds x1000: HTA without its µs rounding",
                "ns_all_steps": "as ns, with Trace._filter_irrelevant_gpu_kernels a no-op: no last-step filter, no drop of uncorrelated GPU rows",
            },
        },
        "traces": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for src in sys.argv[1:]:
            name = os.path.basename(src)
            per = {}
            ns_path = os.path.join(tmp, "ns", name)
            os.makedirs(os.path.dirname(ns_path), exist_ok=True)
            rescale(src, ns_path)
            for variant in VARIANTS:
                path = os.path.abspath(src if variant == "defaults" else ns_path)
                done = subprocess.run(
                    [sys.executable, __file__, f"--variant={variant}", path],
                    capture_output=True, text=True, check=True,
                )
                per[variant] = json.loads(done.stdout.strip().splitlines()[-1])
            result["traces"][name] = per
            print(name, file=sys.stderr)
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
