//! The case format: one versioned, self-describing JSON file per case.
//!
//! A case declares clocks, device streams, events, phases (intervals of work), marks
//! (free-standing timestamps), the host program in order (event records, launches,
//! cross-stream waits, host waits, host timers), series of repeated samples, and the
//! questions asked, each optionally with its expected answer. `fixtures/README.md`
//! documents the format field by field with a worked example.
//!
//! Loading is two steps, as everywhere in this crate: the JSON is read into the raw serde
//! mirror of [`raw`] (syntax and shape, with the JSON path of any error), then validated into
//! the types below (references resolve, ids are unique, values are exact, intervals are not
//! reversed, the program is consistent). Nothing after validation checks again.

mod error;
mod implicit;
pub mod raw;
mod read;
mod string_cap;
mod validate;

use std::path::Path;

pub use error::{CaseError, CASE_ERROR_CODES};
pub use read::{
    load_case_file_with, load_for_check_with, read_raw, ReadLimits, MAX_CASE_TEXT_BYTES,
};
pub use string_cap::{is_too_long_string, MAX_CASE_STRING_BYTES};
pub use validate::validate;

use crate::clock::{ClockId, Timestamp};
use crate::interval::{Interval, OverlapRegion};
use crate::units::Nanos;
use crate::verdict::Reason;

/// The largest case text read whole, in bytes (64 MiB): by [`read_case_text`], and to explain
/// a failed streamed parse exactly. `check`, `eval` and `render` stream larger cases, up to
/// [`MAX_CASE_TEXT_BYTES`].
pub const MAX_CASE_BYTES: u64 = 64 * 1024 * 1024;
// Standard input (`-`) is copied up to its own cap, so this cap must not exceed it.
const _: () = assert!(crate::input::MAX_STDIN_BYTES >= MAX_CASE_BYTES);

/// JSON paths longer than this are cut (deeply nested garbage would print pages).
const MAX_PATH_CHARS: usize = 80;

/// The only `format` value a case file may carry.
pub const FORMAT_NAME: &str = "worksheet-case";

/// The case-format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Index of a clock in [`Case::clocks`].
pub type ClockIdx = usize;
/// Index of a stream in [`Case::streams`].
pub type StreamIdx = usize;
/// Index of an event in [`Case::events`].
pub type EventIdx = usize;
/// Index of a phase in [`Case::phases`].
pub type PhaseIdx = usize;
/// Index of an op in [`Case::program`].
pub type OpIdx = usize;

/// A validated case. Built only by [`validate`] (or the `load_*` functions), so every
/// reference resolves and every interval is well-formed.
#[derive(Clone, Debug)]
pub struct Case {
    /// Case name (the file stem when the file names none).
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Provenance as given (captures: device, driver, date, command).
    pub provenance: Option<serde_json::Map<String, serde_json::Value>>,
    /// Clocks, by index.
    pub clocks: Vec<ClockDef>,
    /// Relations between clocks (SPEC §10), in file order.
    pub relations: Vec<RelationDef>,
    /// The relations as a graph over distinct clocks, built on first use
    /// ([`Case::relation_graph`]).
    relation_graph: std::sync::OnceLock<(Vec<ClockIdx>, crate::relation::Graph)>,
    /// Streams, by index.
    pub streams: Vec<StreamDef>,
    /// Events, by index.
    pub events: Vec<EventDef>,
    /// Phases, by index.
    pub phases: Vec<PhaseDef>,
    /// Marks, by index.
    pub marks: Vec<MarkDef>,
    /// The host program in order.
    pub program: Vec<Op>,
    /// Host timers (derived from the program's timer-start / timer-stop ops).
    pub timers: Vec<TimerDef>,
    /// Series of repeated samples.
    pub series: Vec<SeriesDef>,
    /// Questions in file order.
    pub questions: Vec<Question>,
    /// Stream pairs whose joins a trace showed but did not record, with what it showed:
    /// their order is unknown (`dependency-unrecorded`).
    pub unrecorded_joins: Vec<((StreamIdx, StreamIdx), Option<String>)>,
}

/// A declared clock.
#[derive(Clone, Debug)]
pub struct ClockDef {
    /// The id used in the file.
    pub id: String,
    /// Domain and instance.
    pub clock: ClockId,
}

