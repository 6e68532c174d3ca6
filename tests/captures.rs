//! The committed real captures (`fixtures/captures/`, NVIDIA H200) replay here, on machines
//! with no GPU: every expectation they carry holds, and the relations any sound capture
//! must satisfy hold too — stated as relations, never as exact times. Also the command
//! paths of `capture` and `lab streams` that need no GPU.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use worksheet::capture::relations;
use worksheet::case::{load_case_file, Case};
use worksheet::check::check_paths;
use worksheet::engine::{evaluate, Outcome, Report};
use worksheet::units::Nanos;

const CAPTURE: &str = "fixtures/captures/h200-capture.json";
const LAB: &str = "fixtures/captures/h200-lab-streams.json";
const EXAMPLE: &str = "fixtures/captures/cuda-example.json";

fn load(path: &str) -> (Case, Report) {
    let case = load_case_file(Path::new(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    let report = evaluate(&case);
    (case, report)
}

fn value(report: &Report, id: &str) -> Nanos {
    report
        .answer(id)
        .and_then(|a| a.outcome.verdict())
        .and_then(|v| v.value())
        .unwrap_or_else(|| panic!("`{id}` is not known"))
}

fn provenance<'a>(case: &'a Case, key: &str) -> &'a serde_json::Value {
    case.provenance
        .as_ref()
        .and_then(|p| p.get(key))
        .unwrap_or_else(|| panic!("{}: no provenance `{key}`", case.name))
}

#[test]
fn committed_captures_replay_every_expectation() {
    for path in [CAPTURE, LAB, EXAMPLE] {
        let report = check_paths(&[path.into()]).unwrap();
        assert!(report.errors.is_empty(), "{path}: {:?}", report.errors);
        let checks: usize = report.cases.iter().map(|c| c.checks.len()).sum();
        assert!(checks > 0, "{path} states no expectations");
        for case in &report.cases {
            if let Some(c) = case.checks.iter().find(|c| !c.passed) {
                panic!(
                    "{path}: `{}` {}: expected {}, actual {}",
                    c.question, c.field, c.expected, c.actual
                );
            }
        }
    }
}

#[test]
fn the_h200_capture_satisfies_every_relation() {
    let (case, report) = load(CAPTURE);
    assert_eq!(provenance(&case, "simulated"), false);
    let name = provenance(&case, "device")["name"].as_str().unwrap();
    assert!(name.contains("H200"), "{name}");
    for r in relations::check(&case, &report) {
        assert!(r.holds, "relation `{}` fails: {}", r.id, r.detail);
    }
}

#[test]
fn the_h200_capture_reports_the_event_quantum_and_floor() {
    let (case, _) = load(CAPTURE);
    let cal = provenance(&case, "calibration");
    let step = cal["event_step_ns"].as_i64().expect("an event step");
    assert!((1..=1_000).contains(&step), "event step {step} ns");
    let floor = &cal["consecutive_events"];
    assert!(floor["pairs"].as_u64().unwrap() >= 100);
    let median: Nanos = floor["median"].as_str().unwrap().parse().unwrap();
    // Two events back to back are never closer than the step, and far below a 10 us spin.
    assert!(
        median.as_i64() >= step && median < Nanos::new(10_000),
        "{median}"
    );
}

#[test]
fn the_h200_capture_keeps_each_unknown_for_its_reason() {
    let (_, report) = load(CAPTURE);
    let reason = |id: &str| {
        report
            .answer(id)
            .and_then(|a| a.outcome.verdict())
            .and_then(|v| v.reason())
            .map(|r| r.code())
    };
    assert_eq!(reason("demo-timing-disabled"), Some("timing-disabled"));
    assert_eq!(reason("demo-event-incomplete"), Some("event-incomplete"));
    assert_eq!(reason("demo-cross-stream"), Some("cross-stream"));
    assert_eq!(reason("demo-wait-event"), Some("wait-misses-work"));
    assert!(value(&report, "demo-cross-stream-joined") > Nanos::ZERO);
    assert!(value(&report, "demo-wait-device") > Nanos::ZERO);
}

