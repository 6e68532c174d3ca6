//! Generators of whole cases, for the verdict laws (SPEC §4–§5).
//!
//! [`arb_program_case`] builds a valid case: one host clock, one device clock, one to three
//! streams of one device, one to four phases, up to four events, and a random host program of
//! launches, event records, cross-stream waits and host waits (some of them the implicit
//! waits of copies, SPEC §4, on streams that may declare a kind), all inside one host timer
//! `t`. Question `completion` claims every phase at the timer's stop; question `submission`
//! asks for the same timer as a submission; question `pair` asks for the device interval of
//! the first two events, in record order. The case is a [`RawCase`], so a law can edit it (delete a wait, add
//! a device-wide wait, move a reading to another clock) and validate it again.
//!
//! Every generated case validates: events are completed exactly when the program records
//! them, and their timestamps increase along the program.

use proptest::prelude::*;

use crate::case::raw::{
    RawCase, RawClock, RawEvent, RawEventState, RawHostWait, RawImplicit, RawOp, RawPhase,
    RawQuestion, RawStream, RawStreamKind, RawTime,
};

/// One step of a generated program, before it is written as ops.
#[derive(Clone, Debug)]
pub enum Step {
    /// Record event `0` (if not yet recorded).
    Record(usize),
    /// Make stream `0` wait for event `1`.
    StreamWait(usize, usize),
    /// Host wait on event `0`.
    WaitEvent(usize),
    /// Host wait on stream `0`.
    WaitStream(usize),
    /// Host wait on the whole device.
    WaitDevice,
}

fn arb_step(streams: usize, events: usize) -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..events).prop_map(Step::Record),
        2 => (0..streams, 0..events).prop_map(|(s, e)| Step::StreamWait(s, e)),
        1 => (0..events).prop_map(Step::WaitEvent),
        1 => (0..streams).prop_map(Step::WaitStream),
        1 => Just(Step::WaitDevice),
    ]
}

/// The shape of a generated case: streams of phases and events, and the program's steps
/// with the position of each phase's launch among them.
#[derive(Clone, Debug)]
pub struct ProgramShape {
    /// Number of streams (1–3).
    pub streams: usize,
    /// Stream of each phase.
    pub phase_streams: Vec<usize>,
    /// Stream of each event.
    pub event_streams: Vec<usize>,
    /// Steps other than launches, in order.
    pub steps: Vec<Step>,
    /// For each phase, the number of steps before its launch.
    pub launch_after: Vec<usize>,
    /// For each phase: when it is a copy that waits (SPEC §4, "Implicit waits"), its kind;
    /// its launch is then followed at once by the implicit host wait on its stream.
    pub copies: Vec<Option<RawImplicit>>,
    /// For each stream, its declared kind (`legacy-default`, `blocking`, …), if any.
    pub stream_kinds: Vec<Option<RawStreamKind>>,
}

fn arb_implicit() -> impl Strategy<Value = RawImplicit> {
    prop_oneof![
        Just(RawImplicit::SyncCopyDtoh),
        Just(RawImplicit::AsyncCopyDtohPageable),
        Just(RawImplicit::PageableHtod),
    ]
}

fn arb_stream_kind() -> impl Strategy<Value = RawStreamKind> {
    prop_oneof![
        Just(RawStreamKind::LegacyDefault),
        Just(RawStreamKind::Blocking),
        Just(RawStreamKind::NonBlocking),
        Just(RawStreamKind::PerThreadDefault),
    ]
}

/// Shapes of small programs.
pub fn arb_shape() -> impl Strategy<Value = ProgramShape> {
    (1usize..=3, 1usize..=4, 2usize..=4).prop_flat_map(|(streams, phases, events)| {
        (
            proptest::collection::vec(0..streams, phases),
            proptest::collection::vec(0..streams, events),
            proptest::collection::vec(arb_step(streams, events), 0..10),
            proptest::collection::vec(0usize..10, phases),
            proptest::collection::vec(proptest::option::weighted(0.4, arb_implicit()), phases),
            proptest::collection::vec(proptest::option::weighted(0.6, arb_stream_kind()), streams),
        )
            .prop_map(
                move |(phase_streams, event_streams, steps, launch_after, copies, stream_kinds)| {
                    ProgramShape {
                        streams,
                        phase_streams,
                        event_streams,
                        steps,
                        launch_after,
                        copies,
                        stream_kinds,
                    }
                },
            )
    })
}

