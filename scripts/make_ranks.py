#!/usr/bin/env python3
"""Make N synthetic ranks of one job from the real two-rank H200 trace (tests/data/ranks-sync).

Rank r is a copy of the real rank (r % 2) with distributedInfo.rank = r, world_size = N, and its
clock moved by a known r * SHIFT_NS: baseTimeNanoseconds is the origin every `ts` counts from,
so changing that one integer moves every timestamp by exactly that much (no float arithmetic on
`ts`, so no sub-ns digits appear). Every rank keeps its 40 all-reduces, so collectives match.

Why not ../shared/tools/make_scaled_trace.py: it tiles one trace in time by its own span, which
differs between the two real ranks (21.72 ms vs 22.17 ms), so the k-th copy of a collective would
sit 0.45 ms * k apart on the two ranks and the evidence would conflict; and it adds float
microseconds to `ts`, which leaves sub-ns digits.

Usage: python3 scripts/make_ranks.py OUT_DIR N [SHIFT_NS]   (default shift 7919 ns per rank)
"""
import gzip
import json
import os
import re
import sys

out, n = sys.argv[1], int(sys.argv[2])
shift = int(sys.argv[3]) if len(sys.argv) > 3 else 7919
here = os.path.dirname(os.path.abspath(__file__))
src = [
    gzip.open(os.path.join(here, "..", "tests", "data", "ranks-sync", f"rank{i}.json.gz"), "rt").read()
    for i in (0, 1)
]
os.makedirs(out, exist_ok=True)
base = re.compile(r'("baseTimeNanoseconds":\s*)(\d+)')
for r in range(n):
    text = src[r % 2]
    text = base.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + r * shift}", text, count=1)
    d = json.loads(text)
    d["distributedInfo"]["rank"] = r
    d["distributedInfo"]["world_size"] = n
    with gzip.open(os.path.join(out, f"rank{r:03d}.json.gz"), "wt") as f:
        json.dump(d, f)
print(f"{n} ranks in {out}, rank r's clock moved by r * {shift} ns")
