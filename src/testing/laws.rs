//! Verdict laws over several devices, streams and clock instances (SPEC §4–§5), checked on
//! programs from [`arb_device_case`] against the slow [`CoverageModel`].
//!
//! | law | guards |
//! |---|---|
//! | coverage equals the model's, for every wait and every launch | every coverage rule at once |
//! | a device-wide wait on X covers exactly X's work before it (no cross-device joins) | `WaitTarget::Device` |
//! | a stream wait covers another stream's work only when joined by a declared dependency | `WaitTarget::Stream`, `close` |
//! | completion and device-interval verdicts equal the model's | the engine's reading of coverage and order |
//! | adding a dependency never turns a known answer unknown | monotonicity of order |
//! | renaming devices and streams (a permutation) changes no verdict | no rule depends on a name or a declaration index |
//!
//! The laws compare verdicts (value and reason), never notes: notes name streams and devices.
//! Implicit waits (SPEC §4) are not in this branch's case format; once they are, the generator
//! draws them and the same laws apply at their documented scope (see
//! [`super::coverage`]).

use std::collections::HashMap;

use proptest::prelude::*;
use proptest::sample::Index;

use super::coverage::CoverageModel;
use super::devices::{arb_device_case, arb_device_shape, device_case_from_shape};
use crate::case::raw::{RawCase, RawOp};
use crate::case::{validate, Ask, Case, Op, OpIdx, StreamKind};
use crate::engine::{evaluate, Report};
use crate::schedule::Schedule;
use crate::units::Nanos;
use crate::verdict::Reason;

/// Cases per law: the programs are small, so a debug build checks 256 in well under a second.
const CASES: u32 = 256;

fn valid(raw: &RawCase) -> Case {
    validate(raw.clone(), "generated-devices").expect("generated cases validate")
}

/// Every host wait of the program: (program index, the op).
fn host_waits(case: &Case) -> Vec<OpIdx> {
    (0..case.program.len())
        .filter(|&k| matches!(case.program[k], Op::HostWait { .. }))
        .collect()
}

/// The launches that [`Schedule`] says the host wait at `wait_op` covers, in program order.
fn schedule_covered(case: &Case, schedule: &Schedule, wait_op: OpIdx) -> Vec<OpIdx> {
    let Op::HostWait { target, .. } = &case.program[wait_op] else {
        panic!("program[{wait_op}] is not a host wait")
    };
    let frontier = schedule.wait_coverage(case, wait_op, target);
    (0..case.program.len())
        .filter(|&k| matches!(case.program[k], Op::Launch(_)) && schedule.covers(&frontier, k))
        .collect()
}

/// The stream a launch runs in, read from the case (not from either model).
fn launch_stream(case: &Case, op: OpIdx) -> Option<usize> {
    match case.program[op] {
        Op::Launch(p) => case.phases[p].stream,
        _ => None,
    }
}

/// Each question's verdict as (value, reason): what a law may compare across edits.
fn verdicts(report: &Report) -> Vec<(String, Option<Nanos>, Option<Reason>)> {
    report
        .answers
        .iter()
        .map(|a| {
            let v = a
                .outcome
                .verdict()
                .expect("generated questions are durations");
            (a.id.clone(), v.value(), v.reason())
        })
        .collect()
}

/// Stream id → device, and event id → stream id, of a raw case.
fn raw_maps(raw: &RawCase) -> (HashMap<String, String>, HashMap<String, String>) {
    let devices = raw
        .streams
        .iter()
        .map(|s| (s.id.clone(), s.device.clone()))
        .collect();
    let events = raw
        .events
        .iter()
        .map(|e| (e.id.clone(), e.stream.clone()))
        .collect();
    (devices, events)
}

/// `raw` without the stream-waits whose stream and event are on different devices.
fn without_cross_device_joins(raw: &RawCase) -> RawCase {
    let (device_of, stream_of_event) = raw_maps(raw);
    let mut edited = raw.clone();
    edited.program.retain(|op| match op {
        RawOp::StreamWait { stream, event } => {
            device_of[stream] == device_of[&stream_of_event[event]]
        }
        _ => true,
    });
    edited
}

