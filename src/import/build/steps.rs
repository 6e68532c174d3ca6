//! The builder's last stage, for every format: what the audit of the same pass learned,
//! added to the case. The stream pairs whose joins the trace did not record become
//! `unrecorded_joins` (so cross-stream questions answer `dependency-unrecorded`), and each
//! `ProfilerStep#N` of the recorded model (Kineto's host ranges, an Nsight Systems NVTX
//! range of that name) becomes questions:
//!
//! - `step:<name>:host`: elapsed time between the marks `step:<name>:start` and
//!   `step:<name>:end` (on the case's first clock: Kineto has one; an Nsight Systems export's
//!   clocks are all on its one session clock);
//! - `step:<name>:launched`: the interval algebra of the work launched in the step (a launch
//!   call that starts in `[start, end)`), when there is any.
//!
//! ```text
//!  host   ProfilerStep#5 [===============)
//!  launch      L1 (corr 41)      L2 (corr 42)
//!  GPU gpu0-s7     [k#41)            [k#42)      → step:ProfilerStep#5:launched = {k#41, k#42}
//! ```
//!
//! A model activity is matched to its phase by stream and exact ns interval, from the times
//! the builder placed ([`WorkSpans`]); no time is read back from the case's text.

use std::collections::{HashMap, HashSet};

use crate::audit::index::launch_calls;
use crate::audit::Audit;
use crate::case::raw::{PhaseId, RawCase, RawMark, RawQuestion, RawTime, RawUnrecordedJoin};
use crate::trace::model::{CallRole, Trace};
use crate::units::Nanos;

/// `[start, end)` in ns of the case's first `len()` phases (the GPU work, in the builder's
/// order), as the builder placed them.
pub type WorkSpans = Vec<(i64, i64)>;

/// The stream id of a model activity's `(device, stream)`: `gpu<d>-s<s>`, as both formats
/// name streams (an Nsight Systems stream with a `-pid` / `-ctx` suffix matches none: its
/// work is named by no step question).
fn stream_id((device, stream): (i64, i64)) -> String {
    format!("gpu{device}-s{stream}")
}

/// Adds to `case` the unrecorded joins of `audit` and the step questions of `trace`'s steps;
/// `spans` are the builder's times of the case's work phases ([`WorkSpans`]).
pub fn annotate(case: &mut RawCase, spans: &[(i64, i64)], trace: &Trace, audit: &Audit) {
    case.unrecorded_joins = unrecorded_joins(case, trace, audit);
    let Some(clock) = case.clocks.first().map(|c| c.id.clone()) else {
        return;
    };
    let launched = launched_in_steps(case, spans, trace);
    let mut seen = HashSet::new();
    for (step, phases) in trace.steps.iter().zip(launched) {
        if !seen.insert(&*step.name) {
            continue;
        }
        let mark = |end: &str, at: i64| RawMark {
            id: format!("step:{}:{end}", step.name),
            clock: clock.clone(),
            at: RawTime::from(Nanos::new(at)),
        };
        case.marks.push(mark("start", step.start));
        case.marks.push(mark("end", step.end));
        case.questions.push(RawQuestion::Elapsed {
            id: format!("step:{}:host", step.name),
            from: format!("step:{}:start", step.name),
            to: format!("step:{}:end", step.name),
            expect: None,
        });
        if !phases.is_empty() {
            case.questions.push(RawQuestion::Intervals {
                id: format!("step:{}:launched", step.name),
                phases: Some(phases),
                expect: None,
            });
        }
    }
}

