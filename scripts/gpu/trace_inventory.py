"""Print what a Kineto trace holds per profiler step: sync-related calls, cuda_sync rows, GPU busy.

Usage: python3 scripts/gpu/trace_inventory.py TRACE.json.gz [...]   (no torch needed)
A cross-check of tests/data/truth/ against the traces themselves; its numbers are read from the
profiler's output, so they are not truth. GPU busy is the union of kernel, memcpy and memset rows.
"""

import collections
import gzip
import json
import sys

CALLS = (
    "cudaEventRecord", "cudaEventRecordWithFlags", "cudaEventQuery", "cudaEventSynchronize",
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMemcpyAsync", "cudaStreamWaitEvent",
    "aten::item", "aten::_local_scalar_dense",
)


def union_length(intervals):
    total, cur = 0.0, None
    for a, b in sorted(intervals):
        if cur is None or a > cur[1]:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return total + (cur[1] - cur[0] if cur else 0.0)


def inventory(path):
    with gzip.open(path) as f:
        doc = json.load(f)
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    steps = sorted(
        (e for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")),
        key=lambda e: e["ts"],
    )
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    start = min(e["ts"] for e in gpu)
    end = max(e["ts"] + e["dur"] for e in gpu)
    busy = union_length([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
    streams = collections.Counter(e["args"].get("stream") for e in gpu)
    print(f"== {path}")
    print(f"  device span {(end - start) / 1e3:.2f} ms, busy {busy / 1e3:.2f} ms, "
          f"idle {(end - start - busy) / 1e3:.2f} ms; rows per stream {dict(streams)}")
    inside = set()
    for s in steps:
        a, b = s["ts"], s["ts"] + s["dur"]
        hits = [e for e in events if a <= e["ts"] < b and e["tid"] == s["tid"] and e["name"] in CALLS]
        inside.update(id(e) for e in hits)
        calls = collections.Counter(e["name"] for e in hits)
        syncs = collections.Counter(e["name"] for e in events if e.get("cat") == "cuda_sync" and a <= e["ts"] < b)
        print(f"  {s['name']:15} host {s['dur'] / 1e3:8.3f} ms {dict(calls)}" + (f" cuda_sync {dict(syncs)}" if syncs else ""))
    outside = collections.Counter(e["name"] for e in events if e["name"] in CALLS and id(e) not in inside)
    print(f"  outside the steps' host ranges: {dict(outside)}")


if __name__ == "__main__":
    for trace in sys.argv[1:]:
        inventory(trace)
