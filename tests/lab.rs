//! The executor lab and `render`, through the binary: a real short run (structure, digest
//! verification, order of the readings — never absolute times), `worksheet check` replaying
//! the lab's case file, and well-formed SVG.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").expect("the binary is built")
}

fn ns(row: &csv::StringRecord, headers: &csv::StringRecord, name: &str) -> i64 {
    let i = headers
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    row[i]
        .parse()
        .unwrap_or_else(|e| panic!("{name}: {e}: {:?}", &row[i]))
}

fn assert_well_formed_svg(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
}

#[test]
fn a_real_short_run_verifies_every_digest_and_keeps_readings_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = worksheet()
        .args([
            "lab",
            "executor",
            "--runs",
            "3",
            "--warmup",
            "2",
            "--target-ms",
            "5",
            "--threads",
            "2",
            "--export-csv",
        ])
        .arg(d.join("runs.csv"))
        .arg("--export-json")
        .arg(d.join("lab.json"))
        .arg("--export-markdown")
        .arg(d.join("lab.md"))
        .arg("--export-case")
        .arg(d.join("case.json"))
        .assert()
        .success()
        // Off a terminal the progress bar stays hidden.
        .stderr("")
        .get_output()
        .stdout
        .clone();
    let stdout = String::from_utf8(out).unwrap();
    for needle in [
        "executor lab: 3 measured run(s) + 2 warm-up(s)",
        "on a pool of 2 worker thread(s)",
        "5 of 5 run(s) match the reference; 0 failed run(s)",
        "| submission ",
        "| caller total ",
        "makes no completion claim",
        "ran after its submission returned",
        "clock `host` (host@",
        "wrote case file:",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }

    // The raw log: one row per run, warm-ups first and marked, digests verified, and the
    // readings in the order the program and causality impose.
    let mut reader = csv::Reader::from_path(d.join("runs.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 5);
    let labels: Vec<&str> = rows.iter().map(|r| r.get(0).unwrap()).collect();
    assert_eq!(labels, ["w1", "w2", "1", "2", "3"]);
    let phases: Vec<&str> = rows.iter().map(|r| r.get(1).unwrap()).collect();
    assert_eq!(
        phases,
        ["warmup", "warmup", "measured", "measured", "measured"]
    );
    let clock = rows[0].get(4).unwrap().to_owned();
    assert!(clock.starts_with("host@"), "{clock}");
    let mut previous_end = i64::MIN;
    for r in &rows {
        assert_eq!(r.get(2), Some("ok"));
        assert_eq!(r.get(4), Some(clock.as_str()), "one clock for every row");
        assert_eq!(r.get(headers.len() - 1), Some("true"), "digest verified");
        let [t0, t1, t2, t3, t4, w0, w1] = [
            "submit_start_ns",
            "submit_return_ns",
            "wait_start_ns",
            "result_ready_ns",
            "digest_checked_ns",
            "work_start_ns",
            "work_end_ns",
        ]
        .map(|c| ns(r, &headers, c));
        assert!(previous_end <= t0, "runs do not overlap");
        assert!(t0 <= t1 && t1 <= t2 && t2 <= t3 && t3 <= t4, "caller order");
        assert!(
            t0 <= w0 && w0 <= w1 && w1 <= t3,
            "work inside submit..result"
        );
        assert_eq!(ns(r, &headers, "submission_ns"), t1 - t0);
        assert_eq!(ns(r, &headers, "wait_ns"), t3 - t2);
        assert_eq!(ns(r, &headers, "total_ns"), t3 - t0);
        assert_eq!(ns(r, &headers, "work_ns"), w1 - w0);
        // Work that ended before the submission returned (a caller descheduled while the
        // worker ran) has nothing after the return.
        assert_eq!(
            ns(r, &headers, "work_after_return_ns"),
            (w1 - w0.max(t1)).max(0)
        );
        previous_end = t4;
    }
    let digests: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| r.get(headers.len() - 2).unwrap())
        .collect();
    assert_eq!(digests.len(), 1, "every run computed the same digest");

    // JSON and Markdown.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("lab.json")).unwrap()).unwrap();
    assert_eq!(json["runs"].as_array().unwrap().len(), 5);
    assert_eq!(json["statistics"]["intervals"].as_array().unwrap().len(), 7);
    assert_eq!(json["digests"]["ok"], 5);
    assert_eq!(json["clock"]["domain"], "host");
    let md = std::fs::read_to_string(d.join("lab.md")).unwrap();
    assert!(md.starts_with("# Executor lab"));

    // `worksheet check` accepts the lab's case file: every expectation is met.
    worksheet()
        .arg("check")
        .arg(d.join("case.json"))
        .assert()
        .success()
        .stdout(predicate::str::contains("1 passed, 0 failed"));

    // `worksheet render` draws it, whole and zoomed to one run.
    worksheet()
        .arg("render")
        .arg(d.join("case.json"))
        .arg("-o")
        .arg(d.join("timeline.svg"))
        .assert()
        .success();
    assert_well_formed_svg(&d.join("timeline.svg"));
    worksheet()
        .arg("render")
        .arg(d.join("case.json"))
        .args(["--focus", "complete-2", "--format", "text"])
        .assert()
        .success()
        .stdout(predicate::str::contains("zoomed to `complete-2`"));

    // Exports are never overwritten without --force, and the refusal comes before any run.
    let before = std::fs::read(d.join("runs.csv")).unwrap();
    worksheet()
        .args([
            "lab",
            "executor",
            "--runs",
            "1",
            "--target-ms",
            "1",
            "--export-csv",
        ])
        .arg(d.join("runs.csv"))
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("--force"));
    assert_eq!(std::fs::read(d.join("runs.csv")).unwrap(), before);
}

#[test]
fn render_draws_a_fixture_and_never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("three-boundaries.svg");
    worksheet()
        .args(["render", "fixtures/cases/three-boundaries.json", "-o"])
        .arg(&svg)
        .assert()
        .success()
        .stdout("");
    assert_well_formed_svg(&svg);
    let first = std::fs::read(&svg).unwrap();
    worksheet()
        .args(["render", "fixtures/cases/overlapping-phases.json", "-o"])
        .arg(&svg)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("exists; pass --force"));
    assert_eq!(std::fs::read(&svg).unwrap(), first);
    worksheet()
        .args([
            "render",
            "fixtures/cases/overlapping-phases.json",
            "--force",
            "-o",
        ])
        .arg(&svg)
        .assert()
        .success();
    assert_ne!(std::fs::read(&svg).unwrap(), first);
    assert_well_formed_svg(&svg);
}

#[test]
fn render_text_sketch_goes_to_stdout() {
    worksheet()
        .args([
            "render",
            "fixtures/cases/phases-with-gap.json",
            "--format",
            "text",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("covered").and(predicate::str::contains("gap")));
}

#[test]
fn render_input_errors_exit_2() {
    worksheet()
        .args([
            "render",
            "fixtures/cases/three-boundaries.json",
            "--focus",
            "no-such-phase",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no-such-phase"));
    worksheet()
        .args(["render", "no/such/file.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("error[io]"));
}

#[test]
fn lab_executor_help_snapshot() {
    let out = worksheet()
        .args(["lab", "executor", "--help"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!(String::from_utf8(out).unwrap());
}

#[test]
fn render_help_snapshot() {
    let out = worksheet()
        .args(["render", "--help"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!(String::from_utf8(out).unwrap());
}
