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
//! and parsed once. (An Nsight Systems export is read again by the audit's own SQLite reader,
//! `nsys/trace.rs`.) Several traces of one job (ranks) are imported by [`ranks`].
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
pub mod hta_compat;
pub mod kineto;
pub mod nsys;
pub mod ranks;
mod summary;
mod text;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::case::raw::RawCase;
use crate::exit::{Failure, EXIT_INPUT, EXIT_OK};
use crate::output::{refuse_existing, write_output};

pub use summary::{summarize, summarize_owned, Summary};

/// The largest trace text read, in bytes (2 GiB), before or after decompression: the
/// decompressor stops one byte past it, so a gzip bomb is refused as `too-large` rather than
/// exhausting memory. (Real Kineto traces reach hundreds of MB; the largest the project
/// knows of is 474 MB.)
pub const MAX_TRACE_BYTES: u64 = 2 * 1024 * 1024 * 1024;
// Standard input (`-`) is copied up to its own cap, so this cap must not exceed it.
const _: () = assert!(crate::input::MAX_STDIN_BYTES >= MAX_TRACE_BYTES);

/// The longest name (a kernel, a call, a string of an export) an import keeps, in bytes
/// (1 MiB): a demangled C++ kernel name reaches some KiB; a name past this is refused as
/// `too-large` where it is read, so that one string costs about twice its size, not once
/// per phase, label and summary line that repeats it (review D9: 19× for a 100 MB string).
pub const MAX_NAME_BYTES: usize = 1 << 20;

/// Output format of the summary `import` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SummaryFormat {
    /// Tables for people.
    Text,
    /// The summary as JSON (exact values as text and as integer ns).
    Json,
}

/// Arguments of `worksheet import`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  worksheet import trace.json.gz -o trace-case.json\n  \
worksheet import trace.json.gz --format json\n  \
worksheet import trace.json.gz -o trace-case.json.gz --expect\n  \
worksheet check trace-case.json.gz\n  \
worksheet import report.sqlite -o report-case.json.gz\n\n\
Reads PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzipped, and Nsight Systems SQLite exports \
(`nsys export --type sqlite`, opened read-only). Without -o, only the summary is printed.\n\
Exit codes: 0 imported, 2 the trace is malformed or unsupported, or the output\n\
exists (use --force)."
)]
pub struct ImportArgs {
    /// The trace file: Kineto `*.json` / `*.json.gz`, or an Nsight Systems `*.sqlite` export.
    /// A folder, or several files, are the ranks of one job: one multi-rank case. `-` reads
    /// standard input (any of these formats, gzipped or not).
    pub file: PathBuf,
    /// More trace files: with FILE, the ranks of one job (Kineto traces; rank from
    /// `distributedInfo`, else the argument order), imported as one case with one clock per
    /// rank, related by their collectives.
    #[arg(value_name = "MORE")]
    pub more: Vec<PathBuf>,
    /// Write the case here (gzipped when the name ends in `.gz`; `-`: to standard output, and
    /// the summary to standard error). Never overwritten without --force.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Summary format.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    pub format: SummaryFormat,
    /// Embed the current answers as expectations, so `worksheet check` replays them.
    #[arg(long)]
    pub expect: bool,
    /// Round timestamps finer than 1 ns to the nearest ns (counted and noted) instead of
    /// refusing them as `inexact-value`.
    #[arg(long)]
    pub round_sub_ns: bool,
    /// Also print a peer's numbers reproduced from its defaults, with the delta each of its
    /// assumptions causes (`hta`: HTA 0.5.0's temporal breakdown; Kineto traces only;
    /// `HTA_DISABLE_NS_ROUNDING=1` in the environment switches HTA's µs rounding off, as in HTA).
    #[arg(long, value_enum, value_name = "PEER")]
    pub compat: Option<Compat>,
    /// Several ranks only: declare that the ranks' clocks agree within DURATION (`0`: one host
    /// clock; `1ms` fits NTP, `1us` PTP), or `RANKS=DURATION` for a group (`0-7=0`);
    /// repeatable. A declared relation (SPEC §10): every answer that uses it says so.
    #[arg(long = "clocks-within", value_name = "DURATION")]
    pub clocks_within: Vec<String>,
}

