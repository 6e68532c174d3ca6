//! Answers: every question of a [`Case`] becomes a known value or an unknown with a reason.
//!
//! The rules are SPEC §3–§5:
//! - **submission**: the host timer's stop minus start; known whenever both readings share a
//!   clock, and it makes no completion claim;
//! - **host completion**: known only when the timer's stop follows a host wait (between the
//!   timer's start and stop in the program) whose coverage includes all claimed work; a wait
//!   recorded on another clock id of the timer's clock is another host's (the processes of
//!   one nsys export) and answers nothing for it (docs/ranks.md);
//! - **device interval**: known only for two timing-enabled, completed events on one clock
//!   instance, in one stream or joined by a declared dependency;
//! - **elapsed**: two marks of one clock;
//! - **difference** of two durations: a value, but its attribution is `not-causal`;
//! - **intervals**: the algebra of [`crate::interval`] per clock; a set mixing clocks gets no
//!   single number;
//! - **steady state**: enough warm-up runs and stable measured samples (see [`crate::stats`]).
//!
//! The engine is pure: it reads a validated case and returns values.

mod implicit;
mod relate;

use serde::Serialize;

use crate::case::{Ask, Case, EventState, Op, TimerDef, WaitTarget};
use crate::clock::ClockId;
use crate::interval::{analyze, Interval, SetAnalysis};
use crate::schedule::{merge, Schedule};
use crate::units::Nanos;
use crate::verdict::{Reason, Verdict};

/// Every answer a case implies, in question order.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Case name.
    pub case: String,
    /// One answer per question.
    pub answers: Vec<Answer>,
}

impl Report {
    /// The answer to question `id`.
    pub fn answer(&self, id: &str) -> Option<&Answer> {
        self.answers.iter().find(|a| a.id == id)
    }
}

/// The answer to one question.
#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    /// Question id.
    pub id: String,
    /// Question kind (`submission`, `host-completion`, ...).
    pub kind: &'static str,
    /// The result.
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl Answer {
    /// One line: `known 140 us`, `unknown (no-wait)`, `union 100 us, ...`.
    pub fn headline(&self) -> String {
        self.outcome.headline()
    }
}

/// What a question's answer is.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// A duration verdict.
    Duration(Verdict),
    /// A difference of two durations: a value (or unknown) whose cause is never named.
    Difference {
        /// The value, or why there is none.
        #[serde(flatten)]
        verdict: Verdict,
        /// Always `not-causal`: the difference does not say what caused it.
        attribution: Reason,
    },
    /// Interval-set results per clock.
    Intervals(IntervalsAnswer),
}

impl Outcome {
    /// The duration verdict, for duration-like outcomes.
    pub fn verdict(&self) -> Option<&Verdict> {
        match self {
            Outcome::Duration(v) | Outcome::Difference { verdict: v, .. } => Some(v),
            Outcome::Intervals(_) => None,
        }
    }

    /// One-line summary.
    pub fn headline(&self) -> String {
        match self {
            Outcome::Duration(v) => v.to_string(),
            Outcome::Difference {
                verdict,
                attribution,
            } => format!("{verdict}, attribution unknown ({attribution})"),
            Outcome::Intervals(a) => a.headline(),
        }
    }
}

/// Interval algebra of one clock's share of a set.
#[derive(Clone, Debug)]
pub struct ClockSet {
    /// The clock id as declared in the case.
    pub clock_id: String,
    /// Domain and instance.
    pub clock: ClockId,
    /// The results.
    pub analysis: SetAnalysis,
}

/// Interval-set results: per clock, and whether one number across them exists.
#[derive(Clone, Debug)]
pub struct IntervalsAnswer {
    /// One group per clock, in order of first appearance.
    pub per_clock: Vec<ClockSet>,
    /// `Some(reason)` when the set mixes clocks, so no single number is reported.
    pub combined_unknown: Option<Reason>,
}

impl IntervalsAnswer {
    /// The single clock's analysis when the set lies on at most one clock. An empty set
    /// has no clock: it gets the empty analysis.
    pub fn single(&self) -> Option<SetAnalysis> {
        match self.per_clock.as_slice() {
            [] => Some(analyze(&[])),
            [one] => Some(one.analysis.clone()),
            _ => None,
        }
    }

    fn headline(&self) -> String {
        if let Some(reason) = self.combined_unknown {
            return format!(
                "unknown ({reason}): {} clocks, reported per clock",
                self.per_clock.len()
            );
        }
        let a = self.single().unwrap_or_else(|| analyze(&[]));
        let span = match a.span_ns() {
            Some(s) => wide(s),
            None => format!("unknown ({})", Reason::EmptySet),
        };
        format!(
            "count {}, sum {}, union {}, span {}, gaps {}, overlap {}, max depth {}",
            a.count,
            wide(a.sum_ns),
            wide(a.union_ns),
            span,
            a.gaps.len(),
            wide(a.overlap_ns()),
            a.max_depth
        )
    }
}

