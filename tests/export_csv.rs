//! `worksheet export --csv DIR` (no `parquet` feature needed): on a real trace, `kernels.csv`
//! and `ops.csv` are `worksheet audit --format json`'s `kernels` and `ops`, row for row and
//! column for column, with exact integers, quoted texts and empty nulls; a file that exists
//! is refused (exit 2) without `--force` and nothing is written; `--force` replaces it.
//! (`tests/export.rs` holds a single test that measures its process's reads, so these live
//! here.)

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

const TRACE: &str = "tests/data/traces/nccl_data.json.gz";

fn worksheet() -> Command {
    Command::cargo_bin("worksheet").unwrap()
}

fn audit_json() -> Value {
    let out = worksheet()
        .args(["audit", TRACE, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A CSV file's header and records (the `csv` crate's reading: quotes removed).
fn read(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(str::to_owned).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (header, rows)
}

/// A JSON value as the CSV cell it must be: a number's digits, a text, empty for null.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => i64::from(*b).to_string(),
        other => panic!("not a cell: {other}"),
    }
}

#[test]
fn kernels_and_ops_csv_are_the_audits_rows() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let out = worksheet()
        .args(["export", TRACE, "--csv"])
        .arg(&tables)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(said.contains("ops.csv: 23 row(s)"), "{said}");
    assert!(said.contains("kernels.csv: 72 row(s)"), "{said}");
    // Every table, and no Parquet file.
    for t in [
        "phases",
        "steps",
        "collectives",
        "relations",
        "findings",
        "summary",
        "kernels",
        "ops",
    ] {
        assert!(tables.join(format!("{t}.csv")).is_file(), "{t}.csv");
        assert!(!tables.join(format!("{t}.parquet")).exists());
    }
    let audit = audit_json();

    let (header, rows) = read(&tables.join("kernels.csv"));
    assert_eq!(
        header,
        [
            "rank",
            "name",
            "class",
            "device",
            "stream",
            "count",
            "total_ns",
            "mean_ns",
            "min_ns",
            "max_ns",
            "share_of_busy_permille"
        ]
    );
    let want: Vec<Vec<String>> = audit["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let mut row = vec!["0".to_owned()];
            row.extend(header[1..].iter().map(|c| cell(&k[c.as_str()])));
            row
        })
        .collect();
    assert_eq!(rows, want);
    assert_eq!(
        rows[0][..7],
        [
            "0",
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
            "communication",
            "gpu0",
            "gpu0-s40",
            "15",
            "46762159"
        ]
    );

    let (header, rows) = read(&tables.join("ops.csv"));
    let want: Vec<Vec<String>> = audit["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let top = &o["top_kernels"][0];
            let mut row = vec!["0".to_owned()];
            row.extend(header[1..11].iter().map(|c| cell(&o[c.as_str()])));
            row.extend([
                cell(&top["name"]),
                cell(&top["count"]),
                cell(&top["total_ns"]),
            ]);
            row
        })
        .collect();
    assert_eq!(header.len(), 14);
    assert_eq!(rows, want);
    assert_eq!(
        rows[0],
        [
            "0",
            "record_param_comms",
            "1",
            "gpu0",
            "21",
            "21",
            "46876493",
            "2232214",
            "7648",
            "5993392",
            "302",
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
            "15",
            "46762159"
        ]
    );
    let kernels: u64 = rows.iter().map(|r| r[4].parse::<u64>().unwrap()).sum();
    assert_eq!(kernels, 2700);
    // The text as written: a name with a comma is quoted, CRLF ends each record.
    let text = std::fs::read_to_string(tables.join("ops.csv")).unwrap();
    assert!(text.starts_with("rank,name,recorded,device,kernels,launches,total_ns,mean_ns,min_ns,max_ns,share_of_busy_permille,top_kernel,top_kernel_count,top_kernel_total_ns\r\n0,\"record_param_comms\",1,\"gpu0\",21,21,46876493,2232214,7648,5993392,302,\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)\",15,46762159\r\n"));
}

#[test]
fn an_existing_csv_is_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    std::fs::create_dir(&tables).unwrap();
    std::fs::write(tables.join("ops.csv"), "mine").unwrap();
    let out = worksheet()
        .args(["export", TRACE, "--csv"])
        .arg(&tables)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("ops.csv: error[exists]"), "{err}");
    // Refused before any work: nothing else written, the file kept.
    assert_eq!(
        std::fs::read_to_string(tables.join("ops.csv")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&tables).unwrap().count(), 1);
    let out = worksheet()
        .args(["export", TRACE, "--force", "--csv"])
        .arg(&tables)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let ops = std::fs::read_to_string(tables.join("ops.csv")).unwrap();
    assert_eq!(ops.matches("\r\n").count(), 24, "a header and 23 rows");
    assert_eq!(std::fs::read_dir(&tables).unwrap().count(), 8);
}
