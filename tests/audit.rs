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
    // found by call name); the profiler's sync; the second run's first step is 1.4× the median
    // on the host only, with no more GPU work than a median step: named as the profiler's
    // likely start-up (info), not a cold loop.
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
        let keys: Vec<&str> = f
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "figures")
            .collect();
        assert_eq!(
            keys,
            ["code", "count", "evidence", "fix", "message", "severity"]
        );
        // A time a finding states is an exact integer beside its display string.
        for fig in f["figures"].as_array().into_iter().flatten() {
            let ns = fig["value_ns"].as_i64().unwrap();
            let display = fig["display"].as_str().unwrap();
            assert_eq!(worksheet::units::parse_value(display).unwrap().as_i64(), ns);
            assert!(fig["name"].as_str().unwrap().ends_with("_ns"));
        }
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

/// Every trace of `tests/data` that `audit` reads: Kineto traces, nsys exports, rank sets and
/// the GPU traces with known truth.
fn every_real_trace() -> Vec<String> {
    let mut all = Vec::new();
    for dir in ["traces", "nsys", "ranks", "ranks-sync", "truth"] {
        let mut names: Vec<String> = std::fs::read_dir(data(dir))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json.gz") || n.ends_with(".json") || n.ends_with(".sqlite"))
            .filter(|n| !n.ends_with(".truth.json"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        names.sort();
        all.extend(names);
    }
    all
}

/// Every `<number> <unit>` a line states, in ns (`t+` and `+` prefixes dropped), and every
/// `<number>%`, in tenths of a percent.
fn stated_times_and_shares(line: &str) -> (Vec<i64>, Vec<i64>) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let number = |w: &str| {
        let w = w
            .trim_start_matches(['[', '(', '+'])
            .trim_start_matches("t+");
        (!w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| w.to_owned())
    };
    let mut times = Vec::new();
    let mut shares = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if let (Some(n), Some(unit)) = (number(w), words.get(i + 1)) {
            let unit = unit.trim_end_matches([',', ')', ';', ':', '.']);
            if ["ns", "us", "ms", "s"].contains(&unit) {
                if let Ok(v) = worksheet::units::parse_value(&format!("{n} {unit}")) {
                    times.push(v.as_i64());
                }
            }
        }
        let bare = w.trim_start_matches('(').trim_end_matches([',', ')', ';']);
        if let Some(p) = bare.strip_suffix('%').and_then(number) {
            let tenths = p.replace('.', "").parse::<i64>().unwrap_or(0);
            shares.push(if p.contains('.') { tenths } else { tenths * 10 });
        }
    }
    (times, shares)
}

#[test]
fn no_finding_states_a_time_past_the_span_of_its_trace() {
    let traces = every_real_trace();
    assert!(traces.len() >= 24, "{traces:?}");
    for rel in &traces {
        let trace = read_audit_trace(&data(rel), &ImportOptions::default()).expect(rel);
        let a = audit(&trace, rel, &AuditOptions::default());
        let last = trace
            .activities
            .iter()
            .map(|x| x.end)
            .chain(trace.calls.iter().map(|c| c.end))
            .chain(trace.steps.iter().map(|s| s.end))
            .chain(trace.ranges.iter().map(|r| r.end))
            .chain(trace.window.map(|w| w.1))
            .max()
            .unwrap_or(a.origin_ns);
        let span = last - a.origin_ns;
        for f in &a.findings {
            for line in std::iter::once(&f.message).chain(&f.evidence.items) {
                let (times, shares) = stated_times_and_shares(line);
                for t in times {
                    assert!(
                        t <= span,
                        "{rel}: {} states {t} ns past the span {span} ns: {line}",
                        f.code
                    );
                }
                for p in shares {
                    assert!(
                        p <= 1000,
                        "{rel}: {} states a share over 100 %: {line}",
                        f.code
                    );
                }
            }
            for fig in &f.figures {
                assert!(
                    fig.value_ns <= span,
                    "{rel}: {} figure {} past the span",
                    f.code,
                    fig.name
                );
            }
        }
        // The idle after syncs is part of the device's idle time.
        if let Some(f) = a.finding("sync-in-loop") {
            for fig in f.figures.iter().filter(|g| g.name == "idle_ns") {
                let idle = a
                    .breakdown
                    .iter()
                    .find(|b| b.device == fig.clock)
                    .map(|b| b.idle_ns);
                assert!(
                    idle.is_some_and(|i| i128::from(fig.value_ns) <= i),
                    "{rel}: {fig:?} against {idle:?}"
                );
            }
        }
    }
}

