//! `worksheet export --perfetto`: the Chrome trace-event JSON parses, every event has the
//! fields its phase needs, times are exact decimal µs, and the counts and sums equal the
//! engine's (`worksheet import --format json`) on the real 2 × H200 trace.

use std::collections::BTreeMap;

use assert_cmd::Command;
use serde_json::Value;

const RANKS: &str = "tests/data/ranks-sync";

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").unwrap()
}

/// A JSON number of µs with three decimals, as integer ns (exact below 2⁵³ ns).
fn ns(v: &Value) -> i64 {
    (v.as_f64().expect("a number") * 1000.0).round() as i64
}

#[test]
fn perfetto_export_parses_and_agrees_with_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    worksheet()
        .args(["export", RANKS, "--perfetto"])
        .arg(&path)
        .assert()
        .success();
    let text = std::fs::read_to_string(&path).unwrap();
    // Every `ts` and `dur` is written as decimal µs with exactly three decimals.
    for key in ["\"ts\":", "\"dur\":"] {
        for rest in text.split(key).skip(1) {
            let number: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
                .collect();
            let (_, decimals) = number.split_once('.').expect("a decimal point");
            assert_eq!(decimals.len(), 3, "{key}{number}");
        }
    }
    let trace: Value = serde_json::from_str(&text).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    assert_eq!(trace["otherData"]["format"], "worksheet-perfetto");
    let origins = &trace["otherData"]["clock_origins_ns"];

    // Names of processes and threads; every event has the fields of its phase.
    let mut process: BTreeMap<i64, String> = BTreeMap::new();
    let mut thread: BTreeMap<(i64, i64), String> = BTreeMap::new();
    for e in events {
        let pid = e["pid"].as_i64().expect("pid");
        let tid = e["tid"].as_i64().expect("tid");
        assert!(e["name"].is_string(), "{e}");
        match e["ph"].as_str().unwrap() {
            "X" => {
                assert!(e["ts"].is_number() && e["dur"].is_number(), "{e}");
                assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
                assert!(e["cat"].is_string(), "{e}");
            }
            "M" => match e["name"].as_str().unwrap() {
                "process_name" => {
                    process.insert(pid, e["args"]["name"].as_str().unwrap().to_owned());
                }
                "thread_name" => {
                    thread.insert((pid, tid), e["args"]["name"].as_str().unwrap().to_owned());
                }
                "process_sort_index" | "thread_sort_index" => {
                    assert!(e["args"]["sort_index"].is_i64(), "{e}");
                }
                other => panic!("unexpected metadata {other}"),
            },
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    assert_eq!(
        process.len(),
        2,
        "one process per rank's clock: {process:?}"
    );
    assert!(
        process[&1].starts_with("r0.kineto (own clock"),
        "{process:?}"
    );

    // Per thread: count and Σ dur of its slices; each slice's exact start back from `ts`.
    let mut count: BTreeMap<String, i64> = BTreeMap::new();
    let mut total: BTreeMap<String, i64> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let key = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        let name = thread[&key].clone();
        *count.entry(name.clone()).or_default() += 1;
        *total.entry(name).or_default() += ns(&e["dur"]);
        if e["cat"] == "work" || e["cat"] == "range" || e["cat"] == "step" {
            let clock = process[&key.0].split(' ').next().unwrap();
            let origin = origins[clock].as_i64().unwrap();
            assert_eq!(
                origin + ns(&e["ts"]),
                e["args"]["start_ns"].as_i64().unwrap()
            );
            assert_eq!(
                ns(&e["dur"]),
                e["args"]["end_ns"].as_i64().unwrap() - e["args"]["start_ns"].as_i64().unwrap()
            );
        }
    }

    // The engine's numbers: per stream the phase count and Σ lengths; per question the union.
    let out = worksheet()
        .args(["import", RANKS, "--format", "json"])
        .output()
        .unwrap();
    let ws: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut streams = 0;
    for set in ws["case"]["sets"].as_array().unwrap() {
        let question = set["question"].as_str().unwrap();
        let union = set["ns"]["busy"].as_i64().unwrap();
        assert_eq!(total[&format!("answer {question}")], union, "{question}");
        if let Some(stream) = question.strip_prefix("stream:") {
            streams += 1;
            let name = format!("stream {stream}");
            assert_eq!(count[&name], set["count"].as_i64().unwrap(), "{name}");
            assert_eq!(total[&name], set["ns"]["sum"].as_i64().unwrap(), "{name}");
        }
    }
    assert!(streams >= 2, "{streams} streams");
    assert_eq!(total["answer device:r0.gpu0"], 14_778_782);
    assert_eq!(total["answer device:r1.gpu1"], 11_727_934);
    // The audit's steps: ProfilerStep#2..=#9 on each rank.
    let steps: i64 = count
        .iter()
        .filter(|(k, _)| k.starts_with("steps "))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(steps, 16);
    // The collectives: each of the 40 all-reduces on both ranks, with the arrival bounds of
    // `import`'s JSON (rank 0 is the reference: [0, 0]).
    assert_eq!(count["collectives"], 80);
    let collectives: Vec<&Value> = events.iter().filter(|e| e["cat"] == "collective").collect();
    let skews: BTreeMap<&str, &Value> = ws["ranks"]["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["instance"].as_str().unwrap(), &c["skew"]))
        .collect();
    for e in &collectives {
        let skew = skews[e["name"].as_str().unwrap()];
        if skew["verdict"] == "bounded" {
            assert_eq!(e["args"]["skew_lo_ns"], skew["lo_ns"], "{e}");
            assert_eq!(e["args"]["skew_hi_ns"], skew["hi_ns"], "{e}");
        } else {
            assert!(e["args"]["skew_lo_ns"].is_null(), "{e}");
        }
        if e["args"]["rank"] == 0 {
            assert_eq!(
                (&e["args"]["arrival_lo_ns"], &e["args"]["arrival_hi_ns"]),
                (&Value::from(0), &Value::from(0))
            );
        }
    }
    let durations = trace["otherData"]["duration_answers"].as_array().unwrap();
    assert!(durations
        .iter()
        .any(|d| d["question"] == "completion:r0.all-work" && d["answer"] == "known 19.459229 ms"));
}

#[test]
fn perfetto_to_stdout_and_never_over_a_file_without_force() {
    let out = worksheet()
        .args([
            "export",
            "tests/data/traces/event_sync_trace.json.gz",
            "--perfetto",
            "-",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let trace: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!trace["traceEvents"].as_array().unwrap().is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("-: "));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, "mine").unwrap();
    worksheet()
        .args([
            "export",
            "tests/data/traces/event_sync_trace.json.gz",
            "--perfetto",
        ])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("error[exists]"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
    // Neither --parquet nor --perfetto: a usage error.
    worksheet()
        .args(["export", "tests/data/traces/event_sync_trace.json.gz"])
        .assert()
        .code(2);
}
