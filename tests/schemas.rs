//! Every JSON report validates against its schema in `schemas/`: the real output of each
//! command, run through the binary, checked with the `jsonschema` crate. A report that
//! drops a field, or a schema that drifts, fails here.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

fn validate(kind: &str, value: &Value) {
    let path = format!("schemas/worksheet-{kind}.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{kind}: {errors:#?}");
    assert_eq!(value["format"], format!("worksheet-{kind}"));
    assert_eq!(value["version"], 1);
}

#[test]
fn check_eval_form_check_and_compare_reports_validate() {
    validate("check", &run(&["check", "fixtures/", "--format", "json"]));
    for case in [
        "three-boundaries",
        "overlapping-phases",
        "cross-clock-subtraction",
    ] {
        let file = format!("fixtures/cases/{case}.json");
        validate("eval", &run(&["eval", &file, "--format", "json"]));
    }
    validate(
        "form-check",
        &run(&["form", "check", "worksheets/", "--format", "json"]),
    );
    let capture = "fixtures/captures/h200-capture.json";
    validate(
        "compare",
        &run(&["compare", capture, capture, "--format", "json"]),
    );
    validate(
        "compare",
        &run(&[
            "compare",
            capture,
            "fixtures/captures/cuda-example.json",
            "--format",
            "json",
        ]),
    );
}

#[test]
fn import_and_lab_reports_validate() {
    validate(
        "import",
        &run(&[
            "import",
            "tests/data/traces/event_sync_trace.json.gz",
            "--format",
            "json",
        ]),
    );
    validate(
        "import",
        &run(&[
            "import",
            "tests/data/nsys/mordred_report1.sqlite",
            "--format",
            "json",
        ]),
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("lab.json");
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args([
            "lab",
            "executor",
            "--runs",
            "3",
            "--warmup",
            "1",
            "--target-ms",
            "2",
        ])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    validate("lab-executor", &report);
    // the committed report from before versioning still compares (read by its `lab` key)
    assert!(Path::new("labs/executor/report.json").exists());
}

#[test]
fn case_files_validate_captures_included() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap.json");
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args(["capture", "--simulate", "--runs", "5", "--out"])
        .arg(&cap)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1));
    for file in [
        cap.as_path(),
        Path::new("fixtures/captures/h200-capture.json"),
        Path::new("fixtures/captures/h200-lab-streams.json"),
        Path::new("fixtures/cases/three-boundaries.json"),
        Path::new("labs/executor/case.json"),
    ] {
        let value: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        validate("case", &value);
    }
}

#[test]
fn audit_and_multi_rank_import_reports_validate() {
    for trace in [
        "tests/data/traces/nccl_data.json.gz",
        "tests/data/traces/event_sync_trace.json.gz",
        "tests/data/nsys/perlmutter-cloverleaf-cuda.sqlite",
    ] {
        assert!(
            Path::new(trace).exists(),
            "{trace}: the test data is missing"
        );
        let report = run(&["audit", trace, "--format", "json"]);
        validate("audit", &report);
        assert!(report["findings"].as_array().is_some_and(|f| !f.is_empty()));
    }
    let ranks = run(&[
        "import",
        "tests/data/ranks-sync/rank0.json.gz",
        "tests/data/ranks-sync/rank1.json.gz",
        "--format",
        "json",
    ]);
    validate("import-ranks", &ranks);
    assert_eq!(ranks["ranks"]["relations"][0]["bound"]["lo_ns"], -3967);
    assert_eq!(ranks["ranks"]["relations"][0]["bound"]["hi_ns"], 4525);
    // With one host clock declared, rank 1 is a straggler: the finding validates, and a
    // finding with a field missing does not.
    let declared = run(&[
        "import",
        "tests/data/ranks",
        "--clocks-within",
        "0",
        "--format",
        "json",
    ]);
    validate("import-ranks", &declared);
    let finding = &declared["ranks"]["findings"][0];
    assert_eq!(finding["code"], "straggler");
    let path = "schemas/worksheet-import-ranks.schema.json";
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut broken = declared.clone();
    broken["ranks"]["findings"][0]
        .as_object_mut()
        .unwrap()
        .remove("delay_ns");
    assert!(!validator.is_valid(&broken));
}

/// The audit's HTA views are in its JSON, with real values, on a Kineto trace and an Nsight
/// Systems export (the schema above holds their shape).
#[test]
fn audit_json_carries_the_hta_views() {
    let kineto = run(&[
        "audit",
        "tests/data/traces/event_sync_trace.json.gz",
        "--format",
        "json",
    ]);
    validate("audit", &kineto);
    let s20 = &kineto["idle"][0];
    assert_eq!(s20["stream"], "gpu0-s20");
    assert_eq!(
        (
            &s20["host_wait_ns"],
            &s20["kernel_wait_ns"],
            &s20["other_ns"]
        ),
        (&Value::from(32_000), &Value::from(0), &Value::from(0))
    );
    assert_eq!(
        kineto["queues"][2]["pending"]["time_at_1_or_more_ns"],
        31_000
    );
    assert_eq!(kineto["launches"]["total"]["count"], 6);
    assert_eq!(
        kineto["launches"]["total"]["launch_delay_clipped_ns"],
        18_000
    );
    assert_eq!(kineto["bandwidth"][0]["kind"], "Memset");
    assert_eq!(kineto["bandwidth"][0]["bytes"], 1536);
    let nsys = run(&[
        "audit",
        "tests/data/nsys/perlmutter-cloverleaf-cuda.sqlite",
        "--format",
        "json",
    ]);
    validate("audit", &nsys);
    let htod = &nsys["bandwidth"][1];
    assert_eq!(
        (&htod["kind"], &htod["count"]),
        (&Value::from("HtoD"), &Value::from(254))
    );
    assert_eq!(htod["bytes"], 225_065_752_u64);
    assert_eq!(htod["total_ns"], 9_346_285);
    // 225,065,752 bytes / 9,346,285 ns = 24.0807... GB/s.
    assert_eq!(htod["mb_per_s"], 24_081);
}
