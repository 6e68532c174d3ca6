//! The audit: a Kineto trace's text through the audit's readers and `audit::audit`.
//!
//! - The lenient whole-text reader (`trace::kineto::lenient::read_trace`): reading errors have
//!   documented codes; every finding's code is in the catalogue and every figure it states
//!   lies within the trace's span (a threshold is a rule's value, not a time); the breakdown
//!   adds up to each device's span; step rows and kernel shares are within their bounds; the
//!   text, Markdown and JSON renderings work (`audit_holds`).
//! - The audit's front door on a file (`trace::open::read_audit_trace`: the importer's fast
//!   path, else the lenient reader streamed through the splitter's pieces, else the whole
//!   text): it gives the very model the whole-text reader gives, or an error of the same
//!   code. One target, so that the three readers are checked against each other.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::audit::{audit, AuditOptions};
use worksheet::import::ImportOptions;
use worksheet::trace::kineto::lenient::read_trace;
use worksheet::trace::open::read_audit_trace;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let options = ImportOptions::default();
    let whole = read_trace(text, &options);
    match &whole {
        Ok(trace) => {
            let a = audit(trace, "fuzz.json", &AuditOptions::default());
            worksheet_fuzz::audit_holds(trace, &a);
        }
        Err(e) => worksheet_fuzz::documented(e, &worksheet_fuzz::import_codes()),
    }
    // A case file is read as a case by the front door, not as a trace: not comparable.
    if text.contains("worksheet-case") {
        return;
    }
    let path = worksheet_fuzz::scratch_file("audit.json", data);
    let front = read_audit_trace(&path, &options);
    match (&whole, &front) {
        (Ok(w), Ok(f)) => assert_eq!(
            serde_json::to_string(w).unwrap(),
            serde_json::to_string(f).unwrap(),
            "the audit's front door and the whole-text reader disagree"
        ),
        (Err(w), Err(f)) => assert_eq!(w.code, f.code, "{w} / {f}"),
        (w, f) => panic!(
            "one reader refuses what the other reads: whole {:?} / front door {:?}",
            w.as_ref().err(),
            f.as_ref().err()
        ),
    }
});
