//! `worksheet capture` is honest about what is a law (issue 11 §4), end to end with the
//! simulator: host tendencies are printed as observations and never set the exit code, the
//! event quantum is stated only with enough distinct readings, and held-mode completion has
//! its own label.

use std::process::Command;

fn capture(args: &[&str]) -> (i32, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cap.json");
    let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
        .args(["capture", "--simulate"])
        .args(args)
        .arg("-o")
        .arg(&file)
        .env("COLUMNS", "300")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let case = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    (out.status.code().unwrap(), text, case)
}

#[test]
fn a_host_tendency_that_fails_is_an_observation_not_the_exit_code() {
    // A 1 us spin is shorter than the simulated submission (3.73 us): the tendency fails.
    let (code, text, _) = capture(&["--spin", "1us,100us", "--runs", "12"]);
    let row = text
        .lines()
        .find(|l| l.contains("submission-independent-of-spin"))
        .unwrap();
    assert!(
        row.contains("observation") && row.contains("no (not a failure)"),
        "{row}"
    );
    assert!(row.contains("2 of 2 fail"), "{row}");
    assert_eq!(code, 0, "{text}");
    for law in [
        "device-within-completion",
        "body-covers-spin",
        "unknowns-stay-unknown",
    ] {
        let row = text.lines().find(|l| l.contains(law)).unwrap();
        assert!(row.contains("| law ") && row.contains("| yes "), "{row}");
    }
}

#[test]
fn the_quantum_needs_enough_distinct_readings() {
    let (code, text, case) = capture(&[
        "--spin",
        "10us",
        "--runs",
        "2",
        "--warmup",
        "1",
        "--calibration-pairs",
        "2",
    ]);
    assert_eq!(code, 0);
    let line = text
        .lines()
        .find(|l| l.starts_with("event quantum:"))
        .unwrap();
    assert!(line.starts_with("event quantum: unknown: "), "{line}");
    assert!(line.contains("fewer than the 10 needed"), "{line}");
    assert!(case["provenance"]["calibration"]["event_step_ns"].is_null());
    assert!(!text.contains("readings-on-quantum"));
}

#[test]
fn held_mode_completion_has_its_own_label() {
    let (_, text, case) = capture(&["--spin", "10us", "--runs", "6"]);
    let held: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("stream held") && l.contains("completion"))
        .collect();
    assert_eq!(held.len(), 1, "{text}");
    assert!(
        held[0].contains("host completion from the release"),
        "{}",
        held[0]
    );
    let idle = text
        .lines()
        .find(|l| l.contains("stream idle") && l.contains("completion"))
        .unwrap();
    assert!(idle.contains("host-observed completion"), "{idle}");
    let label = case["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "spin-10us-held-host-completion")
        .unwrap()["label"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        label.starts_with("host completion from the release"),
        "{label}"
    );
}

#[test]
fn the_committed_h200_capture_keeps_every_law_including_the_quantum() {
    use worksheet::capture::relations;
    let text = std::fs::read_to_string("fixtures/captures/h200-capture.json").unwrap();
    let case = worksheet::case::load_case_str(&text, "h200-capture.json").unwrap();
    let report = worksheet::engine::evaluate(&case);
    let rel = relations::check(&case, &report);
    let q = rel.iter().find(|r| r.id == "readings-on-quantum").unwrap();
    assert!(q.law && q.holds, "{q:?}");
    // 6 groups of 20 warm-up + 200 measured device intervals, and 200 calibration pairs
    let n: usize = q.detail.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(n, 6 * 220 + 200, "{q:?}");
    assert!(relations::laws_hold(&rel));
}
