#!/usr/bin/env python3
"""Peer comparison: the spin kernel of `worksheet capture`, timed by the tools people use.

The same CUDA source as `worksheet capture` (src/cuda/mod.rs, kernel `spin`: one thread
busy-waits on %globaltimer for N ns), compiled by CuPy (NVRTC) and launched on one
torch stream, is timed by:

- torch.cuda.Event, stream idle at the start event (synchronized before each run);
- torch.cuda.Event, stream busy at the start event (a 50 us spin launched just before:
  the start event fires when it ends, with the measured launch already queued, like the
  capture's "held" mode);
- cupy.cuda.Event, stream busy (the same way);
- triton.testing.do_bench (its own loop: an L2-clearing memset before each run, so the
  stream is busy at each start event), all its samples.

Statistics use the capture's method: nearest rank (median = lower middle value). With a
capture file given, the script also prints the comparison with `worksheet capture`'s
medians per mode. Usage:

    python3 peer_compare.py OUT.json [CAPTURE.json]
"""

import json
import math
import sys
import time
import traceback
from decimal import Decimal

SPIN = r"""
extern "C" __global__ void spin(unsigned long long ns, unsigned long long* out) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
    if (out != 0) { out[0] = t0; out[1] = t; }
}
"""

SPINS_NS = [10_000, 100_000, 1_000_000]
WARMUP = 20
RUNS = 200
BUSY_NS = 50_000


def nearest_rank(values, p):
    s = sorted(values)
    k = max(1, math.ceil(p * len(s) / 100))
    return s[k - 1]


def summary(ns):
    return {
        "runs": len(ns),
        "min_ns": min(ns),
        "median_ns": nearest_rank(ns, 50),
        "p90_ns": nearest_rank(ns, 90),
        "max_ns": max(ns),
    }


def ms_to_ns(ms):
    return int(round(ms * 1e6))


UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def parse_value(text):
    number, unit = text.split()
    return int(Decimal(number) * UNITS[unit])