/// Formats an `i128` nanosecond amount exactly ([`crate::units::format_wide`], kept here
/// under its old name).
pub use crate::units::format_wide as wide;

impl Serialize for IntervalsAnswer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        match self.combined_unknown {
            Some(reason) => {
                map.serialize_entry("verdict", "unknown")?;
                map.serialize_entry("reason", &reason)?;
                map.serialize_entry(
                    "detail",
                    "the set mixes clocks: no single number is reported; see per_clock",
                )?;
            }
            None => {
                map.serialize_entry("verdict", "known")?;
                if let Some(a) = self.single() {
                    map.serialize_entry("results", &AnalysisJson(&a))?;
                }
            }
        }
        let per: Vec<_> = self
            .per_clock
            .iter()
            .map(|g| serde_json::json!({ "clock": g.clock_id, "domain": g.clock.domain, "instance": g.clock.instance, "results": AnalysisJson(&g.analysis) }))
            .collect();
        map.serialize_entry("per_clock", &per)?;
        map.end()
    }
}

/// JSON view of a [`SetAnalysis`], with exact values as text and in ns.
struct AnalysisJson<'a>(&'a SetAnalysis);

impl Serialize for AnalysisJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let a = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("count", &a.count)?;
        map.serialize_entry("sum", &wide(a.sum_ns))?;
        map.serialize_entry("sum_ns", &a.sum_ns)?;
        map.serialize_entry("union", &wide(a.union_ns))?;
        map.serialize_entry("union_ns", &a.union_ns)?;
        match a.span_ns() {
            Some(s) => {
                map.serialize_entry("span", &wide(s))?;
                map.serialize_entry("span_ns", &s)?;
            }
            None => map.serialize_entry(
                "span",
                &serde_json::json!({"verdict": "unknown", "reason": Reason::EmptySet.code()}),
            )?,
        }
        let gaps: Vec<[String; 2]> = a
            .gaps
            .iter()
            .map(|g| [g.start().to_string(), g.end().to_string()])
            .collect();
        map.serialize_entry("gaps", &gaps)?;
        map.serialize_entry("gap_total", &wide(a.gap_total_ns()))?;
        map.serialize_entry("gap_total_ns", &a.gap_total_ns())?;
        map.serialize_entry("overlap", &wide(a.overlap_ns()))?;
        map.serialize_entry("overlap_ns", &a.overlap_ns())?;
        let regions: Vec<_> = a
            .overlap_regions
            .iter()
            .map(|r| serde_json::json!({"start": r.span.start().to_string(), "end": r.span.end().to_string(), "max_depth": r.max_depth}))
            .collect();
        map.serialize_entry("overlap_regions", &regions)?;
        map.serialize_entry("max_depth", &a.max_depth)?;
        map.end()
    }
}

/// Answers every question of `case`.
pub fn evaluate(case: &Case) -> Report {
    let schedule = Schedule::new(case);
    let mut answers: Vec<Answer> = Vec::with_capacity(case.questions.len());
    for q in &case.questions {
        let outcome = match &q.ask {
            Ask::Submission { timer } => Outcome::Duration(submission(case, *timer)),
            Ask::HostCompletion { timer, work } => {
                Outcome::Duration(host_completion(case, &schedule, *timer, work))
            }
            Ask::DeviceInterval { start, end } => {
                Outcome::Duration(device_interval(case, &schedule, *start, *end))
            }
            Ask::Elapsed { from, to } => Outcome::Duration(elapsed(case, *from, *to)),
            Ask::ClockOffset { a, b } => Outcome::Duration(relate::clock_offset(case, *a, *b)),
            Ask::Difference {
                minuend,
                subtrahend,
            } => difference(case, &answers, *minuend, *subtrahend),
            Ask::Intervals { phases } => Outcome::Intervals(intervals(case, phases)),
            Ask::SteadyState {
                series,
                min_warmup,
                tolerance_percent,
            } => Outcome::Duration(steady(
                &case.series[*series],
                *min_warmup,
                *tolerance_percent,
            )),
        };
        answers.push(Answer {
            id: q.id.clone(),
            kind: q.ask.kind(),
            outcome,
        });
    }
    Report {
        case: case.name.clone(),
        answers,
    }
}

fn submission(case: &Case, timer: usize) -> Verdict {
    let t = &case.timers[timer];
    let (start, stop) = (case.timestamp(t.start), case.timestamp(t.stop));
    let what = || {
        format!(
            "timer `{}` starts on clock {} and stops on clock {}",
            t.id, start.clock, stop.clock
        )
    };
    match relate::between(case, t.start, t.stop, &what) {
        v @ Verdict::Unknown { .. } => v,
        base => {
            let mut v = base.with_note("host submission time: makes no completion claim");
            let waits: Vec<&str> = case.program[t.start_op..t.stop_op]
                .iter()
                .filter_map(|op| {
                    if let Op::HostWait { id, .. } = op {
                        Some(id.as_str())
                    } else {
                        None
                    }
                })
                .collect();
            if !waits.is_empty() {
                v = v.with_note(format!(
                    "the timed region also contains host wait(s) {}: it is not submission alone",
                    listing(waits.iter().map(|w| format!("`{w}`")))
                ));
            }
            v
        }
    }
}

