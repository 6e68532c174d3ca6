//! The command line fits an 80-column terminal: tables wrap to `COLUMNS` when stdout is not
//! a terminal, and every `--help` (examples included, one per line) fits 80 columns.

use std::process::Command;

fn lines_over(args: &[&str], columns: Option<&str>, limit: usize) -> Vec<String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_worksheet"));
    cmd.args(args).env_remove("COLUMNS");
    if let Some(c) = columns {
        cmd.env("COLUMNS", c);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.is_empty(), "{args:?} printed nothing");
    text.lines()
        .filter(|l| l.chars().count() > limit)
        .map(str::to_owned)
        .collect()
}

#[test]
fn eval_fits_80_columns() {
    let args = ["eval", "fixtures/cases/three-boundaries.json"];
    assert_eq!(lines_over(&args, Some("80"), 80), Vec::<String>::new());
    // without COLUMNS (and not a terminal) the table is not limited: it is wider
    assert!(!lines_over(&args, None, 80).is_empty());
    let args = ["check", "fixtures/cases/three-boundaries.json"];
    assert_eq!(lines_over(&args, Some("80"), 80), Vec::<String>::new());
    let capture = "fixtures/captures/h200-capture.json";
    let args = ["compare", capture, capture];
    assert_eq!(lines_over(&args, Some("100"), 100), Vec::<String>::new());
}

#[test]
fn every_help_fits_80_columns() {
    for sub in [
        vec![],
        vec!["check"],
        vec!["eval"],
        vec!["capture"],
        vec!["form"],
        vec!["form", "new"],
        vec!["form", "fill"],
        vec!["form", "check"],
        vec!["lab"],
        vec!["lab", "executor"],
        vec!["lab", "streams"],
        vec!["render"],
        vec!["import"],
        vec!["compare"],
        vec!["export"],
        vec!["completions"],
        vec!["man"],
        vec!["lesson"],
        vec!["lesson", "start"],
        vec!["lesson", "answer"],
        vec!["lesson", "check"],
        vec!["lesson", "key"],
        vec!["lesson", "class"],
    ] {
        let mut args = sub.clone();
        args.push("--help");
        let long = lines_over(&args, None, 80);
        assert!(long.is_empty(), "{sub:?}: {long:#?}");
        // every example line is a whole command (none continues on the next line)
        let out = Command::new(env!("CARGO_BIN_EXE_worksheet"))
            .args(&args)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for l in text.lines().filter(|l| l.starts_with("  worksheet ")) {
            assert!(!l.ends_with('\\') && !l.contains("(then"), "{sub:?}: {l}");
        }
    }
}