/// A relation between two clocks: `offset(b) − offset(a) ∈ bound` (SPEC §10).
///
/// The bound is kept as written: `lo > hi` is not an input error but conflicting evidence,
/// which questions across the two clocks answer as `unknown (inconsistent-relation)`.
#[derive(Clone, Debug)]
pub struct RelationDef {
    /// The id given, or `clock_relations[i]`.
    pub id: String,
    /// Clock `a`.
    pub a: ClockIdx,
    /// Clock `b`.
    pub b: ClockIdx,
    /// The bound on `offset(b) − offset(a)`.
    pub bound: crate::relation::Bound,
    /// Where it comes from.
    pub source: crate::relation::Source,
    /// What it rests on, for people.
    pub evidence: Vec<String>,
}

/// A declared stream.
#[derive(Clone, Debug)]
pub struct StreamDef {
    /// The id used in the file.
    pub id: String,
    /// Its clock.
    pub clock: ClockIdx,
    /// Its device.
    pub device: String,
    /// What kind of stream it is, when the input says.
    pub kind: Option<StreamKind>,
}

/// What kind of CUDA stream a stream is (CUDA runtime, "Stream synchronization behavior").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// The legacy default (NULL) stream: each of its operations waits for the earlier work of
    /// every blocking stream of its device.
    LegacyDefault,
    /// Created without `cudaStreamNonBlocking`: the legacy default stream waits for it.
    Blocking,
    /// Created with `cudaStreamNonBlocking`: nothing implicit waits for it.
    NonBlocking,
    /// The per-thread default stream: the legacy default stream does not wait for it (SPEC §4).
    PerThreadDefault,
}

impl StreamKind {
    /// The kebab-case word used in case files.
    pub fn word(self) -> &'static str {
        match self {
            StreamKind::LegacyDefault => "legacy-default",
            StreamKind::Blocking => "blocking",
            StreamKind::NonBlocking => "non-blocking",
            StreamKind::PerThreadDefault => "per-thread-default",
        }
    }
}

/// Why a host call is a wait though not named one (SPEC §4, "Implicit waits"; CUDA runtime
/// API, "API synchronization behavior").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImplicitKind {
    /// A synchronous device-to-host copy: returns once the copy has completed.
    SyncCopyDtoh,
    /// An `Async` device-to-host copy into pageable memory: returns once the copy has completed.
    AsyncCopyDtohPageable,
    /// A synchronous pageable host-to-device copy: a stream sync runs before the copy starts.
    PageableHtod,
}

impl ImplicitKind {
    /// The kebab-case word used in case files.
    pub fn word(self) -> &'static str {
        match self {
            ImplicitKind::SyncCopyDtoh => "sync-copy-dtoh",
            ImplicitKind::AsyncCopyDtohPageable => "async-copy-dtoh-pageable",
            ImplicitKind::PageableHtod => "pageable-htod",
        }
    }

    /// Whether the wait covers the copy itself (device-to-host), or only the stream's work
    /// before it (pageable host-to-device).
    pub fn covers_the_copy(self) -> bool {
        !matches!(self, ImplicitKind::PageableHtod)
    }

    /// Why the call is a wait, quoting the CUDA runtime's "API synchronization behavior".
    pub fn why(self) -> &'static str {
        match self {
            ImplicitKind::SyncCopyDtoh => "a synchronous copy from device to host returns only once the copy has completed",
            ImplicitKind::AsyncCopyDtohPageable => "an Async copy from device to pageable host memory returns only once the copy has completed",
            ImplicitKind::PageableHtod => "a synchronous copy from pageable host memory performs a stream sync before the copy starts, so it covers the stream's earlier work but not the copy",
        }
    }
}

/// A call that is a wait without being named one: a copy and why it waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImplicitWait {
    /// Why it waits.
    pub kind: ImplicitKind,
    /// The copy's phase, launched earlier in the program in the wait's stream.
    pub copy: PhaseIdx,
    /// The program index of the copy's launch.
    pub copy_op: OpIdx,
}

/// An event's state when it was read, with its timestamp when completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventState {
    /// Completed at this time on its stream's clock.
    Completed(Nanos),
    /// Completed, but created without timing: no timestamp can be read.
    CompletedUntimed,
    /// Recorded but not completed when read.
    Pending,
    /// Never recorded.
    NotRecorded,
}

/// A declared event.
#[derive(Clone, Debug)]
pub struct EventDef {
    /// The id used in the file.
    pub id: String,
    /// Its stream.
    pub stream: StreamIdx,
    /// Created with timing enabled.
    pub timing: bool,
    /// State when read.
    pub state: EventState,
}

