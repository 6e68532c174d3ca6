//! Generators of programs over several devices, streams and clock instances, for the verdict
//! laws of SPEC §4–§5 that need more than one of each.
//!
//! [`arb_device_case`] draws a valid case with:
//!
//! - one to three devices `gpu0`, `gpu1`, `gpu2`, each with one to three streams
//!   (`g<d>s<k>`: stream `k` of device `d`);
//! - one to three device clocks (`dev0`, … domain `device`, instance `ctx-<c>`), each device
//!   on one of them, so devices share a clock instance or not, plus the host clock `host`;
//! - one to six phases, each in a drawn stream and launched at most once (about one in eight is
//!   never launched), and one to five events, each recorded at most once;
//! - a declared kind for four streams in five (`legacy-default`, `blocking`,
//!   `non-blocking`, `per-thread-default`; SPEC §4), so the legacy default stream's implicit
//!   order comes up;
//! - a program of records, stream-waits (on events of any stream, of any device, recorded
//!   before or after), host waits on events, streams and devices, implicit waits (a launched
//!   phase's call was a copy that waits, of each kind of SPEC §4), and launches; host timer `t`
//!   starts after a drawn number of steps (so work can come before it) and stops at the end.
//!
//! Questions: `completion` (timer `t`, the default claim: the work launched inside it),
//! `everything` (timer `t`, claiming every phase, launched before the start, or never), and
//! `pair-<i>-<j>` for every pair of recorded events, in record order (a device interval).
//! The case is a [`RawCase`] that a law may edit and validate again; it is built from JSON so
//! that fields the case format adds later keep their defaults.
//!
//! Every generated case validates: events are completed exactly when the program records them,
//! at a timestamp that increases along the program.

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::case::raw::RawCase;

/// Most devices [`arb_device_case`] draws.
pub const MAX_DEVICES: usize = 3;
/// Most streams per device.
pub const MAX_STREAMS_PER_DEVICE: usize = 3;

/// The stream kinds a stream may declare (SPEC §4), as written in case files.
pub const STREAM_KINDS: [&str; 4] = [
    "legacy-default",
    "blocking",
    "non-blocking",
    "per-thread-default",
];

/// The implicit waits a copy may be (SPEC §4), as written in case files.
pub const IMPLICIT_KINDS: [&str; 3] = [
    "sync-copy-dtoh",
    "async-copy-dtoh-pageable",
    "pageable-htod",
];

/// One step of a generated program, before it is written as ops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceStep {
    /// Record event `0` (skipped if already recorded).
    Record(usize),
    /// Stream `0` (global index) waits for event `1`.
    StreamWait(usize, usize),
    /// Record event `1` (if not yet recorded), then stream `0` waits for it: a join, as
    /// `cudaEventRecord` followed by `cudaStreamWaitEvent`.
    Join(usize, usize),
    /// [`DeviceStep::Join`]`(s, e)`, then a host wait on stream `s`: the join that makes a
    /// stream wait cover another stream's work.
    JoinThenWait(usize, usize),
    /// Host wait on event `0`.
    WaitEvent(usize),
    /// Host wait on stream `0`.
    WaitStream(usize),
    /// Host wait on device `0`.
    WaitDevice(usize),
    /// If phase `0` is launched already, the host call that launched it was a copy that
    /// waits: an implicit wait of kind [`IMPLICIT_KINDS`]`[1]` on its stream.
    Copy(usize, usize),
}

/// The shape of a generated multi-device case.
#[derive(Clone, Debug)]
pub struct DeviceShape {
    /// Streams of each device (1–3 each, 1–3 devices).
    pub streams_per_device: Vec<usize>,
    /// The device clock of each device (an index into `0..clocks`).
    pub device_clock: Vec<usize>,
    /// Number of device clocks (1–3).
    pub clocks: usize,
    /// The declared kind of each global stream: an index into [`STREAM_KINDS`], or `None`.
    pub stream_kinds: Vec<Option<usize>>,
    /// Global stream of each phase.
    pub phase_streams: Vec<usize>,
    /// For each phase, the number of steps before its launch, or `None`: never launched.
    pub launch_after: Vec<Option<usize>>,
    /// Global stream of each event.
    pub event_streams: Vec<usize>,
    /// Steps other than launches, in order.
    pub steps: Vec<DeviceStep>,
    /// Steps before timer `t` starts.
    pub timer_after: usize,
}

