//! `worksheet lesson` end to end through the binary: the README's teacher walk-through
//! (list, start, answer wrongly then correctly, class) and its exit codes 0 / 1 / 2 / 3.

use std::fs;
use std::path::Path;

use assert_cmd::Command;

fn worksheet(dir: &Path) -> Command {
    let mut cmd =
        Command::cargo_bin("worksheet").expect("the binary is built for integration tests");
    cmd.current_dir(dir);
    cmd
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = worksheet(dir).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_teacher_lists_starts_checks_and_summarizes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (code, out, _) = run(d, &["lesson", "list"]);
    assert_eq!(code, 0);
    for id in [
        "three-boundaries",
        "overlap-arithmetic",
        "clocks-and-boots",
        "executor-lab",
        "warmup-statistics",
        "cuda-streams",
    ] {
        assert!(out.contains(id), "{out}");
    }

    let (code, out, err) = run(d, &["lesson", "start", "three-boundaries", "-o", "alice"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("lesson three-boundaries started in alice"),
        "{out}"
    );
    let handout = fs::read_to_string(d.join("alice/handout.md")).unwrap();
    // The commands that print answers come in part 2, after the predictions.
    let part2 = handout.find("## Part 2: measure").unwrap();
    assert!(
        handout[part2..].contains("worksheet eval alice/case.json"),
        "{handout}"
    );
    assert!(!handout[..part2].contains("worksheet eval"), "{handout}");

    // The blank sheet: exit 1, every answer missing.
    let (code, out, _) = run(d, &["lesson", "check", "alice"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("predicted 0 of 5 right, measured 0 of 5 right"),
        "{out}"
    );

    // Two wrong predictions, each a named misconception, and one wrong measurement.
    let predictions = "predict.submission: known 40 us
\
         predict.completion-from-submission: known 40 us
\
         predict.host-completion: known 140 us
\
         predict.device-interval: known 100 us
\
         predict.phases-union: 140 us
";
    let measured = "submission: known 40 us\ncompletion-from-submission: 140 us\n\
         host-completion: known 140 us\ndevice-interval: known 100 us\nphases-union: 100 us\n";
    fs::write(
        d.join("alice/answers.txt"),
        format!("{predictions}{measured}"),
    )
    .unwrap();
    let (code, out, _) = run(d, &["lesson", "check", "alice"]);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "WRONG    predict.phases-union: you predicted `140 us`, but the phases overlap"
        ),
        "{out}"
    );
    assert!(
        out.contains("That is the misconception *adding overlapping phases*"),
        "{out}"
    );
    assert!(
        out.contains("WRONG    predict.completion-from-submission: you predicted `known 40 us`")
            && out.contains("*submission read as completion*"),
        "{out}"
    );
    assert!(
        out.contains("WRONG    completion-from-submission: you answered `140 us`, but the stopwatch stops before the wait"),
        "{out}"
    );
    assert!(out.contains("so the answer is unknown (no-wait)"), "{out}");
    assert!(
        out.contains("predicted 3 of 5 right, measured 4 of 5 right"),
        "{out}"
    );
    // The README's "For teachers" section shows this very feedback.
    let readme = fs::read_to_string("README.md").unwrap();
    let line = out
        .lines()
        .find(|l| l.starts_with("WRONG    predict.phases-union"))
        .unwrap();
    assert!(
        readme.contains(line),
        "README.md shows stale feedback; it is now:\n{line}"
    );

    // Corrected: exit 0.
    let fixed = fs::read_to_string(d.join("alice/answers.txt"))
        .unwrap()
        .replace(
            "completion-from-submission: 140 us",
            "completion-from-submission: unknown (no-wait)",
        )
        .replace(
            "predict.completion-from-submission: known 40 us",
            "predict.completion-from-submission: unknown (no-wait)",
        )
        .replace(
            "predict.phases-union: 140 us",
            "predict.phases-union: 100 us",
        );
    fs::write(d.join("alice/answers.txt"), fixed).unwrap();
    let (code, out, _) = run(d, &["lesson", "check", "alice"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("predicted 5 of 5 right, measured 5 of 5 right"),
        "{out}"
    );

    // The key, for the teacher.
    let (code, out, _) = run(d, &["lesson", "key", "alice"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("| completion-from-submission         | measure | unknown (no-wait) |"),
        "{out}"
    );
    assert!(
        out.contains("adding-overlapping-phases (answers 140 us)"),
        "{out}"
    );

    // A second student and the class summary, with CSV; the CSV is never overwritten silently.
    run(d, &["lesson", "start", "three-boundaries", "-o", "bob"]);
    fs::write(
        d.join("bob/answers.txt"),
        "submission: 40 us\ncompletion-from-submission: known 40 us\n",
    )
    .unwrap();
    let (code, out, err) = run(
        d,
        &[
            "lesson",
            "class",
            "alice",
            "bob",
            "--export-csv",
            "class.csv",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("lesson three-boundaries: 2 student folder(s), 2 graded, 0 to re-run"),
        "{out}"
    );
    assert!(
        out.contains("| completion-from-submission | 1/2             | 1/2            |"),
        "{out}"
    );
    assert!(
        out.contains("`known 40 us` (1×); submission-read-as-completion (1×)"),
        "{out}"
    );
    let csv = fs::read_to_string(d.join("class.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3);
    let (code, _, err) = run(
        d,
        &[
            "lesson",
            "class",
            "alice",
            "bob",
            "--export-csv",
            "class.csv",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("error[exists]"), "{err}");
}

#[test]
fn malformed_input_exits_2_naming_the_field_and_cuda_without_simulate_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fs::write(
        d.join("lesson.json"),
        r#"{"format": "worksheet-lesson", "version": 1, "id": "x", "title": "X", "goals": [],
            "measurement": {"kind": "fixture", "case": "three-boundaries"},
            "questions": [{"id": "q", "ask": "?", "answer": {"from": "verdict", "question": "submission"}}]}"#,
    )
    .unwrap();
    let (code, _, err) = run(d, &["lesson", "start", "lesson.json", "-o", "x"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("lesson.json")
            && err.contains("questions[0]")
            && err.contains("error[missing-field]")
            && err.contains("why"),
        "{err}"
    );

    run(d, &["lesson", "start", "overlap-arithmetic", "-o", "s"]);
    fs::write(d.join("s/answers.txt"), "sum 140 us\n").unwrap();
    let (code, _, err) = run(d, &["lesson", "check", "s"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("answers.txt:1: line 1: error[bad-syntax]"),
        "{err}"
    );

    let (code, _, err) = run(d, &["lesson", "start", "no-such-lesson", "-o", "n"]);
    assert_eq!(code, 2);
    assert!(err.contains("error[unknown-lesson]"), "{err}");

    if cfg!(not(feature = "cuda")) {
        let (code, _, err) = run(d, &["lesson", "start", "cuda-streams", "-o", "c"]);
        assert_eq!(code, 3);
        assert!(err.contains("--simulate"), "{err}");
    }
    let (code, out, err) = run(
        d,
        &["lesson", "start", "cuda-streams", "-o", "c", "--simulate"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("SIMULATED"), "{out}");
}
