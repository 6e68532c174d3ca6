//! The engine's answers, placed on the timeline: one source of truth for every number a
//! picture prints.
//!
//! - A duration question with a place on one clock (a submission or host-completion timer,
//!   a device interval between two timed events, an elapsed time between two marks) becomes
//!   a bracket in the panel's **answers** lane: a known answer shows its value, an unknown
//!   one is drawn as unknown with its reason code.
//! - An `intervals` question becomes coverage (union, gaps, overlap regions) per clock,
//!   taken from the engine's own [`SetAnalysis`]; when its phases on a clock are exactly one
//!   stream's, the coverage is shown in that stream's lane instead of a lane of its own.
//! - Everything else (differences, steady-state claims, answers with no single place) is
//!   listed under the picture with the engine's headline.
//!
//! Nothing here computes a union, sum, overlap or span: they are read from
//! [`crate::engine::evaluate`].

use std::collections::{BTreeMap, BTreeSet};

use crate::case::{Ask, Case, EventState};
use crate::engine::{wide, Outcome, Report};
use crate::interval::SetAnalysis;
use crate::units::Nanos;
use crate::verdict::Verdict;

use super::model::{Bar, BarKind, Coverage};

/// The summary line of one clock's share of an `intervals` question, from the engine's
/// analysis: `union 100 us, sum 140 us, span 100 us, overlap 40 us, 0 gap(s), max depth 2`.
pub fn summary(a: &SetAnalysis) -> String {
    format!(
        "union {}, sum {}, span {}, overlap {}, {} gap(s), max depth {}",
        wide(a.union_ns),
        wide(a.sum_ns),
        a.span_ns()
            .map(wide)
            .unwrap_or_else(|| "unknown (empty-set)".into()),
        wide(a.overlap_ns()),
        a.gaps.len(),
        a.max_depth
    )
}

/// Phases that are work: in a stream, or named by some question. A phase without a stream
/// in no question (a `gpu_user_annotation` range, a profiler step) is a range, not work.
pub fn work_phases(case: &Case) -> Vec<bool> {
    let mut work: Vec<bool> = case.phases.iter().map(|p| p.stream.is_some()).collect();
    for q in &case.questions {
        let named: &[usize] = match &q.ask {
            Ask::HostCompletion { work, .. } => work,
            Ask::Intervals { phases } => phases,
            _ => &[],
        };
        for &p in named {
            work[p] = true;
        }
    }
    work
}

fn clip(view: (i64, i64), s: i64, e: i64) -> Option<(i64, i64)> {
    (e >= view.0 && s <= view.1).then(|| (s.max(view.0), e.min(view.1)))
}

/// The coverage of question `id` on one clock, from the engine's analysis, drawn in `view`.
fn coverage(
    id: &str,
    clock_id: &str,
    a: &SetAnalysis,
    intervals: Vec<(i64, i64)>,
    view: (i64, i64),
) -> Coverage {
    let gaps: Vec<(i64, i64)> = a
        .gaps
        .iter()
        .filter_map(|g| clip(view, g.start().as_i64(), g.end().as_i64()))
        .collect();
    let mut union = Vec::new();
    if let Some(extent) = a.extent {
        let mut at = extent.start().as_i64();
        for g in &a.gaps {
            union.push((at, g.start().as_i64()));
            at = g.end().as_i64();
        }
        union.push((at, extent.end().as_i64()));
    }
    let union = union
        .into_iter()
        .filter_map(|(s, e)| clip(view, s, e))
        .collect();
    Coverage {
        question: id.to_owned(),
        clock_id: clock_id.to_owned(),
        union,
        gaps,
        overlaps: a
            .overlap_regions
            .iter()
            .filter_map(|r| {
                let (s, e) = clip(view, r.span.start().as_i64(), r.span.end().as_i64())?;
                Some((s, e, r.max_depth))
            })
            .collect(),
        intervals: intervals
            .into_iter()
            .filter_map(|(s, e)| clip(view, s, e))
            .collect(),
        summary: summary(a),
    }
}

