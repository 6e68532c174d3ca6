"""Make one real PyTorch profiler (Kineto) trace whose truth is known by construction.

Usage (one CUDA GPU):  python3 scripts/gpu/truth_traces.py OUTDIR VARIANT
       or all variants: bash scripts/gpu/make_truth_traces.sh OUTDIR
Writes OUTDIR/VARIANT.pt.trace.json.gz (the profiler's own export, gzipped with mtime 0) and
OUTDIR/VARIANT.truth.json (numbers measured OUTSIDE the profiler: host clocks and CUDA events).

Every variant trains the same small bf16 MLP (4 Linear layers: 2048 -> 4096 -> 4096 -> 4096 -> 2048,
GELU between them) on a fixed random batch of 256 sequences x 16 positions with AdamW, and
profiles exactly STEPS optimizer steps with schedule(wait=0, warmup=0, active=STEPS, repeat=1),
record_shapes=True, one prof.step() per iteration. repeat=1 keeps the schedule from starting a
second cycle after the last step. The variants differ only as VARIANTS below says.

Truth recorded per profiled step i (0-based, the trace's ProfilerStep#i):
- host clocks (time.monotonic_ns and time.time_ns) at the step's start (just after the previous
  prof.step() returned, or just after profile() was entered), after the user work (including the
  per-step sync, if any) and after prof.step() returned;
- two CUDA timing events on the current (default) stream: one recorded before the step's first
  kernel is enqueued, one after the optimizer step is enqueued (before any per-step sync). Their
  elapsed_time is read after the run. These two cudaEventRecord calls per step ARE in the trace:
  they are the truth probes, not syncs, and the host never waits on them inside the loop.
"""

import gc
import gzip
import inspect
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import warnings

import torch
from torch.profiler import ProfilerActivity, profile, schedule

STEPS = 10
BATCH, POSITIONS, D_IN, D_HIDDEN = 256, 16, 2048, 4096

# name -> how this variant differs from the clean foreach loop
VARIANTS = {
    "clean_foreach": {},
    "clean_fused": {"fused": True},
    "item_per_step": {"per_step_sync": "item"},
    "sync_per_step": {"per_step_sync": "synchronize"},
    "cold": {"warmup_steps": 0},
    "pipeline": {"pipeline": True},
    "pipeline_sync_events": {"pipeline": True, "cuda_sync_events": True},
}
DEFAULTS = {
    "fused": False,
    "warmup_steps": 3,
    "per_step_sync": None,
    "pipeline": False,
    "cuda_sync_events": False,
}
SYNC_KIND = {
    None: None,
    "item": "loss.item() on the CUDA loss tensor: a device-to-host copy the host waits for",
    "synchronize": "torch.cuda.synchronize(): the host waits for the whole device",
}


