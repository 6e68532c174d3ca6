//! The audit's HTA views (idle breakdown, queue length, launch statistics, memory bandwidth)
//! against HTA 0.5.0's own numbers on every real Kineto trace in `tests/data/traces/`.
//!
//! Provenance: `tests/data/hta-views/hta_views.json`, written by
//! `tests/data/hta-views/hta_views.py` (its docstring and the file's `provenance` say how:
//! `holistictraceanalysis==0.5.0`, Python 3.11, in a venv outside the repository; never run
//! by CI). Three variants per trace, all computed by HTA itself:
//!
//! - `defaults`: HTA as a user runs it, in µs;
//! - `ns`: the trace rewritten with exact integer-ns times, so HTA does not round (only
//!   `us-rounding` off);
//! - `ns_all_steps`: as `ns`, with the last-`ProfilerStep` filter patched out too
//!   (`last-step-filter` off).
//!
//! The audit's exact numbers are compared with `ns_all_steps` **exactly**, and every
//! difference that remains is named by its assumption (`docs/hta-views.md`); the two defaults
//! are checked to be the only differences between `defaults` and `ns_all_steps`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use worksheet::audit::index::Index;
use worksheet::audit::{audit, bandwidth, launch, queue, Audit, AuditOptions, Trace};
use worksheet::import::{read_audit_trace, ImportOptions};
use worksheet::trace::model::ActivityKind;

const TRACES: [&str; 8] = [
    "benchmark_result_2869224_1695835535_trace.json.gz",
    "df_index_resolver.json.gz",
    "event_sync_trace.json.gz",
    "nccl_data.json.gz",
    "sampled_rank-0.json.gz",
    "sampled_rank-1.json.gz",
    "worker0.1623143089861.pt.trace.json.gz",
    "worker0.1623212756351.pt.trace.json.gz",
];

fn hta() -> Value {
    let text = std::fs::read_to_string("tests/data/hta-views/hta_views.json").unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["provenance"]["version"], "0.5.0");
    v
}