#[test]
fn the_reader_of_stated_times_reads_what_findings_print() {
    let (t, p) = stated_times_and_shares(
        "idle 2.5 ms on gpu0, 38.6% of it, at t+1.25 ms (returned [t+0 ns, 4 us), 100%",
    );
    assert_eq!(t, vec![2_500_000, 1_250_000, 0, 4_000]);
    assert_eq!(p, vec![386, 1000]);
}

/// The GPU traces of `tests/data/truth`, made with known syncs per step (PROVENANCE.md).
const TRUTH: [&str; 7] = [
    "clean_foreach",
    "clean_fused",
    "item_per_step",
    "sync_per_step",
    "cold",
    "pipeline",
    "pipeline_sync_events",
];

#[test]
fn the_truth_traces_get_exactly_their_syncs_and_warmups() {
    for name in TRUTH {
        let truth: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(data(&format!("truth/{name}.truth.json"))).unwrap(),
        )
        .unwrap();
        let a = audit_of(&format!("truth/{name}.pt.trace.json.gz"));
        let per_step: Vec<u64> = truth["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["explicit_host_syncs"].as_u64().unwrap())
            .collect();
        let total: u64 = per_step.iter().sum();
        assert_eq!(total, truth["explicit_host_syncs_total"].as_u64().unwrap());
        // The step table counts exactly the real syncs, step by step.
        let counted: Vec<u64> = a.steps.iter().map(|r| r.syncs as u64).collect();
        assert_eq!(counted, per_step, "{name}");
        match a.finding("sync-in-loop") {
            None => assert_eq!(total, 0, "{name}"),
            Some(f) => {
                assert_eq!(f.count, total, "{name}");
                let idle = &f.figures[0];
                let device_idle = a.breakdown[0].idle_ns;
                assert!(
                    idle.value_ns > 0 && i128::from(idle.value_ns) <= device_idle,
                    "{name}: {idle:?}"
                );
            }
        }
        let warmed = truth["warmup_steps_before_profile"].as_u64().unwrap() > 0;
        let cold = a.finding("cold-steps");
        if warmed {
            // A warmed loop: at most the profiler's first step is named, and as its start-up.
            assert!(
                cold.is_none_or(|f| f.count <= 1 && f.severity == worksheet::audit::Severity::Info),
                "{name}: {cold:?}"
            );
        } else {
            // No warm-up: step 0 (and the optimizer's first update in step 1) is really cold.
            let f = cold.expect("cold-steps on the cold loop");
            assert_eq!(f.severity, worksheet::audit::Severity::Warning);
            assert!(f.message.contains("ProfilerStep#0"), "{}", f.message);
        }
    }
}

/// The import's summary (JSON) of `rel`, and `worksheet eval`'s answers of the case it writes.
fn imported_views(rel: &str) -> (serde_json::Value, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("case.json");
    let out = worksheet()
        .arg("import")
        .arg(data(rel))
        .arg("-o")
        .arg(&case)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{rel}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let out = worksheet()
        .arg("eval")
        .arg(&case)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{rel}");
    let eval: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (summary, eval)
}

fn answer<'a>(eval: &'a serde_json::Value, id: &str) -> Option<&'a serde_json::Value> {
    eval["answers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
}

#[test]
fn audit_summary_report_and_eval_agree_on_every_shared_figure() {
    let traces: Vec<String> = every_real_trace()
        .into_iter()
        .filter(|t| t.starts_with("traces/") || t.starts_with("truth/") || t.starts_with("nsys/"))
        .collect();
    for rel in &traces {
        let a = audit_of(rel);
        let (summary, eval) = imported_views(rel);
        // The import's audit is the audit: the same findings, figures and breakdown.
        let own = serde_json::to_value(&a).unwrap();
        assert_eq!(summary["audit"]["findings"], own["findings"], "{rel}");
        assert_eq!(summary["audit"]["breakdown"], own["breakdown"], "{rel}");
        assert_eq!(summary["audit"]["steps"], own["steps"], "{rel}");
        // Each device's busy time and span are eval's answers of `device:<gpu>`, and its
        // compute time that of `compute:<gpu>`.
        for b in &a.breakdown {
            if let Some(dev) = answer(&eval, &format!("device:{}", b.device)) {
                let r = &dev["results"];
                assert_eq!(
                    i128::from(r["union_ns"].as_i64().unwrap()),
                    b.span_ns - b.idle_ns,
                    "{rel} {}",
                    b.device
                );
                assert_eq!(
                    i128::from(r["span_ns"].as_i64().unwrap()),
                    b.span_ns,
                    "{rel} {}",
                    b.device
                );
            }
            if let Some(c) = answer(&eval, &format!("compute:{}", b.device)) {
                assert_eq!(
                    i128::from(c["results"]["union_ns"].as_i64().unwrap()),
                    b.exclusive_compute_ns,
                    "{rel}"
                );
            }
        }
        // Each step's host time and launched work are eval's answers of the step questions.
        let devices = a.breakdown.len();
        for s in a.steps.iter().filter(|_| devices == 1) {
            let host = answer(&eval, &format!("step:{}:host", s.step)).expect("step:…:host");
            assert_eq!(
                host["value_ns"].as_i64().unwrap(),
                s.host_ns,
                "{rel} {}",
                s.step
            );
            if let Some(l) = answer(&eval, &format!("step:{}:launched", s.step)) {
                assert_eq!(
                    l["results"]["union_ns"].as_i64().unwrap(),
                    s.launched_busy_ns,
                    "{rel} {}",
                    s.step
                );
            }
        }
    }
    assert!(traces.len() >= 20);
}

