//! The layout algorithm: a case → a [`Timeline`] of the drawing model ([`super::model`]).
//!
//! [`layout`] runs in steps, one function each:
//!
//! ```text
//! places      everything with a place in time, by id (and where an untimed wait is bounded)
//! views       which stretch of each clock each panel shows (parts, --focus, --window)
//! lanes       per panel: answers, timers, waits, streams, unstreamed phases, ranges, marks,
//!             covered unions; empty lanes dropped
//! anchors     where each phase bar, event tick and wait tick ended up
//! arrows      wait arrows (to what each wait covers first) and declared joins
//! ```
//!
//! Every position is in integer nanoseconds on the panel's clock. Nothing mixes clocks: a
//! wait on one clock that covers work on another is an arrow from one panel to the other,
//! which shows coverage, never a time relation.
//!
//! A wait's arrows go to the phases it covers **first** (covered by no earlier wait), so a
//! long program does not draw every earlier phase again at every wait; and since coverage
//! is a prefix of each stream, one arrow per stream goes to the last of them.

use std::collections::BTreeMap;

use crate::case::{Ask, Case, EventState, Op, PhaseDef, WaitTarget};
use crate::engine::Report;
use crate::schedule::{merge, Schedule};
use crate::units::Nanos;

use super::answers;
use super::model::{
    Anchor, Arrow, ArrowKind, Bar, BarKind, Coverage, Lane, LaneKind, Marker, Panel, Tick,
    TickKind, Timeline, MAX_MARKERS,
};
use super::view::{empty_window, split_parts, window_clock};
pub use super::view::{LayoutError, UnknownFocus, Window};

/// What to lay out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LayoutOptions {
    /// Zoom the clock of this item (phase, timer, wait, mark or event id) to the item.
    pub focus: Option<String>,
    /// Zoom one clock to `[start, end]` (ns on that clock).
    pub window: Option<Window>,
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

/// Where a wait without a return time is drawn, by its op: the next host reading after it
/// (clock, reading, what the reading is).
type WaitBounds = BTreeMap<usize, (usize, Nanos, String)>;

/// The views of each clock's panels, by clock: one per part.
type Parts = BTreeMap<usize, Vec<(i64, i64)>>;

/// The focused item's extent: (clock, start, end).
type FocusExtent = Option<(usize, i64, i64)>;

/// Lays out `case`.
///
/// # Errors
/// [`LayoutError`] when `options.focus` names nothing drawable, or `options.window` no clock.
pub fn layout(case: &Case, options: &LayoutOptions) -> Result<Timeline, LayoutError> {
    let report = crate::engine::evaluate(case);
    // Answered on the case as written; drawn with one panel per clock (not per clock id).
    let drawn = super::axes::shared(case);
    let case: &Case = &drawn;
    let work = answers::work_phases(case);
    let mut notes = Vec::new();
    let roles = timer_roles(case);
    let mut placed = places(case, &mut notes);
    let bounds = wait_bounds(case, &mut placed, &mut notes);
    let (parts, focus, origins) = views(case, options, &placed)?;

    // Panels in clock declaration order.
    let mut timeline = Timeline {
        title: case.name.clone(),
        description: case.description.clone(),
        panels: Vec::new(),
        arrows: Vec::new(),
        notes: Vec::new(),
        unplaced: answers::unplaced(case, &report),
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
        let panel = PanelView {
            case,
            report: &report,
            clock: c,
            clock_id: clock_def.id.as_str(),
            view,
            focus,
        };
        let (lanes, markers) = panel.lanes(of, &roles, &bounds, &work);
        anchor(&lanes, timeline.panels.len(), &mut anchors);
        timeline.panels.push(Panel {
            clock_id: super::axes::panel_name(case, c),
            clock: clock_def.clock.clone(),
            view,
            origin: origins.get(&c).copied().unwrap_or(0),
            lanes,
            markers,
            part: (of > 1).then_some((part + 1, of)),
        });
    }
    wait_arrows(case, &anchors, &mut timeline.arrows);
    join_arrows(case, &anchors, &mut timeline.arrows);
    timeline.notes = notes;
    Ok(timeline)
}

/// The timers questions use, by index, with the kind of bar their question makes them.
fn timer_roles(case: &Case) -> BTreeMap<usize, BarKind> {
    case.questions
        .iter()
        .filter_map(|q| match q.ask {
            Ask::Submission { timer } => Some((timer, BarKind::SubmissionTimer)),
            Ask::HostCompletion { timer, .. } => Some((timer, BarKind::CompletionTimer)),
            _ => None,
        })
        .collect()
}

