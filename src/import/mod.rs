//! `worksheet import`: a profiler's trace becomes a case that `eval`, `check` and `render` read.
//!
//! A trace is evidence someone else recorded: when each kernel ran on the GPU, when the host
//! called the API that launched it, and (in recent traces) when the host blocked on a
//! synchronization. `worksheet` does not trust a trace more than it trusts a hand-written
//! case. The importer translates what the trace *says* into the case format's declarations —
//! a clock per traced process, streams, phases, the host program of launches and waits — and asks the
//! questions a trace can answer: interval algebra per stream, per device, and per class of
//! work (compute, communication, memory), and whether the waits the trace shows cover the
//! work it launched. Everything it has to assume is written into the case (`provenance.notes`)
//! and printed under the summary table; everything it could not place is counted, not
//! dropped silently.
//!
//! # One architecture for every format: read → intermediate → build → summary
//!
//! ```text
//!  trace.json.gz ──text::open + kineto::split (gunzip, UTF-8, size cap, cut into events:
//!                   a 2nd thread)──▶ batches of event slices ──kineto::read (same visitors)──▶ Read
//!                   (anything the fast path does not take for granted: read again by the
//!                    careful streaming reader, which words the error)
//!                                          Read ──kineto::program (launches, waits)──┐
//!  report.sqlite ──nsys::read (schema, rows)──▶ Export ──nsys::join──▶ nsys::activities ─┤
//!                                                                                        ▼
//!                                                           activity::Activities (the intermediate)
//!                                                                                        │ build
//!                                                                                        ▼
//!           summary (text / JSON) ◀── engine::evaluate ◀── case::validate ◀── RawCase ──▶ -o case.json[.gz]
//!                     ▲ facts rows: kineto::summary / nsys::facts          └──▶ audit findings
//! ```
//!
//! - **Read** (one reader per format, each in its own folder): [`kineto`] reads PyTorch
//!   profiler (Kineto) Chrome-trace JSON, plain or gzipped, in one streaming pass; [`nsys`]
//!   reads an Nsight Systems SQLite export (`nsys export --type sqlite`), read-only, columns by
//!   name. The format is recognised by content (gzip and SQLite magic bytes), then by
//!   extension. Each reader interprets its format (which row launched which work, which
//!   synchronizations are waits and what they wait for) and says what it set aside, counted.
//! - **Intermediate** ([`activity`]): what both readers produce, format-neutral: clocks (one
//!   per traced process), devices and streams, GPU work (kernels, copies, sets) with its
//!   class, annotations, events, and the host program as steps keyed by host time.
//! - **Build** ([`build`]): one builder makes the case from the intermediate: declarations,
//!   the program in host-time order, the completion timers, and the questions, whose ids are
//!   the same for every format: `stream:<stream>`, `device:<device>`, `compute:<device>`,
//!   `communication:<device>`, `memory:<device>` (interval sets) and `completion:<what>`
//!   (host completion). Streams are `gpu<d>-s<s>` and devices `gpu<d>` in both formats; an
//!   nsys export adds a `-pid<pid>` / `-ctx<c>` suffix only where two processes or contexts
//!   would otherwise share a name.
//! - **Summary** ([`Summary`], `summary.rs`): one shape for every format, in text and JSON.
//!   It is computed by the same engine that `worksheet eval` runs on the written case, so the
//!   table and a later `eval` cannot disagree: the set rows, compute ∩ communication, the
//!   HTA-comparable breakdown and the completion answers come from the questions; the facts
//!   rows (what was read, kept, mapped, left out; every row has a count) and notes come from
//!   the reader.
//!
//! The audit under the summary reads the model the same pass gathered: a Kineto trace is read
//! and parsed once; an Nsight Systems export is opened once, and the recorded model is read
//! from the same connection (`trace::nsys::neutral`). Several traces of one job (ranks) are
//! imported by [`ranks`], each rank's collectives taken from its own pass's recorded model.
//!
//! Malformed input is an [`ImportError`] (exit 2) naming the file, the JSON path of the field
//! (`traceEvents[12].dur`) and a stable code; the importer never panics on input.
//!
//! Cost: one streaming pass over the JSON (each event parsed from its slice; events the
//! importer does not keep are skipped without allocating), a sort of the launches by host
//! time: O(n log n) time; memory holds a few batches of the text and the imported events,
//! never the whole text. A malformed trace is read a second time, by the careful reader.
//! `BENCHMARKS.md` has measured numbers.