#[test]
fn the_h200_lab_overlaps_copies_with_compute_and_verified_its_output() {
    let (case, report) = load(LAB);
    let v = provenance(&case, "verification");
    for p in ["serial", "concurrent"] {
        assert_eq!(v[p]["mismatches"], 0, "{p} output wrong");
        assert!(v[p]["repetitions"].as_u64().unwrap() > 0);
    }
    // Serial is slower than concurrent, and completion covers the device interval.
    let serial = value(&report, "serial-device-interval");
    let concurrent = value(&report, "concurrent-device-interval");
    assert!(concurrent < serial, "{concurrent} !< {serial}");
    for p in ["serial", "concurrent"] {
        assert!(
            value(&report, &format!("{p}-device-interval"))
                <= value(&report, &format!("{p}-host-completion"))
        );
    }
    let union = |id: &str| match &report.answer(id).unwrap().outcome {
        Outcome::Intervals(a) => a.single().expect("one clock").union_ns,
        other => panic!("{id}: {other:?}"),
    };
    // Copies and compute overlap: the union of all is less than the two unions added.
    let both = union("concurrent-copies") + union("concurrent-compute") - union("concurrent-all");
    assert!(both > 0, "no copy/compute overlap");
    // The serial pipeline does not overlap with itself.
    let serial_all = match &report.answer("serial-all").unwrap().outcome {
        Outcome::Intervals(a) => a.single().unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(serial_all.overlap_ns(), 0);
}

#[test]
fn the_cuda_example_names_its_boundaries_and_validated_its_result() {
    let (case, report) = load(EXAMPLE);
    assert_eq!(provenance(&case, "validation")["wrong"], 0);
    let sub = value(&report, "submission");
    let dev = value(&report, "device-interval");
    let comp = value(&report, "host-completion");
    assert!(sub < comp && dev <= comp, "{sub} {dev} {comp}");
    let notes = match report.answer("submission").unwrap().outcome.verdict() {
        Some(worksheet::verdict::Verdict::Known { notes, .. }) => notes.join(" "),
        other => panic!("{other:?}"),
    };
    assert!(notes.contains("makes no completion claim"));
    for id in ["start", "end"] {
        assert!(case.events.iter().any(|e| e.id == id));
    }
    for id in ["submission", "completion"] {
        assert!(case.timers.iter().any(|t| t.id == id));
    }
}

#[test]
fn capture_without_cuda_exits_3_with_a_clear_message() {
    // Built without the feature, or with it on a machine without libcuda: either way exit 3
    // and "CUDA not available", never a panic.
    let dir = tempfile::tempdir().unwrap();
    for args in [vec!["capture", "--out"], vec!["lab", "streams", "--out"]] {
        let out = dir.path().join("x.json");
        let output = Command::cargo_bin("worksheet")
            .unwrap()
            .args(&args)
            .arg(&out)
            .output()
            .unwrap();
        if output.status.success() {
            continue; // a machine with a GPU and the feature: nothing to check here
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{stderr}");
        assert!(stderr.starts_with("CUDA not available: "), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        #[cfg(not(feature = "cuda"))]
        assert!(
            stderr.contains("built without the `cuda` feature"),
            "{stderr}"
        );
    }
}

#[test]
fn a_simulated_capture_writes_files_that_replay() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sim.json");
    Command::cargo_bin("worksheet")
        .unwrap()
        .args([
            "capture",
            "--simulate",
            "--runs",
            "12",
            "--warmup",
            "3",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("SIMULATED"))
        .stdout(predicate::str::contains(
            "event quantum: every elapsed reading is a multiple of 32 ns",
        ));
    assert!(dir.path().join("sim.runs.csv").exists());
    Command::cargo_bin("worksheet")
        .unwrap()
        .arg("check")
        .arg(&out)
        .assert()
        .success();
    let lab = dir.path().join("lab.json");
    Command::cargo_bin("worksheet")
        .unwrap()
        .args([
            "lab",
            "streams",
            "--simulate",
            "--mib",
            "1",
            "--reps",
            "3",
            "--out",
        ])
        .arg(&lab)
        .assert()
        .success()
        .stdout(predicate::str::contains("speedup = serial / concurrent"))
        .stdout(predicate::str::contains("verified"));
}

#[test]
fn captures_never_overwrite_a_file_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mine.json");
    std::fs::write(&out, "the user's own file").unwrap();
    for args in [
        vec!["capture", "--simulate", "--runs", "6", "--out"],
        vec!["lab", "streams", "--simulate", "--mib", "1", "--out"],
    ] {
        Command::cargo_bin("worksheet")
            .unwrap()
            .args(&args)
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("error[exists]"));
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "the user's own file"
        );
    }
    Command::cargo_bin("worksheet")
        .unwrap()
        .args(["capture", "--simulate", "--runs", "6", "--force", "--out"])
        .arg(&out)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("worksheet-case"));
}

/// Runs a command in a temporary folder and returns its stdout with the header line (which
/// holds the date) and the folder's path taken out.
fn simulated_output(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::cargo_bin("worksheet")
        .unwrap()
        .args(args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("SIMULATED — simulator"), "{header}");
    lines.collect::<Vec<_>>().join("\n")
}

#[test]
fn simulated_capture_output_snapshot() {
    insta::assert_snapshot!(
        "capture_simulated",
        simulated_output(&[
            "capture",
            "--simulate",
            "--runs",
            "12",
            "--warmup",
            "3",
            "--out",
            "sim.json"
        ])
    );
}

#[test]
fn simulated_lab_streams_output_snapshot() {
    insta::assert_snapshot!(
        "lab_streams_simulated",
        simulated_output(&[
            "lab",
            "streams",
            "--simulate",
            "--mib",
            "1",
            "--reps",
            "4",
            "--out",
            "lab.json"
        ])
    );
}

#[test]
fn capture_help_snapshot() {
    let out = Command::cargo_bin("worksheet")
        .unwrap()
        .args(["capture", "--help"])
        .output()
        .unwrap();
    insta::assert_snapshot!("capture_help", String::from_utf8(out.stdout).unwrap());
}
