//! What was read → the case: declarations, phases, the host program, the questions.
//!
//! [`build`] runs the steps in order: GPU work is sorted by (device, stream, start, end) and
//! gets its phase ids ([`phase_ids`]); the host program is placed ([`super::program`]); the
//! clock, streams, events and phases are declared ([`declare`]); the interval and completion
//! questions are asked ([`questions`]); the summary's facts, notes and the provenance are
//! written ([`super::summary`]). Every step is a function of what was read: the same trace
//! gives the same case, byte for byte.

use std::collections::{BTreeSet, HashMap};

use super::names::{cut, is_communication, short_name, LABEL_CHARS};
use super::program::{self, Ops, Plan};
use super::read::TopLevel;
use super::{device_id, record_id, stream_id, summary, GpuWork, Read, WorkKind, CLOCK_ID};
use crate::case::raw::{
    RawCase, RawClock, RawEvent, RawEventState, RawPhase, RawQuestion, RawStream, RawTime,
};
use crate::import::Imported;
use crate::units::Nanos;

/// A predicate choosing GPU work for a question.
type WorkFilter<'f> = &'f dyn Fn(&GpuWork) -> bool;

/// Builds the case from what was read; `name` names it.
pub(super) fn build(mut read: Read, top: &TopLevel, base: Option<i64>, name: &str) -> Imported {
    // Phases: GPU work ordered by (device, stream, start, end).
    read.work
        .sort_by_key(|w| (w.device, w.stream, w.start, w.end));
    let work_devices: BTreeSet<i64> = read.work.iter().map(|w| w.device).collect();
    let (phase_ids, uncorrelated) = phase_ids(&read);
    let plan = program::plan(&read, &work_devices);
    let mut ops = program::ops(&read, &plan, &phase_ids);
    let instance = summary::clock_instance(top, &read, name);
    let mut case = declare(
        &mut read,
        &plan,
        &ops.used_records,
        &phase_ids,
        name,
        &instance,
    );
    case.program = std::mem::take(&mut ops.program);
    case.questions = questions(&read, &phase_ids, &plan, &work_devices, ops);
    let about = summary::About {
        read: &read,
        top,
        base,
        plan: &plan,
        uncorrelated,
        instance: &instance,
        work_devices: &work_devices,
    };
    summary::finish(case, &about)
}

/// Each activity's phase id: `<short name>#<correlation>` (`#u<n>` when its call is not in
/// the trace; `.2`, `.3` for repeats), and how many activities have no call.
fn phase_ids(read: &Read) -> (Vec<String>, u64) {
    let mut phase_ids: Vec<String> = Vec::with_capacity(read.work.len());
    let mut seen_ids: HashMap<String, u32> = HashMap::with_capacity(read.work.len());
    let mut uncorrelated = 0u64;
    for (k, w) in read.work.iter().enumerate() {
        let base_id = match w.correlation.filter(|c| read.calls.contains_key(c)) {
            Some(c) => format!("{}#{c}", short_name(&w.name)),
            None => {
                uncorrelated += 1;
                format!("{}#u{k}", short_name(&w.name))
            }
        };
        let n = seen_ids.entry(base_id.clone()).or_insert(0);
        *n += 1;
        phase_ids.push(if *n == 1 {
            base_id
        } else {
            format!("{base_id}.{n}")
        });
    }
    (phase_ids, uncorrelated)
}

/// A time on the clock.
fn ns(v: i64) -> RawTime {
    RawTime::from(Nanos::new(v))
}

/// The case's declarations: the clock, the streams, the event records an op names, the
/// phases (work in its stream; `gpu_user_annotation` ranges without a stream).
fn declare(
    read: &mut Read,
    plan: &Plan,
    used_records: &BTreeSet<i64>,
    phase_ids: &[String],
    name: &str,
    instance: &str,
) -> RawCase {
    let mut case = RawCase::new(name);
    case.clocks.push(RawClock {
        id: CLOCK_ID.into(),
        domain: "kineto".into(),
        instance: Some(instance.to_owned()),
    });
    for &s in &plan.streams {
        case.streams.push(RawStream {
            id: stream_id(s),
            clock: CLOCK_ID.into(),
            device: device_id(s.0),
            kind: None,
        });
    }
    for (&rc, &stream) in &plan.records {
        if used_records.contains(&rc) {
            case.events.push(RawEvent {
                id: record_id(rc),
                stream: stream_id(stream),
                timing: false,
                state: RawEventState::Completed,
                at: None,
            });
        }
    }
    for (k, w) in read.work.iter().enumerate() {
        case.phases.push(RawPhase {
            id: phase_ids[k].clone(),
            label: Some(cut(&w.name, LABEL_CHARS)),
            stream: Some(stream_id((w.device, w.stream))),
            clock: None,
            start: ns(w.start),
            end: ns(w.end),
        });
    }
    read.annotations
        .sort_by_key(|a| (a.device, a.stream, a.start, a.end));
    for (n, a) in read.annotations.iter().enumerate() {
        case.phases.push(RawPhase {
            id: format!("annotation-{}:{}", n + 1, short_name(&a.name)),
            label: Some(format!(
                "{} (gpu_user_annotation on {}: a range, not work)",
                cut(&a.name, LABEL_CHARS),
                stream_id((a.device, a.stream))
            )),
            stream: None,
            clock: Some(CLOCK_ID.into()),
            start: ns(a.start),
            end: ns(a.end),
        });
    }
    case
}

/// The questions: intervals per stream, per device and per class of work (each only when
/// not empty), then the completion questions when the program has its timers (`ops`: what
/// they claim).
fn questions(
    read: &Read,
    phase_ids: &[String],
    plan: &Plan,
    work_devices: &BTreeSet<i64>,
    ops: Ops,
) -> Vec<RawQuestion> {
    let mut questions = Vec::new();
    let phases_where = |keep: &dyn Fn(&GpuWork) -> bool| -> Vec<String> {
        read.work
            .iter()
            .enumerate()
            .filter(|(_, w)| keep(w))
            .map(|(k, _)| phase_ids[k].clone())
            .collect()
    };
    for &s in &plan.streams {
        let list = phases_where(&|w| (w.device, w.stream) == s);
        if !list.is_empty() {
            questions.push(intervals(format!("stream:{}", stream_id(s)), list));
        }
    }
    for &d in work_devices {
        let classes: [(&str, WorkFilter); 4] = [
            ("device", &|_| true),
            ("compute", &|w| {
                w.kind == WorkKind::Kernel && !is_communication(w)
            }),
            ("communication", &|w| is_communication(w)),
            ("memory", &|w| w.kind != WorkKind::Kernel),
        ];
        for (class, keep) in classes {
            let list = phases_where(&|w| w.device == d && keep(w));
            if !list.is_empty() {
                questions.push(intervals(format!("{class}:{}", device_id(d)), list));
            }
        }
    }
    if ops.timers {
        questions.push(RawQuestion::HostCompletion {
            id: "completion:all-work".into(),
            timer: "all-work".into(),
            work: Some(ops.all_work_claim),
            expect: None,
        });
        if let Some(claim) = ops.script_claim {
            questions.push(RawQuestion::HostCompletion {
                id: "completion:before-final-sync".into(),
                timer: "before-final-sync".into(),
                work: Some(claim),
                expect: None,
            });
        }
    }
    questions
}

/// An interval question over `phases`.
fn intervals(id: String, phases: Vec<String>) -> RawQuestion {
    RawQuestion::Intervals {
        id,
        phases: Some(phases),
        expect: None,
    }
}