impl DeviceShape {
    /// Number of streams over all devices.
    pub fn stream_count(&self) -> usize {
        self.streams_per_device.iter().sum()
    }

    /// The device of global stream `s`.
    pub fn device_of(&self, s: usize) -> usize {
        let mut first = 0;
        for (d, &n) in self.streams_per_device.iter().enumerate() {
            if s < first + n {
                return d;
            }
            first += n;
        }
        panic!("stream {s} is past the last device")
    }

    /// The id of global stream `s`: `g<device>s<k>`.
    pub fn stream_id(&self, s: usize) -> String {
        let d = self.device_of(s);
        let first: usize = self.streams_per_device[..d].iter().sum();
        format!("g{d}s{}", s - first)
    }
}

/// The id of device `d`.
pub fn device_id(d: usize) -> String {
    format!("gpu{d}")
}

fn arb_step(
    streams: usize,
    events: usize,
    devices: usize,
    phases: usize,
) -> impl Strategy<Value = DeviceStep> {
    prop_oneof![
        3 => (0..events).prop_map(DeviceStep::Record),
        2 => (0..streams, 0..events).prop_map(|(s, e)| DeviceStep::StreamWait(s, e)),
        2 => (0..streams, 0..events).prop_map(|(s, e)| DeviceStep::Join(s, e)),
        1 => (0..streams, 0..events).prop_map(|(s, e)| DeviceStep::JoinThenWait(s, e)),
        1 => (0..events).prop_map(DeviceStep::WaitEvent),
        2 => (0..streams).prop_map(DeviceStep::WaitStream),
        2 => (0..devices).prop_map(DeviceStep::WaitDevice),
        2 => (0..phases, 0..IMPLICIT_KINDS.len()).prop_map(|(p, k)| DeviceStep::Copy(p, k)),
    ]
}

/// Shapes of small multi-device programs (see the module docs).
pub fn arb_device_shape() -> impl Strategy<Value = DeviceShape> {
    let layout = (
        proptest::collection::vec(1..=MAX_STREAMS_PER_DEVICE, 1..=MAX_DEVICES),
        1usize..=3,
    );
    layout.prop_flat_map(|(streams_per_device, clocks)| {
        let devices = streams_per_device.len();
        let streams: usize = streams_per_device.iter().sum();
        (1usize..=6, 1usize..=5).prop_flat_map(move |(phases, events)| {
            let streams_per_device = streams_per_device.clone();
            (
                proptest::collection::vec(0..clocks, devices),
                proptest::collection::vec(0..streams, phases),
                proptest::collection::vec(
                    prop_oneof![
                        1 => Just(None),
                        4 => (0usize..4).prop_map(Some),
                        3 => (0usize..14).prop_map(Some),
                    ],
                    phases,
                ),
                proptest::collection::vec(0..streams, events),
                proptest::collection::vec(arb_step(streams, events, devices, phases), 0..14),
                prop_oneof![3 => Just(0usize), 1 => 1usize..6],
                proptest::collection::vec(
                    // Undeclared, legacy default, blocking, non-blocking, per-thread default:
                    // weighted so that a legacy stream beside a blocking one is common.
                    prop_oneof![
                        2 => Just(None),
                        3 => Just(Some(0)),
                        3 => Just(Some(1)),
                        1 => Just(Some(2)),
                        1 => Just(Some(3)),
                    ],
                    streams,
                ),
            )
                .prop_map(
                    move |(
                        device_clock,
                        phase_streams,
                        launch_after,
                        event_streams,
                        steps,
                        timer_after,
                        stream_kinds,
                    )| DeviceShape {
                        streams_per_device: streams_per_device.clone(),
                        device_clock,
                        clocks,
                        stream_kinds,
                        phase_streams,
                        launch_after,
                        event_streams,
                        steps,
                        timer_after,
                    },
                )
        })
    })
}

