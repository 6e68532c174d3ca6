#!/usr/bin/env python3
"""Make N rank traces of one job from the shared sampled pair (HTA's sampled_rank-0/1).

Rank r is a byte copy of sampled rank (r % 2) with `distributedInfo.rank` = r and
`world_size` = N: only the header's two integers change, every event is kept as written (no
float arithmetic on `ts`, so no digits appear or vanish). The importer prefixes every clock and
stream with `r<rank>.`, so ranks need no shifted pids or streams to stay apart. The sampled pair
carries no collective args (no "Collective name"), so ranks are not related by collectives: this
measures reading, validating, evaluating and summarising many ranks, i.e. `import DIR` at scale.

Files are gzipped at level 1 (fast to write; the importer reads any gzip level alike).

Usage: python3 scripts/make_sampled_ranks.py OUT_DIR N [RANK0.json.gz RANK1.json.gz]
  (default sources: tests/data/traces/sampled_rank-{0,1}.json.gz, the same bytes as
   ../shared/traces/hta/sampled_rank-{0,1}.json.gz)
Example (1,024 ranks, about 125 MB of gzip in /tmp; delete it afterwards):
  python3 scripts/make_sampled_ranks.py /tmp/ranks1024 1024
  /usr/bin/time -v target/release/worksheet import /tmp/ranks1024 --format json > /dev/null
"""
import gzip
import os
import re
import sys

if len(sys.argv) not in (3, 5):
    sys.exit(__doc__)
out, n = sys.argv[1], int(sys.argv[2])
here = os.path.dirname(os.path.abspath(__file__))
sources = sys.argv[3:5] or [
    os.path.join(here, "..", "tests", "data", "traces", f"sampled_rank-{i}.json.gz") for i in (0, 1)
]
texts = [gzip.open(path, "rb").read() for path in sources]
header = re.compile(rb'"distributedInfo":\s*\{[^{}]*\}')
for i, text in enumerate(texts):
    if not header.search(text[:4096]):
        sys.exit(f"{sources[i]}: no distributedInfo object near the start")
os.makedirs(out, exist_ok=True)
width = len(str(n - 1))
for r in range(n):
    text = texts[r % 2]
    info = header.search(text[:4096])
    new_info = b'"distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d}' % (r, n)
    body = text[: info.start()] + new_info + text[info.end():]
    with gzip.open(os.path.join(out, f"rank{r:0{width}d}.json.gz"), "wb", compresslevel=1) as f:
        f.write(body)
print(f"{n} ranks in {out} (from {', '.join(sources)})")
