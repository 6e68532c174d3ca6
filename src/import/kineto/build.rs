//! What was read → the format-neutral [`Activities`] → the case (through the one builder,
//! [`crate::import::build`]).
//!
//! [`build`] runs the steps in order: GPU work is sorted by (device, stream, start, end) and
//! gets its phase ids ([`phase_ids`]); the host program is placed ([`super::program`]); the
//! clock, devices, streams, events, work and annotations become [`Activities`]
//! ([`activities`]); the builder declares them, orders the program and asks the questions;
//! the summary's facts, notes and the provenance are written ([`super::summary`]). Every
//! step is a function of what was read: the same trace gives the same case, byte for byte.

use std::collections::{BTreeSet, HashMap};

use super::names::{cut, fits, short_name, LABEL_CHARS};
use super::program::{self, Plan, Step, Target};
use super::read::TopLevel;
use super::{device_id, record_id, stream_id, summary, Read, CLOCK_ID};
use crate::case::raw::{Label, RawClock, RawEvent, RawEventState, RawPhase, RawTime};
use crate::import::activity::{self, Activities, FinalSync, Op, WorkClass};
use crate::import::Imported;
use crate::trace::kineto::PendingAudit;
use crate::trace::model::Name;
use crate::units::Nanos;

/// Builds the case from what was read; `name` names it. With `audit`, the audit's model
/// being made from the same read takes the calls once the program is placed from them, and
/// the work once the activities are made from it ([`PendingAudit`]): nothing is held twice,
/// and nothing past the stage that needs it.
pub(super) fn build(
    mut read: Read,
    top: &TopLevel,
    base: Option<i64>,
    name: &str,
    mut audit: Option<&mut PendingAudit>,
) -> Imported {
    // Phases: GPU work ordered by (device, stream, start, end).
    read.work
        .sort_by_key(|w| (w.device, w.stream, w.start, w.end));
    let work_devices: BTreeSet<i64> = read.work.iter().map(|w| w.device).collect();
    let (phase_ids, uncorrelated) = phase_ids(&read);
    let mut plan = program::plan(&read, &work_devices);
    // The calls placed the program: free them (or hand them on) before the activities are
    // made.
    read.calls = HashMap::new();
    let calls = std::mem::take(&mut read.audit.calls);
    if let Some(audit) = audit.as_deref_mut() {
        audit.take_calls(calls);
    }
    let instance = summary::clock_instance(top, &read, name);
    read.annotations
        .sort_by_key(|a| (a.device, a.stream, a.start, a.end));
    let activities = activities(&read, &mut plan, phase_ids, &instance);
    // The work is in the activities: free it before the case's largest allocations (the
    // summary needs its kinds alone).
    let work_kinds = summary::WorkKinds::of(&read.work);
    let work = std::mem::take(&mut read.work);
    if let Some(audit) = audit {
        audit.take_work(work);
    }
    crate::memory::give_back_freed(read.events);
    let mut built = crate::import::build::build(activities, name);
    // The activities are freed: the audit and the summary run next.
    crate::memory::give_back_freed(read.events);
    let work_spans = std::mem::take(&mut built.work_spans);
    let about = summary::About {
        read: &read,
        top,
        base,
        plan: &plan,
        launches: built.launches,
        builder_notes: &built.notes,
        uncorrelated,
        instance: &instance,
        work_devices: &work_devices,
        work_kinds,
    };
    let mut imported = summary::finish(built.case, &about);
    imported.work_spans = work_spans;
    imported
}

/// Each activity's phase id: `<short name>#<correlation>` (`#u<n>` when its call is not in
/// the trace; `.2`, `.3` for repeats), and how many activities have no call.
///
/// The repeats are found in a second pass, by a look-up that borrows the ids: at ×10 of
/// `df_index_resolver` a look-up holding a copy of every id was 17 MB at the import's peak.
/// An id with a repeat suffix never equals a first id: a first id ends in `#` and digits
/// (or `#u` and digits), a repeat in `.` and digits after them.
fn phase_ids(read: &Read) -> (Vec<String>, u64) {
    let mut phase_ids: Vec<String> = Vec::with_capacity(read.work.len());
    let mut uncorrelated = 0u64;
    for (k, w) in read.work.iter().enumerate() {
        phase_ids.push(match w.correlation.filter(|&c| read.has_call(c)) {
            Some(c) => format!("{}#{c}", short_name(&w.name)),
            None => {
                uncorrelated += 1;
                format!("{}#u{k}", short_name(&w.name))
            }
        });
    }
    for (k, n) in repeats(&phase_ids) {
        phase_ids[k] = format!("{}.{n}", phase_ids[k]);
    }
    (phase_ids, uncorrelated)
}

/// The ids of `ids` that repeat an earlier one: (place, `n`) for the `n`th time an id is
/// met (`n >= 2`), in order.
fn repeats(ids: &[String]) -> Vec<(usize, u32)> {
    let mut seen: HashMap<&str, u32> = HashMap::with_capacity(ids.len());
    let mut repeats = Vec::new();
    for (k, id) in ids.iter().enumerate() {
        let n = seen.entry(id.as_str()).or_insert(0);
        *n += 1;
        if *n > 1 {
            repeats.push((k, *n));
        }
    }
    repeats
}