/// Everything with a place in time, by id, for focus and for views: phases, timers on one
/// clock, waits with a return time, marks, timed events. What has none goes to `notes`.
fn places(case: &Case, notes: &mut Vec<String>) -> Vec<(String, Placed)> {
    let point = |clock: usize, at: Nanos| Placed {
        clock,
        start: at.as_i64(),
        end: at.as_i64(),
    };
    let mut placed: Vec<(String, Placed)> = Vec::new();
    for p in &case.phases {
        placed.push((
            p.id.to_string(),
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
            placed.push((id.clone(), point(*c, *at)));
        }
    }
    for m in &case.marks {
        placed.push((m.id.clone(), point(m.clock, m.at)));
    }
    let mut untimed_events = 0usize;
    for e in &case.events {
        match e.state {
            EventState::Completed(at) => {
                placed.push((e.id.clone(), point(case.streams[e.stream].clock, at)))
            }
            _ => untimed_events += 1,
        }
    }
    if untimed_events > 0 {
        notes.push(format!(
            "{untimed_events} event(s) carry no timestamp by design (untimed markers, pending or not recorded): they are places in the program, not times, so they have no place on an axis"
        ));
    }
    placed
}

/// A wait without a return time is placed at the next host reading after it, if any (added
/// to `placed`); one with none after it goes to `notes`.
fn wait_bounds(
    case: &Case,
    placed: &mut Vec<(String, Placed)>,
    notes: &mut Vec<String>,
) -> WaitBounds {
    let mut bounds = WaitBounds::new();
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
    bounds
}

/// Which stretches of each clock the panels show (by clock: one view per part), and the
/// focused item's extent when a focus is kept.
///
/// # Errors
/// [`LayoutError`] when the focus names nothing placed, or the window no clock.
fn views(
    case: &Case,
    options: &LayoutOptions,
    placed: &[(String, Placed)],
) -> Result<(Parts, FocusExtent, BTreeMap<usize, i64>), LayoutError> {
    let mut views: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
    for (_, p) in placed {
        let v = views.entry(p.clock).or_insert((p.start, p.end));
        v.0 = v.0.min(p.start);
        v.1 = v.1.max(p.end);
    }
    // One origin per clock, from everything drawn on it: every view counts from it.
    let origins: BTreeMap<usize, i64> = views
        .iter()
        .map(|(c, v)| (*c, super::axis::clock_origin(*v)))
        .collect();
    let pad = |(a, b): (i64, i64), part: i64| {
        let len = b.saturating_sub(a);
        let p = if len == 0 { 1_000 } else { (len / part).max(1) };
        (a.saturating_sub(p), b.saturating_add(p))
    };
    let items_on = |c: usize| -> Vec<(i64, i64)> {
        placed
            .iter()
            .filter(|(_, p)| p.clock == c)
            .map(|(_, p)| (p.start, p.end))
            .collect()
    };
    // A clock whose items form separate stretches far apart (a serial run, then a
    // concurrent one) gets one panel per stretch.
    let mut parts = Parts::new();
    for (c, _) in views.iter() {
        parts.insert(
            *c,
            split_parts(items_on(*c))
                .into_iter()
                .map(|v| pad(v, 40))
                .collect(),
        );
    }
    for v in views.values_mut() {
        *v = pad(*v, 40);
    }
    // With a focus, its clock shows what overlaps the focused item (closed interval), with
    // a margin; neighbours that merely fall into the margin are left out.
    let mut focus_extent: FocusExtent = None;
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
        let origin = origins.get(&clock).copied().unwrap_or(0);
        let (start, end) = w.on_clock(origin);
        if let Some(e) = empty_window(
            &case.clocks[clock].id,
            (start, end),
            origin,
            &items_on(clock),
        ) {
            return Err(e);
        }
        views.insert(clock, (start, end));
        parts.insert(clock, vec![(start, end)]);
        // The window replaces a focus on the same clock; the focus item need not be in it.
        if focus_extent.is_some_and(|f| f.0 == clock) {
            focus_extent = None;
        }
    }
    Ok((parts, focus_extent, origins))
}