pub mod activity;
pub mod build;
mod copies;
pub mod folder;
pub mod input;
pub mod kineto;
pub mod nsys;
pub mod ranks;
mod summary;

use std::path::Path;

use crate::case::raw::RawCase;
use crate::trace::kineto::tap::{EventTap, NoTap};

pub use summary::{summarize, summarize_owned, summarize_writing, Summary};

pub use crate::trace::detect;
pub use crate::trace::open::read_audit_trace;
pub(crate) use crate::trace::open::{explain_failure, open_with_head, refuse_past_cap};
pub use crate::trace::{
    ReadOptions as ImportOptions, TraceFormat, MAX_NAME_BYTES, MAX_TRACE_BYTES,
};

/// A trace that cannot be imported: [`crate::error::InputError`] — the file, the JSON path
/// of the field (or, for SQLite exports, the table, column or row), a stable code.
pub use crate::error::InputError as ImportError;

/// Every code a Kineto import can fail with (Nsight Systems exports add
/// [`nsys::NSYS_ERROR_CODES`]).
pub const IMPORT_ERROR_CODES: [&str; 15] = [
    "io",
    "too-large",
    "bad-syntax",
    "unsupported-format",
    "missing-field",
    "wrong-type",
    "bad-value",
    "inexact-value",
    "overflow",
    "reversed-interval",
    "not-a-file",
    "duplicate-field",
    "unknown-field",
    "unknown-variant",
    "wrong-kind",
];

/// What an importer hands back: the case, and what the summary should say about the trace.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The case, with its questions (no expectations).
    pub case: RawCase,
    /// Which trace format (and version) was read, for people: `kineto (ns since base)`.
    pub format: String,
    /// Facts about the trace, in order: what was read, kept, mapped, left out.
    pub facts: Vec<(String, String)>,
    /// Assumptions and caveats, one sentence each (also in the case's provenance).
    pub notes: Vec<String>,
    /// The builder's times of the case's work phases, for the step questions the audit of
    /// the same pass adds ([`build::steps::annotate`]); emptied once they are added.
    pub work_spans: build::steps::WorkSpans,
}

impl Imported {
    /// A case from a reader that has no facts or notes of its own to add.
    pub fn from_case(case: RawCase, format: impl Into<String>) -> Self {
        Imported {
            case,
            format: format.into(),
            facts: Vec::new(),
            notes: Vec::new(),
            work_spans: Vec::new(),
        }
    }
}

/// Reads and imports the trace at `path`.
///
/// # Errors
/// [`ImportError`]: `io`, `too-large`, `bad-syntax` (damaged gzip, not JSON), and the
/// reader's own errors.
pub fn import_path(path: &Path, options: &ImportOptions) -> Result<Imported, ImportError> {
    import_path_with(path, options, false).map(|(imported, _)| imported)
}

/// [`import_path`] with the audit, as `worksheet import` makes the case: the step questions
/// and unrecorded joins the audit adds, and the audit itself in `provenance.audit`. The file
/// is read once for both (a Kineto trace in one streaming pass; an Nsight Systems export
/// through one open connection). `render` and `report` read a trace through this, so a trace and the case imported
/// from it give the same picture and page.
///
/// # Errors
/// What [`import_path`] returns, or the audit's reading error.
pub fn import_path_audited(path: &Path, options: &ImportOptions) -> Result<Imported, ImportError> {
    let (mut imported, trace) = import_path_with(path, options, true)?;
    audit_imported(&mut imported, path, options, trace)?;
    Ok(imported)
}

/// The audit's model of a trace, read by the import's own pass (Kineto traces), or `None`
/// when the audit reads the file itself (Nsight Systems exports).
pub(crate) type AuditTrace = Option<Result<crate::trace::model::Trace, ImportError>>;

/// [`import_path`], and with `audit`, the audit's model of a Kineto trace from the same
/// streaming pass ([`kineto::import_with_audit`]).
pub(crate) fn import_path_with(
    path: &Path,
    options: &ImportOptions,
    audit: bool,
) -> Result<(Imported, AuditTrace), ImportError> {
    import_path_tapped(path, options, audit, &mut NoTap)
}

