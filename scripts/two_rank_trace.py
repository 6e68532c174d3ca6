"""Make a real two-rank PyTorch profiler (Kineto) trace with NCCL all-reduces.

Run on one host with two GPUs:  torchrun --nproc_per_node 2 scripts/two_rank_trace.py OUTDIR [TINY]
Each rank writes OUTDIR/rank{R}.json.gz. Both ranks share the host's clock, so the true offset
between their timelines is about 0 (the ground truth the collective bound must contain).
Rank 1 does three times the compute in steps 3 and 6, so it arrives late at those
all-reduces (a straggler with a known cause).

With TINY > 0, each step ends with TINY back-to-back all-reduces of one float after the
host sync: short collectives that both ranks enter nearly together, which is the evidence a
tight clock bound needs (SPEC §10: a bound is no narrower than the collectives that give it).
"""

import gzip
import os
import shutil
import sys

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, record_function, schedule


def main() -> None:
    out = sys.argv[1]
    tiny_count = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.makedirs(out, exist_ok=True)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    grad = torch.randn(16 * 1024 * 1024, device=dev)
    tiny = torch.ones(1, device=dev)
    # Warm NCCL and cuBLAS outside the profile.
    for _ in range(3):
        torch.mm(a, b)
        dist.all_reduce(grad)
        if tiny_count:
            dist.all_reduce(tiny)
    torch.cuda.synchronize()

    def on_ready(prof):
        path = os.path.join(out, f"rank{rank}.json")
        prof.export_chrome_trace(path)
        with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.remove(path)

    sched = schedule(wait=1, warmup=1, active=8, repeat=1)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=sched,
        on_trace_ready=on_ready,
    ) as prof:
        for step in range(10):
            with record_function("forward_backward"):
                reps = 3 if (rank == 1 and step in (3, 6)) else 1
                for _ in range(4 * reps):
                    c = torch.mm(a, b)
            with record_function("grad_all_reduce"):
                dist.all_reduce(grad)
            with record_function("optimizer"):
                grad.mul_(0.5)
                _ = c.sum().item()
            if tiny_count:
                with record_function("clock_sync_all_reduces"):
                    for _ in range(tiny_count):
                        dist.all_reduce(tiny)
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
