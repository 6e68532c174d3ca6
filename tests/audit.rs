//! `worksheet audit` end to end: every real trace in `tests/data` (Kineto and Nsight Systems)
//! gets its findings snapshotted, with a comment saying why it has each; the exposed-time
//! breakdown adds up to the span on every one; the JSON report has the shape of issue 8; exit
//! codes; `import` prints the same findings.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use worksheet::audit::{audit, Audit, AuditOptions};
use worksheet::import::{read_audit_trace, ImportOptions};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

fn audit_of(rel: &str) -> Audit {
    let trace = read_audit_trace(&data(rel), &ImportOptions::default()).expect("reads");
    audit(&trace, rel, &AuditOptions::default())
}

/// The findings as lines: `severity code ×count: message`.
fn findings(a: &Audit) -> String {
    a.findings
        .iter()
        .map(|f| format!("{} {} ×{}: {}", f.severity, f.code, f.count, f.message))
        .collect::<Vec<_>>()
        .join("\n")
}

fn codes(a: &Audit) -> Vec<&'static str> {
    a.findings.iter().map(|f| f.code).collect()
}

/// Every real trace, with the findings it must have and why.
const TRACES: &[(&str, &[&str])] = &[
    // nccl_data (HTA, current Kineto): per step 8 cudaEventSynchronize calls (timing with CUDA
    // events) block the host; 84 cudaStreamWaitEvent runtime rows and no cuda_sync rows, so
    // the join of compute stream 7 and NCCL stream 40 is unrecorded; every `nccl:all_reduce`
    // record_function closes ~86 µs after it starts while its kernels run ms longer; four
    // cudaEventQuery calls after the profiler's window; the final cudaDeviceSynchronize is the
    // profiler's; stream 7 is idle 82 % with launch delays at the floor.
    (
        "traces/nccl_data.json.gz",
        &[
            "sync-in-loop",
            "dependency-unrecorded",
            "host-range-measures-submission",
            "outside-window",
            "profiler-sync",
            "launch-queue-delay",
        ],
    ),
    // alexnet benchmark (HTA critical path): cuda_sync rows exist, but 14 of the 34
    // cudaStreamWaitEvent calls have none; no ProfilerStep; the profiler's final sync. Its
    // launch delays grow over the window, but the stream is idle 99.5 %: no deep queue.
    (
        "traces/benchmark_result_2869224_1695835535_trace.json.gz",
        &["dependency-unrecorded", "profiler-sync", "no-steps"],
    ),
    // df_index_resolver: 6,060 stream waits without sync rows; `nccl:all_reduce` ranges only
    // submit; the final sync is the profiler's.
    (
        "traces/df_index_resolver.json.gz",
        &[
            "dependency-unrecorded",
            "host-range-measures-submission",
            "profiler-sync",
            "launch-queue-delay",
        ],
    ),
    // event_sync_trace: a tiny trace whose stream wait has its cuda_sync row; no steps; the
    // last wait is a device sync with nothing after it.
    (
        "traces/event_sync_trace.json.gz",
        &["profiler-sync", "no-steps"],
    ),
    // sampled ranks: per step, two aten::item and two cudaMemcpyAsync into pageable memory
    // (synchronous DtoH copies), 4 per step; annotation
    // ranges (`## encoder fp8 None ##`, …) that only submit; a starved stream.
    (
        "traces/sampled_rank-0.json.gz",
        &[
            "sync-in-loop",
            "host-range-measures-submission",
            "launch-queue-delay",
        ],
    ),
    (
        "traces/sampled_rank-1.json.gz",
        &[
            "sync-in-loop",
            "host-range-measures-submission",
            "launch-queue-delay",
        ],
    ),
    // 2021 ResNet-50 traces: cudaStreamSynchronize twice per step (no cuda_sync rows in 2021,
    // found by call name); the profiler's sync; the second run's first step is 1.4× the median.
    (
        "traces/worker0.1623143089861.pt.trace.json.gz",
        &["sync-in-loop", "profiler-sync", "launch-queue-delay"],
    ),
    (
        "traces/worker0.1623212756351.pt.trace.json.gz",
        &[
            "sync-in-loop",
            "cold-steps",
            "profiler-sync",
            "launch-queue-delay",
        ],
    ),
    // nsys exports: no ProfilerStep markers in any. fuser: NVTX ranges of nvFuser
    // (`ExecutorRunFusion::cuLaunchKernel`, …) close before their kernels end; the last
    // cudaDeviceSynchronize is last. mfu: PyTorch emit_nvtx op ranges only submit; one real
    // 12.442 µs overlap on device 0 stream 7 (tests/data/nsys/README.md); 31 kernels whose
    // launch is outside the capture. saxpy: `saxpy` NVTX ranges only submit.
    (
        "nsys/fuser_report1.sqlite",
        &[
            "host-range-measures-submission",
            "profiler-sync",
            "no-steps",
        ],
    ),
    (
        "nsys/mfu_2gpu_before.sqlite",
        &[
            "host-range-measures-submission",
            "same-stream-overlap",
            "gpu-without-launch",
            "no-steps",
        ],
    ),
    ("nsys/mordred_report1.sqlite", &["no-steps"]),
    ("nsys/perlmutter-cloverleaf-cuda.sqlite", &["no-steps"]),
    (
        "nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
        &["host-range-measures-submission", "no-steps"],
    ),
];