/// Peers whose numbers `--compat` reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Compat {
    /// Holistic Trace Analysis 0.5.0's `get_temporal_breakdown()` (docs/hta-compat.md).
    Hta,
}

/// Options of an import, apart from where things are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Round values with digits below 1 ns to the nearest ns (halves away from zero)
    /// instead of refusing them.
    pub round_sub_ns: bool,
}

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
}

impl Imported {
    /// A case from a reader that has no facts or notes of its own to add.
    pub fn from_case(case: RawCase, format: impl Into<String>) -> Self {
        Imported {
            case,
            format: format.into(),
            facts: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// The trace formats `import` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzipped.
    KinetoJson,
    /// An Nsight Systems SQLite export (`nsys export --type sqlite`).
    NsysSqlite,
}

/// The SQLite file header.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Recognises a trace by its first bytes, then by its name.
///
/// # Errors
/// `unsupported-format` for an Nsight Systems report that has not been exported to SQLite.
pub fn detect(path: &Path, head: &[u8]) -> Result<TraceFormat, ImportError> {
    if head.starts_with(SQLITE_MAGIC) {
        return Ok(TraceFormat::NsysSqlite);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if name.ends_with(".nsys-rep") || name.ends_with(".qdrep") {
        return Err(ImportError::new(
            "$",
            "unsupported-format",
            "an Nsight Systems report is read through its SQLite export: run `nsys export --type sqlite FILE` and import the .sqlite file",
        )
        .in_file(path.display().to_string()));
    }
    if name.ends_with(".sqlite") || name.ends_with(".sqlite3") {
        return Ok(TraceFormat::NsysSqlite);
    }
    Ok(TraceFormat::KinetoJson)
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
/// is read once for both (Kineto; an Nsight Systems export is read again by the audit's
/// reader). `render` and `report` read a trace through this, so a trace and the case imported
/// from it give the same picture and page.
///
/// # Errors
/// What [`import_path`] returns, or the audit's reading error.
pub fn import_path_audited(path: &Path, options: &ImportOptions) -> Result<Imported, ImportError> {
    let (mut imported, trace) = import_path_with(path, options, true)?;
    audit_imported(&mut imported, path, options, trace)?;
    Ok(imported)
}

/// Opens the regular file at `path` and reads its first 16 bytes (for [`detect`]); the
/// file is then positioned after them.
///
/// # Errors
/// `io` or `not-a-file`, naming the file.
pub(crate) fn open_with_head(path: &Path) -> Result<(std::fs::File, Vec<u8>), ImportError> {
    let file = path.display().to_string();
    let mut handle = crate::input::open_file(path).map_err(|e| e.in_file(&file))?;
    let mut head = Vec::with_capacity(16);
    (&mut handle).take(16).read_to_end(&mut head).map_err(|e| {
        ImportError::new("$", "io", format!("cannot read the file: {e}")).in_file(&file)
    })?;
    Ok((handle, head))
}

/// A plain (not gzipped) trace file larger than [`MAX_TRACE_BYTES`] is `too-large` from its
/// size, before a byte of it is parsed (review D4, unclear message 7: 2 GiB were read first).
///
/// # Errors
/// `too-large`, or `io` when the size cannot be read.
fn refuse_past_cap(handle: &std::fs::File, head: &[u8]) -> Result<(), ImportError> {
    if crate::case::is_gzip(head) {
        return Ok(());
    }
    let len = handle
        .metadata()
        .map_err(|e| ImportError::new("$", "io", format!("cannot read the file: {e}")))?
        .len();
    if len > MAX_TRACE_BYTES {
        return Err(ImportError::new(
            "$",
            "too-large",
            format!(
                "the file holds {len} bytes, more than the {MAX_TRACE_BYTES} bytes a trace may hold; refused from its size, unread"
            ),
        ));
    }
    Ok(())
}

/// The audit's model of a trace, read by the import's own pass (Kineto traces), or `None`
/// when the audit reads the file itself (Nsight Systems exports).
type AuditTrace = Option<Result<crate::trace::model::Trace, ImportError>>;

/// [`import_path`], and with `audit`, the audit's model of a Kineto trace from the same
/// streaming pass ([`kineto::import_with_audit`]).
fn import_path_with(
    path: &Path,
    options: &ImportOptions,
    audit: bool,
) -> Result<(Imported, AuditTrace), ImportError> {
    let file = path.display().to_string();
    let (handle, head) = open_with_head(path)?;
    match detect(path, &head)? {
        TraceFormat::NsysSqlite => {
            let imported = nsys::import_nsys(path, &case_name(path))?;
            let facts = &imported.facts;
            let imported = Imported {
                format: format!("nsys sqlite ({})", facts.export.version_line()),
                notes: facts.notes.clone(),
                facts: facts.rows(),
                case: imported.case,
            };
            Ok((imported, None))
        }
        TraceFormat::KinetoJson => {
            let name = case_name(path);
            // The fast path: gunzipping and cutting into events on a second thread, each
            // event parsed from its slice on this one.
            refuse_past_cap(&handle, &head).map_err(|e| e.in_file(&file))?;
            let text = text::open(head, handle, MAX_TRACE_BYTES);
            let refusal = text.refusal();
            if let Some(done) =
                kineto::import_split(text, &name, options, audit, Some(refusal.clone()))
            {
                return Ok(done);
            }
            // Past the cap or the event budget: refused, without reading it all again.
            if let Some(refused) = refusal.get() {
                return Err(refused.clone().in_file(&file));
            }
            // Anything the fast path does not take for granted (a malformed trace, a field
            // the importer refuses, trouble reading): the careful reader reads the file
            // again from the start, and reports it exactly.
            let (handle, head) = open_with_head(path)?;
            let text = text::open(head, handle, MAX_TRACE_BYTES);
            // Reading and gunzipping on a second thread, parsing on this one.
            std::thread::scope(|scope| {
                let blocks = text::in_thread(scope, text);
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

/// Reads the file at `path` into the audit's format-neutral model ([`crate::trace::model`]):
/// a Kineto trace, an Nsight Systems SQLite export, or a case file (`"format":
/// "worksheet-case"`, plain or gzipped).
///
/// # Errors
/// [`ImportError`]: the same codes as [`import_path`], and a case file's own error codes.
pub fn read_audit_trace(
    path: &Path,
    options: &ImportOptions,
) -> Result<crate::trace::model::Trace, ImportError> {
    let file = path.display().to_string();
    let (handle, head) = open_with_head(path)?;
    if detect(path, &head)? == TraceFormat::NsysSqlite {
        return nsys::trace::read_trace(path);
    }
    // A trace the importer reads gives the same model through its one streaming pass
    // (`src/import/kineto/fast_tests.rs`): no whole text in memory, no second parse.
    refuse_past_cap(&handle, &head).map_err(|e| e.in_file(&file))?;
    let text = text::open(head, handle, MAX_TRACE_BYTES);
    let refusal = text.refusal();
    let fast = kineto::audit_split(text, options, Some(refusal.clone()));
    if let Some(Ok(trace)) = fast {
        return Ok(trace);
    }
    // Past the cap or the event budget: refused, never read whole (review D4).
    if let Some(refused) = refusal.get() {
        return Err(refused.clone().in_file(&file));
    }
    // Anything else (a trace the importer refuses, a case file): a case is read by the case
    // reader (streamed), a trace by the lenient reader, streamed through the same pieces.
    if starts_like_a_case(path)? {
        let case = crate::case::load_case_file(path)?;
        return Ok(crate::trace::model::Trace::from_case(&case));
    }
    let mut base = None;
    loop {
        let (handle, head) = open_with_head(path)?;
        let text = text::open(head, handle, MAX_TRACE_BYTES);
        let read = std::thread::scope(|scope| {
            let pieces = kineto::split_in_thread(scope, text);
            kineto::trace::read_trace_pieces(&pieces, options, base)
        });
        match read {
            kineto::trace::PiecesRead::Done(result) => {
                return (*result).map_err(|e| gzip_context(e, path).in_file(&file));
            }
            kineto::trace::PiecesRead::Again(b) if base.is_none() => base = Some(b),
            _ => break,
        }
    }
    audit_unfollowed(path, options)
}

/// The audit's model of a trace whose text the splitter's pieces do not follow (not JSON, a
/// repeated key, one value past 64 MiB, ...). Up to [`EXPLAIN_MAX_BYTES`] of text, the lenient
/// reader reads it whole and words any error exactly. Past that the importer's careful reader
/// streams it: a trace it reads gives the audit's model from the same pass (equal to the
/// lenient reader's), a text that is not JSON its syntax error (a 4.7 MB gzip of 1 GiB of
/// blanks held 1 GB here). Only a large text that is JSON but that the importer refuses is
/// read whole, up to the cap, for the lenient reader.
fn audit_unfollowed(
    path: &Path,
    options: &ImportOptions,
) -> Result<crate::trace::model::Trace, ImportError> {
    let file = path.display().to_string();
    let whole = |max: u64| -> Result<Vec<u8>, ImportError> {
        let (handle, head) = open_with_head(path)?;
        let mut bytes = Vec::new();
        text::open(head, handle, MAX_TRACE_BYTES)
            .take(max)
            .read_to_end(&mut bytes)
            .map_err(|e| text::trouble_of_io(e).in_file(&file))?;
        Ok(bytes)
    };
    let lenient = |bytes: Vec<u8>| {
        // Checked UTF-8 by the text reader, whole.
        let text = String::from_utf8(bytes).map_err(|e| {
            ImportError::new("$", "bad-syntax", format!("the text is not UTF-8 ({e})"))
                .in_file(&file)
        })?;
        kineto::trace::read_trace(&text, options).map_err(|e| gzip_context(e, path).in_file(&file))
    };
    let start = whole(EXPLAIN_MAX_BYTES + 1)?;
    if start.len() as u64 <= EXPLAIN_MAX_BYTES {
        return lenient(start);
    }
    drop(start);
    let (handle, head) = open_with_head(path)?;
    let streamed = std::thread::scope(|scope| {
        let blocks = text::in_thread(scope, text::open(head, handle, MAX_TRACE_BYTES));
        let reader = std::io::BufReader::with_capacity(1 << 16, blocks);
        kineto::import_with_audit(reader, "audit", options)
    });
    match streamed {
        Ok((_, trace)) => trace.map_err(|e| e.in_file(&file)),
        Err(e) if matches!(e.code, "bad-syntax" | "too-large" | "io") => {
            Err(gzip_context(e, path).in_file(&file))
        }
        // JSON that the importer refuses: the lenient reader audits it, from the whole text.
        Err(_) => lenient(whole(MAX_TRACE_BYTES + 1)?),
    }
}

/// Whether the text at `path` starts like a case file (`"worksheet-case"` in its first 512
/// characters), read through the same checks as a trace.
///
/// # Errors
/// `io` or `not-a-file`, naming the file.
fn starts_like_a_case(path: &Path) -> Result<bool, ImportError> {
    let (handle, head) = open_with_head(path)?;
    let mut start = Vec::with_capacity(2048);
    // Up to 512 characters of UTF-8 text; trouble reading is for the reader to word.
    let _ = text::open(head, handle, MAX_TRACE_BYTES)
        .take(2048)
        .read_to_end(&mut start);
    let start = String::from_utf8_lossy(&start);
    let start: String = start.chars().take(512).collect();
    Ok(start.contains("\"worksheet-case\""))
}

/// Bytes of a trace file → text, through the same checks as a streamed import
/// ([`text::open`]): gunzipped when they start with the gzip magic, with the size cap `max`
/// applied to the decompressed text too (a gzip bomb is `too-large`). The whole text is
/// kept: for readers that need it all at once (`--compat hta`); `import` itself streams.
fn decode_text(bytes: Vec<u8>, file: &str, max: u64) -> Result<String, ImportError> {
    let mut text = String::new();
    text::open(bytes, std::io::empty(), max)
        .read_to_string(&mut text)
        .map_err(|e| text::trouble_of_io(e).in_file(file))?;
    Ok(text)
}

/// A streamed parse cannot look back at the text, so on the error path alone the file is read
/// again (under the same cap) to say what serde_json's message does not: a byte-order mark,
/// `NaN` / `Infinity` or a lone surrogate where the parser stopped, and a file of another
/// kind (a case, a form, a report), naming the command to use. Otherwise `err` as it is.
fn explain_failure(err: ImportError, path: &Path) -> ImportError {
    let err = gzip_context(err, path);
    if err.code != "bad-syntax" && err.code != "missing-field" && err.code != "wrong-type" {
        return err;
    }
    // Each look streams the text again, so the error path holds no more of it than the
    // import did (review D4: a 1 GiB refused trace was held whole here).
    let stream =
        |max: u64| open_with_head(path).map(|(handle, head)| text::open(head, handle, max));
    let Ok(start) = stream(MAX_TRACE_BYTES) else {
        return err;
    };
    let mut head = Vec::with_capacity(3);
    if start.take(3).read_to_end(&mut head).is_ok() && head == "\u{feff}".as_bytes() {
        if let Err(bom) = crate::error::refuse_bom("\u{feff}") {
            return bom;
        }
    }
    if let Ok(whole) = stream(MAX_TRACE_BYTES) {
        if let Some(other_kind) = crate::kind::not_a_trace_kind(crate::kind::peek_reader(whole)) {
            return other_kind;
        }
    }
    // A parse into a JSON value with paths names the field; it costs several times the
    // text, so only texts up to the case cap get it, read only that far.
    let mut text = String::new();
    let read =
        stream(EXPLAIN_MAX_BYTES).map(|t| t.take(EXPLAIN_MAX_BYTES + 1).read_to_string(&mut text));
    if !matches!(read, Ok(Ok(_))) {
        return err;
    }
    if err.code == "bad-syntax" && text.len() as u64 <= EXPLAIN_MAX_BYTES {
        let mut de = serde_json::Deserializer::from_str(&text);
        if let Err(e) = serde_path_to_error::deserialize::<_, serde_json::Value>(&mut de) {
            if let Some(clear) = crate::error::explain_syntax(&text, e.inner()) {
                let path = e.path().to_string();
                return ImportError {
                    path: if path == "." { err.path } else { path },
                    message: format!(
                        "{clear} (line {} column {})",
                        e.inner().line(),
                        e.inner().column()
                    ),
                    ..err
                };
            }
        }
    }
    err
}

/// What the gzip layer says about a content error (reliability review, unclear messages 5
/// and 6): a file named `.gz` that is not gzip was read as plain text, so its JSON error
/// says so; and a gzip stream whose damage gave the JSON reader garbage (one flipped byte
/// in the middle: `duplicate field`) is checked to its end, where the CRC finds the damage,
/// which is then the error. Errors of reading, size and kind are returned as they are.
fn gzip_context(err: ImportError, path: &Path) -> ImportError {
    if matches!(err.code, "io" | "too-large" | "not-a-file" | "wrong-kind")
        || err.message.contains("gzip stream is damaged")
    {
        return err;
    }
    let Ok((handle, head)) = open_with_head(path) else {
        return err;
    };
    let named_gz = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".gz"));
    if !crate::case::is_gzip(&head) {
        if named_gz {
            return ImportError {
                message: format!(
                    "{} (the file is named `.gz` but does not start with gzip's magic bytes 1f 8b, so it was read as plain text)",
                    err.message
                ),
                ..err
            };
        }
        return err;
    }
    // The whole stream, decompressed into nothing (bounded memory, at most the cap).
    let decoder = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
        std::io::Cursor::new(head).chain(handle),
    ));
    match std::io::copy(&mut decoder.take(MAX_TRACE_BYTES), &mut std::io::sink()) {
        Ok(_) => err,
        Err(e) => ImportError::new(
            "$",
            "bad-syntax",
            format!(
                "the gzip stream is damaged ({e}); the JSON reader met its garbage first (at {}: {}), which is a consequence of the damage",
                err.path, err.message
            ),
        ),
    }
}

/// The largest trace text [`explain_failure`] parses again to name a syntax error's field.
const EXPLAIN_MAX_BYTES: u64 = 64 << 20;

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

/// Runs `worksheet import`: reads the trace, writes the case when asked, prints the summary.
///
/// # Errors
/// A [`Failure`] with exit code 2 for a malformed or unsupported trace, or an output file
/// that exists without `--force`.
pub fn run(args: &ImportArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    if let Some(path) = &args.output {
        refuse_existing(path, args.force)?;
    }
    // With `-o -` the case goes to standard output, so the summary goes to standard error.
    let mut stderr = std::io::stderr();
    let out: &mut dyn Write = match &args.output {
        Some(path) if crate::output::is_stdout(path) => &mut stderr,
        _ => out,
    };
    let options = ImportOptions {
        round_sub_ns: args.round_sub_ns,
    };
    let paths: Vec<PathBuf> = std::iter::once(args.file.clone())
        .chain(args.more.iter().cloned())
        .collect();
    if ranks::is_multi(&paths) {
        return ranks::command::run(args, &paths, &options, out);
    }
    if let Some(first) = args.clocks_within.first() {
        return Err(ranks::declare::option_error(format!(
            "`{first}`: --clocks-within relates the clocks of several ranks; give two or more traces (or a folder of them)"
        ))
        .into());
    }
    let (mut imported, trace) = import_path_with(&args.file, &options, true)?;
    let hta = match args.compat {
        Some(Compat::Hta) => Some(compat_hta(&args.file, &imported, &options)?),
        None => None,
    };
    let audit = audit_imported(&mut imported, &args.file, &options, trace)?;
    let mut summary = summarize_owned(imported, args.expect, args.output.is_some()).map_err(|e| Failure {
        message: format!(
            "{}: error[internal]: the imported case does not validate ({e}); please report this with the trace",
            args.file.display()
        ),
        code: EXIT_INPUT,
    })?;
    summary.audit = Some(audit);
    if let Some(path) = &args.output {
        let bytes = if path.to_string_lossy().ends_with(".gz") {
            gzip(summary.case_json.as_bytes())
        } else {
            std::mem::take(&mut summary.case_json).into_bytes()
        };
        write_output(path, &bytes, args.force)?;
        summary.written = Some((path.display().to_string(), bytes.len() as u64));
    }
    match args.format {
        SummaryFormat::Text => {
            out.write_all(summary.to_text().as_bytes())?;
            if let Some(hta) = &hta {
                out.write_all(hta.to_text().as_bytes())?;
            }
        }
        SummaryFormat::Json => {
            let mut value = serde_json::to_value(&summary).map_err(std::io::Error::from)?;
            value["format"] = "worksheet-import".into();
            value["version"] = 1.into();
            if let (Some(hta), Some(map)) = (&hta, value.as_object_mut()) {
                let hta = serde_json::to_value(hta).map_err(std::io::Error::from)?;
                map.insert("compat_hta".to_owned(), hta);
            }
            serde_json::to_writer_pretty(&mut *out, &value).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
    }
    Ok(EXIT_OK)
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
fn audit_imported(
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
    if trace.source == "kineto" {
        kineto::trace::annotate_case(&mut imported.case, &trace, &audit);
    }
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

/// `--compat hta`: HTA reads Kineto traces only.
fn compat_hta(
    path: &Path,
    imported: &Imported,
    options: &ImportOptions,
) -> Result<hta_compat::HtaCompat, ImportError> {
    compat_hta_of(path, imported.format.starts_with("nsys"), options)
}

/// `--compat hta` of `import` and `audit`: HTA 0.5.0's temporal breakdown of the Kineto trace at
/// `path`, with HTA's defaults (and its `HTA_DISABLE_NS_ROUNDING` switch).
///
/// # Errors
/// `unsupported-format` for an Nsight Systems export (`nsys`), and the reader's errors.
pub fn compat_hta_of(
    path: &Path,
    nsys: bool,
    options: &ImportOptions,
) -> Result<hta_compat::HtaCompat, ImportError> {
    if nsys {
        return Err(ImportError::new(
            "$",
            "unsupported-format",
            "--compat hta reproduces HTA, which reads PyTorch profiler (Kineto) traces, not Nsight Systems exports",
        )
        .in_file(path.display().to_string()));
    }
    // HTA's own switch (`hta/configs/env_options.py`): rounding is off only for exactly "1".
    let mut hta = hta_compat::HtaOptions::HTA_DEFAULTS;
    if std::env::var_os("HTA_DISABLE_NS_ROUNDING").is_some_and(|v| v == "1") {
        hta.us_rounding = false;
    }
    hta_compat::compat_path(path, options, hta)
}

/// Gzip-compresses `bytes` (default level).
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(bytes)
        .and_then(|()| encoder.finish())
        .expect("writing to a Vec cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;

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
