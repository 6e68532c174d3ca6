//! What users see: the `worksheet` binary end to end — exit codes, tables, JSON, help, and
//! the error message of every malformed input.
//!
//! Snapshots live in `tests/snapshots/` (insta; `cargo insta review` or `INSTA_UPDATE=always`
//! to re-bless). The golden full report of `worksheet check fixtures/` lives in
//! `tests/golden/`; `WORKSHEET_BLESS=1 cargo test` rewrites it on purpose.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};

use assert_cmd::Command;

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").expect("the binary is built for integration tests")
}

fn stdout_of(args: &[&str]) -> (i32, String, String) {
    let out = worksheet().args(args).output().expect("runs");
    (
        out.status.code().expect("exited normally"),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

#[test]
fn check_fixtures_passes_all_39_cases() {
    let (code, stdout, stderr) = stdout_of(&["check", "fixtures/cases", "fixtures/edge-controls"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(stdout.contains("\n39 passed, 0 failed\n"), "{stdout}");
    insta::assert_snapshot!("check_text", stdout);
}

#[test]
fn check_without_paths_reads_fixtures() {
    let (code, stdout, _) = stdout_of(&["check"]);
    assert_eq!(code, 0);
    assert!(stdout.contains(" passed, 0 failed\n"), "{stdout}");
}

#[test]
fn check_json_report_matches_the_golden_file() {
    let (code, stdout, _) = stdout_of(&[
        "check",
        "fixtures/cases",
        "fixtures/edge-controls",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let golden = Path::new("tests/golden/check-fixtures.json");
    if std::env::var_os("WORKSHEET_BLESS").is_some() {
        fs::create_dir_all(golden.parent().unwrap()).unwrap();
        fs::write(golden, &stdout).unwrap();
    }
    let expected =
        fs::read_to_string(golden).expect("golden file exists (bless with WORKSHEET_BLESS=1)");
    let actual: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let expected_json: serde_json::Value = serde_json::from_str(&expected).unwrap();
    assert_eq!(actual["passed"], 39);
    assert_eq!(actual["failed"], 0);
    if actual != expected_json {
        let diff = similar_lines(&expected, &stdout);
        panic!("the full report changed; if deliberate, re-bless with WORKSHEET_BLESS=1\n{diff}");
    }
}

/// The first differing lines of two texts, for a readable failure.
fn similar_lines(expected: &str, actual: &str) -> String {
    expected
        .lines()
        .zip(actual.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .take(10)
        .map(|(i, (a, b))| format!("line {}: -{a}\n line {}: +{b}", i + 1, i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn check_csv_has_one_row_per_comparison() {
    let (code, stdout, _) = stdout_of(&[
        "check",
        "fixtures/cases/three-boundaries.json",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0);
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some("case,file,question,field,expected,expected_ns,actual,actual_ns,result")
    );
    assert_eq!(
        lines.next(),
        Some("three-boundaries,fixtures/cases/three-boundaries.json,submission,verdict,known 40 us,40000,known 40 us,40000,pass")
    );
    assert_eq!(stdout.lines().count(), 1 + 8);
}

/// Copies `fixtures/` into a temporary folder so a test can change one expected value.
fn copy_fixtures() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["cases", "edge-controls"] {
        let to = dir.path().join(sub);
        fs::create_dir_all(&to).unwrap();
        for entry in fs::read_dir(Path::new("fixtures").join(sub)).unwrap() {
            let from = entry.unwrap().path();
            fs::copy(&from, to.join(from.file_name().unwrap())).unwrap();
        }
    }
    dir
}

#[test]
fn a_changed_expected_value_fails_naming_case_and_both_values() {
    let dir = copy_fixtures();
    let file = dir.path().join("cases/three-boundaries.json");
    let text = fs::read_to_string(&file).unwrap();
    let changed = text.replacen("\"value\": \"140 us\"", "\"value\": \"141 us\"", 1);
    assert_ne!(text, changed, "the fixture holds the value to change");
    fs::write(&file, changed).unwrap();
    let out = worksheet().arg("check").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("38 passed, 1 failed"), "{stdout}");
    let fail_line = stdout
        .lines()
        .find(|l| l.starts_with("FAIL "))
        .expect("a FAIL line");
    assert!(fail_line.contains("three-boundaries"), "{fail_line}");
    assert!(fail_line.contains("host-completion"), "{fail_line}");
    assert!(
        fail_line.contains("expected known 141 us, actual known 140 us"),
        "{fail_line}"
    );
}

#[test]
fn a_changed_reason_fails_too() {
    let dir = copy_fixtures();
    let file = dir
        .path()
        .join("edge-controls/04-cross-stream-no-dependency.json");
    let text = fs::read_to_string(&file)
        .unwrap()
        .replace("\"cross-stream\"", "\"cross-domain\"");
    fs::write(&file, text).unwrap();
    let out = worksheet().arg("check").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("expected unknown (cross-domain), actual unknown (cross-stream)"),
        "{stdout}"
    );
}

#[test]
fn eval_prints_every_answer_with_its_reason() {
    let (code, stdout, _) = stdout_of(&["eval", "fixtures/cases/three-boundaries.json"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("eval_three_boundaries_text", stdout);
    let (code, stdout, _) = stdout_of(&[
        "eval",
        "fixtures/cases/wait-on-other-event.json",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("eval_wait_on_other_event_json", stdout);
}

#[test]
fn eval_csv_lists_answers() {
    let (code, stdout, _) = stdout_of(&[
        "eval",
        "fixtures/edge-controls/12-difference-not-causal.json",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "case,question,kind,verdict,value,value_ns,reason,detail"
    );
    assert!(
        lines[3].starts_with(
            "12-difference-not-causal,completion-minus-device,difference,known,40 us,40000,"
        ),
        "{}",
        lines[3]
    );
}

#[test]
fn help_shows_examples_and_exit_codes() {
    for (name, args) in [
        ("help_main", vec!["--help"]),
        ("help_check", vec!["check", "--help"]),
        ("help_eval", vec!["eval", "--help"]),
    ] {
        let (code, stdout, _) = stdout_of(&args);
        assert_eq!(code, 0);
        assert!(stdout.contains("Exit codes"), "{name}: {stdout}");
        insta::assert_snapshot!(name, stdout);
    }
}

#[test]
fn usage_errors_exit_2() {
    let (code, _, stderr) = stdout_of(&["check", "--format", "yaml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid value 'yaml'"), "{stderr}");
    let (code, _, stderr) = stdout_of(&["frobnicate"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = stdout_of(&["check", "no/such/folder"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no/such/folder: $: error[io]"), "{stderr}");
}

/// Every file in `tests/data/malformed/` names its expected error in `EXPECTED.csv`.
fn malformed_cases() -> Vec<(PathBuf, String, String)> {
    let dir = Path::new("tests/data/malformed");
    let mut reader = csv::Reader::from_path(dir.join("EXPECTED.csv")).unwrap();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (dir.join(&r[0]), r[1].to_owned(), r[2].to_owned())
        })
        .collect()
}

#[test]
fn every_malformed_file_exits_2_with_code_file_and_field() {
    let cases = malformed_cases();
    assert!(
        cases.len() >= 25,
        "at least 25 malformed files, found {}",
        cases.len()
    );
    let listed: Vec<PathBuf> = cases.iter().map(|c| c.0.clone()).collect();
    for entry in fs::read_dir("tests/data/malformed").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "json") {
            assert!(
                listed.contains(&path),
                "{} has no line in EXPECTED.csv",
                path.display()
            );
        }
    }
    for (_, code, _) in &cases {
        assert!(
            worksheet::case::CASE_ERROR_CODES.contains(&code.as_str()),
            "`{code}` is not a documented case error code"
        );
    }
    for (file, code, path) in cases {
        for command in ["check", "eval"] {
            let out = worksheet().arg(command).arg(&file).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command} {}: {stderr}",
                file.display()
            );
            assert!(!stderr.contains("panicked"), "{}: {stderr}", file.display());
            let line = stderr.lines().next().unwrap_or_default();
            assert!(
                line.starts_with(&file.display().to_string()),
                "names the file: {line}"
            );
            assert!(
                line.contains(&format!("error[{code}]")),
                "{}: expected code {code}: {line}",
                file.display()
            );
            let reported_path = line.split(": ").nth(1).unwrap_or_default();
            assert!(
                reported_path.starts_with(&path),
                "{}: expected path {path}, got {reported_path}",
                file.display()
            );
        }
    }
}

#[test]
fn malformed_messages_read_well() {
    let mut text = String::new();
    for name in [
        "reversed-interval",
        "missing-unit-number",
        "clock-without-instance",
        "unknown-field-typo",
        "inexact-value",
        "overflow-past-i64",
        "unknown-stream-reference",
        "invalid-json",
    ] {
        let (_, _, stderr) = stdout_of(&["eval", &format!("tests/data/malformed/{name}.json")]);
        text.push_str(&stderr);
    }
    insta::assert_snapshot!("malformed_messages", text);
}

#[test]
fn ten_megabytes_of_junk_is_an_input_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    let mut bytes = Vec::with_capacity(10 * 1024 * 1024);
    let mut x: u32 = 0x9E37_79B9;
    while bytes.len() < 10 * 1024 * 1024 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bytes.push(b"{}[]\",:0123456789abc \n"[(x % 22) as usize]);
    }
    fs::write(&junk, &bytes).unwrap();
    let out = worksheet().arg("check").arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("junk.json") && stderr.contains("error[bad-syntax]"),
        "{stderr}"
    );
}

#[test]
fn a_file_over_64_mib_is_refused_as_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    fs::File::create(&big)
        .unwrap()
        .set_len(65 * 1024 * 1024)
        .unwrap();
    let out = worksheet().arg("eval").arg(&big).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error[too-large]"));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("worksheet"))
        .args(["check", "fixtures", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn readme_examples_are_real_output() {
    let readme = fs::read_to_string("README.md").unwrap();
    for case in [
        "fixtures/cases/three-boundaries.json",
        "fixtures/cases/wait-on-other-event.json",
    ] {
        let (code, stdout, _) = stdout_of(&["eval", case]);
        assert_eq!(code, 0);
        let shown = format!("$ worksheet eval {case}\n{stdout}");
        assert!(
            readme.contains(&shown),
            "README.md shows stale output for {case}; it is now:\n{stdout}"
        );
    }
    let (_, stderr_case, stderr) =
        stdout_of(&["eval", "tests/data/malformed/reversed-interval.json"]);
    assert!(stderr_case.is_empty());
    assert!(
        readme.contains(stderr.trim_end()),
        "README.md shows a stale error message: {stderr}"
    );
}