fn text(s: &str) -> RawTime {
    RawTime::Text(s.to_owned())
}

fn stream_name(s: usize) -> String {
    format!("S{s}")
}

/// Writes a shape as a case (see the module docs for what it asks).
pub fn case_from_shape(shape: &ProgramShape) -> RawCase {
    let mut case = RawCase::new("generated");
    case.clocks = clocks();
    case.streams = (0..shape.streams)
        .map(|s| RawStream {
            id: stream_name(s),
            clock: "gpu".into(),
            device: "gpu0".into(),
            kind: shape.stream_kinds.get(s).copied().flatten(),
        })
        .collect();
    case.phases = shape
        .phase_streams
        .iter()
        .enumerate()
        .map(|(p, &s)| RawPhase {
            id: format!("p{p}").into(),
            label: None,
            stream: Some(stream_name(s).into()),
            clock: None,
            start: text(&format!("{} us", 10 * p)),
            end: text(&format!("{} us", 10 * p + 15)),
        })
        .collect();
    let (program, recorded_at) = program_of(shape);
    case.program = program;
    case.events = shape
        .event_streams
        .iter()
        .enumerate()
        .map(|(e, &s)| RawEvent {
            id: format!("e{e}"),
            stream: stream_name(s),
            timing: true,
            state: if recorded_at[e].is_some() {
                RawEventState::Completed
            } else {
                RawEventState::NotRecorded
            },
            at: recorded_at[e].map(|k| text(&format!("{} us", 1000 + k))),
        })
        .collect();
    case.questions = questions(&recorded_at);
    case
}

/// Two host clocks (two boots) and two device clocks (two contexts).
fn clocks() -> Vec<RawClock> {
    vec![
        RawClock {
            id: "host".into(),
            domain: "host".into(),
            instance: Some("boot-a".into()),
        },
        RawClock {
            id: "host-b".into(),
            domain: "host".into(),
            instance: Some("boot-b".into()),
        },
        RawClock {
            id: "gpu".into(),
            domain: "device".into(),
            instance: Some("ctx-1".into()),
        },
        RawClock {
            id: "gpu2".into(),
            domain: "device".into(),
            instance: Some("ctx-2".into()),
        },
    ]
}

/// The timer around the steps, with the launches interleaved into them; and, per event, the
/// program index of its record (`None` when never recorded).
fn program_of(shape: &ProgramShape) -> (Vec<RawOp>, Vec<Option<usize>>) {
    let mut ops = vec![RawOp::TimerStart {
        timer: "t".into(),
        clock: "host".into(),
        at: text("0 us"),
    }];
    let mut recorded_at: Vec<Option<usize>> = vec![None; shape.event_streams.len()];
    let mut waits = 0;
    for position in 0..=shape.steps.len() {
        push_launches(shape, position, &mut ops);
        let Some(step) = shape.steps.get(position) else {
            break;
        };
        push_step(step, &mut ops, &mut recorded_at, &mut waits);
    }
    ops.push(RawOp::TimerStop {
        timer: "t".into(),
        clock: "host".into(),
        at: text("500 us"),
    });
    (ops, recorded_at)
}

/// The launches placed before step `position`, each with its implicit copy wait if any.
fn push_launches(shape: &ProgramShape, position: usize, ops: &mut Vec<RawOp>) {
    for (p, &after) in shape.launch_after.iter().enumerate() {
        if after.min(shape.steps.len()) == position {
            ops.push(RawOp::Launch {
                phase: format!("p{p}").into(),
            });
            if let Some(kind) = shape.copies.get(p).copied().flatten() {
                ops.push(RawOp::HostWait(Box::new(RawHostWait {
                    id: format!("copy-p{p}"),
                    event: None,
                    stream: Some(stream_name(shape.phase_streams[p])),
                    device: None,
                    clock: None,
                    at: None,
                    implicit: Some(kind),
                    copy: Some(format!("p{p}")),
                })));
            }
        }
    }
}

