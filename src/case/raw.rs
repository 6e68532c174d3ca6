//! The raw serde mirror of a case file: exactly what the JSON says, nothing checked yet.
//!
//! Every struct denies unknown fields so that a typo (`"strat"`) is an error naming the
//! field, not a silently ignored key. Values that carry time are kept as [`RawTime`] (text
//! or a bare number) so that validation can say `missing-unit` instead of a type error.

use serde::{Deserialize, Serialize};

/// A time value as written: `"12.5 us"`, or a bare number (which lacks its unit); or, in a
/// case a producer built, the exact value itself.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum RawTime {
    /// Text, expected to be `<decimal> <unit>`.
    Text(String),
    /// A JSON number: always an error (`missing-unit`), kept to say so precisely.
    Number(serde_json::Number),
    /// An exact value a producer (an importer) gives: written as its exact text (`"12.5
    /// us"`, the text `Text` would hold), never read from a file. An importer's case holds
    /// two times per phase: as values they cost no text to make, keep or parse again.
    #[serde(skip_deserializing)]
    Exact(crate::units::Nanos),
}

/// A phase's id where the case names it: its phase, the launches, the questions' lists. One
/// shared text (an importer names each phase five times; a clone is a count, not a copy); it
/// reads and writes as a plain JSON string.
pub type PhaseId = std::sync::Arc<str>;

/// A phase's label for people: one shared text. An importer labels many phases alike (every
/// launch of a kernel has its name), and each holds the one text (a clone is a count); it
/// reads and writes as a plain JSON string.
pub type Label = std::sync::Arc<str>;

/// The whole file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawCase {
    /// Must be `"worksheet-case"`.
    pub format: String,
    /// Format version; 1 is the only one so far.
    pub version: u32,
    /// Case name (defaults to the file stem).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Free text for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where the data came from (captures carry device, driver, command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Map<String, serde_json::Value>>,
    /// The clocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clocks: Vec<RawClock>,
    /// Bounds on the offsets between clocks (SPEC §10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_relations: Vec<RawClockRelation>,
    /// Device streams.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<RawStream>,
    /// Device events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<RawEvent>,
    /// Intervals of work.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<RawPhase>,
    /// Free-standing timestamps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<RawMark>,
    /// The host program, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub program: Vec<RawOp>,
    /// Repeated measurements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<RawSeries>,
    /// Questions asked, each with its optional expectation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<RawQuestion>,
    /// The case is expected not to load, with this error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_error: Option<RawExpectError>,
    /// Stream pairs that a trace shows were joined (stream-wait calls) without recording
    /// which streams or events: their order is unknown (`dependency-unrecorded`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrecorded_joins: Vec<RawUnrecordedJoin>,
}

/// Two streams whose order a trace leaves unknown: it shows joins (stream-wait or
/// event-record calls) but not which streams or events they join.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawUnrecordedJoin {
    /// Exactly two stream ids.
    pub streams: Vec<String>,
    /// What the trace shows, for people (`84 cudaStreamWaitEvent calls without cuda_sync rows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A clock: domain plus instance.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawClock {
    /// Name other parts of the file refer to.
    pub id: String,
    /// `host`, `device`, ...
    pub domain: String,
    /// What fixes the epoch. Required; optional here so its absence is a precise error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

/// A relation between two clocks (SPEC §10): readings `t_a` on `a` and `t_b` on `b` name the
/// same instant when `t_b − t_a ∈ [lo, hi]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawClockRelation {
    /// Name messages use (default `clock_relations[i]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Clock `a`.
    pub a: String,
    /// Clock `b`.
    pub b: String,
    /// Lower end of `offset(b) − offset(a)`, inclusive.
    pub lo: RawTime,
    /// Upper end of `offset(b) − offset(a)`, inclusive.
    pub hi: RawTime,
    /// `declared` (the user vouches for it) or `collectives` (derived from matched collectives).
    pub source: RawRelationSource,
    /// What the bound rests on, for people (which collectives gave each side).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

/// Where a clock relation comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RawRelationSource {
    /// The user vouches for it.
    Declared,
    /// Derived from matched collectives on the two clocks.
    Collectives,
}

/// A device stream.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawStream {
    /// Stream id.
    pub id: String,
    /// The clock its events and work are timed on.
    pub clock: String,
    /// The device it belongs to (a device-wide wait covers all its streams).
    pub device: String,
    /// What kind of stream it is, when the input says (`legacy-default`, `blocking`,
    /// `non-blocking`, `per-thread-default`); absent: not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<RawStreamKind>,
}