/// A declared phase: an interval of work.
#[derive(Clone, Debug)]
pub struct PhaseDef {
    /// The id used in the file.
    pub id: crate::case::raw::PhaseId,
    /// Label for people (defaults to the id).
    pub label: crate::case::raw::Label,
    /// The stream it ran in, if declared.
    pub stream: Option<StreamIdx>,
    /// Its clock.
    pub clock: ClockIdx,
    /// When it ran.
    pub interval: Interval,
}

/// A free-standing timestamp.
#[derive(Clone, Debug)]
pub struct MarkDef {
    /// The id used in the file.
    pub id: String,
    /// Its clock.
    pub clock: ClockIdx,
    /// Its value.
    pub at: Nanos,
}

/// What a host wait blocks on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitTarget {
    /// An event: covers the work ordered before it in its stream, plus what that position
    /// depends on through cross-stream waits.
    Event(EventIdx),
    /// A stream: covers all work submitted to it before the wait.
    Stream(StreamIdx),
    /// A device: covers all work submitted to any of its streams before the wait.
    Device(String),
}

/// One step of the host program.
#[derive(Clone, Debug)]
pub enum Op {
    /// Record an event in its stream.
    Record(EventIdx),
    /// Launch a phase's work in its stream.
    Launch(PhaseIdx),
    /// Make `stream` wait for `event`.
    StreamWait {
        /// The stream that waits.
        stream: StreamIdx,
        /// The event it waits for.
        event: EventIdx,
    },
    /// The host blocks until `target` completes.
    HostWait {
        /// Wait id.
        id: String,
        /// What it waits for.
        target: WaitTarget,
        /// When it returned, if recorded.
        returned: Option<(ClockIdx, Nanos)>,
        /// Set when a copy call is the wait (SPEC §4, "Implicit waits").
        implicit: Option<ImplicitWait>,
    },
    /// Timer `0` starts.
    TimerStart(usize),
    /// Timer `0` stops.
    TimerStop(usize),
}

/// A host timer: a start and a stop reading, each at a place in the program.
#[derive(Clone, Debug)]
pub struct TimerDef {
    /// The id used in the file.
    pub id: String,
    /// Index of the timer-start op.
    pub start_op: OpIdx,
    /// Index of the timer-stop op.
    pub stop_op: OpIdx,
    /// Start reading.
    pub start: (ClockIdx, Nanos),
    /// Stop reading.
    pub stop: (ClockIdx, Nanos),
}

/// Repeated samples of one measurement.
#[derive(Clone, Debug)]
pub struct SeriesDef {
    /// The id used in the file.
    pub id: String,
    /// What was measured.
    pub label: Option<String>,
    /// Warm-up runs in order.
    pub warmup: Vec<Nanos>,
    /// Measured runs in order.
    pub measured: Vec<Nanos>,
    /// Failed runs (kept and counted, never in statistics).
    pub failed: Vec<Nanos>,
}

/// A question and its optional expectation.
#[derive(Clone, Debug)]
pub struct Question {
    /// The id used in the file.
    pub id: String,
    /// What is asked.
    pub ask: Ask,
    /// The expected answer, if the case states one.
    pub expect: Option<Expect>,
}

/// What a question asks.
#[derive(Clone, Debug)]
pub enum Ask {
    /// Host submission time of a timer (no completion claim).
    Submission {
        /// Timer index.
        timer: usize,
    },
    /// Host-observed completion: the timer, and the phases claimed complete at its stop.
    HostCompletion {
        /// Timer index.
        timer: usize,
        /// Claimed work.
        work: Vec<PhaseIdx>,
    },
    /// Device interval between two events.
    DeviceInterval {
        /// Start event.
        start: EventIdx,
        /// End event.
        end: EventIdx,
    },
    /// `to − from` of two marks.
    Elapsed {
        /// Earlier mark.
        from: usize,
        /// Later mark.
        to: usize,
    },
    /// Difference of two earlier duration questions.
    Difference {
        /// Index of the minuend question.
        minuend: usize,
        /// Index of the subtrahend question.
        subtrahend: usize,
    },
    /// `offset(b) − offset(a)` of two clocks (SPEC §10).
    ClockOffset {
        /// Clock `a`.
        a: ClockIdx,
        /// Clock `b`.
        b: ClockIdx,
    },
    /// Interval algebra over a set of phases.
    Intervals {
        /// The phases.
        phases: Vec<PhaseIdx>,
    },
    /// A steady-state claim over a series.
    SteadyState {
        /// Series index.
        series: usize,
        /// Minimum warm-up runs.
        min_warmup: u32,
        /// Tolerance between first and last thirds, percent.
        tolerance_percent: u32,
    },
}

