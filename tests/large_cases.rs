//! Case files of any size (issue 10 §4): `check`, `eval` and `render` stream a case, plain or
//! gzipped, and `check` writes each case as it is checked. The output on the fixtures is what
//! the whole-report writer printed, byte for byte; a generated case of a few megabytes, gzipped,
//! goes through every command. (Cases past the old 64 MiB cap are measured, not tested here:
//! BENCHMARKS.md, "Large cases"; the bounds themselves are tested in `src/case/read.rs` with
//! small injected limits.)

use std::io::Write;
use std::path::Path;

use assert_cmd::Command;

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").expect("the binary is built for integration tests")
}

/// `tests/golden/check-fixtures.json` was written by the whole-report writer; the streaming
/// writer prints the same bytes, not only the same JSON value.
#[test]
fn check_json_on_the_fixtures_is_the_golden_file_byte_for_byte() {
    let out = worksheet()
        .args([
            "check",
            "fixtures/cases",
            "fixtures/edge-controls",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let golden = std::fs::read("tests/golden/check-fixtures.json").unwrap();
    assert!(
        out.stdout == golden,
        "`check --format json` differs from tests/golden/check-fixtures.json"
    );
}

/// A case of `n` phases on one stream, a 1 us gap after each, and one interval question
/// expecting the count, union and gap-free span it implies.
fn generated_case(n: u64) -> String {
    let phases: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "id": format!("kernel-{i}"),
                "label": format!("void some_templated_kernel<float, {i}>(float const*, float*, int)"),
                "stream": "s0",
                "start": format!("{} us", 3 * i),
                "end": format!("{} us", 3 * i + 2),
            })
        })
        .collect();
    let launches: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"op": "launch", "phase": format!("kernel-{i}")}))
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({
        "format": "worksheet-case",
        "version": 1,
        "clocks": [{"id": "gpu", "domain": "device", "instance": "gpu0-ctx1"}],
        "streams": [{"id": "s0", "clock": "gpu", "device": "gpu0"}],
        "phases": phases,
        "program": launches,
        "questions": [{
            "id": "all",
            "kind": "intervals",
            "expect": {"count": n, "union": format!("{} us", 2 * n), "span": format!("{} us", 3 * n - 1)},
        }],
    }))
    .unwrap()
}

#[test]
fn a_generated_gzipped_case_goes_through_check_eval_and_render() {
    let n = 12_000;
    let text = generated_case(n);
    assert!(text.len() > 2 << 20, "{} bytes", text.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("generated.json.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let run = |args: &[&str]| {
        let out = worksheet()
            .args(args)
            .arg(Path::new(&path))
            .env_remove("COLUMNS")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        String::from_utf8(out.stdout).unwrap()
    };
    let check = run(&["check"]);
    assert!(
        check.ends_with("1 passed, 0 failed\n(1 cases, 3 checks, 0 input errors)\n"),
        "{check}"
    );
    assert!(check.contains("| all.union "), "{check}");
    let eval = run(&["eval", "--format", "json"]);
    let eval: serde_json::Value = serde_json::from_str(&eval).unwrap();
    let results = &eval["answers"][0]["results"];
    assert_eq!(results["count"], n);
    assert_eq!(results["union_ns"], 2_000 * n);
    assert_eq!(results["gaps"].as_array().unwrap().len() as u64, n - 1);
    let sketch = run(&["render", "--format", "text"]);
    assert!(sketch.contains("generated"), "{sketch}");
}
