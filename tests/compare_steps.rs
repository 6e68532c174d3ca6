//! `compare` of two training runs (issue 26 §7, review N9), end to end: the steady steps of
//! each run are one sample with the bootstrap verdict, rows are sorted by impact, the
//! headline names the few kernel rows that explain most of the change, and on an 80-column
//! terminal the text is a summary of at most 40 lines (`--all` for every row).

use assert_cmd::Command;

const BASE: &str = "tests/data/traces/worker0.1623143089861.pt.trace.json.gz";
const NEW: &str = "tests/data/traces/worker0.1623212756351.pt.trace.json.gz";

fn compare(extra: &[&str]) -> String {
    let out = Command::cargo_bin("worksheet")
        .unwrap()
        .env("COLUMNS", "80")
        .args(["compare", BASE, NEW])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn two_training_runs_compare_their_steps_as_a_sample_sorted_by_impact() {
    let v: serde_json::Value = serde_json::from_str(&compare(&["--format", "json"])).unwrap();
    let rows = v["rows"].as_array().unwrap();
    // The steady steps: BASE keeps its 6 steps, NEW leaves its first out as a warm-up.
    let steps = &rows[0];
    assert_eq!(steps["group"], "steps");
    assert_eq!(steps["name"], "step:ProfilerStep#*:host");
    assert_eq!(steps["verdict"], "faster");
    assert_eq!(steps["method"], "bootstrap");
    assert_eq!(steps["base"]["count"], 6);
    assert_eq!(steps["base"]["median_ns"], 176_078_000);
    assert_eq!(steps["new"]["count"], 5);
    assert_eq!(steps["new"]["median_ns"], 126_272_000);
    assert_eq!(steps["change"], "-28.3 %");
    // (126.272 − 176.078) ms × 6 steps
    assert_eq!(steps["impact_ns"], 298_836_000);
    assert!(steps["why"]
        .as_str()
        .unwrap()
        .ends_with("steady steps, the warm-up left out: BASE 6 of 6, NEW 5 of 6"));
    // One-step rows stay, as detail.
    assert!(rows.iter().any(|r| r["name"] == "step:ProfilerStep#6:host"));
    // Sorted by impact, largest first.
    let impacts: Vec<i64> = rows.iter().map_while(|r| r["impact_ns"].as_i64()).collect();
    assert!(impacts.len() > 80);
    assert!(impacts.windows(2).all(|w| w[0] >= w[1]), "{impacts:?}");
    let h = &v["headline"];
    assert_eq!(h["steps"][0]["verdict"], "faster");
    assert_eq!(h["kernels"].as_array().unwrap().len(), 5);
    assert_eq!(
        h["kernels"][1]["what"],
        "kernel volta_scudnn_128x128_stridedB_splitK_medium_nn_v1"
    );
    assert_eq!(h["kernels"][1]["delta_ns"], 21_622_000);
    assert_eq!(h["explained_ns"], 67_513_000);
    assert_eq!(h["kernels_impact_ns"], 97_473_000);
    assert_eq!(
        h["kernels_total_ns"],
        serde_json::json!([603_558_000, 614_413_000])
    );

    let text = compare(&[]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 40, "{} lines:\n{text}", lines.len());
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{text}");
    assert_eq!(
        lines[2],
        "steps step:ProfilerStep#*:host: faster (-28.3 % median)"
    );
    assert!(
        text.contains("The 15 of 90 rows of largest |Δ total| (--all: every row, names whole):")
    );
    assert!(
        text.contains("  -298.836 ms   -28.3 %  faster     steps step:ProfilerStep#*:host\n"),
        "{text}"
    );
    assert!(text.ends_with(
        "3 faster, 31 ambiguous, 1 unknown, 48 same, 1 new, 6 gone (threshold 5.0 %)\n"
    ));
}