/// [`import_path_with`], handing `tap` every top-level value and event of a Kineto trace in
/// the same pass ([`crate::trace::kineto::tap`]); when the fast path gives up, the tap is
/// told so ([`EventTap::abandon`]) and sees nothing of the careful reader's pass.
pub(crate) fn import_path_tapped(
    path: &Path,
    options: &ImportOptions,
    audit: bool,
    tap: &mut dyn EventTap,
) -> Result<(Imported, AuditTrace), ImportError> {
    let file = path.display().to_string();
    let (handle, head) = open_with_head(path)?;
    match detect(path, &head)? {
        TraceFormat::NsysSqlite => {
            let (imported, trace) = nsys::import_nsys_recorded(path, &case_name(path), audit)?;
            let facts = &imported.facts;
            let imported = Imported {
                format: format!("nsys sqlite ({})", facts.export.version_line()),
                notes: facts.notes.clone(),
                facts: facts.rows(),
                case: imported.case,
                work_spans: imported.work_spans,
            };
            Ok((imported, trace))
        }
        TraceFormat::KinetoJson => {
            let name = case_name(path);
            // The fast path: gunzipping and cutting into events on a second thread, each
            // event parsed from its slice on this one.
            refuse_past_cap(&handle, &head).map_err(|e| e.in_file(&file))?;
            let text = crate::trace::source::open(head, handle, MAX_TRACE_BYTES);
            let refusal = text.refusal();
            if let Some(done) =
                kineto::import_split(text, &name, options, audit, Some(refusal.clone()), tap)
            {
                return Ok(done);
            }
            tap.abandon();
            // Past the cap or the event budget: refused, without reading it all again.
            if let Some(refused) = refusal.get() {
                return Err(refused.clone().in_file(&file));
            }
            // Anything the fast path does not take for granted (a malformed trace, a field
            // the importer refuses, trouble reading): the careful reader reads the file
            // again from the start, and reports it exactly.
            let (handle, head) = open_with_head(path)?;
            let text = crate::trace::source::open(head, handle, MAX_TRACE_BYTES);
            // Reading and gunzipping on a second thread, parsing on this one.
            std::thread::scope(|scope| {
                let blocks = crate::trace::source::in_thread(scope, text);
                let reader = std::io::BufReader::with_capacity(1 << 16, blocks);
                if audit {
                    kineto::import_with_audit(reader, &name, options)
                        .map(|(imported, trace)| (imported, Some(trace)))
                } else {
                    kineto::import_reader(reader, &name, options).map(|imported| (imported, None))
                }
            })
            .map_err(|e| explain_failure(e, path).in_file(&file))
        }
    }
}

/// The case name for a trace file: its name without `.gz`, `.json` and `.pt.trace`.
pub fn case_name(path: &Path) -> String {
    if crate::input::is_stdin(path) {
        return "stdin".to_owned();
    }
    let name = path
        .file_name()
        .map_or_else(|| "trace".to_owned(), |n| n.to_string_lossy().into_owned());
    let mut stem = name.as_str();
    for suffix in [".gz", ".json", ".pt.trace"] {
        stem = stem.strip_suffix(suffix).unwrap_or(stem);
    }
    if stem.is_empty() {
        "trace".to_owned()
    } else {
        stem.to_owned()
    }
}

