import gzip, json, sys, collections
for path in sys.argv[1:]:
    d = json.load(gzip.open(path))
    ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    steps = sorted([e for e in ev if e["name"].startswith("ProfilerStep#")], key=lambda e: e["ts"])
    cats = collections.Counter(e.get("cat") for e in ev)
    print("==", path.split("/")[-1], "base", d.get("baseTimeNanoseconds"), "cats", dict(cats))
    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    def union(iv):
        iv = sorted(iv); tot = 0; cur = None
        for a, b in iv:
            if cur is None or a > cur[1]:
                if cur: tot += cur[1] - cur[0]
                cur = [a, b]
            else: cur[1] = max(cur[1], b)
        if cur: tot += cur[1] - cur[0]
        return tot
    span0 = min(e["ts"] for e in gpu); span1 = max(e["ts"] + e["dur"] for e in gpu)
    busy = union([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
    streams = collections.Counter(e["args"].get("stream") for e in gpu)
    print(f"  gpu span {span1-span0:.0f} us busy {busy:.0f} us idle {span1-span0-busy:.0f} us; streams {dict(streams)}")
    interesting = ("cudaEventRecord", "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMemcpyAsync", "cudaStreamWaitEvent", "cudaEventSynchronize", "aten::item", "aten::_local_scalar_dense", "cudaEventQuery")
    for s in steps:
        a, b = s["ts"], s["ts"] + s["dur"]
        c = collections.Counter(e["name"] for e in ev if a <= e["ts"] < b and e["name"] in interesting and e.get("cat") in ("cuda_runtime", "cuda_driver", "cpu_op"))
        sy = collections.Counter(e["name"] for e in ev if e.get("cat") == "cuda_sync" and a <= e["ts"] < b)
        print(f"  {s['name']:16} dur {s['dur']/1e3:7.3f} ms", dict(c), ("sync:" + str(dict(sy))) if sy else "")
    outside = collections.Counter(e["name"] for e in ev if e["name"] in interesting and not any(s["ts"] <= e["ts"] < s["ts"] + s["dur"] for s in steps))
    print("  outside steps:", dict(outside))
