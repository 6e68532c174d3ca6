//! `worksheet compare` end to end: a file against itself, synthetic slowdowns, noise, the
//! committed H200 captures, a real trace against a copy with one kernel made 2× slower,
//! exit codes, and the mirror law compare(A, B) = mirror(compare(B, A)).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;
use serde_json::Value;
use worksheet::compare::input::{Data, Kind, Metric, Run};
use worksheet::compare::{compare_files, compare_runs, Options, RowVerdict};
use worksheet::units::{parse_value, Nanos};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_worksheet"))
}

fn run_of(metrics: Vec<Metric>) -> Run {
    Run {
        file: "synthetic".into(),
        kind: Kind::Case,
        context: BTreeMap::new(),
        metrics,
    }
}

fn samples(name: &str, values: &[i64]) -> Metric {
    let mut v: Vec<Nanos> = values.iter().map(|&x| Nanos::new(x)).collect();
    v.sort();
    Metric {
        group: "boundary",
        name: name.into(),
        data: Data::Samples(v),
    }
}

/// A deterministic noisy series: `base` ± `spread` (an LCG, so the test needs no seed file).
fn noisy(base: i64, spread: i64, n: usize, seed: u64) -> Vec<i64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            base + ((s >> 33) as i64 % (2 * spread + 1)) - spread
        })
        .collect()
}

fn verdicts(c: &worksheet::compare::Comparison) -> Vec<(String, RowVerdict)> {
    c.rows.iter().map(|r| (r.name.clone(), r.verdict)).collect()
}

#[test]
fn a_file_against_itself_is_all_same() {
    for file in [
        "fixtures/captures/h200-capture.json",
        "fixtures/captures/h200-lab-streams.json",
        "fixtures/cases/three-boundaries.json",
        "labs/executor/report.json",
        "labs/executor/case.json",
    ] {
        let c = compare_files(Path::new(file), Path::new(file), Options::default()).unwrap();
        assert!(!c.rows.is_empty(), "{file}");
        for r in &c.rows {
            // A question the run itself answers unknown stays unknown, with its reason.
            if r.verdict == RowVerdict::Unknown {
                assert!(
                    r.why.starts_with("both runs answer unknown"),
                    "{file}: {r:?}"
                );
                assert_ne!(r.reason, Some(worksheet::verdict::Reason::Incomparable));
            } else {
                assert_eq!(r.verdict, RowVerdict::Same, "{file}: {r:?}");
                assert_eq!(r.change_ppm, Some(0), "{file}: {r:?}");
            }
        }
    }
}

#[test]
fn a_synthetic_two_fold_slowdown_is_slower() {
    let base = noisy(100_000, 3_000, 50, 1);
    let slow: Vec<i64> = noisy(100_000, 3_000, 50, 2).iter().map(|x| 2 * x).collect();
    let same = noisy(100_000, 3_000, 50, 3);
    let c = compare_runs(
        &run_of(vec![samples("k", &base), samples("m", &base)]),
        &run_of(vec![samples("k", &slow), samples("m", &same)]),
        Options::default(),
    );
    assert_eq!(
        verdicts(&c),
        vec![
            ("k".into(), RowVerdict::Slower),
            ("m".into(), RowVerdict::Same)
        ]
    );
    let k = &c.rows[0];
    // the medians' ratio is about 2: change within +90 % .. +110 %
    let change = k.change_ppm.unwrap();
    assert!((900_000..=1_100_000).contains(&change), "{change}");
    // and the other way round it is faster
    let back = compare_runs(
        &run_of(vec![samples("k", &slow)]),
        &run_of(vec![samples("k", &base)]),
        Options::default(),
    );
    assert_eq!(back.rows[0].verdict, RowVerdict::Faster);
}