/// Writes a shape as a case (see the module docs for what it asks).
pub fn device_case_from_shape(shape: &DeviceShape) -> RawCase {
    let streams = shape.stream_count();
    let stream_clock = |s: usize| format!("dev{}", shape.device_clock[shape.device_of(s)]);
    let (program, recorded_at, record_order) = device_program(shape);
    let clocks: Vec<Value> = std::iter::once(
        json!({"id": "host", "domain": "host", "instance": "boot-a"}),
    )
    .chain((0..shape.clocks).map(
        |c| json!({"id": format!("dev{c}"), "domain": "device", "instance": format!("ctx-{c}")}),
    ))
    .collect();
    let stream_decls: Vec<Value> = (0..streams)
        .map(|s| {
            let mut decl = json!({"id": shape.stream_id(s), "clock": stream_clock(s),
                                  "device": device_id(shape.device_of(s))});
            if let Some(kind) = shape.stream_kinds[s] {
                decl["kind"] = Value::String(STREAM_KINDS[kind].to_owned());
            }
            decl
        })
        .collect();
    let phases: Vec<Value> = shape
        .phase_streams
        .iter()
        .enumerate()
        .map(|(p, &s)| {
            json!({"id": format!("p{p}"), "stream": shape.stream_id(s),
                   "start": format!("{} us", 10 * p), "end": format!("{} us", 10 * p + 15)})
        })
        .collect();
    let events = device_events(shape, &recorded_at);
    let questions = device_questions(shape, &record_order);
    let case = json!({
        "format": "worksheet-case", "version": 1, "name": "generated-devices",
        "clocks": clocks, "streams": stream_decls, "events": events, "phases": phases,
        "program": program, "questions": questions,
    });
    serde_json::from_value(case).expect("the generator writes the case format")
}

/// The program: the steps with the launches and the timer placed among them; and, per event,
/// the program index of its record (`None` when never recorded), and the events in the order
/// they were recorded.
fn device_program(shape: &DeviceShape) -> (Vec<Value>, Vec<Option<usize>>, Vec<usize>) {
    let mut program = Vec::new();
    let mut recorded_at: Vec<Option<usize>> = vec![None; shape.event_streams.len()];
    let mut record_order = Vec::new();
    let mut launched = vec![false; shape.phase_streams.len()];
    let mut waits = 0;
    let steps = shape.steps.len();
    let timer_at = shape.timer_after.min(steps);
    for position in 0..=steps {
        if position == timer_at {
            program.push(json!({"op": "timer-start", "timer": "t", "clock": "host", "at": "0 us"}));
        }
        for (p, after) in shape.launch_after.iter().enumerate() {
            if after.map(|a| a.min(steps)) == Some(position) {
                program.push(json!({"op": "launch", "phase": format!("p{p}")}));
                launched[p] = true;
            }
        }
        let Some(step) = shape.steps.get(position) else {
            break;
        };
        let mut host_wait = |target: &str, value: String| {
            waits += 1;
            let mut op = json!({"op": "host-wait", "id": format!("w{waits}")});
            op[target] = Value::String(value);
            op
        };
        let mut record = |e: usize, program: &mut Vec<Value>| {
            if recorded_at[e].is_none() {
                recorded_at[e] = Some(program.len());
                record_order.push(e);
                program.push(json!({"op": "record", "event": format!("e{e}")}));
            }
        };
        let op = match step {
            DeviceStep::Record(e) => {
                record(*e, &mut program);
                continue;
            }
            DeviceStep::Join(s, e) | DeviceStep::JoinThenWait(s, e) => {
                record(*e, &mut program);
                let join = json!({"op": "stream-wait", "stream": shape.stream_id(*s), "event": format!("e{e}")});
                if !matches!(step, DeviceStep::JoinThenWait(..)) {
                    join
                } else {
                    program.push(join);
                    host_wait("stream", shape.stream_id(*s))
                }
            }
            DeviceStep::StreamWait(s, e) => {
                json!({"op": "stream-wait", "stream": shape.stream_id(*s), "event": format!("e{e}")})
            }
            DeviceStep::WaitEvent(e) => host_wait("event", format!("e{e}")),
            DeviceStep::WaitStream(s) => host_wait("stream", shape.stream_id(*s)),
            DeviceStep::WaitDevice(d) => host_wait("device", device_id(*d)),
            DeviceStep::Copy(p, kind) => {
                if !launched[*p] {
                    continue;
                }
                let mut op = host_wait("stream", shape.stream_id(shape.phase_streams[*p]));
                op["implicit"] = Value::String(IMPLICIT_KINDS[*kind].to_owned());
                op["copy"] = Value::String(format!("p{p}"));
                op
            }
        };
        program.push(op);
    }
    program.push(json!({"op": "timer-stop", "timer": "t", "clock": "host", "at": "500 us"}));
    (program, recorded_at, record_order)
}