fn host_completion(case: &Case, schedule: &Schedule, timer: usize, work: &[usize]) -> Verdict {
    let t = &case.timers[timer];
    let (start, stop) = (case.timestamp(t.start), case.timestamp(t.stop));
    let what = || {
        format!(
            "timer `{}` starts on clock {} and stops on clock {}",
            t.id, start.clock, stop.clock
        )
    };
    let base = relate::between(case, t.start, t.stop, &what);
    if base.reason().is_some() {
        return base;
    }
    let waits = match waits_before_stop(case, t) {
        Ok(waits) => waits,
        Err(no_wait) => return no_wait,
    };
    let mut covered = schedule.empty_frontier();
    for (k, _, target) in &waits {
        merge(&mut covered, &schedule.wait_coverage(case, *k, target));
    }
    let wait_names: Vec<String> = waits
        .iter()
        .map(|(k, id, target)| {
            format!(
                "`{id}` on {}{}",
                describe_target(case, target),
                implicit::suffix(case, *k)
            )
        })
        .collect();
    let wait_ops: Vec<usize> = waits.iter().map(|(k, _, _)| *k).collect();
    let coverage = WaitCoverage {
        covered: &covered,
        wait_names: &wait_names,
        wait_ops: &wait_ops,
    };
    if let Some(missing) = work_the_waits_miss(case, schedule, t, work, &coverage) {
        return missing;
    }
    let mut verdict = base.with_note(format!(
        "stop follows {} covering {}",
        listing(wait_names.iter().cloned()),
        if work.is_empty() {
            "no declared work".to_owned()
        } else {
            listing(work.iter().map(|&p| format!("`{}`", case.phases[p].id)))
        }
    ));
    for note in implicit::notes(case, &wait_ops) {
        verdict = verdict.with_note(note);
    }
    if earlier_work_pending(case, schedule, t) {
        verdict = verdict.with_note(
            "includes queue delay from earlier work submitted before the start and not waited for",
        );
    }
    verdict
}

/// The host waits between a timer's start and stop that returned before its stop, as
/// (program index, wait id, target); or the `no-wait` verdict when there is none.
///
/// A wait whose recorded return is later than the stop reading (on the same clock) did not
/// return before the stop. A wait recorded on another clock id of the same clock is another
/// host's (an nsys import: another process on the session clock): it orders nothing in this
/// timer's program, so it neither covers nor is listed (`other_host`).
fn waits_before_stop<'c>(
    case: &'c Case,
    t: &TimerDef,
) -> Result<Vec<(usize, &'c str, &'c WaitTarget)>, Verdict> {
    let stop_clock = case.clock(t.stop.0);
    let other_host = |returned: &Option<(usize, Nanos)>| match returned {
        Some((c, _)) => *c != t.stop.0 && case.clock(*c) == stop_clock,
        None => false,
    };
    let (waits, late): (Vec<_>, Vec<_>) = (t.start_op..t.stop_op)
        .filter_map(|k| match &case.program[k] {
            Op::HostWait {
                id,
                target,
                returned,
                ..
            } if !other_host(returned) => Some((k, id.as_str(), target, *returned)),
            _ => None,
        })
        .partition(|(_, _, _, returned)| match returned {
            Some((clock, at)) => case.clock(*clock) != stop_clock || *at <= t.stop.1,
            None => true,
        });
    let waits: Vec<(usize, &str, &WaitTarget)> = waits
        .into_iter()
        .map(|(k, id, target, _)| (k, id, target))
        .collect();
    if waits.is_empty() {
        let why = if late.is_empty() {
            format!(
                "timer `{}` stops with no host wait between its start and stop: a timestamp alone is not a completion marker",
                t.id
            )
        } else {
            format!(
                "the wait(s) {} returned after timer `{}` stopped, so the stop does not follow them",
                listing(late.iter().map(|(_, id, _, _)| format!("`{id}`"))),
                t.id
            )
        };
        return Err(Verdict::unknown_because(Reason::NoWait, why));
    }
    Ok(waits)
}

/// What a timer's waits before its stop cover, and how a message names them.
struct WaitCoverage<'a> {
    covered: &'a crate::schedule::Frontier,
    wait_names: &'a [String],
    wait_ops: &'a [usize],
}

