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
//! A wait's arrows go to the phases it covers **first** (covered by no earlier wait), so a
//! long program does not draw every earlier phase again at every wait; and since coverage
//! is a prefix of each stream, one arrow per stream goes to the last of them.

use std::collections::BTreeMap;

use crate::case::{Ask, Case, EventState, Op, WaitTarget};
use crate::clock::ClockId;
use crate::schedule::{merge, Schedule};
use crate::units::Nanos;

use super::view::{split_parts, window_clock};
pub use super::view::{LayoutError, Window};

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

    fn is_empty(&self) -> bool {
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

/// What to lay out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LayoutOptions {
    /// Zoom the clock of this item (phase, timer, wait, mark or event id) to the item.
    pub focus: Option<String>,
    /// Zoom one clock to `[start, end]` (ns on that clock).
    pub window: Option<Window>,
}

/// An id given to `focus` that the case does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("nothing in case `{case}` has id `{id}` with a position in time (phases, timers, host waits with a return time, marks, timed events)")]
pub struct UnknownFocus {
    /// The case name.
    pub case: String,
    /// The id given.
    pub id: String,
}

fn span_text(clock_id: &str, start: i64, end: i64) -> String {
    format!(
        "{} … {} on clock `{clock_id}` ({})",
        Nanos::new(start),
        Nanos::new(end),
        Nanos::new(end.saturating_sub(start))
    )
}

/// Greedy interval partitioning: each bar goes into the first row whose last bar ends at or
/// before its start. Time: O(n · rows).
fn pack(mut bars: Vec<Bar>) -> Vec<Vec<Bar>> {
    bars.sort_by_key(|b| (b.start, b.end));
    let mut rows: Vec<Vec<Bar>> = Vec::new();
    for bar in bars {
        match rows
            .iter_mut()
            .find(|r| r.last().is_some_and(|last| last.end <= bar.start))
        {
            Some(row) => row.push(bar),
            None => rows.push(vec![bar]),
        }
    }
    rows
}

/// Something with a place on one clock, before it is put in a lane.
struct Placed {
    clock: usize,
    start: i64,
    end: i64,
}