/// Coverage of every `intervals` question on clock `c`: those whose phases on `c` are
/// exactly one stream's (by stream index), and the others.
pub fn coverages(
    case: &Case,
    report: &Report,
    c: usize,
    view: (i64, i64),
) -> (BTreeMap<usize, Vec<Coverage>>, Vec<Coverage>) {
    let mut by_stream: BTreeMap<usize, Vec<Coverage>> = BTreeMap::new();
    let mut others = Vec::new();
    for (q, answer) in case.questions.iter().zip(&report.answers) {
        let (Ask::Intervals { phases }, Outcome::Intervals(ia)) = (&q.ask, &answer.outcome) else {
            continue;
        };
        // By clock (domain and instance), not by id: ids of one clock share a panel.
        let Some(set) = ia.per_clock.iter().find(|g| g.clock == *case.clock(c)) else {
            continue;
        };
        let mine: BTreeSet<usize> = phases
            .iter()
            .copied()
            .filter(|&p| case.phases[p].clock == c)
            .collect();
        let intervals: Vec<(i64, i64)> = mine
            .iter()
            .map(|&p| {
                let iv = case.phases[p].interval;
                (iv.start().as_i64(), iv.end().as_i64())
            })
            .collect();
        let cov = coverage(&q.id, &set.clock_id, &set.analysis, intervals, view);
        let streams: BTreeSet<Option<usize>> =
            mine.iter().map(|&p| case.phases[p].stream).collect();
        let single = match streams.iter().collect::<Vec<_>>().as_slice() {
            [Some(s)] => {
                let all: BTreeSet<usize> = (0..case.phases.len())
                    .filter(|&p| case.phases[p].stream == Some(*s))
                    .collect();
                (all == mine).then_some(*s)
            }
            _ => None,
        };
        match single {
            Some(s) => by_stream.entry(s).or_default().push(cov),
            None => others.push(cov),
        }
    }
    (by_stream, others)
}

/// Where a duration question sits on a clock: `(clock, start, end, what the ends are)`.
fn place(case: &Case, ask: &Ask) -> Option<(usize, i64, i64, String)> {
    match ask {
        Ask::Submission { timer } | Ask::HostCompletion { timer, .. } => {
            let t = &case.timers[*timer];
            (t.start.0 == t.stop.0).then(|| {
                (
                    t.start.0,
                    t.start.1.as_i64(),
                    t.stop.1.as_i64(),
                    format!("timer {}", t.id),
                )
            })
        }
        Ask::DeviceInterval { start, end } => {
            let (a, b) = (&case.events[*start], &case.events[*end]);
            let (EventState::Completed(ta), EventState::Completed(tb)) = (a.state, b.state) else {
                return None;
            };
            let (ca, cb) = (case.streams[a.stream].clock, case.streams[b.stream].clock);
            (ca == cb).then(|| {
                (
                    ca,
                    ta.as_i64(),
                    tb.as_i64(),
                    format!("events {} → {}", a.id, b.id),
                )
            })
        }
        Ask::Elapsed { from, to } => {
            let (a, b) = (&case.marks[*from], &case.marks[*to]);
            (a.clock == b.clock).then(|| {
                (
                    a.clock,
                    a.at.as_i64(),
                    b.at.as_i64(),
                    format!("marks {} → {}", a.id, b.id),
                )
            })
        }
        _ => None,
    }
}

/// The label drawn on an answer's bracket: `complete: 140 us` or `complete: unknown (no-wait)`.
pub fn verdict_label(id: &str, v: &Verdict) -> String {
    match v {
        Verdict::Known { value, .. } => format!("{id}: {value}"),
        Verdict::Bounded { lo, hi, .. } => format!("{id}: {lo} … {hi}"),
        Verdict::Unknown { reason, .. } => format!("{id}: unknown ({reason})"),
    }
}