def main():
    out_path = sys.argv[1]
    capture_path = sys.argv[2] if len(sys.argv) > 2 else None
    result = {"spins_ns": SPINS_NS, "warmup": WARMUP, "runs": RUNS, "busy_ns": BUSY_NS, "peers": {}}

    import cupy
    import torch

    result["versions"] = {"torch": torch.__version__, "cupy": cupy.__version__}
    try:
        import triton
        import triton.testing

        result["versions"]["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        triton = None
        traceback.print_exc()
    result["device"] = torch.cuda.get_device_name()

    stream = torch.cuda.Stream()
    cstream = cupy.cuda.ExternalStream(stream.cuda_stream)
    module = cupy.RawModule(code=SPIN)
    spin = module.get_function("spin")

    def launch(ns):
        spin((1,), (1,), (cupy.uint64(ns), cupy.uint64(0)))

    peers = result["peers"]
    with torch.cuda.stream(stream), cstream:
        for _ in range(5):
            launch(10_000)
        stream.synchronize()
        for ns in SPINS_NS:
            key = str(ns)
            peers[key] = {}
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

            # torch.cuda.Event, stream idle at the start event; host submission and
            # completion on perf_counter_ns around the same calls.
            dev, sub, comp = [], [], []
            for r in range(WARMUP + RUNS):
                stream.synchronize()
                t0 = time.perf_counter_ns()
                s.record(stream)
                launch(ns)
                e.record(stream)
                t1 = time.perf_counter_ns()
                e.synchronize()
                t2 = time.perf_counter_ns()
                if r >= WARMUP:
                    dev.append(ms_to_ns(s.elapsed_time(e)))
                    sub.append(t1 - t0)
                    comp.append(t2 - t0)
            peers[key]["torch_event_idle"] = summary(dev)
            peers[key]["python_submission_idle"] = summary(sub)
            peers[key]["python_completion_idle"] = summary(comp)

            # torch.cuda.Event, stream busy at the start event.
            dev = []
            for r in range(WARMUP + RUNS):
                stream.synchronize()
                launch(BUSY_NS)
                s.record(stream)
                launch(ns)
                e.record(stream)
                e.synchronize()
                if r >= WARMUP:
                    dev.append(ms_to_ns(s.elapsed_time(e)))
            peers[key]["torch_event_busy"] = summary(dev)

            # cupy.cuda.Event, stream busy.
            cs, ce = cupy.cuda.Event(), cupy.cuda.Event()
            dev = []
            for r in range(WARMUP + RUNS):
                stream.synchronize()
                launch(BUSY_NS)
                cs.record(cstream)
                launch(ns)
                ce.record(cstream)
                ce.synchronize()
                if r >= WARMUP:
                    dev.append(ms_to_ns(cupy.cuda.get_elapsed_time(cs, ce)))
            peers[key]["cupy_event_busy"] = summary(dev)

            if triton is not None:
                try:
                    times = triton.testing.do_bench(lambda: launch(ns), warmup=25, rep=100, return_mode="all")
                    peers[key]["triton_do_bench"] = summary([ms_to_ns(t) for t in times])
                except Exception:  # noqa: BLE001
                    traceback.print_exc()

    rows = [
        ("torch_event_idle", "torch.cuda.Event, stream idle"),
        ("torch_event_busy", "torch.cuda.Event, stream busy"),
        ("cupy_event_busy", "cupy.cuda.Event, stream busy"),
        ("triton_do_bench", "triton do_bench (memset before each run)"),
        ("python_submission_idle", "Python host submission (perf_counter_ns)"),
        ("python_completion_idle", "Python host completion (perf_counter_ns)"),
    ]
    print(f"{result['device']}; torch {result['versions'].get('torch')}, cupy {result['versions'].get('cupy')}, "
          f"triton {result['versions'].get('triton')}")
    print("| spin | timer | runs | median | P90 | max |\n|---|---|---|---|---|---|")
    for ns in SPINS_NS:
        for k, label in rows:
            v = peers[str(ns)].get(k)
            if v:
                print(f"| {ns / 1000:g} us | {label} | {v['runs']} | {v['median_ns'] / 1000:.3f} us | "
                      f"{v['p90_ns'] / 1000:.3f} us | {v['max_ns'] / 1000:.3f} us |")

    if capture_path:
        try:
            with open(capture_path) as f:
                cap = json.load(f)
            series = {s["id"]: s for s in cap.get("series", [])}
            comparison = {}
            print("\n| spin | worksheet capture held (busy) | torch.cuda.Event busy | difference | "
                  "worksheet idle | torch.cuda.Event idle | difference |\n|---|---|---|---|---|---|---|")
            for ns in SPINS_NS:
                label = f"{ns // 1000}us" if ns < 1_000_000 else f"{ns // 1_000_000}ms"
                med = {}
                for mode in ("held", "idle"):
                    s = series.get(f"spin-{label}-{mode}-device-interval")
                    if s:
                        med[mode] = nearest_rank([parse_value(v) for v in s["measured"]], 50)
                tb = peers[str(ns)]["torch_event_busy"]["median_ns"]
                ti = peers[str(ns)]["torch_event_idle"]["median_ns"]
                comparison[str(ns)] = {"worksheet_held_median_ns": med.get("held"), "torch_busy_median_ns": tb,
                                       "worksheet_idle_median_ns": med.get("idle"), "torch_idle_median_ns": ti}
                if "held" in med and "idle" in med:
                    print(f"| {ns / 1000:g} us | {med['held'] / 1000:.3f} us | {tb / 1000:.3f} us | "
                          f"{(med['held'] - tb) / 1000:+.3f} us | {med['idle'] / 1000:.3f} us | "
                          f"{ti / 1000:.3f} us | {(med['idle'] - ti) / 1000:+.3f} us |")
            result["comparison_with_capture"] = comparison
        except Exception:  # noqa: BLE001
            traceback.print_exc()

    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
