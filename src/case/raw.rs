//! The raw serde mirror of a case file: exactly what the JSON says, nothing checked yet.
//!
//! Every struct denies unknown fields so that a typo (`"strat"`) is an error naming the
//! field, not a silently ignored key. Values that carry time are kept as [`RawTime`] (text
//! or a bare number) so that validation can say `missing-unit` instead of a type error.

use serde::Deserialize;

/// A time value as written: `"12.5 us"`, or a bare number (which lacks its unit).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum RawTime {
    /// Text, expected to be `<decimal> <unit>`.
    Text(String),
    /// A JSON number: always an error (`missing-unit`), kept to say so precisely.
    Number(serde_json::Number),
}

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCase {
    /// Must be `"worksheet-case"`.
    pub format: String,
    /// Format version; 1 is the only one so far.
    pub version: u32,
    /// Case name (defaults to the file stem).
    #[serde(default)]
    pub name: Option<String>,
    /// Free text for people.
    #[serde(default)]
    pub description: Option<String>,
    /// Where the data came from (captures carry device, driver, command).
    #[serde(default)]
    pub provenance: Option<serde_json::Map<String, serde_json::Value>>,
    /// The clocks.
    #[serde(default)]
    pub clocks: Vec<RawClock>,
    /// Device streams.
    #[serde(default)]
    pub streams: Vec<RawStream>,
    /// Device events.
    #[serde(default)]
    pub events: Vec<RawEvent>,
    /// Intervals of work.
    #[serde(default)]
    pub phases: Vec<RawPhase>,
    /// Free-standing timestamps.
    #[serde(default)]
    pub marks: Vec<RawMark>,
    /// The host program, in order.
    #[serde(default)]
    pub program: Vec<RawOp>,
    /// Repeated measurements.
    #[serde(default)]
    pub series: Vec<RawSeries>,
    /// Questions asked, each with its optional expectation.
    #[serde(default)]
    pub questions: Vec<RawQuestion>,
    /// The case is expected not to load, with this error.
    #[serde(default)]
    pub expect_error: Option<RawExpectError>,
}

/// A clock: domain plus instance.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClock {
    /// Name other parts of the file refer to.
    pub id: String,
    /// `host`, `device`, ...
    pub domain: String,
    /// What fixes the epoch. Required; optional here so its absence is a precise error.
    #[serde(default)]
    pub instance: Option<String>,
}

/// A device stream.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStream {
    /// Stream id.
    pub id: String,
    /// The clock its events and work are timed on.
    pub clock: String,
    /// The device it belongs to (a device-wide wait covers all its streams).
    pub device: String,
}

/// A device event.
#[derive(Debug, Deserialize)]
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
    #[serde(default)]
    pub at: Option<RawTime>,
}

/// An event's state when it was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
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
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPhase {
    /// Phase id.
    pub id: String,
    /// Label for people.
    #[serde(default)]
    pub label: Option<String>,
    /// Stream it ran in (its clock is the stream's).
    #[serde(default)]
    pub stream: Option<String>,
    /// Clock, required when there is no stream.
    #[serde(default)]
    pub clock: Option<String>,
    /// Start, inclusive.
    pub start: RawTime,
    /// End, exclusive.
    pub end: RawTime,
}

/// A free-standing timestamp.
#[derive(Debug, Deserialize)]
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
#[derive(Debug, Deserialize)]
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
        phase: String,
    },
    /// Make a stream wait for an event recorded in (usually) another stream.
    StreamWait {
        /// The stream that waits.
        stream: String,
        /// The event it waits for.
        event: String,
    },
    /// The host blocks until a target completes.
    HostWait {
        /// Wait id.
        id: String,
        /// Target: an event ...
        #[serde(default)]
        event: Option<String>,
        /// ... or a stream ...
        #[serde(default)]
        stream: Option<String>,
        /// ... or a whole device.
        #[serde(default)]
        device: Option<String>,
        /// Host clock of the return timestamp.
        #[serde(default)]
        clock: Option<String>,
        /// When the wait returned.
        #[serde(default)]
        at: Option<RawTime>,
    },
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