/// One step: a record (the first of each event only), a stream wait or a host wait.
fn push_step(
    step: &Step,
    ops: &mut Vec<RawOp>,
    recorded_at: &mut [Option<usize>],
    waits: &mut usize,
) {
    match step {
        Step::Record(e) => {
            if recorded_at[*e].is_none() {
                recorded_at[*e] = Some(ops.len());
                ops.push(RawOp::Record {
                    event: format!("e{e}"),
                });
            }
        }
        Step::StreamWait(s, e) => ops.push(RawOp::StreamWait {
            stream: stream_name(*s),
            event: format!("e{e}"),
        }),
        Step::WaitEvent(_) | Step::WaitStream(_) | Step::WaitDevice => {
            let (event, stream, device) = match step {
                Step::WaitEvent(e) => (Some(format!("e{e}")), None, None),
                Step::WaitStream(s) => (None, Some(stream_name(*s)), None),
                _ => (None, None, Some("gpu0".to_owned())),
            };
            ops.push(RawOp::HostWait(Box::new(RawHostWait {
                id: format!("w{}", *waits),
                event,
                stream,
                device,
                clock: None,
                at: None,
                implicit: None,
                copy: None,
            })));
            *waits += 1;
        }
    }
}

/// The questions: submission and completion of the timer, and the first two events as a
/// device interval.
fn questions(recorded_at: &[Option<usize>]) -> Vec<RawQuestion> {
    // The pair is asked in record order (a pair recorded backwards is malformed input).
    let pair = match (recorded_at[0], recorded_at[1]) {
        (Some(a), Some(b)) if b < a => ("e1", "e0"),
        _ => ("e0", "e1"),
    };
    vec![
        RawQuestion::Submission {
            id: "submission".into(),
            timer: "t".into(),
            expect: None,
        },
        RawQuestion::HostCompletion {
            id: "completion".into(),
            timer: "t".into(),
            work: None,
            expect: None,
        },
        RawQuestion::DeviceInterval {
            id: "pair".into(),
            start: pair.0.into(),
            end: pair.1.into(),
            expect: None,
        },
    ]
}

/// Valid generated cases (see the module docs).
pub fn arb_program_case() -> impl Strategy<Value = RawCase> {
    arb_shape().prop_map(|shape| case_from_shape(&shape))
}

#[cfg(test)]
mod laws {
    //! The verdict laws, checked over generated programs.

    use super::*;
    use crate::case::validate;
    use crate::engine::{evaluate, Report};
    use crate::verdict::{Reason, Verdict};

    fn answers(raw: &RawCase) -> Report {
        let case = validate(raw.clone(), "generated").expect("generated cases validate");
        evaluate(&case)
    }