#[test]
fn every_real_trace_gets_its_findings() {
    let mut all = String::new();
    for (rel, expected) in TRACES {
        let a = audit_of(rel);
        let mut got = codes(&a);
        got.sort_unstable();
        let mut want = expected.to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "{rel}:\n{}", findings(&a));
        all.push_str(&format!("== {rel}\n{}\n", findings(&a)));
    }
    insta::assert_snapshot!("findings_of_every_real_trace", all);
}

#[test]
fn the_breakdown_adds_up_to_the_span_on_every_real_trace() {
    for (rel, _) in TRACES {
        let a = audit_of(rel);
        assert!(!a.breakdown.is_empty(), "{rel}");
        for b in &a.breakdown {
            assert_eq!(b.total_ns(), b.span_ns, "{rel} {}", b.device);
            assert!(b.exclusive_compute_ns >= 0 && b.exposed_communication_ns >= 0);
            assert!(b.exposed_memory_ns >= 0 && b.idle_ns >= 0);
        }
        for r in &a.steps {
            assert_eq!(r.busy_ns + r.idle_ns, r.host_ns, "{rel} {}", r.step);
        }
    }
}

/// Values read off nccl_data by hand: 3 steps; ProfilerStep#4 is `ts` 4458676416788.066,
/// `dur` 222442.191 µs.
#[test]
fn nccl_data_steps_and_breakdown() {
    let a = audit_of("traces/nccl_data.json.gz");
    let names: Vec<&str> = a.steps.iter().map(|r| r.step.as_str()).collect();
    assert_eq!(
        names,
        ["ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6"]
    );
    assert_eq!(a.steps[0].host_ns, 222_442_191);
    assert_eq!(a.steps[0].syncs, 8);
    let b = &a.breakdown[0];
    assert_eq!(b.device, "gpu0");
    assert_eq!(b.span_ns, 660_551_005);
    let f = a.finding("dependency-unrecorded").unwrap();
    assert_eq!(f.count, 84);
    assert_eq!(
        f.evidence.items[0],
        "order unknown between: gpu0-s7 ↔ gpu0-s40"
    );
}

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").unwrap()
}

#[test]
fn the_json_report_has_the_shape_of_the_issue() {
    let out = worksheet()
        .args(["audit", "--format", "json"])
        .arg(data("traces/nccl_data.json.gz"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "worksheet-audit");
    assert_eq!(v["version"], 1);
    assert!(v["input"].as_str().unwrap().ends_with("nccl_data.json.gz"));
    assert_eq!(v["steps"].as_array().unwrap().len(), 3);
    for f in v["findings"].as_array().unwrap() {
        let keys: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["code", "count", "evidence", "fix", "message", "severity"]
        );
        assert!(["info", "warning", "error"].contains(&f["severity"].as_str().unwrap()));
        assert!(f["count"].is_u64());
        assert!(f["evidence"]["items"].is_array() && f["evidence"]["more"].is_u64());
    }
}

#[test]
fn fail_on_sets_the_exit_code() {
    let run = |args: &[&str]| {
        worksheet()
            .arg("audit")
            .arg(data("traces/nccl_data.json.gz"))
            .args(args)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(run(&[]), Some(0));
    assert_eq!(run(&["--fail-on", "warning"]), Some(1));
    assert_eq!(run(&["--fail-on", "error"]), Some(0));
    let md = worksheet()
        .args(["audit", "--format", "markdown"])
        .arg(data("traces/event_sync_trace.json.gz"))
        .output()
        .unwrap();
    let text = String::from_utf8(md.stdout).unwrap();
    assert!(text.starts_with("# Audit of `"), "{text}");
    assert!(text.contains("### `profiler-sync` (info)"), "{text}");
}

#[test]
fn malformed_inputs_exit_2_and_a_case_file_is_audited() {
    let out = worksheet()
        .arg("audit")
        .arg(data("traces/malformed/binary-junk.json"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A negative duration makes `import` refuse the trace; `audit` says what is wrong.
    let out = worksheet()
        .arg("audit")
        .arg(data("traces/malformed/negative-dur.json"))
        .args(["--fail-on", "error"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("error   negative-duration"));
    let out = worksheet()
        .arg("audit")
        .arg(data("gzip/truncated.json.gz"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cases/overlapping-phases.json");
    let out = worksheet().arg("audit").arg(&case).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("(case)"), "{text}");
}

#[test]
fn import_prints_the_same_findings_under_its_summary() {
    let out = worksheet()
        .arg("import")
        .arg(data("traces/nccl_data.json.gz"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let a = audit_of("traces/nccl_data.json.gz");
    let tail = text.split("\naudit (").nth(1).expect("an audit section");
    for f in &a.findings {
        assert!(tail.contains(&f.message), "{}", f.code);
    }
    // Never "0 stream waits" while unrecorded stream-wait calls exist.
    assert!(
        text.contains("0 mapped; 84 stream-wait call(s) without a sync row"),
        "{text}"
    );
}

#[test]
fn compat_hta_prints_htas_numbers_beside_the_audit() {
    let out = worksheet()
        .arg("audit")
        .arg(data("traces/nccl_data.json.gz"))
        .args(["--compat", "hta"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // HTA 0.5.0's own output on nccl_data rank 0 (issue 8): idle 338,781, compute 75,169,
    // non-compute 21,636, span 435,586 µs.
    assert!(
        text.contains("| HTA defaults           | 435,586            | 338,781     | 75,169      | 21,636      |"),
        "{text}"
    );
    assert!(text.find("findings:") < text.find("--compat hta:"));
    let out = worksheet()
        .arg("audit")
        .arg(data("nsys/mordred_report1.sqlite"))
        .args(["--compat", "hta", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error[unsupported-format]"));
}