/// What kind of CUDA stream a stream is (CUDA runtime, "Stream synchronization behavior").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RawStreamKind {
    /// The legacy default (NULL) stream: its work waits for the earlier work of every
    /// blocking stream of its device.
    LegacyDefault,
    /// A stream created without `cudaStreamNonBlocking`: the legacy default stream waits for it.
    Blocking,
    /// A stream created with `cudaStreamNonBlocking`: nothing implicit waits for it.
    NonBlocking,
    /// The per-thread default stream (`--default-stream per-thread`, `_ptsz` / `_ptds` calls).
    PerThreadDefault,
}

/// Why a host call counts as a wait though it is not named one (SPEC §4, "Implicit waits";
/// CUDA runtime API, "API synchronization behavior").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RawImplicit {
    /// A synchronous copy from device to host memory (`cudaMemcpy`, `cuMemcpyDtoH`): it
    /// returns once the copy has completed; covers the copy and its stream's earlier work.
    SyncCopyDtoh,
    /// An `Async` copy from device to **pageable** host memory: it too returns once the copy
    /// has completed; covers the copy and its stream's earlier work.
    AsyncCopyDtohPageable,
    /// A synchronous copy from pageable host memory to device: a stream sync runs before the
    /// copy starts; covers its stream's earlier work, not the copy.
    PageableHtod,
}

/// A device event.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    /// Event id.
    pub id: String,
    /// The stream it is recorded in.
    pub stream: String,
    /// Created with timing enabled.
    pub timing: bool,
    /// `completed`, `pending` or `not-recorded`.
    pub state: RawEventState,
    /// Its timestamp, on the stream's clock (completed events only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<RawTime>,
}

/// An event's state when it was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RawEventState {
    /// Recorded and completed; it has a timestamp.
    Completed,
    /// Recorded, not yet completed when read.
    Pending,
    /// Never recorded.
    NotRecorded,
}

/// An interval of work.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPhase {
    /// Phase id.
    pub id: PhaseId,
    /// Label for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<Label>,
    /// Stream it ran in (its clock is the stream's): one shared text (an importer's phases
    /// of a stream hold the one id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<Label>,
    /// Clock, required when there is no stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    /// Start, inclusive.
    pub start: RawTime,
    /// End, exclusive.
    pub end: RawTime,
}

/// A free-standing timestamp.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawMark {
    /// Mark id.
    pub id: String,
    /// Its clock.
    pub clock: String,
    /// Its value.
    pub at: RawTime,
}

/// One step of the host program.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RawOp {
    /// Record an event in its stream.
    Record {
        /// The event.
        event: String,
    },
    /// Launch a phase's work in its stream.
    Launch {
        /// The phase.
        phase: PhaseId,
    },
    /// Make a stream wait for an event recorded in (usually) another stream.
    StreamWait {
        /// The stream that waits.
        stream: String,
        /// The event it waits for.
        event: String,
    },
    /// The host blocks until a target completes (boxed: the variant is the largest, and a
    /// program is mostly launches, which then cost what a launch needs).
    HostWait(Box<RawHostWait>),
    /// A host timer starts.
    TimerStart {
        /// Timer id.
        timer: String,
        /// Host clock read.
        clock: String,
        /// Reading.
        at: RawTime,
    },
    /// A host timer stops.
    TimerStop {
        /// Timer id.
        timer: String,
        /// Host clock read.
        clock: String,
        /// Reading.
        at: RawTime,
    },
}

/// A host wait (`op: host-wait`): the host blocks until a target completes.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawHostWait {
    /// Wait id.
    pub id: String,
    /// Target: an event ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// ... or a stream ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// ... or a whole device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Host clock of the return timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    /// When the wait returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<RawTime>,
    /// Set when the wait is a call that waits without being named a wait (a synchronous
    /// copy): why it counts as one. Needs a `stream` target and the `copy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit: Option<RawImplicit>,
    /// The copy's phase (launched earlier in the program, in the wait's stream), with
    /// `implicit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<String>,
}

/// Repeated samples of one measurement.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSeries {
    /// Series id.
    pub id: String,
    /// What was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Warm-up runs, in order (recorded, excluded from statistics).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup: Vec<RawTime>,
    /// Measured runs, in order.
    pub measured: Vec<RawTime>,
    /// Runs that failed (kept, counted, excluded from statistics).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<RawTime>,
}