impl Ask {
    /// The kebab-case kind, as written in the file.
    pub fn kind(&self) -> &'static str {
        match self {
            Ask::Submission { .. } => "submission",
            Ask::HostCompletion { .. } => "host-completion",
            Ask::DeviceInterval { .. } => "device-interval",
            Ask::Elapsed { .. } => "elapsed",
            Ask::Difference { .. } => "difference",
            Ask::ClockOffset { .. } => "clock-offset",
            Ask::Intervals { .. } => "intervals",
            Ask::SteadyState { .. } => "steady-state",
        }
    }

    /// Whether the answer is a single duration (usable in a difference).
    pub fn is_duration(&self) -> bool {
        !matches!(self, Ask::Intervals { .. })
    }
}

/// An expected verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpectVerdict {
    /// Known with this exact value.
    Known(Nanos),
    /// Bounded by this closed range `[lo, hi]` (SPEC §10).
    Bounded(Nanos, Nanos),
    /// Unknown for this reason.
    Unknown(Reason),
}

/// An expected answer.
#[derive(Clone, Debug)]
pub enum Expect {
    /// For duration questions.
    Duration {
        /// Expected verdict.
        verdict: ExpectVerdict,
        /// Expected attribution (differences: `not-causal`).
        attribution: Option<Reason>,
    },
    /// For interval-set questions; `None` fields are not checked.
    Intervals(Box<ExpectIntervals>),
}

/// Expected interval-set results; only the fields given are checked.
#[derive(Clone, Debug, Default)]
pub struct ExpectIntervals {
    /// The set is expected not to be summed, for this reason (it mixes clocks).
    pub unknown: Option<Reason>,
    /// Number of intervals.
    pub count: Option<u64>,
    /// Σ lengths.
    pub sum: Option<Nanos>,
    /// Covered union.
    pub union: Option<Nanos>,
    /// Span, or the reason it is unknown.
    pub span: Option<ExpectVerdict>,
    /// Gaps.
    pub gaps: Option<Vec<Interval>>,
    /// sum − union.
    pub overlap: Option<Nanos>,
    /// Regions of depth ≥ 2.
    pub overlap_regions: Option<Vec<OverlapRegion>>,
    /// Maximum depth.
    pub max_depth: Option<u32>,
}

/// The error a case file expects to fail with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectError {
    /// Error code.
    pub code: String,
    /// JSON path, if stated.
    pub path: Option<String>,
}

impl Case {
    /// The clock of clock index `idx`.
    pub fn clock(&self, idx: ClockIdx) -> &ClockId {
        &self.clocks[idx].clock
    }

    /// The timestamp `(clock, at)` as a [`Timestamp`].
    pub fn timestamp(&self, (clock, at): (ClockIdx, Nanos)) -> Timestamp {
        Timestamp::new(self.clock(clock).clone(), at)
    }

    /// The question with id `id`.
    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }

    /// What the input says about an unrecorded join between streams `a` and `b`, when it
    /// declares one (in either order).
    pub fn unrecorded_join(&self, a: StreamIdx, b: StreamIdx) -> Option<&str> {
        self.unrecorded_joins
            .iter()
            .find(|((x, y), _)| (*x == a && *y == b) || (*x == b && *y == a))
            .map(|(_, why)| {
                why.as_deref()
                    .unwrap_or("the input declares their join unrecorded")
            })
    }

    /// The clock relations as a graph whose nodes are distinct clocks, and each clock
    /// index's node (the first clock index with the same domain and instance). Built once.
    pub fn relation_graph(&self) -> &(Vec<ClockIdx>, crate::relation::Graph) {
        self.relation_graph.get_or_init(|| {
            let mut first: std::collections::HashMap<&ClockId, ClockIdx> =
                std::collections::HashMap::new();
            let canon: Vec<ClockIdx> = self
                .clocks
                .iter()
                .enumerate()
                .map(|(i, c)| *first.entry(&c.clock).or_insert(i))
                .collect();
            let relations: Vec<crate::relation::Relation> = self
                .relations
                .iter()
                .map(|r| crate::relation::Relation {
                    name: r.id.clone(),
                    a: canon[r.a],
                    b: canon[r.b],
                    bound: r.bound,
                    source: r.source,
                })
                .collect();
            let graph = crate::relation::Graph::new(self.clocks.len(), &relations);
            (canon, graph)
        })
    }
}

