#!/usr/bin/env python3
"""The HTA 0.5.0 side of benches/vs_hta.sh: load one Kineto trace with TraceAnalysis and
compute its temporal breakdown (what `worksheet import` prints in its `hta` block).

Usage: hta_load.py TRACE [--include-last-step]
Prints one line: `HTA {json}` with the seconds spent importing HTA, loading, computing, and
the breakdown of the first rank (µs, as HTA gives it).
"""
import json
import logging
import os
import sys
import time

started = time.perf_counter()
from hta.trace_analysis import TraceAnalysis  # noqa: E402  (timed: importing pandas is part of HTA's cost)

logging.getLogger("hta").setLevel(logging.ERROR)
imported = time.perf_counter()
trace = os.path.abspath(sys.argv[1])
options = {"include_last_profiler_step": True} if "--include-last-step" in sys.argv else {}
analysis = TraceAnalysis(trace_files={0: trace}, trace_dir=os.path.dirname(trace), **options)
loaded = time.perf_counter()
table = analysis.get_temporal_breakdown(visualize=False)
done = time.perf_counter()
first = {k: (v.item() if hasattr(v, "item") else v) for k, v in table.iloc[0].to_dict().items()}
print("HTA " + json.dumps({
    "import_s": round(imported - started, 3),
    "load_s": round(loaded - imported, 3),
    "breakdown_s": round(done - loaded, 3),
    "breakdown": first,
}))
