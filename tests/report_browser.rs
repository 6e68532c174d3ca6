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

/// The nccl_data page, written to a temporary folder; `None` (the test skips, or fails under
/// CI) without Chromium.
fn nccl_page() -> Option<(PathBuf, tempfile::TempDir, PathBuf)> {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is not installed: CI must run the browser test (apt-get install chromium)"
        );
        eprintln!("SKIPPED: chromium is not installed (CI would fail here)");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    Command::cargo_bin("worksheet")
        .unwrap()
        .args(["report", "tests/data/traces/nccl_data.json.gz", "-o"])
        .arg(&page)
        .assert()
        .success();
    Some((browser, dir, page))
}

/// Steps as brackets (issue 26 §4): hovering ProfilerStep#4's bracket names the step with
/// its exact start and end after the clock's origin and its duration as the engine prints
/// it. The trace's step runs from 1716423322.416788066 s for 222.442191 ms (the audit: start
/// 28719315 ns after its origin 1716423322.388068751 s); the clock's origin is
/// 1716423322.4 s.
#[test]
fn hovering_a_step_bracket_names_the_step_with_exact_times() {
    let Some((browser, dir, page)) = nccl_page() else {
        return;
    };
    let (start, end) = (16_788_066, 16_788_066 + 222_442_191);
    let linked = PathBuf::from(format!(
        "{}#at=0@{}@steps",
        page.display(),
        (start + end) / 2
    ));
    let (dom, _) = browse(&browser, &linked, &dir.path().join("p"), &["--dump-dom"]);
    assert!(
        dom.contains(r#"data-status="ok""#),
        "{}",
        &dom[..dom.len().min(400)]
    );
    let want = format!(
        "data-hover=\"step ProfilerStep#4 — start +{start} ns, end +{end} ns after the origin, duration 222442191 ns (222.442191 ms, exact; from marks step:ProfilerStep#4:start → step:ProfilerStep#4:end)\""
    );
    assert!(
        dom.contains(&want),
        "no hover text on the step: {}",
        dom.split("data-hover")
            .nth(1)
            .unwrap_or("(none)")
            .chars()
            .take(300)
            .collect::<String>()
    );
}

/// The audit's evidence links to its events (issue 26 §4): clicking the first evidence item
/// of `sync-in-loop` (`cudaEventSynchronize at t+29.601167 ms, …, next GPU start
/// t+34.81143 ms`, after the audit's origin 1716423322.388068751 s) zooms the panel to that
/// range (after the clock's origin 1716423322.4 s: +17669918 ns … +22880181 ns, a tenth
/// more each side) from the full view (+101951 ns … +700918813 ns), marks it, and puts it in the page's address (`#at=0@S..E`), which
/// opens the same view.
#[test]
fn clicking_a_findings_evidence_moves_the_view_to_it() {
    let Some((browser, dir, page)) = nccl_page() else {
        return;
    };
    let html = std::fs::read_to_string(&page).unwrap();
    let probe = r#"<script>window.addEventListener("load", function () {
  var panel = document.querySelector(".panel"), before = panel.getAttribute("data-view");
  var link = document.querySelector("a.evidence");
  link.click();
  document.body.setAttribute("data-probe", [before, location.hash, panel.getAttribute("data-view"),
    link.textContent].join("|"));
});</script>
</body>"#;
    let probed = dir.path().join("probed.html");
    std::fs::write(&probed, html.replacen("</body>", probe, 1)).unwrap();
    let (dom, _) = browse(&browser, &probed, &dir.path().join("p"), &["--dump-dom"]);
    assert!(
        dom.contains(r#"data-status="ok""#),
        "{}",
        &dom[..dom.len().min(400)]
    );
    let probe = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the probe ran");
    let parts: Vec<&str> = probe.split('|').collect();
    let (s, e) = (29_601_167 - 11_931_249, 34_811_430 - 11_931_249);
    let pad = (e - s) / 10;
    assert_eq!(
        parts,
        [
            "101951..700918813",
            &format!("#at=0@{s}..{e}") as &str,
            &format!("{}..{}", s - pad, e + pad),
            "ProfilerStep#4: cudaEventSynchronize at t+29.601167 ms, returned t+29.610558 ms, next GPU start t+34.81143 ms",
        ]
    );
    // The address opens the same view.
    let linked = PathBuf::from(format!("{}#at=0@{s}..{e}", page.display()));
    let (dom, _) = browse(&browser, &linked, &dir.path().join("q"), &["--dump-dom"]);
    assert!(
        dom.contains(&format!(r#"data-view="{}..{}""#, s - pad, e + pad)),
        "the linked range is not the view"
    );
}