/// Lays out `case`.
///
/// # Errors
/// [`LayoutError`] when `options.focus` names nothing drawable, or `options.window` no clock.
pub fn layout(case: &Case, options: &LayoutOptions) -> Result<Timeline, LayoutError> {
    let report = crate::engine::evaluate(case);
    let work = super::answers::work_phases(case);
    let mut notes = Vec::new();
    let roles: BTreeMap<usize, BarKind> = case
        .questions
        .iter()
        .filter_map(|q| match q.ask {
            Ask::Submission { timer } => Some((timer, BarKind::SubmissionTimer)),
            Ask::HostCompletion { timer, .. } => Some((timer, BarKind::CompletionTimer)),
            _ => None,
        })
        .collect();

    // Everything with a place in time, by id, for focus and for views.
    let mut placed: Vec<(String, Placed)> = Vec::new();
    for p in &case.phases {
        placed.push((
            p.id.clone(),
            Placed {
                clock: p.clock,
                start: p.interval.start().as_i64(),
                end: p.interval.end().as_i64(),
            },
        ));
    }
    for t in &case.timers {
        if t.start.0 == t.stop.0 {
            placed.push((
                t.id.clone(),
                Placed {
                    clock: t.start.0,
                    start: t.start.1.as_i64().min(t.stop.1.as_i64()),
                    end: t.stop.1.as_i64().max(t.start.1.as_i64()),
                },
            ));
        } else {
            notes.push(format!(
                "timer `{}` starts on clock `{}` and stops on clock `{}`: no bar can be drawn",
                t.id, case.clocks[t.start.0].id, case.clocks[t.stop.0].id
            ));
        }
    }
    for op in &case.program {
        if let Op::HostWait {
            id,
            returned: Some((c, at)),
            ..
        } = op
        {
            placed.push((
                id.clone(),
                Placed {
                    clock: *c,
                    start: at.as_i64(),
                    end: at.as_i64(),
                },
            ));
        }
    }
    for m in &case.marks {
        placed.push((
            m.id.clone(),
            Placed {
                clock: m.clock,
                start: m.at.as_i64(),
                end: m.at.as_i64(),
            },
        ));
    }
    let mut untimed_events = 0usize;
    for e in &case.events {
        match e.state {
            EventState::Completed(at) => placed.push((
                e.id.clone(),
                Placed {
                    clock: case.streams[e.stream].clock,
                    start: at.as_i64(),
                    end: at.as_i64(),
                },
            )),
            _ => untimed_events += 1,
        }
    }
    if untimed_events > 0 {
        notes.push(format!(
            "{untimed_events} event(s) carry no timestamp by design (untimed markers, pending or not recorded): they are places in the program, not times, so they have no place on an axis"
        ));
    }
    // A wait without a return time is placed at the next host reading after it, if any.
    let mut bounds: BTreeMap<usize, (usize, Nanos, String)> = BTreeMap::new();
    for (k, op) in case.program.iter().enumerate() {
        if let Op::HostWait {
            id, returned: None, ..
        } = op
        {
            let next = case.program[k + 1..].iter().find_map(|later| match later {
                Op::TimerStart(t) => Some((
                    case.timers[*t].start,
                    format!("start of timer `{}`", case.timers[*t].id),
                )),
                Op::TimerStop(t) => Some((
                    case.timers[*t].stop,
                    format!("stop of timer `{}`", case.timers[*t].id),
                )),
                Op::HostWait {
                    id: other,
                    returned: Some(r),
                    ..
                } => Some((*r, format!("return of host wait `{other}`"))),
                _ => None,
            });
            match next {
                Some(((c, at), what)) => {
                    placed.push((
                        id.clone(),
                        Placed {
                            clock: c,
                            start: at.as_i64(),
                            end: at.as_i64(),
                        },
                    ));
                    bounds.insert(k, (c, at, what));
                }
                None => notes.push(format!(
                    "host wait `{id}` has no return time and no host reading follows it: neither it nor its arrows are drawn"
                )),
            }
        }
    }

    // Views per clock.
    let mut views: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
    for (_, p) in &placed {
        let v = views.entry(p.clock).or_insert((p.start, p.end));
        v.0 = v.0.min(p.start);
        v.1 = v.1.max(p.end);
    }
    let pad = |(a, b): (i64, i64), part: i64| {
        let len = b.saturating_sub(a);
        let p = if len == 0 { 1_000 } else { (len / part).max(1) };
        (a.saturating_sub(p), b.saturating_add(p))
    };
    // A clock whose items form separate stretches far apart (a serial run, then a
    // concurrent one) gets one panel per stretch.
    let mut parts: BTreeMap<usize, Vec<(i64, i64)>> = BTreeMap::new();
    for (c, _) in views.iter() {
        let items: Vec<(i64, i64)> = placed
            .iter()
            .filter(|(_, p)| p.clock == *c)
            .map(|(_, p)| (p.start, p.end))
            .collect();
        parts.insert(
            *c,
            split_parts(items).into_iter().map(|v| pad(v, 40)).collect(),
        );
    }
    for v in views.values_mut() {
        *v = pad(*v, 40);
    }
    // With a focus, its clock shows what overlaps the focused item (closed interval), with
    // a margin; neighbours that merely fall into the margin are left out.
    let mut focus_extent: Option<(usize, i64, i64)> = None;
    if let Some(focus) = &options.focus {
        let (_, p) = placed
            .iter()
            .find(|(id, _)| id == focus)
            .ok_or_else(|| UnknownFocus {
                case: case.name.clone(),
                id: focus.clone(),
            })?;
        views.insert(p.clock, pad((p.start, p.end), 16));
        parts.insert(p.clock, vec![pad((p.start, p.end), 16)]);
        focus_extent = Some((p.clock, p.start, p.end));
    }
    if let Some(w) = &options.window {
        let clock = window_clock(case, w, focus_extent.map(|f| f.0), &views)?;
        views.insert(clock, (w.start, w.end));
        parts.insert(clock, vec![(w.start, w.end)]);
        // The window replaces a focus on the same clock; the focus item need not be in it.
        if focus_extent.is_some_and(|f| f.0 == clock) {
            focus_extent = None;
        }
    }
    let in_view_of = |view: (i64, i64),
                      clock: usize,
                      start: i64,
                      end: i64|
     -> Option<(i64, i64, (bool, bool))> {
        let (a, b) = view;
        if end < a || start > b {
            return None;
        }
        if let Some((fc, fs, fe)) = focus_extent {
            if fc == clock && (end < fs || start > fe) {
                return None;
            }
        }
        Some((start.max(a), end.min(b), (start < a, end > b)))
    };

    // Panels in clock declaration order.
    let mut timeline = Timeline {
        title: case.name.clone(),
        description: case.description.clone(),
        panels: Vec::new(),
        arrows: Vec::new(),
        notes: Vec::new(),
        unplaced: super::answers::unplaced(case, &report),
        focus: options.focus.clone(),
        zoomed: options.focus.is_some() || options.window.is_some(),
    };
    // Where each phase bar and wait tick ended up: id → anchor.
    let mut anchors: BTreeMap<String, Anchor> = BTreeMap::new();
    let all_parts: Vec<(usize, usize, usize, (i64, i64))> = case
        .clocks
        .iter()
        .enumerate()
        .flat_map(|(c, _)| {
            let mine = parts.get(&c).cloned().unwrap_or_default();
            let n = mine.len();
            mine.into_iter().enumerate().map(move |(k, v)| (c, k, n, v))
        })
        .collect();
    for (c, part, of, view) in all_parts {
        let clock_def = &case.clocks[c];
        let in_view = |clock: usize, start: i64, end: i64| {
            if clock == c {
                in_view_of(view, clock, start, end)
            } else {
                None
            }
        };
        let clock_id = clock_def.id.as_str();
        let mut lanes: Vec<Lane> = Vec::new();
        let (mut stream_cov, mut other_cov) = super::answers::coverages(case, &report, c, view);
        if of > 1 {
            // A part shows the questions that have phases in it.
            other_cov.retain(|cov| !cov.intervals.is_empty());
            for covs in stream_cov.values_mut() {
                covs.retain(|cov| !cov.intervals.is_empty());
            }
        }

        let mut answers = Lane::new(LaneKind::Answers, "answers", "eval: known value / unknown");
        answers.rows = pack(super::answers::answer_bars(case, &report, c, view));
        lanes.push(answers);

        let mut timers = Lane::new(LaneKind::Timers, "host timers", "start → stop readings");
        let timer_bars: Vec<Bar> = case
            .timers
            .iter()
            .enumerate()
            .filter(|(_, t)| t.start.0 == c && t.stop.0 == c)
            .filter_map(|(i, t)| {
                let (s, e) = (t.start.1.as_i64(), t.stop.1.as_i64());
                let (vs, ve, clipped) = in_view(c, s.min(e), e.max(s))?;
                let kind = roles.get(&i).copied().unwrap_or(BarKind::Timer);
                let role = match kind {
                    BarKind::SubmissionTimer => " (submission question)",
                    BarKind::CompletionTimer => " (host-completion question)",
                    _ => "",
                };
                Some(Bar {
                    id: t.id.clone(),
                    label: t.id.clone(),
                    kind,
                    start: vs,
                    end: ve,
                    clipped,
                    tooltip: format!("timer {}{role}: {}", t.id, span_text(clock_id, s, e)),
                })
            })
            .collect();
        let mut markers: Vec<Marker> = timer_bars
            .iter()
            .filter(|b| b.kind == BarKind::SubmissionTimer && !b.clipped.1)
            .map(|b| Marker {
                at: b.end,
                label: format!("{} returned", b.id),
                tooltip: format!(
                    "timer {} stopped at {}: the submission returned here; work drawn to the right of this line ran after it",
                    b.id,
                    Nanos::new(b.end)
                ),
            })
            .collect();
        if markers.len() > MAX_MARKERS {
            markers.clear();
        }
        timers.rows = pack(timer_bars);
        lanes.push(timers);

        let mut waits = Lane::new(LaneKind::Waits, "host waits", "◆ returned, ◇ returned by");
        for (k, op) in case.program.iter().enumerate() {
            let Op::HostWait {
                id,
                target,
                returned,
                ..
            } = op
            else {
                continue;
            };
            let what = match target {
                WaitTarget::Event(e) => format!("event `{}`", case.events[*e].id),
                WaitTarget::Stream(s) => format!("stream `{}`", case.streams[*s].id),
                WaitTarget::Device(d) => format!("device `{d}`"),
            };
            let (wc, at, kind, tooltip) = match (returned, bounds.get(&k)) {
                (Some((wc, at)), _) => (
                    *wc,
                    *at,
                    TickKind::Wait,
                    format!("host wait {id} on {what} returned at {at} on clock `{clock_id}`"),
                ),
                (None, Some((wc, at, next))) => (
                    *wc,
                    *at,
                    TickKind::WaitBound,
                    format!(
                        "host wait {id} on {what}: no return time recorded; it returned at or before {at} on clock `{clock_id}` (the {next}, the next host reading)"
                    ),
                ),
                (None, None) => continue,
            };
            if wc != c || in_view(c, at.as_i64(), at.as_i64()).is_none() {
                continue;
            }
            waits.ticks.push(Tick {
                id: id.clone(),
                kind,
                at: at.as_i64(),
                tooltip,
            });
        }
        lanes.push(waits);

        let phase_bar = |p: &crate::case::PhaseDef| -> Option<Bar> {
            let (s, e) = (p.interval.start().as_i64(), p.interval.end().as_i64());
            let (vs, ve, clipped) = in_view(c, s, e)?;
            Some(Bar {
                id: p.id.clone(),
                label: p.label.clone(),
                kind: BarKind::Phase,
                start: vs,
                end: ve,
                clipped,
                tooltip: format!(
                    "phase {} ({}): {}",
                    p.id,
                    p.label,
                    span_text(clock_id, s, e)
                ),
            })
        };
        for (s, stream) in case.streams.iter().enumerate() {
            if stream.clock != c {
                continue;
            }
            let mut lane = Lane::new(
                LaneKind::Stream,
                format!("stream {}", stream.id),
                format!("device {}", stream.device),
            );
            let bars: Vec<Bar> = case
                .phases
                .iter()
                .filter(|p| p.stream == Some(s))
                .filter_map(phase_bar)
                .collect();
            lane.rows = pack(bars);
            lane.coverage = stream_cov.remove(&s).unwrap_or_default();
            for e in &case.events {
                if let (true, EventState::Completed(at)) = (e.stream == s, e.state) {
                    if in_view(c, at.as_i64(), at.as_i64()).is_some() {
                        lane.ticks.push(Tick {
                            id: e.id.clone(),
                            kind: TickKind::Event,
                            at: at.as_i64(),
                            tooltip: format!(
                                "event {} in stream {}: completed at {at} on clock `{clock_id}`{}",
                                e.id,
                                stream.id,
                                if e.timing { "" } else { " (timing disabled)" }
                            ),
                        });
                    }
                }
            }
            lanes.push(lane);
        }
        let mut loose = Lane::new(LaneKind::Unstreamed, "phases", "no stream declared");
        loose.rows = pack(
            case.phases
                .iter()
                .enumerate()
                .filter(|(k, p)| p.stream.is_none() && p.clock == c && work[*k])
                .filter_map(|(_, p)| phase_bar(p))
                .collect(),
        );
        lanes.push(loose);
        let mut ranges = Lane::new(
            LaneKind::Ranges,
            "ranges",
            "no stream, no question: not work",
        );
        ranges.rows = pack(
            case.phases
                .iter()
                .enumerate()
                .filter(|(k, p)| p.clock == c && !work[*k])
                .filter_map(|(_, p)| {
                    phase_bar(p).map(|mut b| {
                        b.kind = BarKind::Range;
                        b.tooltip = format!("{} (a range, not work: in no question)", b.tooltip);
                        b
                    })
                })
                .collect(),
        );
        lanes.push(ranges);
        let mut marks = Lane::new(LaneKind::Marks, "marks", "timestamps");
        for m in case.marks.iter().filter(|m| m.clock == c) {
            if in_view(c, m.at.as_i64(), m.at.as_i64()).is_some() {
                marks.ticks.push(Tick {
                    id: m.id.clone(),
                    kind: TickKind::Mark,
                    at: m.at.as_i64(),
                    tooltip: format!("mark {} at {} on clock `{clock_id}`", m.id, m.at),
                });
            }
        }
        lanes.push(marks);

        for cov in other_cov {
            let mut lane = Lane::new(
                LaneKind::Covered,
                format!("covered: {}", cov.question),
                "intervals question (eval)",
            );
            lane.coverage = vec![cov];
            lanes.push(lane);
        }
        lanes.retain(|l| !l.is_empty());
        let panel_index = timeline.panels.len();
        for (li, lane) in lanes.iter().enumerate() {
            for (ri, row) in lane.rows.iter().enumerate() {
                for bar in row.iter().filter(|b| b.kind == BarKind::Phase) {
                    anchors.insert(
                        format!("phase:{}", bar.id),
                        Anchor {
                            panel: panel_index,
                            lane: li,
                            row: ri,
                            at: bar.end,
                        },
                    );
                    anchors.insert(
                        format!("phase-start:{}", bar.id),
                        Anchor {
                            panel: panel_index,
                            lane: li,
                            row: ri,
                            at: bar.start,
                        },
                    );
                }
            }
            for tick in lane.ticks.iter().filter(|t| t.kind == TickKind::Event) {
                anchors.insert(
                    format!("event:{}", tick.id),
                    Anchor {
                        panel: panel_index,
                        lane: li,
                        row: 0,
                        at: tick.at,
                    },
                );
            }
            for tick in lane
                .ticks
                .iter()
                .filter(|t| matches!(t.kind, TickKind::Wait | TickKind::WaitBound))
            {
                anchors.insert(
                    format!("wait:{}", tick.id),
                    Anchor {
                        panel: panel_index,
                        lane: li,
                        row: 0,
                        at: tick.at,
                    },
                );
            }
        }
        timeline.panels.push(Panel {
            clock_id: clock_id.to_owned(),
            clock: clock_def.clock.clone(),
            view,
            lanes,
            markers,
            part: (of > 1).then_some((part + 1, of)),
        });
    }

    // Wait arrows: to the phases each wait covers first. Coverage is a prefix of each
    // stream, so one arrow per stream, to the last phase newly covered there, says it all
    // (a trace's final synchronize would otherwise draw thousands).
    let schedule = Schedule::new(case);
    let mut covered = schedule.empty_frontier();
    for (k, op) in case.program.iter().enumerate() {
        let Op::HostWait { id, target, .. } = op else {
            continue;
        };
        let coverage = schedule.wait_coverage(case, k, target);
        // Per stream: the last newly covered phase and how many are newly covered.
        let mut newest: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
        for (j, launch) in case.program[..k].iter().enumerate() {
            let Op::Launch(p) = launch else { continue };
            if !schedule.covers(&coverage, j) || schedule.covers(&covered, j) {
                continue;
            }
            let Some((stream, _)) = schedule.position(j) else {
                continue;
            };
            let entry = newest.entry(stream).or_insert((*p, 0));
            *entry = (*p, entry.1 + 1);
        }
        for (stream, (p, newly)) in newest {
            let phase = &case.phases[p];
            let (Some(&from), Some(&to)) = (
                anchors.get(&format!("wait:{id}")),
                anchors.get(&format!("phase:{}", phase.id)),
            ) else {
                continue;
            };
            let cross_clock = from.panel != to.panel;
            let earlier = match newly {
                1 => String::new(),
                n => format!(
                    " and the {} phase(s) before it in stream {}",
                    n - 1,
                    case.streams[stream].id
                ),
            };
            timeline.arrows.push(Arrow {
                kind: ArrowKind::Wait,
                from,
                to,
                cross_clock,
                tooltip: format!(
                    "host wait {id} covers phase {}{earlier}{}",
                    phase.id,
                    if cross_clock {
                        " (on another clock: the arrow shows coverage, not a time relation)"
                    } else {
                        ""
                    }
                ),
            });
        }
        merge(&mut covered, &coverage);
    }
    join_arrows(case, &anchors, &mut timeline.arrows);
    timeline.notes = notes;
    Ok(timeline)
}