    fn verdict<'r>(report: &'r Report, id: &str) -> &'r Verdict {
        report
            .answer(id)
            .and_then(|a| a.outcome.verdict())
            .expect("a duration answer")
    }

    fn is_wait(op: &RawOp) -> bool {
        matches!(op, RawOp::HostWait(_))
    }

    fn is_implicit_wait(op: &RawOp) -> bool {
        matches!(op, RawOp::HostWait(w) if w.implicit.is_some())
    }

    fn device_wait(id: &str) -> RawOp {
        RawOp::HostWait(Box::new(RawHostWait {
            id: id.into(),
            event: None,
            stream: None,
            device: Some("gpu0".into()),
            clock: None,
            at: None,
            implicit: None,
            copy: None,
        }))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn deleting_a_wait_never_turns_an_unknown_completion_into_a_known_one(raw in arb_program_case()) {
            let before = answers(&raw);
            if verdict(&before, "completion").value().is_none() {
                for k in (0..raw.program.len()).filter(|&k| is_wait(&raw.program[k])) {
                    let mut edited = raw.clone();
                    edited.program.remove(k);
                    let after = answers(&edited);
                    prop_assert!(verdict(&after, "completion").value().is_none(), "removing program[{}] made it known", k);
                }
            }
        }

        #[test]
        fn turning_a_synchronous_copy_into_its_async_to_pinned_form_never_turns_an_unknown_completion_into_a_known_one(raw in arb_program_case()) {
            // An Async copy to pinned memory is the same copy in the same stream, and no wait.
            let before = answers(&raw);
            if verdict(&before, "completion").value().is_none() {
                for k in (0..raw.program.len()).filter(|&k| is_implicit_wait(&raw.program[k])) {
                    let mut edited = raw.clone();
                    edited.program.remove(k);
                    let after = answers(&edited);
                    prop_assert!(verdict(&after, "completion").value().is_none(), "making the copy of program[{}] Async to pinned memory made it known", k);
                }
            }
        }

        #[test]
        fn an_implicit_wait_covers_no_more_than_a_stream_wait_in_its_place(raw in arb_program_case()) {
            // SPEC §4: a copy's wait is a stream wait of the documented scope "and no wider".
            for k in (0..raw.program.len()).filter(|&k| is_implicit_wait(&raw.program[k])) {
                let mut named = raw.clone();
                if let RawOp::HostWait(w) = &mut named.program[k] {
                    w.implicit = None;
                    w.copy = None;
                }
                let implicit = answers(&raw);
                let stream_wait = answers(&named);
                if verdict(&implicit, "completion").value().is_some() {
                    prop_assert!(verdict(&stream_wait, "completion").value().is_some(), "the implicit wait program[{}] covered more than a stream wait", k);
                }
            }
        }

        #[test]
        fn adding_a_wait_never_turns_a_known_completion_into_an_unknown_one(raw in arb_program_case(), at in 1usize..20) {
            let before = answers(&raw);
            let mut edited = raw.clone();
            let k = at.min(edited.program.len() - 1);
            edited.program.insert(k, device_wait("extra"));
            let after = answers(&edited);
            if before.answer("completion").is_some() && verdict(&before, "completion").value().is_some() {
                prop_assert!(verdict(&after, "completion").value().is_some());
            }
        }

        #[test]
        fn a_device_wide_wait_after_all_work_makes_completion_known(raw in arb_program_case()) {
            let mut edited = raw.clone();
            let stop = edited.program.len() - 1;
            edited.program.insert(stop, device_wait("sync-all"));
            let report = answers(&edited);
            prop_assert_eq!(verdict(&report, "completion").value(), Some(crate::units::Nanos::new(500_000)));
        }

        #[test]
        fn completion_without_any_wait_is_no_wait(raw in arb_program_case()) {
            let mut edited = raw.clone();
            edited.program.retain(|op| !is_wait(op));
            let report = answers(&edited);
            prop_assert_eq!(verdict(&report, "completion").reason(), Some(Reason::NoWait));
            // Submission makes no completion claim, so it stays known.
            prop_assert!(verdict(&report, "submission").value().is_some());
        }

        #[test]
        fn a_timer_read_on_two_clocks_is_never_known(raw in arb_program_case(), other in prop_oneof![Just(("host-b", Reason::CrossInstance)), Just(("gpu", Reason::CrossDomain))]) {
            let mut edited = raw.clone();
            let (clock_id, reason) = other;
            if let Some(RawOp::TimerStop { clock, .. }) = edited.program.last_mut() {
                *clock = clock_id.to_owned();
            }
            let report = answers(&edited);
            prop_assert_eq!(verdict(&report, "submission").reason(), Some(reason));
            prop_assert_eq!(verdict(&report, "completion").reason(), Some(reason));
        }

        #[test]
        fn an_event_pair_on_two_clocks_is_never_known(raw in arb_program_case()) {
            let mut edited = raw.clone();
            edited.streams.push(RawStream { id: "X".into(), clock: "gpu2".into(), device: "gpu1".into(), kind: None });
            edited.events[1].stream = "X".into();
            let report = answers(&edited);
            prop_assert!(verdict(&report, "pair").value().is_none());
        }
    }
}
