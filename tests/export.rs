//! `worksheet export`'s read path: one input trace is read (and gunzipped) once for both the
//! case and the audit (issue 23, "one pass"), and the audit from that pass equals the one
//! `worksheet audit` reads on its own. One test only: it measures this process's reads, so
//! no other test may run beside it.

use std::path::{Path, PathBuf};

use worksheet::audit::{audit, AuditOptions};
use worksheet::export::tables::load;
use worksheet::import::{read_audit_trace, ImportOptions};

const TRACE: &str = "tests/data/traces/nccl_data.json.gz";

/// Bytes this process has read through read(2) and its kin so far (`rchar`, Linux).
#[cfg(target_os = "linux")]
fn bytes_read() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").expect("/proc/self/io");
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .expect("an rchar line")
        .parse()
        .expect("a number")
}

#[test]
fn a_trace_is_read_once_and_audited_as_audit_reads_it() {
    let path = PathBuf::from(TRACE);
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(
        size > 500_000,
        "the trace is large enough to tell one read from two"
    );

    #[cfg(target_os = "linux")]
    let before = bytes_read();
    let input = load(std::slice::from_ref(&path), false, &[]).unwrap();
    #[cfg(target_os = "linux")]
    {
        let read = bytes_read() - before;
        // The whole file once (plus its 16-byte head and /proc/self/io itself); a second
        // read of the file (the audit's own pass) would make it twice the size.
        assert!(read >= size, "read {read} bytes of a {size}-byte file");
        assert!(
            read < size + size / 4,
            "read {read} bytes of a {size}-byte file: it was read more than once"
        );
    }

    // The audit from the import's pass is the audit `worksheet audit` reads on its own.
    assert_eq!(input.audits.len(), 1);
    let (rank, from_import) = &input.audits[0];
    assert_eq!(*rank, Some(0), "nccl_data.json.gz declares rank 0");
    let alone = read_audit_trace(Path::new(TRACE), &ImportOptions::default()).unwrap();
    let alone = audit(&alone, TRACE, &AuditOptions::default());
    assert_eq!(
        serde_json::to_value(from_import).unwrap(),
        serde_json::to_value(&alone).unwrap()
    );
    assert!(!input.imported.case.phases.is_empty());
    assert!(input.multi.is_none());
}