/// Declared joins: for each `stream-wait`, an arrow from the event's tick to the start of
/// the waiting stream's next phase (the work the join holds back).
fn join_arrows(case: &Case, anchors: &BTreeMap<String, Anchor>, arrows: &mut Vec<Arrow>) {
    for (k, op) in case.program.iter().enumerate() {
        let Op::StreamWait { stream, event } = op else {
            continue;
        };
        // The first thing the waiting stream does after the join: a phase or an event.
        let next = case.program[k + 1..].iter().find_map(|later| match later {
            Op::Launch(p) if case.phases[*p].stream == Some(*stream) => Some((
                format!("phase-start:{}", case.phases[*p].id),
                format!("phase {}", case.phases[*p].id),
            )),
            Op::Record(e) if case.events[*e].stream == *stream => Some((
                format!("event:{}", case.events[*e].id),
                format!("event {}", case.events[*e].id),
            )),
            _ => None,
        });
        let ev = &case.events[*event];
        let (Some((key, what)), Some(&from)) = (next, anchors.get(&format!("event:{}", ev.id)))
        else {
            continue;
        };
        let Some(&to) = anchors.get(&key) else {
            continue;
        };
        arrows.push(Arrow {
            kind: ArrowKind::Join,
            from,
            to,
            cross_clock: from.panel != to.panel,
            tooltip: format!(
                "declared join: stream {} waits for event {} (stream {}) before its {what}",
                case.streams[*stream].id, ev.id, case.streams[ev.stream].id,
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(path: &str) -> Case {
        crate::case::load_case_file(std::path::Path::new(path)).unwrap()
    }

    #[test]
    fn three_boundaries_has_a_panel_per_clock_and_a_wait_arrow_per_phase() {
        let t = layout(
            &case("fixtures/cases/three-boundaries.json"),
            &LayoutOptions::default(),
        )
        .unwrap();
        assert_eq!(t.panels.len(), 2);
        assert_eq!(t.panels[0].clock_id, "host");
        assert_eq!(t.panels[1].clock_id, "gpu");
        // host: answers (submission and completion), timers (2 rows: they overlap), waits
        let host: Vec<_> = t.panels[0].lanes.iter().map(|l| l.kind).collect();
        assert_eq!(
            host,
            vec![LaneKind::Answers, LaneKind::Timers, LaneKind::Waits]
        );
        assert_eq!(t.panels[0].lanes[1].rows.len(), 2);
        // gpu: the device interval's bracket, streams A and B, the intervals question
        let gpu: Vec<_> = t.panels[1].lanes.iter().map(|l| l.title.as_str()).collect();
        assert_eq!(
            gpu,
            vec!["answers", "stream A", "stream B", "covered: phases"]
        );
        let cov = &t.panels[1].lanes[3].coverage[0];
        assert_eq!(cov.overlaps, vec![(7_040_000, 7_080_000, 2)]);
        assert!(cov.gaps.is_empty());
        // wait-end covers phase-1 and phase-2, both on the other clock
        let waits: Vec<&Arrow> = t
            .arrows
            .iter()
            .filter(|a| a.kind == ArrowKind::Wait)
            .collect();
        assert_eq!(waits.len(), 2);
        assert!(waits.iter().all(|a| a.cross_clock));
        // the declared join: stream A waits on phase-2-done (stream B)
        let joins: Vec<&Arrow> = t
            .arrows
            .iter()
            .filter(|a| a.kind == ArrowKind::Join)
            .collect();
        assert_eq!(joins.len(), 1, "{:?}", t.arrows);
        assert!(
            joins[0].tooltip.contains("phase-2-done"),
            "{}",
            joins[0].tooltip
        );
    }

    ///  stream A:  [p0)[p1)[p2)       one device-wide wait after all three
    ///  host:                  wait   → one arrow, to p2, saying it covers p0 and p1 too
    #[test]
    fn a_wait_covering_a_run_of_one_stream_draws_one_arrow_to_its_last_phase() {
        let text = r#"{"format": "worksheet-case", "version": 1,
            "clocks": [{"id": "host", "domain": "host", "instance": "boot"}],
            "streams": [{"id": "A", "clock": "host", "device": "pool"}],
            "phases": [{"id": "p0", "stream": "A", "start": "0 us", "end": "1 us"},
                       {"id": "p1", "stream": "A", "start": "1 us", "end": "2 us"},
                       {"id": "p2", "stream": "A", "start": "2 us", "end": "3 us"}],
            "program": [{"op": "launch", "phase": "p0"}, {"op": "launch", "phase": "p1"},
                        {"op": "launch", "phase": "p2"},
                        {"op": "host-wait", "id": "w", "device": "pool", "clock": "host", "at": "4 us"}]}"#;
        let case = crate::case::load_case_str(text, "run.json").unwrap();
        let t = layout(&case, &LayoutOptions::default()).unwrap();
        assert_eq!(t.arrows.len(), 1);
        assert_eq!(
            t.arrows[0].tooltip,
            "host wait w covers phase p2 and the 2 phase(s) before it in stream A"
        );
    }

    #[test]
    fn the_lab_streams_capture_gives_serial_and_concurrent_their_own_panels() {
        let t = layout(
            &case("fixtures/captures/h200-lab-streams.json"),
            &LayoutOptions::default(),
        )
        .unwrap();
        let gpu: Vec<_> = t.panels.iter().filter(|p| p.clock_id == "gpu").collect();
        assert_eq!(gpu.len(), 2);
        assert_eq!(gpu[0].part, Some((1, 2)));
        let titles =
            |p: &Panel| -> Vec<String> { p.lanes.iter().map(|l| l.title.clone()).collect() };
        assert!(
            titles(gpu[0]).contains(&"covered: serial-all".to_owned()),
            "{:?}",
            titles(gpu[0])
        );
        assert!(
            titles(gpu[1]).contains(&"covered: concurrent-all".to_owned()),
            "{:?}",
            titles(gpu[1])
        );
    }

    #[test]
    fn touching_bars_share_a_row_overlapping_ones_do_not() {
        let bar = |id: &str, s, e| Bar {
            id: id.into(),
            label: id.into(),
            kind: BarKind::Phase,
            start: s,
            end: e,
            clipped: (false, false),
            tooltip: String::new(),
        };
        //  [a  )[b  )
        //     [c      )
        let rows = pack(vec![bar("a", 0, 10), bar("b", 10, 20), bar("c", 5, 25)]);
        let ids: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.iter().map(|b| b.id.as_str()).collect())
            .collect();
        assert_eq!(ids, vec![vec!["a", "b"], vec!["c"]]);
    }

    #[test]
    fn focus_zooms_one_clock_and_unknown_focus_is_an_error() {
        let c = case("fixtures/cases/three-boundaries.json");
        let t = layout(
            &c,
            &LayoutOptions {
                focus: Some("phase-2".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let (a, b) = t.panels[1].view;
        assert!(a > 7_000_000 && b < 7_110_000, "{a} {b}");
        assert!(layout(
            &c,
            &LayoutOptions {
                focus: Some("nope".into()),
                ..Default::default()
            }
        )
        .is_err());
    }
}