/// The outcome of reading a case file for `check`: either a case, or a file that declares
/// it must fail to load (and how it actually failed, or that it loaded).
#[derive(Debug)]
pub enum Loaded {
    /// A valid case.
    Case(Box<Case>),
    /// A file with `expect_error`: the expectation, and the actual load result.
    ExpectsError {
        /// Case name.
        name: String,
        /// What the file expects.
        expected: ExpectError,
        /// What actually happened: the error, or `None` when the case loaded.
        actual: Option<CaseError>,
    },
}

/// Parses and validates a case from text; `file` names it in errors and gives the default name.
///
/// # Errors
/// [`CaseError`] with the file, JSON path and code of the first problem.
pub fn load_case_str(text: &str, file: &str) -> Result<Case, CaseError> {
    let raw =
        parse_raw(text).map_err(|e| crate::kind::not_a_case(text).unwrap_or(e).in_file(file))?;
    validate(raw, &default_name(file)).map_err(|e| e.in_file(file))
}

/// Reads, parses and validates a case file, streamed (see [`read_raw`]): any size up to
/// [`MAX_CASE_TEXT_BYTES`] of text, plain or gzip.
///
/// # Errors
/// [`CaseError`]: `io` when it cannot be read, `too-large` past [`MAX_CASE_TEXT_BYTES`], else
/// as [`load_case_str`].
pub fn load_case_file(path: &Path) -> Result<Case, CaseError> {
    load_case_file_with(path, ReadLimits::DEFAULT)
}

/// Reads a case file for `check` (streamed, as [`load_case_file`]), honouring a declared
/// `expect_error`.
///
/// # Errors
/// [`CaseError`] when the file cannot be read or parsed and declares no expectation (a
/// file that does not parse cannot declare one).
pub fn load_for_check(path: &Path) -> Result<Loaded, CaseError> {
    load_for_check_with(path, ReadLimits::DEFAULT)
}

/// Reads a case file as UTF-8 text, refusing files over [`MAX_CASE_BYTES`].
///
/// A gzip-compressed file (recognised by its first two bytes, `1f 8b`, whatever its name) is
/// decompressed first; the limit then applies to the decompressed text as well, and the
/// decompressor stops one byte past it, so a small file that expands without end (a gzip
/// bomb) is refused as `too-large` without ever holding more than the limit in memory.
///
/// # Errors
/// `io` (unreadable), `not-a-file` (a FIFO, device, socket or folder: refused before any
/// read, see [`crate::input`]), `too-large`, and `bad-syntax` (not UTF-8, or a damaged gzip
/// stream).
pub fn read_case_text(path: &Path) -> Result<String, CaseError> {
    read_case_text_capped(path, MAX_CASE_BYTES)
}

/// [`read_case_text`] with the bound `max` in place of [`MAX_CASE_BYTES`].
fn read_case_text_capped(path: &Path, max: u64) -> Result<String, CaseError> {
    use std::io::Read;
    let file = path.display().to_string();
    let too_large = |what: &str| {
        CaseError::new(
            "$",
            "too-large",
            format!("the {what} is larger than {max} bytes; a case file is expected"),
        )
        .in_file(&file)
    };
    let mut bytes =
        crate::input::read_capped(path, max, "a case file").map_err(|e| e.in_file(&file))?;
    if is_gzip(&bytes) {
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .take(max + 1)
            .read_to_end(&mut text)
            .map_err(|e| {
                CaseError::new(
                    "$",
                    "bad-syntax",
                    format!("the gzip stream is damaged or truncated ({e})"),
                )
                .in_file(&file)
            })?;
        if text.len() as u64 > max {
            return Err(too_large("decompressed text"));
        }
        bytes = text;
    }
    String::from_utf8(bytes).map_err(|e| {
        CaseError::new(
            "$",
            "bad-syntax",
            format!("the file is not UTF-8 text ({e})"),
        )
        .in_file(&file)
    })
}

/// Whether `bytes` start like a gzip stream (RFC 1952 magic `1f 8b`).
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The stem of a file name (`fixtures/cases/x.json` → `x`, `x.json.gz` → `x`).
fn default_name(file: &str) -> String {
    let name = Path::new(file)
        .file_name()
        .map_or_else(|| file.to_owned(), |s| s.to_string_lossy().into_owned());
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    match name.strip_suffix(".json") {
        Some(stem) if !stem.is_empty() => stem.to_owned(),
        _ => Path::new(name)
            .file_stem()
            .map_or_else(|| name.to_owned(), |s| s.to_string_lossy().into_owned()),
    }
}