/// The work's labels: a name of at most [`LABEL_CHARS`] characters is its own label (the
/// name's one shared text), and a longer one is cut once per name. At ×10 of
/// `df_index_resolver` a label per phase was 35 MB.
#[derive(Default)]
struct Labels<'a> {
    cut: HashMap<&'a str, Label>,
}

impl<'a> Labels<'a> {
    /// The label of a phase named `name`.
    fn of(&mut self, name: &'a Name) -> Label {
        if fits(name, LABEL_CHARS) {
            return Label::clone(name);
        }
        Label::clone(
            self.cut
                .entry(&**name)
                .or_insert_with(|| cut(name, LABEL_CHARS).into()),
        )
    }
}

/// A time on the clock.
fn ns(v: i64) -> RawTime {
    RawTime::from(Nanos::new(v))
}

/// The trace as the builder's input: one clock `kineto`; devices `gpu<D>` and streams
/// `gpu<D>-s<S>` in numeric order; the event records some op names; the work (in `read`'s
/// order, with `phase_ids`); the `gpu_user_annotation` ranges as phases without a stream;
/// the plan's steps (taken out of `plan`).
fn activities(read: &Read, plan: &mut Plan, phase_ids: Vec<String>, instance: &str) -> Activities {
    let devices: Vec<i64> = plan
        .streams
        .iter()
        .map(|s| s.0)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let device_index = |d: i64| devices.binary_search(&d).expect("a declared device");
    let streams: Vec<(i64, i64)> = plan.streams.iter().copied().collect();
    let stream_index = |s: (i64, i64)| streams.binary_search(&s).expect("a declared stream");
    let mut labels = Labels::default();
    let work = read
        .work
        .iter()
        .zip(phase_ids)
        .map(|(w, phase)| activity::Work {
            phase: phase.into(),
            label: labels.of(&w.name),
            kind: w.kind,
            class: WorkClass::of(w.kind, &w.name),
            stream: stream_index((w.device, w.stream)),
            start: w.start,
            end: w.end,
        })
        .collect();
    let steps = steps(plan, &stream_index, &device_index);
    Activities {
        clocks: vec![RawClock {
            id: CLOCK_ID.into(),
            domain: "kineto".into(),
            instance: Some(instance.to_owned()),
        }],
        devices: devices.iter().map(|&d| device_id(d)).collect(),
        streams: streams
            .iter()
            .map(|&s| activity::Stream {
                id: stream_id(s),
                clock: 0,
                device: device_index(s.0),
                kind: None,
            })
            .collect(),
        work,
        annotations: annotations(read),
        // Every record a wait names is placed as a record op.
        events: plan
            .records
            .iter()
            .map(|(&rc, &stream)| RawEvent {
                id: record_id(rc),
                stream: stream_id(stream),
                timing: false,
                state: RawEventState::Completed,
                at: None,
            })
            .collect(),
        steps,
        final_sync: FinalSync::Profiler,
    }
}

/// The plan's steps (taken out of `plan`) as the intermediate's, on the one clock: the keys
/// keep their order (`(time, rank, call start, seq)` → `(time, rank, call start, seq, 0, 0)`).
fn steps(
    plan: &mut Plan,
    stream_index: &dyn Fn((i64, i64)) -> usize,
    device_index: &dyn Fn(i64) -> usize,
) -> Vec<activity::Step> {
    std::mem::take(&mut plan.placed)
        .into_iter()
        .map(|p| {
            let (at, rank, call_start, seq) = p.key;
            let op = match p.step {
                Step::Launch(k) => Op::Launch(k),
                Step::Record(rc) => Op::Record(record_id(rc)),
                Step::StreamWait(wait) => Op::StreamWait {
                    stream: stream_index(wait.stream),
                    event: record_id(wait.record),
                },
                Step::HostWait(wait) => {
                    let program::HostWait {
                        id,
                        target,
                        start,
                        returned,
                        implicit,
                    } = *wait;
                    Op::HostWait(Box::new(activity::HostWait {
                        id,
                        target: match target {
                            Target::Event(rc) => activity::Target::Event(record_id(rc)),
                            Target::Stream(s) => activity::Target::Stream(stream_index(s)),
                            Target::Device(d) => activity::Target::Device(device_index(d)),
                        },
                        start,
                        returned,
                        implicit,
                    }))
                }
            };
            activity::Step {
                key: (
                    at,
                    rank,
                    call_start,
                    i64::try_from(seq).unwrap_or(i64::MAX),
                    0,
                    0,
                ),
                clock: 0,
                op,
            }
        })
        .collect()
}

/// The `gpu_user_annotation` ranges (sorted): phases without a stream, in no question.
fn annotations(read: &Read) -> Vec<RawPhase> {
    read.annotations
        .iter()
        .enumerate()
        .map(|(n, a)| RawPhase {
            id: format!("annotation-{}:{}", n + 1, short_name(&a.name)).into(),
            label: Some(
                format!(
                    "{} (gpu_user_annotation on {}: a range, not work)",
                    cut(&a.name, LABEL_CHARS),
                    stream_id((a.device, a.stream))
                )
                .into(),
            ),
            stream: None,
            clock: Some(CLOCK_ID.into()),
            start: ns(a.start),
            end: ns(a.end),
        })
        .collect()
}
