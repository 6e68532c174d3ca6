//! The drawing model shared by the SVG and text renderers: a case laid out as one panel per
//! clock, lanes inside each panel, bars, ticks and wait arrows.
//!
//! ```text
//! panel: clock `host` (its own axis)
//!   lane "host timers"   [submit)  [======= complete =======)      bars, packed into rows
//!   lane "host waits"                                  ◆           wait returns (ticks)
//!   lane "stream pool"    [========= job =========)                phases, events (ticks)
//!   lane "covered"        ######################### .... ###       union, gaps, overlap
//!   axis                  0        10 ms       20 ms
//! panel: clock `gpu` (another axis: positions are not comparable across panels)
//! ```
//!
//! Every position is in integer nanoseconds on the panel's clock; the renderers only scale.
//! Nothing mixes clocks: a wait on one clock that covers work on another is an arrow from
//! one panel to the other, which shows coverage, never a time relation.
//!
//! These are the types only (a leaf of `render/`); [`super::layout`] makes them from a case.

use crate::clock::ClockId;

/// What kind of thing a bar is (the renderers colour by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarKind {
    /// A phase of work.
    Phase,
    /// A host timer used by a `submission` question.
    SubmissionTimer,
    /// A host timer used by a `host-completion` question.
    CompletionTimer,
    /// Any other host timer.
    Timer,
    /// A range that is not work (a phase without a stream in no question: an annotation,
    /// a profiler step), drawn as a bracket.
    Range,
    /// A question answered known: a bracket with its value.
    Known,
    /// A question answered unknown: drawn as unknown, with its reason code.
    Unknown,
}

/// What kind of thing a tick is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickKind {
    /// A completed, timed event.
    Event,
    /// A free-standing mark.
    Mark,
    /// A host wait's return.
    Wait,
    /// A host wait with no return time, placed at the next host reading after it in the
    /// program: it returned at or before that reading (an upper bound, not a time).
    WaitBound,
}

/// A bar: `[start, end)` on the panel's clock, possibly clipped to the view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bar {
    /// The id in the case.
    pub id: String,
    /// The label to draw (the phase label, or the id).
    pub label: String,
    /// What it is.
    pub kind: BarKind,
    /// Start in view (ns).
    pub start: i64,
    /// End in view (ns).
    pub end: i64,
    /// Whether the real start or end lies outside the view.
    pub clipped: (bool, bool),
    /// Full description for a tooltip.
    pub tooltip: String,
}

/// A tick: a point on the panel's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tick {
    /// The id in the case.
    pub id: String,
    /// What it is.
    pub kind: TickKind,
    /// When (ns).
    pub at: i64,
    /// Full description for a tooltip.
    pub tooltip: String,
}

/// Union, gaps and overlap of one `intervals` question on one clock, as the engine answered
/// it (see [`super::answers`]), drawn in the panel's view.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Coverage {
    /// The question's id.
    pub question: String,
    /// The clock's id.
    pub clock_id: String,
    /// The question's phases on this clock, in view (for the exact per-column density).
    pub intervals: Vec<(i64, i64)>,
    /// Maximal covered stretches.
    pub union: Vec<(i64, i64)>,
    /// Uncovered stretches between the first start and the last end.
    pub gaps: Vec<(i64, i64)>,
    /// Stretches of depth ≥ 2, with their peak depth.
    pub overlaps: Vec<(i64, i64, u32)>,
    /// One line from the engine's answer: `union 100 us, sum 140 us, span 100 us, …`.
    pub summary: String,
}

/// What a lane holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneKind {
    /// The engine's answers to duration questions, as brackets.
    Answers,
    /// Host timers.
    Timers,
    /// Host wait returns.
    Waits,
    /// One stream's phases and events.
    Stream,
    /// Phases declared with a clock but no stream, named by a question (work).
    Unstreamed,
    /// Ranges that are not work (annotations, steps): brackets.
    Ranges,
    /// Marks.
    Marks,
    /// The covered union of one `intervals` question on this clock.
    Covered,
}