/// The answers lane of clock `c`: one bracket per placed duration question in `view`.
pub fn answer_bars(case: &Case, report: &Report, c: usize, view: (i64, i64)) -> Vec<Bar> {
    let clock_id = &case.clocks[c].id;
    let mut bars = Vec::new();
    for (q, answer) in case.questions.iter().zip(&report.answers) {
        let Some(verdict) = answer.outcome.verdict() else {
            continue;
        };
        let Some((qc, s, e, ends)) = place(case, &q.ask) else {
            continue;
        };
        let (lo, hi) = (s.min(e), s.max(e));
        if qc != c {
            continue;
        }
        let Some((vs, ve)) = clip(view, lo, hi) else {
            continue;
        };
        let (kind, detail) = match verdict {
            // A bounded answer is a bracket too; its label and tooltip give the range.
            Verdict::Known { notes, .. } | Verdict::Bounded { notes, .. } => {
                (BarKind::Known, notes.join("; "))
            }
            Verdict::Unknown { reason, detail } => (
                BarKind::Unknown,
                format!("{} {detail}", reason.explanation()),
            ),
        };
        bars.push(Bar {
            id: q.id.clone(),
            label: verdict_label(&q.id, verdict),
            kind,
            start: vs,
            end: ve,
            clipped: (lo < view.0, hi > view.1),
            tooltip: format!(
                "question {} ({}): {} — {ends}, {} … {} on clock `{clock_id}`{}{}",
                q.id,
                answer.kind,
                answer.headline(),
                Nanos::new(s),
                Nanos::new(e),
                if detail.trim().is_empty() { "" } else { ". " },
                detail.trim()
            ),
        });
    }
    bars
}

/// One line per question that has no bracket or coverage in the picture (a difference, a
/// steady-state claim, a duration whose ends lie on two clocks or are not timed), with the
/// engine's headline.
pub fn unplaced(case: &Case, report: &Report) -> Vec<String> {
    case.questions
        .iter()
        .zip(&report.answers)
        .filter(|(q, _)| match &q.ask {
            Ask::Intervals { .. } => false,
            ask => place(case, ask).is_none(),
        })
        .map(|(q, a)| format!("{} ({}): {}", q.id, a.kind, a.headline()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(path: &str) -> Case {
        crate::case::load_case_file(std::path::Path::new(path)).unwrap()
    }

    #[test]
    fn the_seed_answers_become_brackets_with_the_engines_values() {
        let c = case("fixtures/cases/three-boundaries.json");
        let report = crate::engine::evaluate(&c);
        let host = c.clocks.iter().position(|k| k.id == "host").unwrap();
        let gpu = c.clocks.iter().position(|k| k.id == "gpu").unwrap();
        let labels = |clock| -> Vec<String> {
            answer_bars(&c, &report, clock, (i64::MIN, i64::MAX))
                .into_iter()
                .map(|b| b.label)
                .collect()
        };
        assert_eq!(labels(host).len(), 2);
        assert_eq!(labels(gpu).len(), 1);
        for b in answer_bars(&c, &report, host, (i64::MIN, i64::MAX))
            .iter()
            .chain(&answer_bars(&c, &report, gpu, (i64::MIN, i64::MAX)))
        {
            let headline = report.answer(&b.id).unwrap().headline();
            assert!(b.tooltip.contains(&headline), "{} / {headline}", b.tooltip);
        }
    }

    #[test]
    fn a_completion_without_a_wait_is_an_unknown_bracket() {
        let c = case("fixtures/edge-controls/01-completion-without-wait.json");
        let report = crate::engine::evaluate(&c);
        let bars: Vec<Bar> = (0..c.clocks.len())
            .flat_map(|k| answer_bars(&c, &report, k, (i64::MIN, i64::MAX)))
            .collect();
        let unknown: Vec<&Bar> = bars.iter().filter(|b| b.kind == BarKind::Unknown).collect();
        assert!(!unknown.is_empty());
        assert!(
            unknown
                .iter()
                .any(|b| b.label.ends_with("unknown (no-wait)")),
            "{bars:?}"
        );
    }
}
