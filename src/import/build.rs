//! The one builder: a reader's [`Activities`] → the case, for every trace format.
//!
//! [`build`] declares the clocks, streams, events and phases (GPU work in its stream, then
//! the annotations without a stream), places the host program in host-time order
//! (`build/program.rs`: a stable sort by [`super::activity::StepKey`], the completion timers) and
//! asks the questions, whose ids are the same for every format:
//!
//! - `stream:<stream>`: the intervals of each stream's work (streams with work only);
//! - `device:<device>`: all work of the device pooled (busy = union, idle = span − union);
//! - `compute:<device>`, `communication:<device>` (kernels whose name contains `nccl`) and
//!   `memory:<device>` (copies and sets), each only when not empty;
//! - `completion:all-work`: the host timer from the start of the first call in the program
//!   (a launch, record or wait) to the return of the last host wait: is all launched work
//!   covered? When the last wait is device-wide with nothing launched after it,
//!   `completion:before-final-sync` too: did the waits before it cover the work? (In a
//!   Kineto trace that wait is the profiler's own, renamed `final-device-sync`.) When several processes (clocks) launch work, each
//!   gets its own timers and questions, suffixed with its clock: `completion:all-work-pid144`.
//!
//! A completion claim names the last launch of each stream: coverage is a per-stream prefix
//! (SPEC §4), so that is the same claim as all of the stream's launched work, and it keeps
//! the case small. Every step is a function of the activities: the same trace gives the same
//! case, byte for byte.

mod program;
pub mod steps;

use super::activity::{Activities, WorkClass};
use crate::case::raw::{Label, PhaseId, RawCase, RawPhase, RawQuestion, RawStream, RawTime};
use crate::units::Nanos;

/// The case built from activities, and what the builder has to say about it.
#[derive(Clone, Debug)]
pub struct Built {
    /// The case: declarations, phases, program, questions (no description or provenance:
    /// those are the reader's).
    pub case: RawCase,
    /// Launches placed in the program.
    pub launches: usize,
    /// Notes on decisions the builder made (a profiler's final sync, renamed).
    pub notes: Vec<String>,
    /// The times of the case's work phases, for the step questions ([`steps::annotate`]).
    pub work_spans: steps::WorkSpans,
}

/// Builds the case named `name` from `activities`.
pub fn build(activities: Activities, name: &str) -> Built {
    let Activities {
        clocks,
        devices,
        streams,
        work,
        annotations,
        events,
        steps,
        final_sync,
    } = activities;
    let mut case = RawCase::new(name);
    case.streams = streams
        .iter()
        .map(|s| RawStream {
            id: s.id.clone(),
            clock: clocks[s.clock].id.clone(),
            device: devices[s.device].clone(),
            kind: s.kind,
        })
        .collect();
    case.events = events;
    let context = program::Context {
        clocks: &clocks,
        devices: &devices,
        streams: &streams,
        work: &work,
    };
    let placed = program::place(&context, steps, final_sync);
    let launches = placed.launches;
    let notes = placed.notes;
    case.program = placed.program;
    case.questions = interval_questions(&context);
    case.questions.extend(placed.completion);
    let work_spans = work.iter().map(|w| (w.start, w.end)).collect();
    // The phases last: the program and the questions have named them, so each work's id and
    // label move into its phase instead of being copied, and the phases of a stream share
    // its id.
    let stream_ids: Vec<Label> = streams.iter().map(|s| Label::from(s.id.as_str())).collect();
    case.phases = work
        .into_iter()
        .map(|w| RawPhase {
            id: w.phase,
            label: Some(w.label),
            stream: Some(Label::clone(&stream_ids[w.stream])),
            clock: None,
            start: ns(w.start),
            end: ns(w.end),
        })
        .chain(annotations)
        .collect();
    case.clocks = clocks;
    Built {
        case,
        launches,
        notes,
        work_spans,
    }
}

/// The interval questions: per stream with work, then per device the pooled and per-class
/// sets, each only when not empty.
fn interval_questions(c: &program::Context) -> Vec<RawQuestion> {
    let mut questions = Vec::new();
    // Each list is made at its exact length (counted first), and holds the phases' shared
    // ids: a clone is a count, not a copy of the text.
    let phases_where = |keep: &dyn Fn(&super::activity::Work) -> bool| -> Vec<PhaseId> {
        let mut list = Vec::with_capacity(c.work.iter().filter(|w| keep(w)).count());
        list.extend(c.work.iter().filter(|w| keep(w)).map(|w| w.phase.clone()));
        list
    };
    for (i, s) in c.streams.iter().enumerate() {
        let list = phases_where(&|w| w.stream == i);
        if !list.is_empty() {
            questions.push(intervals(format!("stream:{}", s.id), list));
        }
    }
    for (d, label) in c.devices.iter().enumerate() {
        let on = |w: &super::activity::Work| c.streams[w.stream].device == d;
        let classes: [(&str, Option<WorkClass>); 4] = [
            ("device", None),
            ("compute", Some(WorkClass::Compute)),
            ("communication", Some(WorkClass::Communication)),
            ("memory", Some(WorkClass::Memory)),
        ];
        for (word, class) in classes {
            let list = phases_where(&|w| on(w) && class.is_none_or(|k| w.class == k));
            if !list.is_empty() {
                questions.push(intervals(format!("{word}:{label}"), list));
            }
        }
    }
    questions
}

/// An interval question over `phases`.
fn intervals(id: String, phases: Vec<PhaseId>) -> RawQuestion {
    RawQuestion::Intervals {
        id,
        phases: Some(phases),
        expect: None,
    }
}

/// A time on a clock.
fn ns(v: i64) -> RawTime {
    RawTime::from(Nanos::new(v))
}