/// JSON text → raw mirror, with the JSON path and a code on failure.
///
/// # Errors
/// `bad-syntax`, `missing-field`, `unknown-field`, `duplicate-field`, `wrong-type`,
/// `unknown-variant` (the file is not yet attributed).
pub fn parse_raw(text: &str) -> Result<raw::RawCase, CaseError> {
    crate::error::refuse_bom(text)?;
    if text.trim().is_empty() {
        return Err(CaseError::new(
            "$",
            "bad-syntax",
            "the file is empty; a JSON case object is expected",
        ));
    }
    if let Some(first) = text.trim_start().chars().next().filter(|&c| c != '{') {
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            let mut err = CaseError::new(
                "$",
                "bad-syntax",
                format!(
                    "not JSON: {}",
                    crate::error::without_position(&e.to_string())
                ),
            );
            err.line = Some(e.line());
            return Err(err);
        }
        return Err(CaseError::new(
            "$",
            "wrong-type",
            format!(
                "a case file is one JSON object (`{{...}}`), but this file starts with `{first}`"
            ),
        ));
    }
    // The streamed reader refuses a string past the cap before keeping it; so does this one.
    string_cap::longest_string_check(text, MAX_CASE_STRING_BYTES)?;
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed: Result<raw::RawCase, _> = serde_path_to_error::deserialize(&mut de);
    let raw = parsed.map_err(|err| {
        let path = path_text(err.path().to_string());
        let inner = err.inner();
        let message = crate::error::explain_syntax(text, inner)
            .unwrap_or_else(|| crate::error::without_position(&inner.to_string()));
        let code = classify_serde(inner);
        let mut e = CaseError::new(path, code, message);
        if inner.line() > 0 {
            e.line = Some(inner.line());
        }
        e
    })?;
    de.end().map_err(|e| {
        let mut err = CaseError::new(
            "$",
            "bad-syntax",
            format!(
                "text after the JSON object: {}",
                crate::error::without_position(&e.to_string())
            ),
        );
        err.line = Some(e.line());
        err
    })?;
    Ok(raw)
}

/// A tracked JSON path as errors print it: `$` for the whole file, cut past
/// [`MAX_PATH_CHARS`].
fn path_text(p: String) -> String {
    match p {
        p if p == "." || p.is_empty() => "$".to_owned(),
        p if p.len() > MAX_PATH_CHARS => {
            let cut = p
                .char_indices()
                .nth(MAX_PATH_CHARS)
                .map_or(p.len(), |(i, _)| i);
            format!("{}…", &p[..cut])
        }
        p => p,
    }
}

/// Maps a serde_json error to a stable code.
fn classify_serde(err: &serde_json::Error) -> &'static str {
    use serde_json::error::Category;
    match err.classify() {
        Category::Io => "io",
        Category::Syntax | Category::Eof => "bad-syntax",
        Category::Data => crate::error::serde_data_code(&err.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gzipped_case_reads_as_its_plain_text() {
        let plain = read_case_text(Path::new("fixtures/cases/three-boundaries.json")).unwrap();
        let gz = read_case_text(Path::new("tests/data/gzip/three-boundaries.json.gz")).unwrap();
        assert_eq!(plain, gz);
        let case = load_case_file(Path::new("tests/data/gzip/three-boundaries.json.gz")).unwrap();
        assert_eq!(case.name, "three-boundaries");
    }

    #[test]
    fn a_truncated_gzip_stream_is_bad_syntax() {
        let err = read_case_text(Path::new("tests/data/gzip/truncated.json.gz")).unwrap_err();
        assert_eq!(err.code, "bad-syntax");
        assert!(err.message.contains("gzip"), "{err}");
        assert_eq!(err.file, "tests/data/gzip/truncated.json.gz");
    }

    /// 64 KiB on disk, one byte more than the limit once decompressed.
    #[test]
    fn a_gzip_bomb_is_too_large() {
        let err = read_case_text(Path::new("tests/data/gzip/bomb.json.gz")).unwrap_err();
        assert_eq!(err.code, "too-large");
        assert!(err.message.contains("decompressed"), "{err}");
    }

    #[test]
    fn default_names_drop_json_and_gz() {
        assert_eq!(default_name("a/b/x.json"), "x");
        assert_eq!(default_name("a/b/x.json.gz"), "x");
        assert_eq!(default_name("x.gz"), "x");
        assert_eq!(default_name("x.case"), "x");
    }
}