/// `raw` without any order between streams: no stream-wait, and no declared stream kinds
/// (so no legacy default stream's implicit order).
fn without_joins(raw: &RawCase) -> RawCase {
    let mut edited = raw.clone();
    for s in &mut edited.streams {
        s.kind = None;
    }
    edited
        .program
        .retain(|op| !matches!(op, RawOp::StreamWait { .. }));
    edited
}

/// The first `n` entries of `perm` that are below `n`: a permutation of `0..n`.
fn permutation_of(perm: &[usize], n: usize) -> Vec<usize> {
    let p: Vec<usize> = perm.iter().copied().filter(|&i| i < n).collect();
    assert_eq!(p.len(), n, "the drawn permutation is long enough");
    p
}

/// `raw` with device `gpu<d>` renamed `gpu<devices[d]>`, stream `k` (in declaration order)
/// renamed to the id of stream `streams[k]`, and the stream declarations reordered by `order`.
fn renamed(raw: &RawCase, devices: &[usize], streams: &[usize], order: &[usize]) -> RawCase {
    let ids: Vec<String> = raw.streams.iter().map(|s| s.id.clone()).collect();
    let n = ids.len();
    let stream_map: HashMap<String, String> = permutation_of(streams, n)
        .into_iter()
        .enumerate()
        .map(|(k, to)| (ids[k].clone(), ids[to].clone()))
        .collect();
    let device_count = raw
        .streams
        .iter()
        .map(|s| s.device.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let device_perm = permutation_of(devices, device_count);
    let device_map: HashMap<String, String> = (0..device_count)
        .map(|d| (format!("gpu{d}"), format!("gpu{}", device_perm[d])))
        .collect();

    let mut edited = raw.clone();
    for s in &mut edited.streams {
        s.id = stream_map[&s.id].clone();
        s.device = device_map[&s.device].clone();
    }
    edited.streams = permutation_of(order, n)
        .into_iter()
        .map(|k| edited.streams[k].clone())
        .collect();
    for e in &mut edited.events {
        e.stream = stream_map[&e.stream].clone();
    }
    for p in &mut edited.phases {
        if let Some(s) = &mut p.stream {
            *s = stream_map[&**s].as_str().into();
        }
    }
    for op in &mut edited.program {
        match op {
            RawOp::StreamWait { stream, .. } => *stream = stream_map[stream.as_str()].clone(),
            RawOp::HostWait(w) => {
                if let Some(s) = &mut w.stream {
                    *s = stream_map[s.as_str()].clone();
                }
                if let Some(d) = &mut w.device {
                    *d = device_map[d.as_str()].clone();
                }
            }
            _ => {}
        }
    }
    edited
}

/// Permutations of `0..9` (enough for 3 devices × 3 streams).
fn permutations() -> impl Strategy<Value = Vec<usize>> {
    Just((0..9).collect::<Vec<usize>>()).prop_shuffle()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// The schedule's frontier and the naive model agree on every (wait, launch) pair.
    #[test]
    fn coverage_equals_the_reference_model_for_every_wait(raw in arb_device_case()) {
        let case = valid(&raw);
        let schedule = Schedule::new(&case);
        let model = CoverageModel::new(&case);
        for k in host_waits(&case) {
            prop_assert_eq!(
                schedule_covered(&case, &schedule, k),
                model.covered_launches(k),
                "wait at program[{}]", k
            );
        }
    }

    /// With no stream-wait joining two devices, a device-wide wait on X covers exactly the
    /// launches in X's streams submitted before it: none of another device's work.
    #[test]
    fn a_device_wide_wait_covers_no_work_of_another_device(raw in arb_device_case()) {
        let case = valid(&without_cross_device_joins(&raw));
        let schedule = Schedule::new(&case);
        for k in host_waits(&case) {
            let Op::HostWait { target: crate::case::WaitTarget::Device(device), .. } = &case.program[k] else {
                continue;
            };
            let expected: Vec<OpIdx> = (0..k)
                .filter(|&j| launch_stream(&case, j).is_some_and(|s| &case.streams[s].device == device))
                .collect();
            prop_assert_eq!(schedule_covered(&case, &schedule, k), expected, "device wait at program[{}]", k);
        }
    }

    /// A stream wait covers its own stream's launches before it; another stream's work only
    /// when a declared dependency joins it to that stream: with every stream-wait removed,
    /// exactly its own stream's launches; with them, nothing the model does not order before
    /// one of the stream's ops.
    #[test]
    fn a_stream_wait_covers_no_work_of_another_stream_unless_joined(raw in arb_device_case()) {
        let unjoined = valid(&without_joins(&raw));
        let schedule = Schedule::new(&unjoined);
        for k in host_waits(&unjoined) {
            let Op::HostWait { target: crate::case::WaitTarget::Stream(s), implicit: None, .. } = &unjoined.program[k] else {
                continue;
            };
            let own: Vec<OpIdx> = (0..k).filter(|&j| launch_stream(&unjoined, j) == Some(*s)).collect();
            prop_assert_eq!(schedule_covered(&unjoined, &schedule, k), own, "unjoined stream wait at program[{}]", k);
        }

        let case = valid(&raw);
        let schedule = Schedule::new(&case);
        let model = CoverageModel::new(&case);
        for k in host_waits(&case) {
            let Op::HostWait { target: crate::case::WaitTarget::Stream(s), .. } = &case.program[k] else {
                continue;
            };
            for j in schedule_covered(&case, &schedule, k) {
                let joined = (0..k).any(|y| model.stream_of(y) == Some(*s) && model.ordered(j, y));
                prop_assert!(
                    launch_stream(&case, j) == Some(*s) || joined,
                    "stream wait at program[{}] covers launch program[{}] of another stream with no join", k, j
                );
            }
        }
    }

    /// A stream-wait is effective (joins anything) exactly when its event was recorded
    /// earlier in the program, and then orders the record before it; and the schedule's
    /// `depends_on` agrees with the model's order on every pair of stream ops.
    #[test]
    fn stream_order_equals_the_reference_model(raw in arb_device_case()) {
        let case = valid(&raw);
        let schedule = Schedule::new(&case);
        let model = CoverageModel::new(&case);
        let n = case.program.len();
        for k in 0..n {
            if let Op::StreamWait { event, .. } = case.program[k] {
                let recorded_before = (0..k).any(|r| matches!(case.program[r], Op::Record(e) if e == event));
                prop_assert_eq!(schedule.stream_wait_effective(k), recorded_before, "stream-wait at program[{}]", k);
            }
        }
        for later in (0..n).filter(|&k| model.stream_of(k).is_some()) {
            for earlier in (0..n).filter(|&k| model.stream_of(k).is_some()) {
                prop_assert_eq!(
                    schedule.depends_on(later, earlier),
                    model.ordered(earlier, later),
                    "program[{}] after program[{}]", later, earlier
                );
            }
        }
    }

    /// An implicit wait (SPEC §4) covers at its documented scope, whatever else the program
    /// does: a device-to-host copy covers itself, a pageable host-to-device copy does not;
    /// neither covers anything launched in its stream after the copy, nor anything of another
    /// stream that is not ordered before the copy.
    #[test]
    fn an_implicit_wait_covers_its_documented_scope_and_no_more(raw in arb_device_case()) {
        let case = valid(&raw);
        let schedule = Schedule::new(&case);
        let model = CoverageModel::new(&case);
        for k in host_waits(&case) {
            let Op::HostWait { implicit: Some(implicit), .. } = &case.program[k] else {
                continue;
            };
            let covered = schedule_covered(&case, &schedule, k);
            let covers_the_copy = !matches!(implicit.kind, crate::case::ImplicitKind::PageableHtod);
            prop_assert_eq!(covered.contains(&implicit.copy_op), covers_the_copy, "implicit wait at program[{}]", k);
            let copy_stream = launch_stream(&case, implicit.copy_op);
            for &j in &covered {
                prop_assert!(
                    model.ordered(j, implicit.copy_op),
                    "implicit wait at program[{}] covers program[{}], not ordered before its copy", k, j
                );
                if launch_stream(&case, j) == copy_stream {
                    prop_assert!(j <= implicit.copy_op, "implicit wait at program[{}] covers later work program[{}]", k, j);
                }
            }
        }
    }

    /// Both host-completion questions get exactly the verdict the model derives from SPEC §5.
    #[test]
    fn completion_verdicts_equal_the_reference_model(raw in arb_device_case()) {
        let case = valid(&raw);
        let model = CoverageModel::new(&case);
        let report = evaluate(&case);
        for q in &case.questions {
            let Ask::HostCompletion { timer, work } = &q.ask else { continue };
            let v = report.answer(&q.id).and_then(|a| a.outcome.verdict()).expect("a duration");
            let actual = v.value().ok_or(v.reason());
            prop_assert_eq!(actual, model.completion(*timer, work).map_err(Some), "question `{}`", q.id);
        }
    }

    /// Every device-interval question is known exactly when the model says the pair may be
    /// read, and is otherwise unknown for the model's reason.
    #[test]
    fn device_interval_verdicts_equal_the_reference_model(raw in arb_device_case()) {
        let case = valid(&raw);
        let model = CoverageModel::new(&case);
        let report = evaluate(&case);
        for q in &case.questions {
            let Ask::DeviceInterval { start, end } = &q.ask else { continue };
            let v = report.answer(&q.id).and_then(|a| a.outcome.verdict()).expect("a duration");
            prop_assert_eq!(v.reason(), model.pair_readable(*start, *end).err(), "question `{}`", q.id);
        }
    }

    /// Adding a declared dependency (a stream-wait, anywhere) only adds order: every answer
    /// that was known stays known, with the same value.
    #[test]
    fn adding_a_dependency_never_turns_a_known_answer_unknown(
        raw in arb_device_case(),
        stream in any::<Index>(),
        event in any::<Index>(),
        at in any::<Index>(),
    ) {
        let before = verdicts(&evaluate(&valid(&raw)));
        let mut edited = raw.clone();
        let dependency = RawOp::StreamWait {
            stream: raw.streams[stream.index(raw.streams.len())].id.clone(),
            event: raw.events[event.index(raw.events.len())].id.clone(),
        };
        edited.program.insert(at.index(raw.program.len() + 1), dependency);
        let after = verdicts(&evaluate(&valid(&edited)));
        for ((id, value, _), (_, value_after, reason_after)) in before.iter().zip(&after) {
            if value.is_some() {
                prop_assert_eq!(value, value_after, "question `{}` became {:?}", id, reason_after);
            }
        }
    }

    /// Renaming devices and streams, and reordering the stream declarations, changes no
    /// verdict: no rule may depend on a name or on a declaration index.
    #[test]
    fn renaming_devices_and_streams_changes_no_verdict(
        raw in arb_device_case(),
        devices in permutations(),
        streams in permutations(),
        order in permutations(),
    ) {
        let before = verdicts(&evaluate(&valid(&raw)));
        let after = verdicts(&evaluate(&valid(&renamed(&raw, &devices, &streams, &order))));
        prop_assert_eq!(before, after);
    }
}

/// The laws are only as strong as the programs they see: a few hundred draws must contain
/// every configuration that the device and stream rules are about.
#[test]
fn the_generator_draws_every_configuration_the_laws_need() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRng, TestRunner};

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(Default::default()),
    );
    let strategy = arb_device_shape();
    let mut device_wait_beside_other_device = 0;
    let (mut stream_wait_joined, mut stream_wait_unjoined) = (0, 0);
    let (mut instances, mut joined_pair) = (0, 0);
    let (mut implicit_waits, mut legacy_covers_blocking) = (0, 0);
    for _ in 0..300 {
        let shape = strategy.new_tree(&mut runner).unwrap().current();
        let case = valid(&device_case_from_shape(&shape));
        let model = CoverageModel::new(&case);
        let used: std::collections::BTreeSet<_> = case.streams.iter().map(|s| s.clock).collect();
        instances += usize::from(used.len() >= 2);
        for k in host_waits(&case) {
            let launches_before: Vec<OpIdx> = (0..k)
                .filter(|&j| launch_stream(&case, j).is_some())
                .collect();
            let covered = model.covered_launches(k);
            if let Op::HostWait {
                target: crate::case::WaitTarget::Stream(s),
                ..
            } = &case.program[k]
            {
                let kind = |t: usize| case.streams[t].kind;
                let blocking = covered.iter().any(|&j| {
                    launch_stream(&case, j).is_some_and(|t| kind(t) == Some(StreamKind::Blocking))
                });
                legacy_covers_blocking +=
                    usize::from(kind(*s) == Some(StreamKind::LegacyDefault) && blocking);
            }
            match &case.program[k] {
                Op::HostWait {
                    implicit: Some(implicit),
                    ..
                } => {
                    implicit_waits += usize::from(launch_stream(&case, implicit.copy_op).is_some());
                }
                Op::HostWait {
                    target: crate::case::WaitTarget::Device(d),
                    ..
                } => {
                    let other = launches_before
                        .iter()
                        .any(|&j| &case.streams[launch_stream(&case, j).unwrap()].device != d);
                    device_wait_beside_other_device += usize::from(other);
                }
                Op::HostWait {
                    target: crate::case::WaitTarget::Stream(s),
                    ..
                } => {
                    let joined = covered.iter().any(|&j| launch_stream(&case, j) != Some(*s));
                    let unjoined = launches_before
                        .iter()
                        .any(|j| launch_stream(&case, *j) != Some(*s) && !covered.contains(j));
                    stream_wait_joined += usize::from(joined);
                    stream_wait_unjoined += usize::from(unjoined);
                }
                _ => {}
            }
        }
        joined_pair += case
            .questions
            .iter()
            .filter(|q| match q.ask {
                Ask::DeviceInterval { start, end } => {
                    case.events[start].stream != case.events[end].stream
                        && model.pair_readable(start, end).is_ok()
                }
                _ => false,
            })
            .count();
    }
    assert!(
        device_wait_beside_other_device >= 30,
        "{device_wait_beside_other_device} device waits beside another device's work"
    );
    assert!(
        stream_wait_joined >= 20,
        "{stream_wait_joined} stream waits covering a joined stream's work"
    );
    assert!(
        stream_wait_unjoined >= 20,
        "{stream_wait_unjoined} stream waits beside an unjoined stream's work"
    );
    assert!(implicit_waits >= 30, "{implicit_waits} implicit waits");
    assert!(
        legacy_covers_blocking >= 5,
        "{legacy_covers_blocking} waits on a legacy default stream covering a blocking stream's work"
    );
    assert!(
        instances >= 30,
        "{instances} cases with streams on two clock instances"
    );
    assert!(
        joined_pair >= 10,
        "{joined_pair} device intervals across joined streams"
    );
}

/// A hand-made program where the two readings of the device rule part: if the device arm
/// covered every device, this law's expectation would differ from the schedule's answer.
#[test]
fn the_device_law_sees_work_on_a_second_device() {
    use super::devices::{DeviceShape, DeviceStep};
    let shape = DeviceShape {
        streams_per_device: vec![1, 1],
        device_clock: vec![0, 1],
        clocks: 2,
        stream_kinds: vec![None, None],
        phase_streams: vec![0, 1],
        launch_after: vec![Some(0), Some(0)],
        event_streams: vec![0],
        steps: vec![DeviceStep::WaitDevice(0)],
        timer_after: 0,
    };
    let case = valid(&device_case_from_shape(&shape));
    let report = evaluate(&case);
    let completion = report
        .answer("completion")
        .and_then(|a| a.outcome.verdict())
        .unwrap();
    assert_eq!(completion.reason(), Some(Reason::WaitMissesWork));
    let model = CoverageModel::new(&case);
    let wait = host_waits(&case)[0];
    assert_eq!(model.covered_launches(wait).len(), 1);
}