/// The audit's unrecorded stream pairs, where both streams are declared.
fn unrecorded_joins(case: &RawCase, trace: &Trace, audit: &Audit) -> Vec<RawUnrecordedJoin> {
    let declared: HashSet<&str> = case.streams.iter().map(|s| s.id.as_str()).collect();
    let waits = trace
        .calls
        .iter()
        .filter(|c| CallRole::of(&c.name) == CallRole::StreamWait && !c.sync_recorded)
        .count();
    let mut joins = Vec::new();
    for (a, b) in &audit.unrecorded_pairs {
        let (a, b) = (stream_id(*a), stream_id(*b));
        if declared.contains(a.as_str()) && declared.contains(b.as_str()) {
            joins.push(RawUnrecordedJoin {
                streams: vec![a, b],
                why: Some(format!(
                    "{waits} cudaStreamWaitEvent call(s) without cuda_sync rows: the trace does not say which streams they join"
                )),
            });
        }
    }
    joins
}

/// A work phase's `(stream index, start, end)`: how a model activity finds its phase.
type PhaseKey = (usize, i64, i64);

/// For each of `trace.steps`, the ids of the work phases launched in it (sorted, no
/// repeats): model activities whose launch call starts in the step, matched to phases by
/// `(stream, start, end)`.
fn launched_in_steps(case: &RawCase, spans: &[(i64, i64)], trace: &Trace) -> Vec<Vec<PhaseId>> {
    if trace.steps.is_empty() {
        return Vec::new();
    }
    let stream_of: HashMap<&str, usize> = case
        .streams
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    // `(stream, start, end)` → the phases with those times, as one sorted list (not a map of
    // small lists: almost every key has one phase). The sort is stable: a key's phases stay
    // in the case's order.
    let mut phase_of: Vec<(PhaseKey, &PhaseId)> = case
        .phases
        .iter()
        .zip(spans)
        .filter_map(|(p, &(start, end))| {
            let stream = *p.stream.as_deref().and_then(|s| stream_of.get(s))?;
            Some(((stream, start, end), &p.id))
        })
        .collect();
    phase_of.sort_by_key(|&(key, _)| key);
    let ids_of = |key: PhaseKey| {
        let from = phase_of.partition_point(|&(k, _)| k < key);
        let to = from + phase_of[from..].partition_point(|&(k, _)| k == key);
        (from < to).then_some(&phase_of[from..to])
    };
    // (launch call start, phases of the activity it launched), in activity order.
    let launches: Vec<(i64, &[(PhaseKey, &PhaseId)])> = launch_calls(trace)
        .iter()
        .enumerate()
        .filter_map(|(a, call)| {
            let call = (*call)?;
            let act = &trace.activities[a];
            let stream = *stream_of.get(stream_id((act.device, act.stream)).as_str())?;
            let ids = ids_of((stream, act.start, act.end))?;
            Some((trace.calls[call].start, ids))
        })
        .collect();
    trace
        .steps
        .iter()
        .map(|step| {
            let mut phases: Vec<PhaseId> = launches
                .iter()
                .filter(|(t, _)| *t >= step.start && *t < step.end)
                .flat_map(|(_, ids)| ids.iter().map(|&(_, id)| id.clone()))
                .collect();
            phases.sort();
            phases.dedup();
            phases
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{audit, AuditOptions};
    use crate::case::raw::{RawClock, RawPhase, RawStream};
    use crate::trace::model::{Activity, ActivityKind, ApiCall, Step};

    /// An Nsight Systems-like recorded model (no test export has NVTX `ProfilerStep#N`
    /// ranges): two steps, three launches, one kernel launched in each step and one after.
    fn recorded() -> Trace {
        let kernel = |corr: i64, start: i64| Activity {
            kind: ActivityKind::Kernel,
            name: format!("k{corr}").into(),
            device: 0,
            stream: 7,
            start,
            end: start + 50,
            correlation: Some(corr),
            external: None,
            copy: None,
            collective: None,
            bytes: None,
        };
        let launch = |corr: i64, start: i64| ApiCall {
            name: "cudaLaunchKernel".into(),
            thread: Some(1),
            start,
            end: start + 5,
            correlation: Some(corr),
            external: None,
            sync_recorded: false,
        };
        let step = |n: u32, start: i64, end: i64| Step {
            name: format!("ProfilerStep#{n}").into(),
            start,
            end,
            thread: Some(1),
        };
        Trace {
            source: "nsys".to_owned(),
            activities: vec![kernel(1, 100), kernel(2, 1_100), kernel(3, 2_100)],
            calls: vec![launch(1, 10), launch(2, 1_000), launch(3, 2_000)],
            steps: vec![step(5, 0, 1_000), step(6, 1_000, 2_000)],
            ..Trace::default()
        }
    }

    fn case(trace: &Trace) -> (RawCase, WorkSpans) {
        let mut case = RawCase::new("t");
        case.clocks = vec![RawClock {
            id: "pid144".to_owned(),
            domain: "nsys".to_owned(),
            instance: None,
        }];
        case.streams = vec![RawStream {
            id: "gpu0-s7".to_owned(),
            clock: "pid144".to_owned(),
            device: "gpu0".to_owned(),
            kind: None,
        }];
        let spans: WorkSpans = trace.activities.iter().map(|a| (a.start, a.end)).collect();
        case.phases = trace
            .activities
            .iter()
            .map(|a| RawPhase {
                id: format!("kernel-{}", a.correlation.unwrap_or(0)).into(),
                label: None,
                stream: Some("gpu0-s7".into()),
                clock: None,
                start: RawTime::from(Nanos::new(a.start)),
                end: RawTime::from(Nanos::new(a.end)),
            })
            .collect();
        (case, spans)
    }

    #[test]
    fn steps_of_any_format_become_questions_from_the_builders_times() {
        let trace = recorded();
        let (mut case, spans) = case(&trace);
        let report = audit(&trace, "t", &AuditOptions::default());
        annotate(&mut case, &spans, &trace, &report);
        let marks: Vec<(&str, &str)> = case
            .marks
            .iter()
            .map(|m| (m.id.as_str(), m.clock.as_str()))
            .collect();
        assert_eq!(
            marks,
            [
                ("step:ProfilerStep#5:start", "pid144"),
                ("step:ProfilerStep#5:end", "pid144"),
                ("step:ProfilerStep#6:start", "pid144"),
                ("step:ProfilerStep#6:end", "pid144"),
            ]
        );
        let launched: Vec<(String, Vec<String>)> = case
            .questions
            .iter()
            .filter_map(|q| match q {
                RawQuestion::Intervals {
                    id,
                    phases: Some(p),
                    ..
                } => Some((
                    id.clone(),
                    p.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                )),
                _ => None,
            })
            .collect();
        // kernel-3 is launched at 2 000 ns, the end of step 6: in no step.
        assert_eq!(
            launched,
            [
                (
                    "step:ProfilerStep#5:launched".to_owned(),
                    vec!["kernel-1".to_owned()]
                ),
                (
                    "step:ProfilerStep#6:launched".to_owned(),
                    vec!["kernel-2".to_owned()]
                ),
            ]
        );
        assert_eq!(case.questions.len(), 4, "two elapsed, two intervals");
    }

    #[test]
    fn a_phase_whose_builder_time_differs_is_named_by_no_step() {
        let trace = recorded();
        let (mut case, mut spans) = case(&trace);
        spans[0].1 += 1; // the builder placed kernel-1 1 ns later than the model has it
        let report = audit(&trace, "t", &AuditOptions::default());
        annotate(&mut case, &spans, &trace, &report);
        let ids: Vec<&str> = case
            .questions
            .iter()
            .map(|q| match q {
                RawQuestion::Elapsed { id, .. } | RawQuestion::Intervals { id, .. } => id.as_str(),
                _ => "another kind",
            })
            .collect();
        assert_eq!(
            ids,
            [
                "step:ProfilerStep#5:host",
                "step:ProfilerStep#6:host",
                "step:ProfilerStep#6:launched"
            ]
        );
    }
}