fn read(name: &str) -> Trace {
    read_audit_trace(
        &Path::new("tests/data/traces").join(name),
        &ImportOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn int(v: &Value) -> i128 {
    i128::from(
        v.as_i64()
            .unwrap_or_else(|| panic!("{v} is not an integer")),
    )
}

/// `gpu0-s7` → `"7"`, HTA's key (HTA pools devices; every trace here has one).
fn stream_key(stream: &str) -> String {
    stream.rsplit("-s").next().unwrap().to_owned()
}

/// The trace with only the calls HTA's analysis joins (the `launch-call-names` difference).
fn only_calls(trace: &Trace, names: &[&str]) -> Trace {
    let mut t = trace.clone();
    t.calls.retain(|c| names.contains(&&*c.name));
    t
}

fn one_device(a: &Audit) {
    assert_eq!(a.breakdown.len(), 1, "{}: HTA pools devices", a.input);
}

/// Idle time per stream and cause: exactly HTA's rule, on every stream of every trace.
#[test]
fn idle_breakdown_equals_htas_per_stream_and_cause() {
    let hta = hta();
    let mut streams = 0;
    for name in TRACES {
        let a = audit(&read(name), name, &AuditOptions::default());
        one_device(&a);
        let theirs = hta["traces"][name]["ns_all_steps"]["idle"]
            .as_object()
            .unwrap();
        assert_eq!(theirs.len(), a.idle.len(), "{name}");
        for row in &a.idle {
            let h = &theirs[&stream_key(&row.stream)];
            let cause = |c: &str| h.get(c).map_or(0, int);
            assert_eq!(
                (row.host_wait_ns, row.kernel_wait_ns, row.other_ns),
                (cause("host_wait"), cause("kernel_wait"), cause("other")),
                "{name} {}",
                row.stream
            );
            assert_eq!(row.idle_ns(), row.span_ns - row.busy_ns);
            streams += 1;
        }
    }
    assert_eq!(streams, 21);
}

/// Pending queue (HTA's queue length): the time at length ≥ 1 is exactly HTA's everywhere;
/// the maximum is HTA's except where a launch call starts at the very ns a queued activity
/// starts (`queue-ties`): there HTA's unstable sort may count both, the half-open rule one.
/// Ours ≤ HTA's ≤ the maximum with touching intervals counted as overlapping.
#[test]
fn queue_length_equals_htas_but_for_ties() {
    const HTA_QUEUE_CALLS: [&str; 5] = [
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cuLaunchKernel",
        "cudaMemcpyAsync",
        "cudaMemsetAsync",
    ];
    let hta = hta();
    let mut differs = Vec::new();
    let mut total = 0;
    for name in TRACES {
        let trace = only_calls(&read(name), &HTA_QUEUE_CALLS);
        let index = Index::new(&trace);
        let rows = queue::queue_rows(&index);
        let theirs = &hta["traces"][name]["ns_all_steps"]["queue"];
        for row in rows.iter().filter(|r| r.launched > 0) {
            let h = &theirs[stream_key(&row.stream)];
            assert_eq!(
                row.pending.time_at_1_or_more_ns,
                int(&h["time_at_1_or_more"]),
                "{name} {}",
                row.stream
            );
            let hta_max = h["max"].as_u64().unwrap();
            if row.pending.max != hta_max {
                // Recompute with touching intervals overlapping: [call, start + 1 ns).
                let closed: Vec<(i64, i64)> = trace
                    .activities
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| format!("gpu{}-s{}", a.device, a.stream) == row.stream)
                    .filter_map(|(i, a)| {
                        index.launch[i].map(|c| (trace.calls[c].start, a.start + 1))
                    })
                    .collect();
                assert!(row.pending.max < hta_max, "{name} {}", row.stream);
                assert!(
                    hta_max <= queue::depth(&closed).max,
                    "{name} {}",
                    row.stream
                );
                differs.push(format!("{name} {}", row.stream));
            }
            total += 1;
        }
        assert_eq!(
            theirs.as_object().unwrap().len(),
            rows.iter().filter(|r| r.launched > 0).count()
        );
    }
    assert_eq!(total, 21);
    assert_eq!(differs, ["event_sync_trace.json.gz gpu0-s28"]);
}

/// Launch statistics: HTA's joined launches, their summed call and kernel durations, its
/// clipped delay, and the counts its plots select, all exact.
#[test]
fn launch_statistics_equal_htas() {
    const HTA_LAUNCH_CALLS: [&str; 4] = [
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cudaMemcpyAsync",
        "cudaMemsetAsync",
    ];
    let hta = hta();
    for name in TRACES {
        let trace = only_calls(&read(name), &HTA_LAUNCH_CALLS);
        let l = launch::launches(&Index::new(&trace)).total;
        let h = &hta["traces"][name]["ns_all_steps"]["launch"];
        let ours = (
            i128::from(l.count),
            l.call_ns,
            l.gpu_ns,
            l.launch_delay_clipped_ns,
            i128::from(l.short),
            i128::from(l.long_calls),
            i128::from(l.long_delays),
        );
        let theirs = (
            int(&h["count"]),
            int(&h["cpu_duration_sum"]),
            int(&h["gpu_duration_sum"]),
            int(&h["launch_delay_sum"]),
            int(&h["short_kernels"]),
            int(&h["runtime_outliers"]),
            int(&h["launch_delay_outliers"]),
        );
        assert_eq!(ours, theirs, "{name}");
        assert!(l.launch_delay_clipped_ns >= l.launch_delay_ns);
    }
}

/// Memory bandwidth: HTA reads the profiler's own rate per copy (computed from its unrounded
/// duration), so the rates agree only where the trace records ns (`nccl_data`); HTA's
/// count is the number of copies except where copies of one kind touch or overlap (one
/// starts at or before another's end: its step function then has more points above zero;
/// `df_index_resolver` DtoD, the only such kind here).
#[test]
fn memory_bandwidth_kinds_counts_and_peaks_against_htas() {
    let hta = hta();
    for name in TRACES {
        let trace = read(name);
        let a = audit(&trace, name, &AuditOptions::default());
        let touching = |kind: &str| {
            let mut iv: Vec<(i64, i64)> = trace
                .activities
                .iter()
                .filter(|x| x.kind != ActivityKind::Kernel && bandwidth::kind_of(x) == kind)
                .map(|x| (x.start, x.end))
                .collect();
            iv.sort_unstable();
            let mut reach = i64::MIN;
            iv.iter().any(|&(s, e)| {
                let touches = s <= reach;
                reach = reach.max(e);
                touches
            })
        };
        let theirs = hta["traces"][name]["ns_all_steps"]["memory_bw"]
            .as_object()
            .unwrap();
        let ours: BTreeMap<String, _> = a
            .bandwidth
            .iter()
            .map(|b| {
                let key = if b.kind == "Memset" {
                    "Memset".to_owned()
                } else {
                    format!("Memcpy {}", b.kind)
                };
                (key, b)
            })
            .collect();
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>(),
            "{name}"
        );
        for (kind, b) in &ours {
            assert!(
                b.mb_per_s.is_some() && b.unknown_why.is_none(),
                "{name} {kind}"
            );
            let count = theirs[kind]["count"].as_u64().unwrap();
            if touching(&b.kind) {
                assert_eq!(
                    (name, kind.as_str()),
                    ("df_index_resolver.json.gz", "Memcpy DtoD")
                );
                assert!(count > b.count, "{count} {}", b.count);
            } else {
                assert_eq!(b.count, count, "{name} {kind}");
            }
            if name == "nccl_data.json.gz" {
                let max_mb = (theirs[kind]["max_gbps"].as_f64().unwrap() * 1000.0).round();
                assert_eq!(b.peak_copy_mb_per_s, Some(max_mb as u128), "{kind}");
            }
        }
    }
}

