//! A file of the wrong kind names the command to use; missing defaults and Rust type names
//! never reach the user (review D7, D8, D9, D22).

use std::process::Command;

fn stderr_of(args: &[&str], dir: Option<&std::path::Path>) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_worksheet"));
    cmd.args(args);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn wrong_kinds_name_the_right_command() {
    let (code, err) = stderr_of(&["eval", "worksheets/seed-host-completion.json"], None);
    assert_eq!(code, 2);
    assert!(
        err.contains("error[wrong-kind]") && err.contains("worksheet form check"),
        "{err}"
    );
    let (code, err) = stderr_of(
        &["form", "check", "fixtures/cases/three-boundaries.json"],
        None,
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("error[wrong-kind]") && err.contains("worksheet eval"),
        "{err}"
    );
    let (code, err) = stderr_of(&["import", "fixtures/cases/three-boundaries.json"], None);
    assert_eq!(code, 2);
    assert!(err.contains("already a worksheet case"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.json");
    std::fs::write(&trace, r#"{"traceEvents": []}"#).unwrap();
    let (code, err) = stderr_of(&["check", trace.to_str().unwrap()], None);
    assert_eq!(code, 2);
    assert!(err.contains("worksheet import"), "{err}");
}

#[test]
fn check_without_arguments_outside_a_checkout_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = stderr_of(&["check"], Some(dir.path()));
    assert_eq!(code, 2);
    assert!(err.starts_with("error: no case files given"), "{err}");
    assert!(!err.contains("$"), "{err}");
}

#[test]
fn messages_name_no_rust_types() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("v.json");
    std::fs::write(
        &case,
        "{\"format\": \"worksheet-case\",\n\"version\": \"1\"}",
    )
    .unwrap();
    let (code, err) = stderr_of(&["eval", case.to_str().unwrap()], None);
    assert_eq!(code, 2);
    assert!(err.contains("expected a non-negative integer"), "{err}");
    assert!(!err.contains("u32"), "{err}");
}

#[test]
fn an_export_into_a_missing_folder_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let started = std::time::Instant::now();
    let (code, err) = stderr_of(
        &[
            "lab",
            "executor",
            "--runs",
            "3",
            "--export-csv",
            "/no/such/dir/runs.csv",
            "--export-json",
            json.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 2);
    assert!(
        err.starts_with("/no/such/dir/runs.csv: error[io]") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!err.contains(".tmp"), "{err}");
    // refused before calibration (a 50 ms target and 3 runs take far longer)
    assert!(started.elapsed() < std::time::Duration::from_millis(150));
    assert!(!json.exists());
}