/// One panel being laid out: a view of one clock.
struct PanelView<'a> {
    case: &'a Case,
    report: &'a Report,
    clock: usize,
    clock_id: &'a str,
    view: (i64, i64),
    focus: FocusExtent,
}

impl PanelView<'_> {
    /// `[start, end]` on `clock` clipped to this panel's view, with whether each end was
    /// clipped; `None` when it is on another clock, outside the view, or (on the focused
    /// clock) does not overlap the focused item.
    fn in_view(&self, clock: usize, start: i64, end: i64) -> Option<(i64, i64, (bool, bool))> {
        if clock != self.clock {
            return None;
        }
        let (a, b) = self.view;
        if end < a || start > b {
            return None;
        }
        if let Some((fc, fs, fe)) = self.focus {
            if fc == clock && (end < fs || start > fe) {
                return None;
            }
        }
        Some((start.max(a), end.min(b), (start < a, end > b)))
    }

    /// The panel's lanes, top to bottom (empty ones left out), and its submission markers.
    /// `of` is the number of parts its clock is drawn in.
    fn lanes(
        &self,
        of: usize,
        roles: &BTreeMap<usize, BarKind>,
        bounds: &WaitBounds,
        work: &[bool],
    ) -> (Vec<Lane>, Vec<Marker>) {
        let (case, c) = (self.case, self.clock);
        let (mut stream_cov, mut other_cov) = answers::coverages(case, self.report, c, self.view);
        if of > 1 {
            // A part shows the questions that have phases in it.
            other_cov.retain(|cov| !cov.intervals.is_empty());
            for covs in stream_cov.values_mut() {
                covs.retain(|cov| !cov.intervals.is_empty());
            }
        }
        let mut lanes: Vec<Lane> = Vec::new();
        let mut answer_lane =
            Lane::new(LaneKind::Answers, "answers", "eval: known value / unknown");
        answer_lane.rows = pack(answers::answer_bars(case, self.report, c, self.view));
        lanes.push(answer_lane);
        let (timers, markers) = self.timers_lane(roles);
        lanes.push(timers);
        lanes.push(self.waits_lane(bounds));
        self.stream_lanes(&mut stream_cov, &mut lanes);
        let mut loose = Lane::new(LaneKind::Unstreamed, "phases", "no stream declared");
        loose.rows = pack(
            case.phases
                .iter()
                .enumerate()
                .filter(|(k, p)| p.stream.is_none() && p.clock == c && work[*k])
                .filter_map(|(_, p)| self.phase_bar(p))
                .collect(),
        );
        lanes.push(loose);
        lanes.push(self.ranges_lane(work));
        lanes.push(self.marks_lane());
        lanes.extend(other_cov.into_iter().map(covered_lane));
        lanes.retain(|l| !l.is_empty());
        (lanes, markers)
    }

    /// The host timers drawn on this clock, and the submission-return markers (none when
    /// there would be more than [`MAX_MARKERS`]).
    fn timers_lane(&self, roles: &BTreeMap<usize, BarKind>) -> (Lane, Vec<Marker>) {
        let (c, clock_id) = (self.clock, self.clock_id);
        let mut timers = Lane::new(LaneKind::Timers, "host timers", "start → stop readings");
        let timer_bars: Vec<Bar> = self
            .case
            .timers
            .iter()
            .enumerate()
            .filter(|(_, t)| t.start.0 == c && t.stop.0 == c)
            .filter_map(|(i, t)| {
                let (s, e) = (t.start.1.as_i64(), t.stop.1.as_i64());
                let (vs, ve, clipped) = self.in_view(c, s.min(e), e.max(s))?;
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
        (timers, markers)
    }

    /// The host waits' returns on this clock (◆), and the readings that bound a wait
    /// without a return time (◇).
    fn waits_lane(&self, bounds: &WaitBounds) -> Lane {
        let (case, c, clock_id) = (self.case, self.clock, self.clock_id);
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
            if wc != c || self.in_view(c, at.as_i64(), at.as_i64()).is_none() {
                continue;
            }
            waits.ticks.push(Tick {
                id: id.clone(),
                kind,
                at: at.as_i64(),
                tooltip,
            });
        }
        waits
    }

    /// A phase's bar, when it is in view.
    fn phase_bar(&self, p: &PhaseDef) -> Option<Bar> {
        let (s, e) = (p.interval.start().as_i64(), p.interval.end().as_i64());
        let (vs, ve, clipped) = self.in_view(self.clock, s, e)?;
        Some(Bar {
            id: p.id.to_string(),
            label: p.label.to_string(),
            kind: BarKind::Phase,
            start: vs,
            end: ve,
            clipped,
            tooltip: format!(
                "phase {} ({}): {}",
                p.id,
                p.label,
                span_text(self.clock_id, s, e)
            ),
        })
    }

    /// One lane per stream on this clock: its phases, its completed events, and the
    /// coverage of the `intervals` questions that are exactly its phases.
    fn stream_lanes(&self, stream_cov: &mut BTreeMap<usize, Vec<Coverage>>, lanes: &mut Vec<Lane>) {
        let (case, c, clock_id) = (self.case, self.clock, self.clock_id);
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
                .filter_map(|p| self.phase_bar(p))
                .collect();
            lane.rows = pack(bars);
            lane.coverage = stream_cov.remove(&s).unwrap_or_default();
            for e in &case.events {
                if let (true, EventState::Completed(at)) = (e.stream == s, e.state) {
                    if self.in_view(c, at.as_i64(), at.as_i64()).is_some() {
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
    }

    /// Phases on this clock in no question: ranges, not work (annotations, steps).
    fn ranges_lane(&self, work: &[bool]) -> Lane {
        let mut ranges = Lane::new(
            LaneKind::Ranges,
            "ranges",
            "no stream, no question: not work",
        );
        ranges.rows = pack(
            self.case
                .phases
                .iter()
                .enumerate()
                .filter(|(k, p)| p.clock == self.clock && !work[*k])
                .filter_map(|(_, p)| {
                    self.phase_bar(p).map(|mut b| {
                        b.kind = BarKind::Range;
                        b.tooltip = format!("{} (a range, not work: in no question)", b.tooltip);
                        b
                    })
                })
                .collect(),
        );
        ranges
    }

    /// The marks on this clock.
    fn marks_lane(&self) -> Lane {
        let c = self.clock;
        let mut marks = Lane::new(LaneKind::Marks, "marks", "timestamps");
        for m in self.case.marks.iter().filter(|m| m.clock == c) {
            if self.in_view(c, m.at.as_i64(), m.at.as_i64()).is_some() {
                marks.ticks.push(Tick {
                    id: m.id.clone(),
                    kind: TickKind::Mark,
                    at: m.at.as_i64(),
                    tooltip: format!("mark {} at {} on clock `{}`", m.id, m.at, self.clock_id),
                });
            }
        }
        marks
    }
}

/// The covered union of one `intervals` question that is not one stream's phases.
fn covered_lane(cov: Coverage) -> Lane {
    let mut lane = Lane::new(
        LaneKind::Covered,
        format!("covered: {}", cov.question),
        "intervals question (eval)",
    );
    lane.coverage = vec![cov];
    lane
}

/// Records where panel `panel`'s phase bars (end and start), event ticks and wait ticks
/// ended up, for the arrows.
fn anchor(lanes: &[Lane], panel: usize, anchors: &mut BTreeMap<String, Anchor>) {
    for (li, lane) in lanes.iter().enumerate() {
        let at = |row: usize, at: i64| Anchor {
            panel,
            lane: li,
            row,
            at,
        };
        for (ri, row) in lane.rows.iter().enumerate() {
            for bar in row.iter().filter(|b| b.kind == BarKind::Phase) {
                anchors.insert(format!("phase:{}", bar.id), at(ri, bar.end));
                anchors.insert(format!("phase-start:{}", bar.id), at(ri, bar.start));
            }
        }
        for tick in lane.ticks.iter().filter(|t| t.kind == TickKind::Event) {
            anchors.insert(format!("event:{}", tick.id), at(0, tick.at));
        }
        for tick in lane
            .ticks
            .iter()
            .filter(|t| matches!(t.kind, TickKind::Wait | TickKind::WaitBound))
        {
            anchors.insert(format!("wait:{}", tick.id), at(0, tick.at));
        }
    }
}

/// Wait arrows: to the phases each wait covers first. Coverage is a prefix of each
/// stream, so one arrow per stream, to the last phase newly covered there, says it all
/// (a trace's final synchronize would otherwise draw thousands).
fn wait_arrows(case: &Case, anchors: &BTreeMap<String, Anchor>, arrows: &mut Vec<Arrow>) {
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
            arrows.push(Arrow {
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