#[test]
fn noisy_overlapping_runs_are_ambiguous_never_same() {
    // ±40 % noise, medians 3 % apart: the interval is far wider than the 5 % threshold.
    let a = noisy(100_000, 40_000, 30, 7);
    let b: Vec<i64> = a.iter().map(|x| x * 103 / 100).collect();
    let c = compare_runs(
        &run_of(vec![samples("k", &a)]),
        &run_of(vec![samples("k", &b)]),
        Options::default(),
    );
    let r = &c.rows[0];
    assert_eq!(r.verdict, RowVerdict::Ambiguous, "{r:?}");
    assert!(r.noise_ppm.unwrap() > 50_000, "{r:?}");
    // a one-value run that changed has no noise estimate: ambiguous, not same
    let one = |v| Metric {
        group: "question",
        name: "q".into(),
        data: Data::Single(Nanos::new(v)),
    };
    let c = compare_runs(
        &run_of(vec![one(100)]),
        &run_of(vec![one(101)]),
        Options::default(),
    );
    assert_eq!(c.rows[0].verdict, RowVerdict::Ambiguous);
    // three samples a side whose ranges overlap: ambiguous
    let c = compare_runs(
        &run_of(vec![samples("k", &[100, 200, 300])]),
        &run_of(vec![samples("k", &[150, 250, 350])]),
        Options::default(),
    );
    assert_eq!(c.rows[0].verdict, RowVerdict::Ambiguous);
}

#[test]
fn h200_captures_from_fixtures() {
    // The capture against the CUDA C++ example, both on the same H200: another workload.
    let c = compare_files(
        Path::new("fixtures/captures/h200-capture.json"),
        Path::new("fixtures/captures/cuda-example.json"),
        Options::default(),
    )
    .unwrap();
    assert_eq!(c.rows.len(), 1);
    let r = &c.rows[0];
    assert_eq!(r.verdict, RowVerdict::Unknown);
    assert_eq!(r.reason, Some(worksheet::verdict::Reason::Incomparable));
    assert!(
        r.why
            .contains("tool: `worksheet` vs `cuda-example/main.cu`"),
        "{}",
        r.why
    );
    assert_eq!(r.change_ppm, None, "incomparable rows carry no number");
    // The capture against the lab-streams run: another workload too.
    let c = compare_files(
        Path::new("fixtures/captures/h200-capture.json"),
        Path::new("fixtures/captures/h200-lab-streams.json"),
        Options::default(),
    )
    .unwrap();
    assert_eq!(
        c.rows[0].reason,
        Some(worksheet::verdict::Reason::Incomparable)
    );
}

/// Writes a copy of the capture with one series made 2× (every measured value doubled).
fn slowed_capture(dir: &Path, series: &str) -> PathBuf {
    let text = std::fs::read_to_string("fixtures/captures/h200-capture.json").unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    let s = v["series"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["id"] == series)
        .unwrap();
    for m in s["measured"].as_array_mut().unwrap() {
        let ns = parse_value(m.as_str().unwrap()).unwrap();
        *m = Value::String(Nanos::new(2 * ns.as_i64()).to_string());
    }
    let path = dir.join("slowed.json");
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    path
}

