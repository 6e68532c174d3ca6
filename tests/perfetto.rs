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
            "i" => {
                assert!(e["ts"].is_number(), "{e}");
                assert_eq!(e["s"], "t", "{e}: an instant of its thread");
                assert_eq!(e["cat"], "finding", "{e}");
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

/// `"key": 5195546165311.485` (µs with three decimals) in ns, read from the text exactly.
fn micros_text_ns(text: &str) -> i64 {
    let (whole, frac) = text.split_once('.').expect("a decimal point");
    let sign = if whole.starts_with('-') { -1 } else { 1 };
    whole.parse::<i64>().unwrap() * 1000 + sign * frac.parse::<i64>().unwrap()
}

/// The raw text of every `ts` (or `dur`) value in the file, in order of the events.
fn raw_numbers<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.split(key)
        .skip(1)
        .map(|rest| {
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
                .unwrap();
            &rest[..end]
        })
        .collect()
}

#[test]
fn perfetto_carries_the_audits_findings_at_their_exact_times() {
    let trace_file = "tests/data/traces/nccl_data.json.gz";
    let out = worksheet()
        .args(["export", trace_file, "--perfetto", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let trace: Value = serde_json::from_str(&text).unwrap();
    let audit: Value = serde_json::from_slice(
        &worksheet()
            .args(["audit", trace_file, "--format", "json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    // Every finding is listed whole, in the audit's order.
    let listed = trace["otherData"]["findings"].as_array().unwrap();
    let found = audit["findings"].as_array().unwrap();
    assert_eq!(listed.len(), found.len());
    assert!(found.len() >= 5, "{} findings", found.len());
    for (l, f) in listed.iter().zip(found) {
        for key in ["code", "severity", "count", "message", "fix"] {
            assert_eq!(l[key], f[key], "{key}");
        }
        assert_eq!(l["evidence"], f["evidence"]["items"]);
    }
    let events = trace["traceEvents"].as_array().unwrap();
    // One process (the trace's one clock); its origin, exactly.
    let origins = trace["otherData"]["clock_origins_ns"].as_object().unwrap();
    assert_eq!(origins.len(), 1);
    let origin = origins.values().next().unwrap().as_i64().unwrap();
    let audit_origin = audit["origin_ns"].as_i64().unwrap();
    // The events in file order with their raw `ts` text (every event but metadata has one).
    let ts_texts = raw_numbers(&text, "\"ts\":");
    let timed: Vec<&Value> = events.iter().filter(|e| e["ph"] != "M").collect();
    assert_eq!(ts_texts.len(), timed.len());
    let findings_thread = events
        .iter()
        .find(|e| e["name"] == "thread_name" && e["args"]["name"] == "findings")
        .expect("a findings thread");
    let tid = &findings_thread["tid"];
    // sync-in-loop's idle figure: its pieces add up to the figure's ns exactly.
    let figure = found
        .iter()
        .find(|f| f["code"] == "sync-in-loop")
        .and_then(|f| f["figures"].as_array())
        .and_then(|figs| figs.iter().find(|g| g["name"] == "idle_ns"))
        .expect("the idle figure");
    let (mut pieces, mut sum) = (0, 0);
    for e in events
        .iter()
        .filter(|e| e["cat"] == "finding" && e["ph"] == "X")
    {
        assert_eq!(&e["tid"], tid);
        if e["args"]["figure"] == "idle_ns" && e["args"]["code"] == "sync-in-loop" {
            pieces += 1;
            let (start, end) = (
                e["args"]["start_ns"].as_i64().unwrap(),
                e["args"]["end_ns"].as_i64().unwrap(),
            );
            sum += end - start;
            assert_eq!(e["name"], "sync-in-loop: idle_ns 9.693546 ms");
        }
    }
    assert!(pieces > 1, "{pieces} pieces");
    assert_eq!(sum, figure["value_ns"].as_i64().unwrap());
    assert_eq!(sum, 9_693_546);
    // One instant per evidence item that names a time, at that time exactly.
    let mut instants = 0;
    for (e, ts) in timed.iter().zip(&ts_texts) {
        if e["ph"] != "i" {
            continue;
        }
        instants += 1;
        assert_eq!(&e["tid"], tid);
        let at = e["args"]["at_ns"].as_i64().unwrap();
        assert_eq!(origin + micros_text_ns(ts), at, "{e}");
        let item = e["args"]["evidence"].as_str().unwrap();
        let finding = found.iter().find(|f| f["code"] == e["name"]).unwrap();
        assert!(finding["evidence"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i == item));
        assert_eq!(e["args"]["message"], finding["message"]);
        // The item's own `t+…` is the instant's time since the audit's origin.
        let since = at - audit_origin;
        let shown = item.split("t+").nth(1).unwrap();
        assert!(
            shown.starts_with(&worksheet::units::Nanos::new(since).to_string()),
            "{item} vs {since} ns"
        );
    }
    let with_times: usize = found
        .iter()
        .flat_map(|f| f["evidence"]["items"].as_array().unwrap())
        .filter(|i| i.as_str().unwrap().contains("t+"))
        .count();
    assert_eq!(instants, with_times);
    assert!(instants >= 5, "{instants} instants");
}