/// The verdict when the waits do not cover some of the declared work (`dependency-unrecorded`
/// when an unrecorded join explains it, else `wait-misses-work`); `None` when they cover it all.
fn work_the_waits_miss(
    case: &Case,
    schedule: &Schedule,
    t: &TimerDef,
    work: &[usize],
    coverage: &WaitCoverage,
) -> Option<Verdict> {
    let launch_of = |p: usize| {
        case.program
            .iter()
            .position(|op| matches!(op, Op::Launch(q) if *q == p))
    };
    let mut never_launched = Vec::new();
    let missed: Vec<&str> = work
        .iter()
        .filter(|&&p| match launch_of(p) {
            None => {
                never_launched.push(&*case.phases[p].id);
                true
            }
            Some(k) => !(k < t.stop_op && schedule.covers(coverage.covered, k)),
        })
        .map(|&p| &*case.phases[p].id)
        .collect();
    if missed.is_empty() {
        return None;
    }
    if never_launched.is_empty() {
        if let Some(why) = unrecorded_join_explains(case, coverage.covered, work, &missed) {
            return Some(Verdict::unknown_because(Reason::DependencyUnrecorded, why));
        }
    }
    let missed_phases: Vec<usize> = work
        .iter()
        .copied()
        .filter(|&p| missed.contains(&&*case.phases[p].id))
        .collect();
    let why = implicit::why_missed(case, coverage.wait_ops, &missed_phases);
    Some(Verdict::unknown_because(
        Reason::WaitMissesWork,
        format!(
            "the wait(s) {} before the stop of `{}` do not cover {}{}{}",
            listing(coverage.wait_names.iter().cloned()),
            t.id,
            listing(missed.iter().map(|m| format!("`{m}`"))),
            if never_launched.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} never launched in the program, so no wait can be shown to cover it)",
                    listing(never_launched.iter().map(|m| format!("`{m}`")))
                )
            },
            why.iter().map(|w| format!("; {w}")).collect::<String>()
        ),
    ))
}

/// Whether work submitted before the timer's start and not yet waited for may delay the
/// measured work.
fn earlier_work_pending(case: &Case, schedule: &Schedule, t: &TimerDef) -> bool {
    let mut done_before_start = schedule.empty_frontier();
    for k in 0..t.start_op {
        if let Op::HostWait { target, .. } = &case.program[k] {
            merge(
                &mut done_before_start,
                &schedule.wait_coverage(case, k, target),
            );
        }
    }
    (0..t.start_op).any(|k| {
        matches!(case.program[k], Op::Launch(_)) && !schedule.covers(&done_before_start, k)
    })
}

/// When every missed phase is in a stream whose join with a covered stream the trace did not
/// record, the wait may well cover it: the answer is `dependency-unrecorded`, not
/// `wait-misses-work`. Returns the explanation then.
fn unrecorded_join_explains(
    case: &Case,
    covered: &crate::schedule::Frontier,
    work: &[usize],
    missed: &[&str],
) -> Option<String> {
    if case.unrecorded_joins.is_empty() {
        return None;
    }
    let covered_streams: Vec<usize> = (0..covered.len())
        .filter(|&s| covered[s].is_some())
        .collect();
    let mut pairs = Vec::new();
    for &p in work {
        let phase = &case.phases[p];
        if !missed.contains(&&*phase.id) {
            continue;
        }
        let s = phase.stream?;
        let (t, why) = covered_streams
            .iter()
            .find_map(|&t| case.unrecorded_join(s, t).map(|w| (t, w)))?;
        pairs.push(format!(
            "`{}` in `{}` (joined to `{}`: {why})",
            phase.id, case.streams[s].id, case.streams[t].id
        ));
    }
    Some(format!(
        "the waits cover streams the trace joined to the streams of {}, but the trace does not record those joins, so whether the waits cover this work is unknown",
        listing(pairs.into_iter())
    ))
}

/// How many items a message lists before it says how many more there are.
const LISTED_ITEMS: usize = 8;

/// `a, b, c` — or, past [`LISTED_ITEMS`], the first ones and `… and N more (M in all)`, so a
/// case made from a trace with thousands of waits still gets a one-line explanation.
fn listing(items: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = items.collect();
    if all.len() <= LISTED_ITEMS {
        return all.join(", ");
    }
    format!(
        "{}, … and {} more ({} in all)",
        all[..LISTED_ITEMS].join(", "),
        all.len() - LISTED_ITEMS,
        all.len()
    )
}

fn describe_target(case: &Case, target: &WaitTarget) -> String {
    match target {
        WaitTarget::Event(e) => format!("event `{}`", case.events[*e].id),
        WaitTarget::Stream(s) => format!("stream `{}`", case.streams[*s].id),
        WaitTarget::Device(d) => format!("device `{d}`"),
    }
}