def build(cfg):
    """Model, optimizer, data and the function that runs one training step."""
    torch.manual_seed(0)
    dev = torch.device("cuda")
    dims = [D_IN, D_HIDDEN, D_HIDDEN, D_HIDDEN, D_IN]
    layers = []
    for k in range(4):
        layers.append(torch.nn.Linear(dims[k], dims[k + 1]))
        if k < 3:
            layers.append(torch.nn.GELU())
    model = torch.nn.Sequential(*layers).to(dev, torch.bfloat16)
    if cfg["fused"]:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)  # default: foreach on CUDA
    x = torch.randn(BATCH, POSITIONS, D_IN, device=dev, dtype=torch.bfloat16)
    target = torch.randn(BATCH, POSITIONS, D_IN, device=dev, dtype=torch.bfloat16)
    side = torch.cuda.Stream() if cfg["pipeline"] else None
    w_side = torch.randn(D_IN, D_IN, device=dev, dtype=torch.bfloat16) / D_IN**0.5
    ready = torch.cuda.Event()  # the pipeline's join event (no timing)

    def train_step():
        inp = x
        if side is not None:
            # Work on a side stream, then the main stream waits for it on the device.
            main = torch.cuda.current_stream()
            with torch.cuda.stream(side):
                inp = torch.tanh(x @ w_side)
            ready.record(side)
            main.wait_event(ready)
            inp.record_stream(main)
        out = model(inp)
        loss = torch.nn.functional.mse_loss(out, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return model, opt, side, train_step


def per_step_sync(kind, loss):
    if kind == "item":
        loss.item()
    elif kind == "synchronize":
        torch.cuda.synchronize()


def count_sync_debug_warnings(cfg, train_step, steps=2):
    """Run `steps` more (unprofiled) steps under torch.cuda.set_sync_debug_mode('warn')."""
    counts, messages = [], set()
    torch.cuda.set_sync_debug_mode("warn")
    try:
        for _ in range(steps):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                loss = train_step()
                per_step_sync(cfg["per_step_sync"], loss)
            hits = [w for w in caught if "synchroniz" in str(w.message).lower()]
            counts.append(len(hits))
            messages.update(str(w.message).splitlines()[0][:200] for w in hits)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()
    return counts, sorted(messages)


def adamw_facts(opt):
    first = next(iter(opt.state.values()), None)
    step = first.get("step") if first else None
    facts = {
        "adamw_foreach_argument": opt.defaults.get("foreach"),
        "adamw_fused_argument": opt.defaults.get("fused"),
        "adamw_step_counter_device": str(step.device) if isinstance(step, torch.Tensor) else None,
    }
    try:
        from torch.optim.optimizer import _default_to_fused_or_foreach

        params = [p for g in opt.param_groups for p in g["params"]]
        fused, foreach = _default_to_fused_or_foreach(params, False, False)
        facts["adamw_default_resolves_to"] = "fused" if fused else ("foreach" if foreach else "for-loop")
    except Exception as exc:  # private helper; record, don't fail
        facts["adamw_default_resolves_to"] = f"unknown ({type(exc).__name__}: {exc})"
    return facts


def profiler_stop_synchronizes():
    try:
        src = inspect.getsource(torch.autograd.profiler.profile.__exit__)
        return "synchronize" in src
    except Exception:
        return None


def environment():
    env = {
        "torch_version": torch.__version__,
        "torch_cuda_version": torch.version.cuda,
        "gpu_name": torch.cuda.get_device_name(0),
        "gpu_compute_capability": ".".join(map(str, torch.cuda.get_device_capability(0))),
        "python_version": platform.python_version(),
        "kernel_release": platform.release(),
    }
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30,
        )
        env["driver_version"] = smi.stdout.strip() or None
    except Exception as exc:
        env["driver_version"] = f"unknown ({exc})"
    return env


def experimental_config(cfg, truth):
    if not cfg["cuda_sync_events"]:
        return None
    try:
        conf = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
        truth["experimental_config"] = "torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)"
        return conf
    except Exception as exc:
        truth["experimental_config"] = f"FAILED: {type(exc).__name__}: {exc}; profiled without it"
        return None