/// The events, each completed at a time from its record's place in the program, or not
/// recorded.
fn device_events(shape: &DeviceShape, recorded_at: &[Option<usize>]) -> Vec<Value> {
    shape
        .event_streams
        .iter()
        .enumerate()
        .map(|(e, &s)| match recorded_at[e] {
            Some(k) => json!({"id": format!("e{e}"), "stream": shape.stream_id(s), "timing": true,
                              "state": "completed", "at": format!("{} us", 1000 + k)}),
            None => json!({"id": format!("e{e}"), "stream": shape.stream_id(s), "timing": true,
                           "state": "not-recorded"}),
        })
        .collect()
}

/// The questions: completion of the timer (with and without declared work), and every pair
/// of events in record order as a device interval.
fn device_questions(shape: &DeviceShape, record_order: &[usize]) -> Vec<Value> {
    let mut questions = vec![
        json!({"id": "completion", "kind": "host-completion", "timer": "t"}),
        json!({"id": "everything", "kind": "host-completion", "timer": "t",
               "work": (0..shape.phase_streams.len()).map(|p| format!("p{p}")).collect::<Vec<_>>()}),
    ];
    for (i, &a) in record_order.iter().enumerate() {
        for &b in &record_order[i + 1..] {
            questions.push(
                json!({"id": format!("pair-{a}-{b}"), "kind": "device-interval",
                                  "start": format!("e{a}"), "end": format!("e{b}")}),
            );
        }
    }
    questions
}

/// Valid generated multi-device cases (see the module docs).
pub fn arb_device_case() -> impl Strategy<Value = RawCase> {
    arb_device_shape().prop_map(|shape| device_case_from_shape(&shape))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::validate;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn generated_device_cases_validate(raw in arb_device_case()) {
            let case = validate(raw, "generated-devices");
            prop_assert!(case.is_ok(), "{:?}", case.err());
        }
    }

    #[test]
    fn stream_ids_name_their_device() {
        let shape = DeviceShape {
            streams_per_device: vec![2, 1, 3],
            device_clock: vec![0, 0, 1],
            clocks: 2,
            stream_kinds: vec![None; 6],
            phase_streams: vec![],
            launch_after: vec![],
            event_streams: vec![],
            steps: vec![],
            timer_after: 0,
        };
        let ids: Vec<String> = (0..shape.stream_count())
            .map(|s| shape.stream_id(s))
            .collect();
        assert_eq!(ids, ["g0s0", "g0s1", "g1s0", "g2s0", "g2s1", "g2s2"]);
        assert_eq!(shape.device_of(2), 1);
    }
}