/// One lane of a panel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    /// What it holds.
    pub kind: LaneKind,
    /// Title (`stream pool`).
    pub title: String,
    /// Second line (`device executor`).
    pub subtitle: String,
    /// Bars, packed so that no two bars of one row overlap.
    pub rows: Vec<Vec<Bar>>,
    /// Ticks.
    pub ticks: Vec<Tick>,
    /// For the covered lane, and for a stream lane whose phases are exactly an `intervals`
    /// question's (the engine's answers for them).
    pub coverage: Vec<Coverage>,
}

impl Lane {
    /// An empty lane.
    pub fn new(kind: LaneKind, title: impl Into<String>, subtitle: impl Into<String>) -> Self {
        Lane {
            kind,
            title: title.into(),
            subtitle: subtitle.into(),
            rows: Vec::new(),
            ticks: Vec::new(),
            coverage: Vec::new(),
        }
    }

    /// Every bar of the lane, row by row.
    pub fn bars(&self) -> impl Iterator<Item = &Bar> {
        self.rows.iter().flatten()
    }

    /// Number of rows it takes (at least one).
    pub fn height_rows(&self) -> usize {
        self.rows.len().max(1)
    }

    /// Whether it holds nothing to draw (no bar, tick or coverage).
    pub(super) fn is_empty(&self) -> bool {
        self.rows.iter().all(Vec::is_empty) && self.ticks.is_empty() && self.coverage.is_empty()
    }
}

/// A vertical line across a whole panel: where a submission returned, so that the work
/// still running after it is plain to see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// When (ns on the panel's clock).
    pub at: i64,
    /// `submit-3 returned`.
    pub label: String,
    /// Full description for a tooltip.
    pub tooltip: String,
}

/// The most submission-return markers drawn in one panel (more would be clutter).
pub const MAX_MARKERS: usize = 6;

/// Everything drawn against one clock's axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Panel {
    /// The clock's id in the case.
    pub clock_id: String,
    /// Its domain and instance.
    pub clock: ClockId,
    /// The view `[start, end]` in ns on this clock.
    pub view: (i64, i64),
    /// The clock's origin ([`super::axis::clock_origin`]): every view of the clock, and a
    /// relative `--window`, counts from it (0 for a clock read near its zero).
    pub origin: i64,
    /// Lanes, top to bottom.
    pub lanes: Vec<Lane>,
    /// Submission returns (at most [`MAX_MARKERS`]; none when there would be more).
    pub markers: Vec<Marker>,
    /// `(k, n)` when the clock is drawn as `n` separate stretches and this is the `k`-th
    /// (1-based): the time between stretches, empty on this clock, is left out.
    pub part: Option<(usize, usize)>,
}

/// Where an arrow starts or ends: a point in a lane row of a panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// Panel index.
    pub panel: usize,
    /// Lane index in the panel.
    pub lane: usize,
    /// Row index in the lane.
    pub row: usize,
    /// Time (ns) on that panel's clock.
    pub at: i64,
}

/// What an arrow shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrowKind {
    /// A host wait covers a phase.
    Wait,
    /// A declared join (`stream-wait`): a stream's later work waits for an event.
    Join,
}

/// A host wait and one piece of work it covers, or a declared join between two streams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrow {
    /// What it shows.
    pub kind: ArrowKind,
    /// The wait's return tick (a join: the event's tick).
    pub from: Anchor,
    /// The end of the covered phase (a join: the start of the waiting stream's next phase).
    pub to: Anchor,
    /// Whether the two ends lie on different clocks (the arrow then shows coverage only).
    pub cross_clock: bool,
    /// `wait-end covers phase-1`.
    pub tooltip: String,
}

/// A whole case, laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// The case name.
    pub title: String,
    /// The case description.
    pub description: Option<String>,
    /// One panel per clock that has something to draw, in declaration order.
    pub panels: Vec<Panel>,
    /// Wait arrows.
    pub arrows: Vec<Arrow>,
    /// What is not drawn, and why.
    pub notes: Vec<String>,
    /// The engine's answers that have no place in the panels (differences, steady-state
    /// claims, durations across clocks or on untimed events): `id (kind): headline`.
    pub unplaced: Vec<String>,
    /// The focused item, if any.
    pub focus: Option<String>,
    /// Whether a clock is zoomed (focus or window): summaries then describe whole
    /// questions, beyond the view.
    pub zoomed: bool,
}