/// A question and its expected answer, tagged by `kind`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RawQuestion {
    /// Host submission time of a timer.
    Submission {
        /// Question id.
        id: String,
        /// The timer.
        timer: String,
        /// Expected answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<RawExpectDuration>,
    },
    /// Host-observed completion of claimed work.
    HostCompletion {
        /// Question id.
        id: String,
        /// The timer.
        timer: String,
        /// Phases claimed complete at the stop (default: launched between start and stop).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        work: Option<Vec<PhaseId>>,
        /// Expected answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<RawExpectDuration>,
    },
    /// Device interval between two events.
    DeviceInterval {
        /// Question id.
        id: String,
        /// Start event.
        start: String,
        /// End event.
        end: String,
        /// Expected answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<RawExpectDuration>,
    },
    /// `to − from` for two marks.
    Elapsed {
        /// Question id.
        id: String,
        /// Earlier mark.
        from: String,
        /// Later mark.
        to: String,
        /// Expected answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<RawExpectDuration>,
    },
    /// Difference of two duration answers.
    Difference {
        /// Question id.
        id: String,
        /// Question whose value is subtracted from.
        minuend: String,
        /// Question whose value is subtracted.
        subtrahend: String,
        /// Expected answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<RawExpectDuration>,
    },
    /// `offset(b) − offset(a)` of two clocks: exact (0) on one clock, bounded through
    /// relations, unknown otherwise.
    ClockOffset {
        /// Question id.
        id: String,
        /// Clock `a`.
        a: String,
        /// Clock `b`.
        b: String,
        /// Expected answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<RawExpectDuration>,
    },
    /// Interval algebra over phases.
    Intervals {
        /// Question id.
        id: String,
        /// Phases in the set (default: all).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phases: Option<Vec<PhaseId>>,
        /// Expected results.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<RawExpectIntervals>,
    },
    /// A steady-state claim over a series.
    SteadyState {
        /// Question id.
        id: String,
        /// The series.
        series: String,
        /// Minimum warm-up runs (default 2).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_warmup: Option<u32>,
        /// Largest allowed disagreement between first and last thirds, percent (default 5).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tolerance_percent: Option<u32>,
        /// Expected answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<RawExpectDuration>,
    },
}

/// Expected verdict of a duration question.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpectDuration {
    /// `known`, `bounded` or `unknown`.
    pub verdict: String,
    /// Expected value when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<RawTime>,
    /// Expected lower end when bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<RawTime>,
    /// Expected upper end when bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<RawTime>,
    /// Expected reason code when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Expected attribution (`not-causal` for differences).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
}

/// Expected results of an interval-set question; each field is optional.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpectIntervals {
    /// `unknown` when the set mixes clocks (then `reason` is required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The reason for `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Number of intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Σ lengths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum: Option<RawTime>,
    /// Covered union.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub union: Option<RawTime>,
    /// Span, or an unknown (`{"verdict": "unknown", "reason": "empty-set"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<RawSpanExpect>,
    /// Gaps as `[start, end]` pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gaps: Option<Vec<[RawTime; 2]>>,
    /// sum − union.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<RawTime>,
    /// Regions of depth ≥ 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap_regions: Option<Vec<RawRegion>>,
    /// Maximum depth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
}

/// Expected span: a value or an unknown.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum RawSpanExpect {
    /// A value.
    Value(RawTime),
    /// An unknown.
    Unknown(RawExpectDuration),
}

/// An expected overlap region.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRegion {
    /// Start.
    pub start: RawTime,
    /// End.
    pub end: RawTime,
    /// Peak depth inside.
    pub max_depth: u32,
}

/// The error a case is expected to fail with.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpectError {
    /// Error code.
    pub code: String,
    /// JSON path of the offending field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl RawImplicit {
    /// The kebab-case word written in case files.
    pub fn word(self) -> &'static str {
        match self {
            RawImplicit::SyncCopyDtoh => "sync-copy-dtoh",
            RawImplicit::AsyncCopyDtohPageable => "async-copy-dtoh-pageable",
            RawImplicit::PageableHtod => "pageable-htod",
        }
    }
}

impl From<crate::units::Nanos> for RawTime {
    /// The exact value, written as its text, such as `"12.5 us"`.
    fn from(value: crate::units::Nanos) -> Self {
        RawTime::Exact(value)
    }
}

impl RawCase {
    /// An empty case of the current format and version, named `name`, for producers.
    pub fn new(name: impl Into<String>) -> Self {
        RawCase {
            format: super::FORMAT_NAME.to_owned(),
            version: super::FORMAT_VERSION,
            name: Some(name.into()),
            description: None,
            provenance: None,
            clocks: Vec::new(),
            clock_relations: Vec::new(),
            streams: Vec::new(),
            events: Vec::new(),
            phases: Vec::new(),
            marks: Vec::new(),
            program: Vec::new(),
            series: Vec::new(),
            questions: Vec::new(),
            expect_error: None,
            unrecorded_joins: Vec::new(),
        }
    }

    /// Pretty JSON text of the case, ending with a newline.
    pub fn to_json_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a raw case always serializes");
        text.push('\n');
        text
    }

    /// Writes [`Self::to_json_pretty`]'s text into `w` as it is serialised: the same bytes,
    /// never held whole (`worksheet import -o` streams a large case this way).
    ///
    /// # Errors
    /// What `w` fails with.
    pub fn write_json_pretty(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *w, self)?;
        w.write_all(b"\n")
    }
}