fn device_interval(case: &Case, schedule: &Schedule, start: usize, end: usize) -> Verdict {
    let (a, b) = (&case.events[start], &case.events[end]);
    for ev in [a, b] {
        if !ev.timing {
            return Verdict::unknown_because(
                Reason::TimingDisabled,
                format!(
                    "event `{}` was created without timing, so no elapsed time can be read from it",
                    ev.id
                ),
            );
        }
    }
    let at = |ev: &crate::case::EventDef| match ev.state {
        EventState::Completed(t) => Ok(t),
        EventState::Pending => Err(format!("event `{}` was still pending when read", ev.id)),
        EventState::NotRecorded => Err(format!("event `{}` was never recorded", ev.id)),
        EventState::CompletedUntimed => Err(format!("event `{}` has no timestamp", ev.id)),
    };
    let (t0, t1) = match (at(a), at(b)) {
        (Ok(t0), Ok(t1)) => (t0, t1),
        (Err(why), _) | (_, Err(why)) => {
            return Verdict::unknown_because(Reason::EventIncomplete, why)
        }
    };
    let (sa, sb) = (&case.streams[a.stream], &case.streams[b.stream]);
    let (ca, cb) = (case.clock(sa.clock), case.clock(sb.clock));
    let what = || {
        format!(
            "event `{}` is on clock {ca}, event `{}` on clock {cb}",
            a.id, b.id
        )
    };
    let base = relate::between(case, (sa.clock, t0), (sb.clock, t1), &what);
    if base.reason().is_some() {
        return base;
    }
    let (Some(ra), Some(rb)) = (schedule.record_op(start), schedule.record_op(end)) else {
        return Verdict::unknown_because(
            Reason::EventIncomplete,
            "an event of the pair has no record in the program",
        );
    };
    let mut notes = Vec::new();
    if a.stream == b.stream {
        notes.push(format!(
            "device time between two positions of stream `{}`",
            sa.id
        ));
    } else if schedule.depends_on(rb, ra) {
        notes.push(format!(
            "streams `{}` and `{}` are ordered by a declared cross-stream wait",
            sa.id, sb.id
        ));
    } else if let Some(why) = case.unrecorded_join(a.stream, b.stream) {
        return Verdict::unknown_because(
            Reason::DependencyUnrecorded,
            format!(
                "event `{}` is in stream `{}` and event `{}` in stream `{}`: the trace shows joins between them but not which ({why})",
                a.id, sa.id, b.id, sb.id
            ),
        );
    } else {
        return Verdict::unknown_because(
            Reason::CrossStream,
            format!("event `{}` is in stream `{}` and event `{}` in stream `{}`, with no declared dependency between them", a.id, sa.id, b.id, sb.id),
        );
    }
    if matches!(base, Verdict::Bounded { .. }) {
        return notes.into_iter().fold(base, Verdict::with_note);
    }
    let Some(value) = t1.checked_sub(t0) else {
        return Verdict::unknown(Reason::Overflow);
    };
    if value < Nanos::ZERO {
        notes.push(
            "the end timestamp precedes the start: the capture contradicts stream order".to_owned(),
        );
    }
    Verdict::Known { value, notes }
}

fn elapsed(case: &Case, from: usize, to: usize) -> Verdict {
    let (a, b) = (&case.marks[from], &case.marks[to]);
    let what = || {
        format!(
            "mark `{}` is on clock {} and mark `{}` on clock {}",
            b.id,
            case.clock(b.clock),
            a.id,
            case.clock(a.clock)
        )
    };
    relate::between(case, (a.clock, a.at), (b.clock, b.at), &what)
}

fn difference(case: &Case, answers: &[Answer], minuend: usize, subtrahend: usize) -> Outcome {
    let get = |i: usize| {
        answers[i]
            .outcome
            .verdict()
            .cloned()
            .unwrap_or_else(|| Verdict::unknown(Reason::CrossDomain))
    };
    let (m, s) = (get(minuend), get(subtrahend));
    let verdict = match (&m, &s) {
        (Verdict::Unknown { reason, .. }, _) => Verdict::unknown_because(
            *reason,
            format!("`{}` is unknown ({reason})", case.questions[minuend].id),
        ),
        (_, Verdict::Unknown { reason, .. }) => Verdict::unknown_because(
            *reason,
            format!("`{}` is unknown ({reason})", case.questions[subtrahend].id),
        ),
        _ => relate::subtract(&m, &s)
            .unwrap_or_else(|| Verdict::unknown(Reason::Overflow))
            .with_note(format!(
                "`{}` − `{}`: a difference of two durations; it does not say what caused it",
                case.questions[minuend].id, case.questions[subtrahend].id
            )),
    };
    Outcome::Difference {
        verdict,
        attribution: Reason::NotCausal,
    }
}

