//! No control character from an input reaches the terminal (reliability review D8): ESC,
//! BEL, CR, NUL and OSC sequences in case names, phase labels, kernel and call names, form
//! answers and the text of error messages are printed as escapes (`\u{1b}`) by every
//! command, through the one function `worksheet::escape::printable`.
//!
//! Inputs (`tests/data/control/`): `ctrl-chars.json` (the seed case with `ESC [31m`, BEL,
//! NUL and CR in a phase label and an OSC title sequence in its name, the review's
//! `in/c/ctrl-chars.json`), `ctrl-names.json` (a Kineto trace whose `cudaEventQuery` calls
//! and one kernel carry an OSC title sequence and `ESC [2J`, the review's
//! `in/k/ctrl-names.json`), `ranks/` (that trace as ranks 0 and 1), `ctrl-form.json` (a form
//! with controls in its name and description) and `ctrl-error.json` (a case whose error
//! quotes a stream id holding controls).

use assert_cmd::Command;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/control");

/// Bytes a terminal acts on: C0 controls except the line feed, and DEL.
fn raw_controls(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .filter(|&&b| (b < 0x20 && b != b'\n') || b == 0x7f)
        .count()
}

/// Runs `worksheet ARGS` (inputs relative to `DATA`) in a scratch folder; returns exit code
/// and stdout + stderr.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let scratch = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("worksheet")
        .unwrap()
        .current_dir(DATA)
        .env("NO_COLOR", "1")
        .args(
            args.iter()
                .map(|a| a.replace("$SCRATCH", &scratch.path().display().to_string())),
        )
        .output()
        .unwrap();
    let mut bytes = out.stdout.clone();
    bytes.extend_from_slice(&out.stderr);
    assert_eq!(
        raw_controls(&bytes),
        0,
        "{args:?} printed raw control bytes:\n{}",
        String::from_utf8_lossy(&bytes)
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

#[test]
fn every_command_escapes_controls_from_a_case() {
    let name = "n\\u{1b}]0;title\\u{7}";
    for (args, shows) in [
        (&["eval", "ctrl-chars.json"][..], name),
        (&["check", "ctrl-chars.json"], name),
        (&["render", "ctrl-chars.json", "--format", "text"], name),
        (
            &["compare", "ctrl-chars.json", "ctrl-chars.json"],
            "ctrl-chars.json",
        ),
        (
            &[
                "compare",
                "ctrl-chars.json",
                "ctrl-chars.json",
                "--format",
                "markdown",
            ],
            "ctrl-chars.json",
        ),
        (&["render", "ctrl-chars.json", "--format", "svg"], "<svg"),
    ] {
        let (code, text) = run(args);
        assert!(matches!(code, Some(0 | 1)), "{args:?}: {text}");
        assert!(text.contains(shows), "{args:?} lacks {shows}:\n{text}");
    }
    // the label, whole, where a command prints labels
    let (_, text) = run(&["eval", "ctrl-chars.json", "--format", "text"]);
    assert!(text.contains(name), "{text}");
    let (_, text) = run(&[
        "render",
        "ctrl-chars.json",
        "--format",
        "text",
        "--width",
        "400",
    ]);
    assert!(text.contains("evil\\u{1b}[31mRED"), "{text}");
}

#[test]
fn every_command_escapes_controls_from_a_trace() {
    let call = "k\\u{1b}]0;pwned\\u{7}\\u{1b}[2JcudaEventQuery";
    let kernel = "k\\u{1b}]0;pwned\\u{7}\\u{1b}[2Jampere_sgemm_128x64_nn";
    for (args, shows) in [
        (&["import", "ctrl-names.json"][..], call),
        (&["import", "ctrl-names.json", "--compat", "hta"], call),
        (&["import", "ranks"], kernel),
        (&["audit", "ctrl-names.json"], "audit"),
        (&["audit", "ctrl-names.json", "--format", "markdown"], "#"),
        (&["audit", "ctrl-names.json", "--compat", "hta"], "HTA"),
        (&["report", "ctrl-names.json", "-o", "$SCRATCH/r.html"], ""),
    ] {
        let (code, text) = run(args);
        assert!(matches!(code, Some(0 | 1)), "{args:?}: {text}");
        assert!(text.contains(shows), "{args:?} lacks {shows}:\n{text}");
    }
    // compare reads imported cases
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("c.json");
    Command::cargo_bin("worksheet")
        .unwrap()
        .current_dir(DATA)
        .args(["import", "ctrl-names.json", "-o"])
        .arg(&case)
        .assert()
        .success();
    let case = case.display().to_string();
    let (code, text) = run(&["compare", &case, &case]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains(kernel), "{text}");
}

#[test]
fn forms_and_error_messages_escape_controls() {
    let (code, text) = run(&["form", "check", "ctrl-form.json"]);
    assert_eq!(code, Some(0), "{text}");
    // an error quoting the input: the stream id with OSC and CR, escaped on stderr
    for command in ["eval", "check", "render"] {
        let (code, text) = run(&[command, "ctrl-error.json"]);
        assert_eq!(code, Some(2), "{command}: {text}");
        assert!(
            text.contains("s\\u{1b}]0;t\\u{7}\\u{d}"),
            "{command}: {text}"
        );
    }
}