#[test]
fn the_report_shows_the_audits_findings() {
    for rel in [
        "truth/sync_per_step.pt.trace.json.gz",
        "traces/nccl_data.json.gz",
    ] {
        let a = audit_of(rel);
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("r.html");
        let out = worksheet()
            .arg("report")
            .arg(data(rel))
            .arg("-o")
            .arg(&page)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let html = std::fs::read_to_string(&page).unwrap();
        for f in &a.findings {
            let escaped = f
                .message
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('\'', "&apos;");
            assert!(
                html.contains(&escaped) || html.contains(&f.message),
                "{rel}: {}",
                f.code
            );
        }
    }
}

#[test]
fn the_kernel_table_holds_every_activity_once_on_every_trace() {
    for rel in every_real_trace() {
        let trace = read_audit_trace(&data(&rel), &ImportOptions::default()).expect("reads");
        let a = audit(&trace, &rel, &AuditOptions::default());
        let count: u64 = a.kernels.iter().map(|k| k.count).sum();
        assert_eq!(count, trace.activities.len() as u64, "{rel}");
        let total: i128 = a.kernels.iter().map(|k| k.total_ns).sum();
        let durations: i128 = trace
            .activities
            .iter()
            .map(|x| i128::from(x.end - x.start))
            .sum();
        assert_eq!(total, durations, "{rel}");
        for w in a.kernels.windows(2) {
            assert!(w[0].total_ns >= w[1].total_ns, "{rel}: not sorted by total");
        }
        for k in &a.kernels {
            // The shared traces' totals fit in 64-bit ns, so every mean is known.
            let mean = k.mean_ns.expect("a known mean");
            assert!(k.min_ns <= mean && mean <= k.max_ns, "{rel}: {k:?}");
            let in_row = trace.activities.iter().filter(|x| {
                *x.name == *k.name && format!("gpu{}-s{}", x.device, x.stream) == k.stream
            });
            assert_eq!(in_row.count() as u64, k.count, "{rel}: {}", k.name);
        }
    }
}

#[test]
fn top_sets_how_many_kernel_rows_the_text_shows() {
    let out = worksheet()
        .arg("audit")
        .arg(data("truth/pipeline.pt.trace.json.gz"))
        .args(["--top", "3"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("kernels (3 of 20 by total;"), "{text}");
    assert!(
        text.contains("… and 17 more row(s): 540 activities, 10.426654 ms in all"),
        "{text}"
    );
    assert!(text.contains("| nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT | compute | gpu0-s7 | 40    | 5.237302 ms | 130.933 us | 84.511 us | 177.95 us  | 20.7%         |"), "{text}");
}

#[test]
fn the_report_of_a_trace_and_of_its_imported_case_are_one_page() {
    for rel in [
        "truth/item_per_step.pt.trace.json.gz",
        "nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let case = dir.path().join("case.json");
        let out = worksheet()
            .arg("import")
            .arg(data(rel))
            .arg("-o")
            .arg(&case)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let page = |input: &Path, name: &str| {
            let html = dir.path().join(name);
            let out = worksheet()
                .arg("report")
                .arg(input)
                .arg("-o")
                .arg(&html)
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::read_to_string(html).unwrap()
        };
        let of_trace = page(&data(rel), "trace.html");
        let of_case = page(&case, "case.html");
        // The same sections, in the same order, with the same numbers: the audit included.
        let sections = |html: &str| -> Vec<String> {
            html.split("<section")
                .skip(1)
                .map(|s| s.split("</section>").next().unwrap_or("").to_owned())
                .collect()
        };
        let (a, b) = (sections(&of_trace), sections(&of_case));
        assert!(
            a.iter().any(|s| s.contains("id=\"audit\"")),
            "{rel}: no audit section"
        );
        assert_eq!(a.len(), b.len(), "{rel}");
        for (x, y) in a.iter().zip(&b) {
            let strip = |s: &str| {
                s.replace(&data(rel).display().to_string(), "INPUT")
                    .replace(&case.display().to_string(), "INPUT")
            };
            assert_eq!(strip(x), strip(y), "{rel}");
        }
    }
}