fn intervals(case: &Case, phases: &[usize]) -> IntervalsAnswer {
    let mut groups: Vec<(usize, Vec<Interval>)> = Vec::new();
    for &p in phases {
        let phase = &case.phases[p];
        let clock = case.clock(phase.clock);
        match groups.iter_mut().find(|(c, _)| case.clock(*c) == clock) {
            Some((_, list)) => list.push(phase.interval),
            None => groups.push((phase.clock, vec![phase.interval])),
        }
    }
    let per_clock: Vec<ClockSet> = groups
        .iter()
        .map(|(c, list)| ClockSet {
            clock_id: case.clocks[*c].id.clone(),
            clock: case.clock(*c).clone(),
            analysis: analyze(list),
        })
        .collect();
    // Distinct groups differ in domain or instance: any domain difference wins.
    let combined_unknown = if per_clock.len() > 1 {
        let domains_differ = per_clock
            .iter()
            .any(|g| g.clock.domain != per_clock[0].clock.domain);
        Some(if domains_differ {
            Reason::CrossDomain
        } else {
            Reason::CrossInstance
        })
    } else {
        None
    };
    IntervalsAnswer {
        per_clock,
        combined_unknown,
    }
}

/// Steady-state claim over a series, by the rules of [`crate::stats::steady`].
fn steady(series: &crate::case::SeriesDef, min_warmup: u32, tolerance_percent: u32) -> Verdict {
    use crate::stats::{
        steady_state, Outcome as RunOutcome, Phase, SampleSet, SteadyStatePolicy, Tolerance,
    };
    let mut set = SampleSet::new();
    let runs = series
        .warmup
        .iter()
        .map(|&v| (v, Phase::Warmup, RunOutcome::Completed))
        .chain(
            series
                .measured
                .iter()
                .map(|&v| (v, Phase::Measured, RunOutcome::Completed)),
        )
        .chain(
            series
                .failed
                .iter()
                .map(|&v| (v, Phase::Measured, RunOutcome::Failed)),
        );
    for (value, phase, outcome) in runs {
        // Validation refuses negative samples, so recording cannot fail here.
        if set.record(value, phase, outcome).is_err() {
            return Verdict::unknown_because(
                Reason::Overflow,
                format!("series `{}` holds a negative duration", series.id),
            );
        }
    }
    let policy = SteadyStatePolicy {
        min_warmup_runs: min_warmup as usize,
        tolerance: Tolerance::percent(tolerance_percent),
        ..SteadyStatePolicy::default()
    };
    steady_state(&set, &policy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::load_case_str;

    /// Two clocks (a host timer and device events on one stream), two phases on each clock,
    /// and the questions of the mutation campaign's survivors (issue 16).
    fn survivors_case() -> Report {
        let text = r#"{"format": "worksheet-case", "version": 1,
            "clocks": [{"id": "host", "domain": "host", "instance": "boot"},
                       {"id": "gpu", "domain": "device", "instance": "ctx"}],
            "streams": [{"id": "A", "clock": "gpu", "device": "gpu0"}],
            "events": [{"id": "e0", "stream": "A", "timing": true, "state": "completed", "at": "5 us"},
                       {"id": "e1", "stream": "A", "timing": true, "state": "completed", "at": "5 us"}],
            "phases": [{"id": "k", "stream": "A", "start": "0 us", "end": "4 us"},
                       {"id": "h", "clock": "host", "start": "0 us", "end": "2 us"}],
            "program": [{"op": "timer-start", "timer": "t", "clock": "host", "at": "0 us"},
                        {"op": "record", "event": "e0"}, {"op": "record", "event": "e1"},
                        {"op": "timer-stop", "timer": "t", "clock": "host", "at": "9 us"}],
            "questions": [
                {"id": "zero", "kind": "device-interval", "start": "e0", "end": "e1"},
                {"id": "mixed", "kind": "intervals", "phases": ["k", "h"]},
                {"id": "none", "kind": "intervals", "phases": []},
                {"id": "sub", "kind": "submission", "timer": "t"},
                {"id": "mixed-d", "kind": "host-completion", "timer": "t", "work": ["k"]},
                {"id": "unknown-first", "kind": "difference", "minuend": "mixed-d", "subtrahend": "sub"},
                {"id": "unknown-second", "kind": "difference", "minuend": "sub", "subtrahend": "mixed-d"}]}"#;
        evaluate(&load_case_str(text, "engine-test.json").expect("valid test case"))
    }

    #[test]
    fn survivors_of_the_mutation_campaign_are_pinned() {
        let report = survivors_case();
        let answer = |id: &str| {
            report
                .answers
                .iter()
                .find(|a| a.id == id)
                .unwrap_or_else(|| panic!("{id}"))
        };
        // Equal event timestamps: a zero interval, with no "contradicts stream order" note.
        let zero = answer("zero").outcome.verdict().unwrap();
        assert_eq!(zero.value(), Some(Nanos::ZERO));
        assert!(
            zero.notes().iter().all(|n| !n.contains("precedes")),
            "{zero:?}"
        );
        // A set on two clocks has no single analysis and is unknown as a whole.
        let Outcome::Intervals(mixed) = &answer("mixed").outcome else {
            panic!("intervals")
        };
        assert_eq!(mixed.per_clock.len(), 2);
        assert_eq!(mixed.combined_unknown, Some(Reason::CrossDomain));
        assert!(mixed.single().is_none());
        assert!(
            mixed.headline().starts_with("unknown ("),
            "{}",
            mixed.headline()
        );
        // An empty set has the empty analysis, and a headline of its own.
        let Outcome::Intervals(none) = &answer("none").outcome else {
            panic!("intervals")
        };
        assert_eq!(none.combined_unknown, None);
        assert_eq!(none.single().map(|a| a.count), Some(0));
        assert!(!none.headline().is_empty() && none.headline() != mixed.headline());
        // A difference with an unknown side names that side's question.
        for (id, side) in [("unknown-first", "mixed-d"), ("unknown-second", "mixed-d")] {
            let v = answer(id).outcome.verdict().unwrap();
            assert!(
                matches!(v, Verdict::Unknown { detail, .. } if detail.contains(&format!("`{side}` is unknown"))),
                "{id}: {v:?}"
            );
        }
    }

    /// Work that a wait covers is known even when the trace has joins it did not record
    /// elsewhere: an unrecorded join explains only work that was missed (a mutant asking
    /// for that explanation when nothing was missed survived the campaign).
    #[test]
    fn unrecorded_joins_leave_covered_work_known() {
        let text = r#"{"format": "worksheet-case", "version": 1,
            "clocks": [{"id": "host", "domain": "host", "instance": "boot"},
                       {"id": "gpu", "domain": "device", "instance": "ctx"}],
            "streams": [{"id": "A", "clock": "gpu", "device": "gpu0"},
                        {"id": "B", "clock": "gpu", "device": "gpu0"}],
            "unrecorded_joins": [{"streams": ["A", "B"]}],
            "phases": [{"id": "work", "stream": "A", "start": "1 us", "end": "4 us"}],
            "program": [{"op": "timer-start", "timer": "t", "clock": "host", "at": "0 us"},
                        {"op": "launch", "phase": "work"},
                        {"op": "host-wait", "id": "w", "stream": "A"},
                        {"op": "timer-stop", "timer": "t", "clock": "host", "at": "9 us"}],
            "questions": [{"id": "q", "kind": "host-completion", "timer": "t", "work": ["work"]}]}"#;
        let report = evaluate(&load_case_str(text, "engine-test.json").expect("valid test case"));
        let v = report.answers[0].outcome.verdict().unwrap();
        assert_eq!(v.value(), Some(Nanos::new(9_000)), "{v:?}");
    }

    /// A set on two clocks of one domain (two boots) is unknown for `cross-instance`, not
    /// `cross-domain`.
    #[test]
    fn a_set_on_two_boots_is_cross_instance() {
        let text = r#"{"format": "worksheet-case", "version": 1,
            "clocks": [{"id": "a", "domain": "host", "instance": "boot-a"},
                       {"id": "b", "domain": "host", "instance": "boot-b"}],
            "phases": [{"id": "x", "clock": "a", "start": "0 us", "end": "2 us"},
                       {"id": "y", "clock": "b", "start": "0 us", "end": "2 us"}],
            "questions": [{"id": "q", "kind": "intervals", "phases": ["x", "y"]}]}"#;
        let report = evaluate(&load_case_str(text, "engine-test.json").expect("valid test case"));
        let Outcome::Intervals(set) = &report.answers[0].outcome else {
            panic!("intervals")
        };
        assert_eq!(set.combined_unknown, Some(Reason::CrossInstance));
    }

    /// A steady-state question's own `min_warmup` and `tolerance_percent` replace the
    /// defaults (mutants dropping either field survived the campaign).
    #[test]
    fn steady_state_questions_use_their_own_policy() {
        let text = r#"{"format": "worksheet-case", "version": 1,
            "series": [
                {"id": "drift", "warmup": ["412 us", "300 us"],
                 "measured": ["100 us", "100 us", "100 us", "105 us", "105 us", "105 us", "110 us", "110 us", "110 us"]},
                {"id": "one-warmup", "warmup": ["412 us"],
                 "measured": ["100 us", "100 us", "100 us", "100 us", "100 us", "100 us", "100 us", "100 us", "100 us"]}],
            "questions": [
                {"id": "drift-default", "kind": "steady-state", "series": "drift"},
                {"id": "drift-loose", "kind": "steady-state", "series": "drift", "tolerance_percent": 20},
                {"id": "one-default", "kind": "steady-state", "series": "one-warmup"},
                {"id": "one-allowed", "kind": "steady-state", "series": "one-warmup", "min_warmup": 1}]}"#;
        let report = evaluate(&load_case_str(text, "engine-test.json").expect("valid test case"));
        let reason = |i: usize| report.answers[i].outcome.verdict().unwrap().reason();
        assert!(
            reason(0).is_some(),
            "a 10 % drift is not steady at the default 5 %"
        );
        assert_eq!(reason(1), None, "but is within 20 %");
        assert_eq!(reason(2), Some(Reason::SingleWarmup));
        assert_eq!(
            reason(3),
            None,
            "one warm-up run is enough when the question says so"
        );
    }

    /// One host clock, one stream; `program` is the host program, `claim` the phases claimed.
    fn completion(program: &str, claim: &str) -> Verdict {
        let text = format!(
            r#"{{"format": "worksheet-case", "version": 1,
            "clocks": [{{"id": "host", "domain": "host", "instance": "boot"}}, {{"id": "gpu", "domain": "device", "instance": "ctx"}}],
            "streams": [{{"id": "A", "clock": "gpu", "device": "gpu0"}}],
            "phases": [{{"id": "early", "stream": "A", "start": "0 us", "end": "5 us"}},
                       {{"id": "work", "stream": "A", "start": "5 us", "end": "9 us"}},
                       {{"id": "host-side", "clock": "host", "start": "0 us", "end": "1 us"}}],
            "program": [{program}],
            "questions": [{{"id": "q", "kind": "host-completion", "timer": "t", "work": [{claim}]}}]}}"#
        );
        let case = load_case_str(&text, "engine-test.json").expect("valid test case");
        evaluate(&case).answers[0]
            .outcome
            .verdict()
            .cloned()
            .expect("a duration")
    }

    #[test]
    fn a_wait_that_returned_after_the_stop_is_no_wait() {
        let v = completion(
            r#"{"op": "timer-start", "timer": "t", "clock": "host", "at": "0 us"}, {"op": "launch", "phase": "work"},
               {"op": "host-wait", "id": "w", "stream": "A", "clock": "host", "at": "12 us"},
               {"op": "timer-stop", "timer": "t", "clock": "host", "at": "10 us"}"#,
            r#""work""#,
        );
        assert_eq!(v.reason(), Some(Reason::NoWait));
        assert!(
            matches!(&v, Verdict::Unknown { detail, .. } if detail.contains("returned after timer `t` stopped")),
            "{v:?}"
        );
    }

    #[test]
    fn claimed_work_never_launched_cannot_be_covered() {
        let v = completion(
            r#"{"op": "timer-start", "timer": "t", "clock": "host", "at": "0 us"}, {"op": "launch", "phase": "work"},
               {"op": "host-wait", "id": "w", "device": "gpu0"}, {"op": "timer-stop", "timer": "t", "clock": "host", "at": "10 us"}"#,
            r#""work", "host-side""#,
        );
        assert_eq!(v.reason(), Some(Reason::WaitMissesWork));
        assert!(
            matches!(&v, Verdict::Unknown { detail, .. } if detail.contains("`host-side` never launched")),
            "{v:?}"
        );
    }

    #[test]
    fn earlier_work_not_waited_for_is_noted_as_queue_delay() {
        let v = completion(
            r#"{"op": "launch", "phase": "early"}, {"op": "timer-start", "timer": "t", "clock": "host", "at": "0 us"},
               {"op": "launch", "phase": "work"}, {"op": "host-wait", "id": "w", "stream": "A"},
               {"op": "timer-stop", "timer": "t", "clock": "host", "at": "10 us"}"#,
            r#""work""#,
        );
        assert_eq!(v.value(), Some(Nanos::new(10_000)));
        assert!(
            matches!(&v, Verdict::Known { notes, .. } if notes.iter().any(|n| n.contains("queue delay"))),
            "{v:?}"
        );
    }

    #[test]
    fn a_synchronized_start_has_no_queue_delay_note() {
        let v = completion(
            r#"{"op": "launch", "phase": "early"}, {"op": "host-wait", "id": "sync", "device": "gpu0"},
               {"op": "timer-start", "timer": "t", "clock": "host", "at": "0 us"}, {"op": "launch", "phase": "work"},
               {"op": "host-wait", "id": "w", "stream": "A"}, {"op": "timer-stop", "timer": "t", "clock": "host", "at": "10 us"}"#,
            r#""work""#,
        );
        assert!(
            matches!(&v, Verdict::Known { notes, .. } if !notes.iter().any(|n| n.contains("queue delay"))),
            "{v:?}"
        );
    }
}

#[cfg(test)]
mod listing_tests {
    use super::*;

    #[test]
    fn long_lists_are_cut_with_a_count() {
        let few = listing((1..=3).map(|i| format!("w{i}")));
        assert_eq!(few, "w1, w2, w3");
        let many = listing((1..=1312).map(|i| format!("w{i}")));
        assert_eq!(
            many,
            "w1, w2, w3, w4, w5, w6, w7, w8, … and 1304 more (1312 in all)"
        );
    }
}