def main():
    out, name = sys.argv[1], sys.argv[2]
    cfg = dict(DEFAULTS, **VARIANTS[name])
    os.makedirs(out, exist_ok=True)
    truth = {"variant": name, "made_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    truth.update(environment())
    model, opt, side, train_step = build(cfg)

    for _ in range(cfg["warmup_steps"]):
        per_step_sync(cfg["per_step_sync"], train_step())
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(STEPS)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(STEPS)]
    for ev in starts + ends:
        ev.record()  # creates the CUDA event now, so no cudaEventCreate lands in the trace
    torch.cuda.synchronize()  # outside the profiled window: the GPU is idle when profile() starts
    gc.collect()

    host = []
    trace_path = os.path.join(out, f"{name}.pt.trace.json")

    def save(prof):
        prof.export_chrome_trace(trace_path)

    conf = experimental_config(cfg, truth)
    with warnings.catch_warnings(record=True) as prof_warnings:
        warnings.simplefilter("always")
        with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(wait=0, warmup=0, active=STEPS, repeat=1),
            record_shapes=True,
            on_trace_ready=save,
            experimental_config=conf,
        ) as prof:
            for i in range(STEPS):
                t_start = (time.monotonic_ns(), time.time_ns())
                starts[i].record()
                loss = train_step()
                ends[i].record()
                per_step_sync(cfg["per_step_sync"], loss)
                t_work = (time.monotonic_ns(), time.time_ns())
                prof.step()
                t_step = (time.monotonic_ns(), time.time_ns())
                host.append((t_start, t_work, t_step))
    torch.cuda.synchronize()

    steps = []
    for i in range(STEPS):
        (s_mono, s_unix), (w_mono, w_unix), (p_mono, p_unix) = host[i]
        steps.append({
            "index": i,
            "profiler_step_name": f"ProfilerStep#{i}",
            "host_start_monotonic_ns": s_mono,
            "host_start_unix_ns": s_unix,
            "host_work_end_monotonic_ns": w_mono,
            "host_work_end_unix_ns": w_unix,
            "host_after_prof_step_monotonic_ns": p_mono,
            "host_after_prof_step_unix_ns": p_unix,
            "host_work_ms": (w_mono - s_mono) / 1e6,
            "host_step_ms_incl_prof_step": (p_mono - s_mono) / 1e6,
            "gpu_step_ms_from_events": starts[i].elapsed_time(ends[i]),
            "gpu_period_to_next_step_start_ms_from_events": (
                starts[i].elapsed_time(starts[i + 1]) if i + 1 < STEPS else None
            ),
            "explicit_host_syncs": 1 if cfg["per_step_sync"] else 0,
        })
    gpu_steps = [s["gpu_step_ms_from_events"] for s in steps]
    sync_counts, sync_messages = count_sync_debug_warnings(cfg, train_step)

    truth.update({
        "profiled_steps": STEPS,
        "profiler_schedule": f"schedule(wait=0, warmup=0, active={STEPS}, repeat=1)",
        "record_shapes": True,
        "warmup_steps_before_profile": cfg["warmup_steps"],
        "synchronize_before_profile": True,
        "model": f"bf16 MLP Linear {D_IN}->{D_HIDDEN}->{D_HIDDEN}->{D_HIDDEN}->{D_IN}, GELU between",
        "input_shape": [BATCH, POSITIONS, D_IN],
        "optimizer": "torch.optim.AdamW(lr=1e-4" + (", fused=True)" if cfg["fused"] else ") default"),
        "explicit_host_syncs_per_step": 1 if cfg["per_step_sync"] else 0,
        "explicit_host_sync_kind": SYNC_KIND[cfg["per_step_sync"]],
        "explicit_host_syncs_total": STEPS if cfg["per_step_sync"] else 0,
        "profiler_stop_source_calls_synchronize": profiler_stop_synchronizes(),
        "truth_cuda_event_records_per_step": 2,
        "side_stream": cfg["pipeline"],
        "side_stream_event_records_per_step": 1 if cfg["pipeline"] else 0,
        "device_side_stream_waits_per_step": 1 if cfg["pipeline"] else 0,
        "cuda_sync_events_requested": cfg["cuda_sync_events"],
        "sync_debug_mode_warnings_per_step_after_profile": sync_counts,
        "sync_debug_mode_messages": sync_messages,
        "gpu_window_ms_from_events": starts[0].elapsed_time(ends[STEPS - 1]),
        "gpu_step_ms_median_from_events": statistics.median(gpu_steps),
        "host_window_ms": (host[-1][1][0] - host[0][0][0]) / 1e6,
        "profiler_warnings": sorted({str(w.message).splitlines()[0][:200] for w in prof_warnings}),
        "steps": steps,
    })
    truth.update(adamw_facts(opt))

    if os.path.exists(trace_path):
        with open(trace_path, "rb") as src, open(trace_path + ".gz", "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
        os.remove(trace_path)
        truth["trace_file"] = os.path.basename(trace_path) + ".gz"
        truth["trace_gz_bytes"] = os.path.getsize(trace_path + ".gz")
    else:
        truth["trace_file"] = None
    with open(os.path.join(out, f"{name}.truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    print(name, "gpu ms/step", [round(g, 3) for g in gpu_steps],
          "host ms/step", [round(s["host_work_ms"], 3) for s in steps],
          "sync-debug", sync_counts, "gz bytes", truth.get("trace_gz_bytes"))


if __name__ == "__main__":
    main()