/// What HTA's defaults change, measured by HTA itself: whole-µs rounding only where `ts` has
/// a fraction (`nccl_data` alone here), the last-step filter only where the trace has two or
/// more `ProfilerStep` names. Nothing else separates HTA's defaults from the exact inputs.
#[test]
fn htas_defaults_differ_only_by_the_two_named_assumptions() {
    let hta = hta();
    let scaled = |v: &Value| -> Value {
        // µs → ns for the time fields; counts and maxima stay.
        let mut v = v.clone();
        let times = ["host_wait", "kernel_wait", "other", "time_at_1_or_more"];
        fn walk(v: &mut Value, times: &[&str], in_launch: bool) {
            if let Value::Object(m) = v {
                for (k, x) in m.iter_mut() {
                    let launch_time = in_launch && k.ends_with("_sum");
                    if (times.contains(&k.as_str()) || launch_time) && x.is_number() {
                        *x = Value::from(x.as_i64().unwrap() * 1000);
                    } else {
                        walk(x, times, in_launch || k == "launch");
                    }
                }
            }
        }
        walk(&mut v, &times, false);
        v.as_object_mut().unwrap().remove("memory_bw");
        v
    };
    let mut rounded = Vec::new();
    let mut filtered = Vec::new();
    for name in TRACES {
        let t = &hta["traces"][name];
        let mut ns = t["ns"].clone();
        ns.as_object_mut().unwrap().remove("memory_bw");
        if scaled(&t["defaults"]) != ns {
            rounded.push(name);
        }
        if t["ns"] != t["ns_all_steps"] {
            filtered.push(name);
        }
        let steps: std::collections::BTreeSet<String> = read(name)
            .steps
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        assert_eq!(t["ns"] != t["ns_all_steps"], steps.len() >= 2, "{name}");
    }
    assert_eq!(rounded, ["nccl_data.json.gz"]);
    assert_eq!(
        filtered,
        [
            "df_index_resolver.json.gz",
            "nccl_data.json.gz",
            "sampled_rank-0.json.gz",
            "sampled_rank-1.json.gz",
            "worker0.1623143089861.pt.trace.json.gz",
            "worker0.1623212756351.pt.trace.json.gz",
        ]
    );
}