/// Audits the trace `import` just read ([`crate::audit`]): the findings go under the summary,
/// and for a Kineto trace the case gains the unrecorded joins and the step questions. The
/// facts never say "0 stream waits" while stream-wait calls whose joins are unrecorded exist.
/// `trace` is the audit's model from the import's own pass; `None` reads the file again
/// ([`read_audit_trace`]: Nsight Systems exports).
///
/// # Errors
/// The audit's reading error (a host range only the audit reads whose time overflows), or
/// what [`read_audit_trace`] returns.
pub(crate) fn audit_imported(
    imported: &mut Imported,
    file: &Path,
    options: &ImportOptions,
    trace: AuditTrace,
) -> Result<crate::audit::Audit, ImportError> {
    use crate::trace::model::CallRole;
    let trace = match trace {
        Some(read) => read.map_err(|e| e.in_file(file.display().to_string()))?,
        None => read_audit_trace(file, options)?,
    };
    let audit = crate::audit::audit(
        &trace,
        &file.display().to_string(),
        &crate::audit::AuditOptions::default(),
    );
    let spans = std::mem::take(&mut imported.work_spans);
    build::steps::annotate(&mut imported.case, &spans, &trace, &audit);
    drop(spans);
    // The audit travels with the case: `report` of the case shows what `report` of the trace
    // shows, from these same values.
    // Without `input`: the name the trace was given on the command line is no property of
    // the trace, and a case imported from standard input equals one imported from the file.
    if let Ok(mut value) = serde_json::to_value(&audit) {
        if let Some(map) = value.as_object_mut() {
            map.remove("input");
        }
        imported
            .case
            .provenance
            .get_or_insert_with(serde_json::Map::new)
            .insert("audit".to_owned(), value);
    }
    let unrecorded = trace
        .calls
        .iter()
        .filter(|c| CallRole::of(&c.name) == CallRole::StreamWait && !c.sync_recorded)
        .count();
    if unrecorded > 0 {
        for (key, value) in &mut imported.facts {
            if key.starts_with("stream waits") {
                *value = format!(
                    "{value} mapped; {unrecorded} stream-wait call(s) without a sync row: which streams they join is not recorded (dependency-unrecorded)"
                );
            }
        }
    }
    Ok(audit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::gzip;
    use crate::trace::open::decode_text;

    #[test]
    fn a_gzip_bomb_is_refused_before_its_text_is_kept() {
        // 64 MiB of spaces in about 64 KiB of gzip, against a 1 MiB cap: the size pass
        // stops one byte past the cap, and no buffer for the text is ever made.
        let bomb = gzip(&vec![b' '; 64 << 20]);
        assert!(bomb.len() < 1 << 20);
        let err = decode_text(bomb, "bomb.json.gz", 1 << 20).unwrap_err();
        assert_eq!(err.code, "too-large");
        assert!(err.message.contains("decompressed text"), "{}", err.message);
        // At the cap exactly: kept; one byte past it: refused.
        let text = format!("{{}}{}", " ".repeat(98));
        let ok = decode_text(gzip(text.as_bytes()), "x.json.gz", 100).unwrap();
        assert_eq!(ok, text);
        let err = decode_text(gzip(format!("{text} ").as_bytes()), "x.json.gz", 100).unwrap_err();
        assert_eq!(err.code, "too-large");
    }

    #[test]
    fn formats_are_recognised_by_content_then_name() {
        let p = Path::new("x.json.gz");
        assert_eq!(
            detect(p, b"SQLite format 3\0rest").unwrap(),
            TraceFormat::NsysSqlite
        );
        assert_eq!(
            detect(Path::new("r.sqlite"), b"").unwrap(),
            TraceFormat::NsysSqlite
        );
        assert_eq!(detect(p, &[0x1f, 0x8b]).unwrap(), TraceFormat::KinetoJson);
        let err = detect(Path::new("r.nsys-rep"), b"").unwrap_err();
        assert_eq!(err.code, "unsupported-format");
        assert!(err.message.contains("nsys export"), "{err}");
    }

    #[test]
    fn case_names_drop_trace_suffixes() {
        assert_eq!(
            case_name(Path::new("a/worker0.1623143089861.pt.trace.json.gz")),
            "worker0.1623143089861"
        );
        assert_eq!(case_name(Path::new("nccl_data.json.gz")), "nccl_data");
        assert_eq!(case_name(Path::new("t.json")), "t");
        assert_eq!(case_name(Path::new(".json")), "trace");
    }

    /// The cap holds after decompression: 1 MiB of spaces in a 1 KiB gzip, read with a
    /// 64 KiB cap, stops one byte past the cap.
    #[test]
    fn a_gzip_bomb_is_too_large_at_the_cap() {
        let bomb = gzip(&vec![b' '; 1 << 20]);
        assert!(bomb.len() < 4096);
        let err = decode_text(bomb.clone(), "bomb.json.gz", 64 * 1024).unwrap_err();
        assert_eq!(err.code, "too-large");
        assert!(err.message.contains("decompressed"), "{err}");
        assert_eq!(
            decode_text(bomb, "ok.json.gz", 1 << 20).unwrap().len(),
            1 << 20
        );
        let err = decode_text(vec![b'{'; 10], "big.json", 9).unwrap_err();
        assert_eq!(err.code, "too-large");
    }

    #[test]
    fn an_sqlite_header_alone_is_a_clean_nsys_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.sqlite");
        std::fs::write(&p, b"SQLite format 3\0").unwrap();
        let err = import_path(&p, &ImportOptions::default()).unwrap_err();
        assert!(nsys::NSYS_ERROR_CODES.contains(&err.code), "{err}");
        assert!(err.file.ends_with("r.sqlite"), "{err}");
    }
}
