//! `worksheet audit DIR` and `worksheet export DIR` read each rank's trace once (issue 23,
//! "one pass"): the rank's audit is made in its import pass from the model that pass records,
//! not by reading the file again. And that audit is the one `worksheet audit FILE` gives the
//! rank's file. One test only: it measures this process's reads, so no other test may run
//! beside it (tests/export.rs measures a single trace the same way).

use std::path::{Path, PathBuf};

use worksheet::audit::{audit, AuditOptions};
use worksheet::cmd::audit::{run, AuditArgs, AuditFormat};
use worksheet::export::tables::load;
use worksheet::import::{read_audit_trace, ImportOptions};

/// Two ranks whose gzipped traces (29 kB and 34 kB) are large enough beside everything else
/// read (the folder listing, `/proc/self/io` itself) to tell one read from two.
const FOLDER: &str = "tests/data/ranks-sync";

/// Bytes this process has read through read(2) and its kin so far (`rchar`, Linux; every
/// thread of the process, so the ranks read in parallel count too).
#[cfg(target_os = "linux")]
fn bytes_read() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").expect("/proc/self/io");
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .expect("an rchar line")
        .parse()
        .expect("a number")
}

/// The folder's traces (`*.json.gz`), sorted, and their total size in bytes.
fn traces() -> (Vec<PathBuf>, u64) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(FOLDER)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    let size = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    (files, size)
}

/// Runs `what` and asserts it read the folder's traces once: at least their size, and far
/// less than twice it (a second read of a rank would add its size again).
fn reads_once<T>(label: &str, size: u64, what: impl FnOnce() -> T) -> T {
    #[cfg(target_os = "linux")]
    let before = bytes_read();
    let out = what();
    #[cfg(target_os = "linux")]
    {
        let read = bytes_read() - before;
        eprintln!("{label}: read {read} bytes; the traces hold {size} bytes");
        assert!(read >= size, "{label}: read {read} bytes of {size}");
        assert!(
            read < size + size / 4,
            "{label}: read {read} bytes of {size} bytes of traces: a rank was read more than once"
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (label, size);
    out
}

/// The audit `worksheet audit FILE` gives `file`, as JSON.
fn audit_alone(file: &Path) -> serde_json::Value {
    let trace = read_audit_trace(file, &ImportOptions::default()).unwrap();
    let alone = audit(
        &trace,
        &file.display().to_string(),
        &AuditOptions::default(),
    );
    serde_json::to_value(&alone).unwrap()
}

#[test]
fn audit_and_export_of_a_folder_read_each_rank_once() {
    let (files, size) = traces();
    assert_eq!(files.len(), 2, "two ranks");
    assert!(size > 50_000, "{size} bytes");

    // `worksheet audit DIR --format json`.
    let args = AuditArgs {
        input: PathBuf::from(FOLDER),
        format: AuditFormat::Json,
        fail_on: None,
        round_sub_ns: false,
        compat: None,
        explain: None,
        top: worksheet::audit::render::DEFAULT_TOP,
        clocks_within: Vec::new(),
        quiet: true,
    };
    let mut text = Vec::new();
    let outcome = reads_once("audit DIR", size, || run(&args, &mut text));
    outcome.expect("the folder audits");
    let report: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let ranks = report["ranks"].as_array().expect("a rank list");
    assert_eq!(ranks.len(), 2);
    for (r, file) in ranks.iter().zip(&files) {
        assert_eq!(r["file"], file.display().to_string());
        assert_eq!(r["audit"], audit_alone(file), "{}", file.display());
    }
    assert_eq!(ranks[0]["rank"], 0);
    assert_eq!(ranks[1]["rank"], 1);

    // `worksheet export DIR`'s input: the merged case and each rank's audit.
    let input = reads_once("export DIR", size, || {
        load(&[PathBuf::from(FOLDER)], false, &[])
    });
    let input = input.expect("the folder loads");
    assert_eq!(input.multi.as_ref().map(|m| m.ranks.len()), Some(2));
    assert_eq!(input.audits.len(), 2);
    for ((rank, made), (i, file)) in input.audits.iter().zip(files.iter().enumerate()) {
        assert_eq!(*rank, Some(i as i64));
        assert_eq!(
            serde_json::to_value(made).unwrap(),
            audit_alone(file),
            "{}",
            file.display()
        );
    }
}
