//! `worksheet report` in a real browser: headless Chromium opens the page, which must load
//! with no console error and no uncaught exception, carry the expected panels and tables
//! in its DOM (after the inline script ran), and look like something (a screenshot that is
//! not blank).
//!
//! Chromium is the Debian package `chromium` (`.ci/run` installs it when missing). Without
//! it the test fails when `CI=true`, and says it skipped otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::prelude::*;

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
        })
}

/// Runs headless Chromium on `page` with `extra` arguments; returns (stdout, stderr).
fn browse(browser: &Path, page: &Path, profile: &Path, extra: &[&str]) -> (String, String) {
    let url = format!("file://{}", page.display());
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(&url)
        .output()
        .expect("chromium runs");
    assert!(out.status.success(), "chromium failed: {out:?}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn report_opens_cleanly(input: &str, clocks: usize, tables: &[&str]) {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is not installed: CI must run the browser test (apt-get install chromium)"
        );
        eprintln!("SKIPPED: chromium is not installed (CI would fail here)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    Command::cargo_bin("worksheet")
        .unwrap()
        .args(["report", input, "-o"])
        .arg(&page)
        .assert()
        .success();
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 5_000_000, "{input}: {size} bytes");

    // The DOM after the script ran.
    let (dom, stderr) = browse(&browser, &page, &dir.path().join("p1"), &["--dump-dom"]);
    for line in stderr.lines() {
        assert!(
            !line.contains("CONSOLE") && !line.contains("Uncaught"),
            "{input}: console message: {line}"
        );
    }
    assert!(
        dom.contains(r#"data-status="ok""#),
        "{input}: the script did not finish: {}",
        &dom[..dom.len().min(400)]
    );
    assert!(!dom.contains("data-errors=\""), "{input}: a script error");
    assert!(
        dom.contains(&format!(r#"data-panels-drawn="{clocks}""#)),
        "{input}: expected {clocks} panels drawn"
    );
    assert_eq!(
        dom.matches(r#"<div class="panel""#).count(),
        clocks,
        "{input}"
    );
    for id in tables {
        assert!(
            dom.contains(&format!(r#"<section id="{id}">"#)),
            "{input}: no section {id}"
        );
    }

    // A screenshot that is not blank: many pixels that are neither white nor one colour.
    let shot = dir.path().join("shot.png");
    browse(
        &browser,
        &page,
        &dir.path().join("p2"),
        &[
            "--window-size=1200,1400",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
    let ink = pixmap
        .pixels()
        .iter()
        .filter(|p| p.red() < 200 || p.green() < 200 || p.blue() < 200)
        .count();
    let total = pixmap.pixels().len();
    assert!(
        ink * 50 > total,
        "{input}: the screenshot is almost blank ({ink} of {total} pixels inked)"
    );
}

#[test]
fn the_seed_report_opens_in_chromium() {
    report_opens_cleanly(
        "fixtures/cases/three-boundaries.json",
        2,
        &["verdicts", "streams", "devices", "timeline"],
    );
}

#[test]
fn a_trace_report_opens_in_chromium() {
    report_opens_cleanly(
        "tests/data/traces/nccl_data.json.gz",
        1,
        &["verdicts", "streams", "devices", "audit", "timeline"],
    );
}

/// The report of a trace carries the audit's findings and steps, the same ones
/// `worksheet audit` prints (no browser needed to check the page's text).
#[test]
fn a_trace_report_carries_the_audit_findings() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let trace = "tests/data/traces/nccl_data.json.gz";
    Command::cargo_bin("worksheet")
        .unwrap()
        .args(["report", trace, "-o"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    let audit = Command::cargo_bin("worksheet")
        .unwrap()
        .args(["audit", trace, "--format", "json"])
        .output()
        .unwrap();
    let audit: serde_json::Value = serde_json::from_slice(&audit.stdout).unwrap();
    let findings = audit["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        let code = f["code"].as_str().unwrap();
        assert!(
            html.contains(&format!("<code>{code}</code>")),
            "the report lacks finding {code}"
        );
    }
    for s in audit["steps"].as_array().unwrap() {
        let step = s["step"].as_str().unwrap();
        assert!(html.contains(&format!("<td>{step}</td>")), "no step {step}");
    }
    assert!(html.contains(r#"<section id="audit">"#));
}

/// Names in the timeline (issue 26 §4, review N5): the page's link to a time,
/// `#at=PANEL@T@LANE`, zooms there and shows what hovering shows: the kernel under the
/// cursor with its exact start, end and duration after the clock's origin.
#[test]
fn hovering_a_known_kernel_names_it_with_exact_times() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is not installed: CI must run the browser test (apt-get install chromium)"
        );
        eprintln!("SKIPPED: chromium is not installed (CI would fail here)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    Command::cargo_bin("worksheet")
        .unwrap()
        .args(["report", "tests/data/traces/nccl_data.json.gz", "-o"])
        .arg(&page)
        .assert()
        .success();
    // The first NCCL broadcast on stream gpu0-s40 runs from 1716423322.423385774 s to
    // 1716423322.423416749 s; the clock's origin is 1716423322.4 s.
    let middle = (23_385_774 + 23_416_749) / 2;
    let linked = PathBuf::from(format!(
        "{}#at=0@{middle}@stream%20gpu0-s40",
        page.display()
    ));
    let (dom, _) = browse(&browser, &linked, &dir.path().join("p"), &["--dump-dom"]);
    assert!(
        dom.contains(r#"data-status="ok""#),
        "{}",
        &dom[..dom.len().min(400)]
    );
    assert!(
        dom.contains("data-hover=\"stream gpu0-s40: ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*) — start +23385774 ns, end +23416749 ns after the origin, duration 30975 ns (30.975 us)\""),
        "no hover text on the kernel"
    );
}

/// The embedded data of the largest shared trace stays small: names are interned per
/// panel, one index per interval.
#[test]
fn the_df_index_resolver_page_stays_under_5_mb() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    Command::cargo_bin("worksheet")
        .unwrap()
        .args([
            "report",
            "tests/data/traces/df_index_resolver.json.gz",
            "-o",
        ])
        .arg(&page)
        .assert()
        .success();
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 5_000_000, "{size} bytes");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#""names":["#), "the names are not embedded");
}
