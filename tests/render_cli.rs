//! `worksheet render` and `worksheet report` end to end: the output format follows the
//! extension (PNG is a real PNG; an unknown extension is refused before any work), focus and
//! window errors name the file and a code, a window zooms, text keeps within its width.

use assert_cmd::Command;
use predicates::prelude::*;

const SEED: &str = "fixtures/cases/three-boundaries.json";

fn ws() -> Command {
    Command::cargo_bin("worksheet").unwrap()
}

#[test]
fn a_png_output_is_a_png_drawn_with_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("seed.png");
    ws().args(["render", SEED, "-o"])
        .arg(&out)
        .assert()
        .success();
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let pixmap = resvg::tiny_skia::Pixmap::decode_png(&bytes).unwrap();
    assert_eq!(pixmap.width(), 1200);
    let dark = pixmap
        .pixels()
        .iter()
        .filter(|p| p.red() < 80 && p.green() < 80)
        .count();
    assert!(dark > 2_000, "{dark} dark pixels: is the text there?");
}

#[test]
fn an_unknown_extension_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["t.jpg", "t"] {
        let out = dir.path().join(name);
        ws().args(["render", SEED, "-o"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("error[unknown-extension]"));
        assert!(!out.exists());
    }
    ws().args(["report", SEED, "-o"])
        .arg(dir.path().join("r.svg"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("error[unknown-extension]"));
}

#[test]
fn focus_and_window_errors_name_the_file_and_a_code() {
    ws().args(["render", SEED, "--focus", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(format!(
            "{SEED}: error[unknown-focus]:"
        )));
    ws().args(["render", SEED, "--window", "7 ms..7.1 ms"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("error[bad-window]").and(predicate::str::contains("--clock")),
        );
    ws().args([
        "render",
        SEED,
        "--window",
        "7 ms..7.1 ms",
        "--clock",
        "nope",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains("has no clock `nope`"));
    ws().args(["render", SEED, "--window", "7 ms", "--clock", "gpu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("START..END"));
}

#[test]
fn a_window_zooms_one_clock() {
    let out = ws()
        .args([
            "render",
            SEED,
            "--format",
            "text",
            "--window",
            "7040 us..7080 us",
            "--clock",
            "gpu",
            "--width",
            "80",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    // 40 us over 64 columns: the gpu axis is in us with labels inside the window.
    assert!(text.contains("7040") && text.contains("7070"), "{text}");
    assert!(!text.contains("7000 "), "{text}");
    assert!(
        text.contains("phases (whole question): union 100 us, sum 140 us"),
        "{text}"
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
}