/// Repeated samples of one measurement.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSeries {
    /// Series id.
    pub id: String,
    /// What was measured.
    #[serde(default)]
    pub label: Option<String>,
    /// Warm-up runs, in order (recorded, excluded from statistics).
    #[serde(default)]
    pub warmup: Vec<RawTime>,
    /// Measured runs, in order.
    pub measured: Vec<RawTime>,
    /// Runs that failed (kept, counted, excluded from statistics).
    #[serde(default)]
    pub failed: Vec<RawTime>,
}

/// A question and its expected answer, tagged by `kind`.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RawQuestion {
    /// Host submission time of a timer.
    Submission {
        /// Question id.
        id: String,
        /// The timer.
        timer: String,
        /// Expected answer.
        #[serde(default)]
        expect: Option<RawExpectDuration>,
    },
    /// Host-observed completion of claimed work.
    HostCompletion {
        /// Question id.
        id: String,
        /// The timer.
        timer: String,
        /// Phases claimed complete at the stop (default: launched between start and stop).
        #[serde(default)]
        work: Option<Vec<String>>,
        /// Expected answer.
        #[serde(default)]
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
        #[serde(default)]
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
        #[serde(default)]
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
        #[serde(default)]
        expect: Option<RawExpectDuration>,
    },
    /// Interval algebra over phases.
    Intervals {
        /// Question id.
        id: String,
        /// Phases in the set (default: all).
        #[serde(default)]
        phases: Option<Vec<String>>,
        /// Expected results.
        #[serde(default)]
        expect: Option<RawExpectIntervals>,
    },
    /// A steady-state claim over a series.
    SteadyState {
        /// Question id.
        id: String,
        /// The series.
        series: String,
        /// Minimum warm-up runs (default 2).
        #[serde(default)]
        min_warmup: Option<u32>,
        /// Largest allowed disagreement between first and last thirds, percent (default 5).
        #[serde(default)]
        tolerance_percent: Option<u32>,
        /// Expected answer.
        #[serde(default)]
        expect: Option<RawExpectDuration>,
    },
}

/// Expected verdict of a duration question.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpectDuration {
    /// `known` or `unknown`.
    pub verdict: String,
    /// Expected value when known.
    #[serde(default)]
    pub value: Option<RawTime>,
    /// Expected reason code when unknown.
    #[serde(default)]
    pub reason: Option<String>,
    /// Expected attribution (`not-causal` for differences).
    #[serde(default)]
    pub attribution: Option<String>,
}

/// Expected results of an interval-set question; each field is optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpectIntervals {
    /// `unknown` when the set mixes clocks (then `reason` is required).
    #[serde(default)]
    pub verdict: Option<String>,
    /// The reason for `unknown`.
    #[serde(default)]
    pub reason: Option<String>,
    /// Number of intervals.
    #[serde(default)]
    pub count: Option<u64>,
    /// Σ lengths.
    #[serde(default)]
    pub sum: Option<RawTime>,
    /// Covered union.
    #[serde(default)]
    pub union: Option<RawTime>,
    /// Span, or an unknown (`{"verdict": "unknown", "reason": "empty-set"}`).
    #[serde(default)]
    pub span: Option<RawSpanExpect>,
    /// Gaps as `[start, end]` pairs.
    #[serde(default)]
    pub gaps: Option<Vec<[RawTime; 2]>>,
    /// sum − union.
    #[serde(default)]
    pub overlap: Option<RawTime>,
    /// Regions of depth ≥ 2.
    #[serde(default)]
    pub overlap_regions: Option<Vec<RawRegion>>,
    /// Maximum depth.
    #[serde(default)]
    pub max_depth: Option<u32>,
}

/// Expected span: a value or an unknown.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawSpanExpect {
    /// A value.
    Value(RawTime),
    /// An unknown.
    Unknown(RawExpectDuration),
}

/// An expected overlap region.
#[derive(Debug, Deserialize)]
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
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpectError {
    /// Error code.
    pub code: String,
    /// JSON path of the offending field.
    #[serde(default)]
    pub path: Option<String>,
}