#[test]
fn h200_capture_against_a_copy_with_one_boundary_twice_as_long() {
    let dir = tempfile::tempdir().unwrap();
    let slowed = slowed_capture(dir.path(), "spin-100us-idle-device-interval");
    let base = Path::new("fixtures/captures/h200-capture.json");
    let c = compare_files(base, &slowed, Options::default()).unwrap();
    for r in &c.rows {
        let expected = if r.group == "boundary" && r.name == "spin-100us-idle-device-interval" {
            RowVerdict::Slower
        } else if r.name == "spin-100us-idle-device-interval-steady" {
            // the steady-state answer is one value per run: no noise measured
            RowVerdict::Ambiguous
        } else if r.verdict == RowVerdict::Unknown {
            continue;
        } else {
            RowVerdict::Same
        };
        assert_eq!(r.verdict, expected, "{r:?}");
    }
    // exit codes: --fail-on slower gates; without it the comparison exits 0
    let out = bin()
        .args(["compare", "fixtures/captures/h200-capture.json"])
        .arg(&slowed)
        .args(["--fail-on", "slower", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["format"], "worksheet-compare");
    assert_eq!(report["version"], 1);
    assert_eq!(report["counts"]["slower"], 1);
    let out = bin()
        .args(["compare", "fixtures/captures/h200-capture.json"])
        .arg(&slowed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let out = bin()
        .args(["compare", "fixtures/captures/h200-capture.json"])
        .args(["fixtures/captures/h200-capture.json", "--fail-on", "any"])
        .output()
        .unwrap();
    // the capture's demonstrations answer unknown on purpose: `any` counts them
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_trace_against_a_copy_with_one_kernel_twice_as_long() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("trace.json");
    let status = bin()
        .args([
            "import",
            "tests/data/traces/benchmark_result_2869224_1695835535_trace.json.gz",
            "-o",
        ])
        .arg(&case)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&case).unwrap()).unwrap();
    let kernel = "void cudnn::ops::nchwToNhwcKernel";
    let mut changed = 0;
    for p in v["phases"].as_array_mut().unwrap() {
        if p["label"].as_str().unwrap().starts_with(kernel) {
            let start = parse_value(p["start"].as_str().unwrap()).unwrap().as_i64();
            let end = parse_value(p["end"].as_str().unwrap()).unwrap().as_i64();
            p["end"] = Value::String(Nanos::new(end + (end - start)).to_string());
            changed += 1;
        }
    }
    assert_eq!(changed, 12);
    let slowed = dir.path().join("slowed.json");
    std::fs::write(&slowed, serde_json::to_string(&v).unwrap()).unwrap();
    let c = compare_files(&case, &slowed, Options::default()).unwrap();
    let kernels: Vec<_> = c.rows.iter().filter(|r| r.group == "kernel").collect();
    assert!(kernels.len() >= 5, "{kernels:?}");
    for r in kernels {
        let expected = if r.name.starts_with(kernel) {
            RowVerdict::Slower
        } else {
            RowVerdict::Same
        };
        assert_eq!(r.verdict, expected, "{r:?}");
    }
    // the stream's busy time changed too, but one value per run has no noise: ambiguous
    let stream = c.rows.iter().find(|r| r.group == "stream").unwrap();
    assert_eq!(stream.verdict, RowVerdict::Ambiguous, "{stream:?}");
}

#[test]
fn wrong_kinds_and_bad_options_are_input_errors() {
    let out = bin()
        .args(["compare", "worksheets/seed-host-completion.json"])
        .arg("fixtures/cases/three-boundaries.json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error[wrong-kind]") && err.contains("worksheet form check"),
        "{err}"
    );
    let out = bin()
        .args(["compare", "fixtures/cases/three-boundaries.json"])
        .args([
            "fixtures/cases/three-boundaries.json",
            "--threshold",
            "five",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threshold"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn compare_mirrors(
        a in proptest::collection::vec(1i64..1_000_000, 1..40),
        b in proptest::collection::vec(1i64..1_000_000, 1..40),
        t in 0i64..300_000,
    ) {
        let ab = compare_runs(
            &run_of(vec![samples("k", &a)]),
            &run_of(vec![samples("k", &b)]),
            Options { threshold_ppm: t },
        );
        let ba = compare_runs(
            &run_of(vec![samples("k", &b)]),
            &run_of(vec![samples("k", &a)]),
            Options { threshold_ppm: t },
        );
        let (x, y) = (&ab.rows[0], &ba.rows[0]);
        prop_assert_eq!(x.verdict.mirror(), y.verdict);
        prop_assert_eq!(x.noise_ppm, y.noise_ppm);
        if let (Some([lo, hi]), Some([lo2, hi2])) = (x.interval_ppm, y.interval_ppm) {
            // reciprocal ends, up to the 1 ppm rounding of each printed end: an end printed
            // as p ppm lies in (p − 1, p + 1), so its reciprocal lies between 10^12 / (p + 1)
            // and 10^12 / (p − 1) (a small p leaves the reciprocal wide: ratios near 0)
            let reciprocal_of = |p: i64, q: i64| {
                let low = 1_000_000_000_000i64 / (p + 1) - 1;
                let high = if p > 1 { 1_000_000_000_000i64 / (p - 1) + 1 } else { i64::MAX };
                (low..=high).contains(&q)
            };
            prop_assert!(reciprocal_of(hi, lo2), "{} {}", hi, lo2);
            prop_assert!(reciprocal_of(lo, hi2), "{} {}", lo, hi2);
        }
    }
}
