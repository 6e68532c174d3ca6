//! A [`CaptureRecord`] as a case file: clocks, streams, events, phases, the host program,
//! series and questions, each detailed run with its expected verdicts.
//!
//! The expectations a capture writes are the answers its own numbers imply, computed here
//! from the raw readings (stop − start, end − start), independently of the engine; replaying
//! the file with `worksheet check` then tests that the engine reads the capture as the
//! capture meant it. The structural part — which answers are known and which unknown, with
//! which reason — holds on any device; the values belong to this capture.
//!
//! Ids: a group is `spin-10us-idle`; its detailed run `spin-10us-idle-r20` has events
//! `…-start`, `…-end` (held mode also `…-held`), phases `…-kernel` (its stream's time between
//! its events), `…-gate` (held mode) and `…-body` (`%globaltimer`), timers and questions
//! `…-submission`, `…-host-completion` and `…-device-interval`. Series are
//! `spin-10us-idle-submission` (…`-device-interval`, `-host-completion`, `-body`).

use serde_json::{json, Map, Value};

use super::record::{
    Boundary, CaptureRecord, CrossStreamDemo, DriverAnswer, Group, Mode, Run, WaitScopeDemo,
};
use crate::case::raw::{
    RawCase, RawClock, RawEvent, RawEventState, RawExpectDuration, RawExpectIntervals, RawHostWait,
    RawOp, RawPhase, RawQuestion, RawSeries, RawStream, RawTime,
};
use crate::stats::{SampleSet, Summary};
use crate::units::Nanos;

/// Clock ids used in every capture.
pub const HOST: &str = "host";
/// The device event clock.
pub const GPU: &str = "gpu";
/// The GPU's `%globaltimer`.
pub const GLOBALTIMER: &str = "globaltimer";
/// The stream of the spin runs.
pub const MAIN: &str = "main";
/// The second stream of the demonstrations.
pub const SECOND: &str = "second";

pub(crate) fn t(v: Nanos) -> RawTime {
    RawTime::from(v)
}

pub(crate) fn known(v: Nanos) -> Option<RawExpectDuration> {
    Some(RawExpectDuration {
        verdict: "known".into(),
        value: Some(t(v)),
        reason: None,
        attribution: None,
        lo: None,
        hi: None,
    })
}

pub(crate) fn unknown(reason: &str) -> Option<RawExpectDuration> {
    Some(RawExpectDuration {
        verdict: "unknown".into(),
        value: None,
        reason: Some(reason.into()),
        attribution: None,
        lo: None,
        hi: None,
    })
}

pub(crate) fn diff(a: Nanos, b: Nanos) -> Nanos {
    Nanos::new(a.as_i64() - b.as_i64())
}

pub(crate) fn event(id: String, stream: &str, at: Option<Nanos>) -> RawEvent {
    RawEvent {
        id,
        stream: stream.into(),
        timing: true,
        state: if at.is_some() {
            RawEventState::Completed
        } else {
            RawEventState::Pending
        },
        at: at.map(t),
    }
}

pub(crate) fn phase(id: String, label: String, stream: &str, start: Nanos, end: Nanos) -> RawPhase {
    RawPhase {
        id: id.into(),
        label: Some(label.into()),
        stream: Some(stream.into()),
        clock: None,
        start: t(start),
        end: t(end),
    }
}

pub(crate) fn timer(start: bool, timer: String, at: Nanos) -> RawOp {
    if start {
        RawOp::TimerStart {
            timer,
            clock: HOST.into(),
            at: t(at),
        }
    } else {
        RawOp::TimerStop {
            timer,
            clock: HOST.into(),
            at: t(at),
        }
    }
}

pub(crate) fn record(event: String) -> RawOp {
    RawOp::Record { event }
}

pub(crate) fn launch(phase: String) -> RawOp {
    RawOp::Launch {
        phase: phase.into(),
    }
}

pub(crate) fn host_wait_event(id: String, event: String, at: Nanos) -> RawOp {
    RawOp::HostWait(Box::new(RawHostWait {
        id,
        event: Some(event),
        stream: None,
        device: None,
        clock: Some(HOST.into()),
        at: Some(t(at)),
        implicit: None,
        copy: None,
    }))
}

pub(crate) fn host_wait_device(id: String, device: &str, at: Nanos) -> RawOp {
    RawOp::HostWait(Box::new(RawHostWait {
        id,
        event: None,
        stream: None,
        device: Some(device.into()),
        clock: Some(HOST.into()),
        at: Some(t(at)),
        implicit: None,
        copy: None,
    }))
}

/// The provenance object every capture carries.
fn provenance(rec: &CaptureRecord) -> Map<String, Value> {
    let d = &rec.device;
    let floor = SampleSet::from_runs(&[], &rec.calibration.consecutive)
        .ok()
        .and_then(|s| Summary::of(&s).ok());
    let mut p = Map::new();
    p.insert(
        "tool".into(),
        json!(format!("worksheet {}", env!("CARGO_PKG_VERSION"))),
    );
    p.insert("command".into(), json!(rec.options.command));
    p.insert("date".into(), json!(rec.date));
    p.insert("simulated".into(), json!(d.simulated));
    p.insert(
        "device".into(),
        json!({
            "name": d.name, "uuid": d.uuid, "context": d.context,
            "compute_capability": d.compute_capability,
            "driver_cuda_version": d.driver_cuda_version, "driver_version": d.driver_version,
        }),
    );
    p.insert(
        "host".into(),
        json!({"hostname": d.hostname, "boot_id": d.boot_id, "pid": d.pid}),
    );
    p.insert(
        "clocks".into(),
        json!({
            HOST: "the host's monotonic clock (Rust Instant, CLOCK_MONOTONIC), origin at the start of the capture",
            GPU: "device event timestamps: offsets from the capture's anchor event, read with cuEventElapsedTime (f32 ms, converted once to ns); the anchor is re-recorded before each detailed run so each offset read is short; every device interval is the driver's own elapsed time of its pair",
            GLOBALTIMER: "%globaltimer read inside the spin kernel (first and last reading of its busy-wait)",
        }),
    );
    let mut cal = Map::new();
    cal.insert("event_step_ns".into(), json!(rec.event_step()));
    cal.insert(
        "event_step_meaning".into(),
        json!("greatest common divisor of every elapsed reading of this capture: event timestamps come in steps of this size (or a divisor of it)"),
    );
    if let Some(s) = floor {
        cal.insert(
            "consecutive_events".into(),
            json!({
                "pairs": s.count(), "min": s.min(), "median": s.median(), "p90": s.p90(), "max": s.max(),
                "meaning": "two events recorded back to back on an idle stream: the smallest interval events can report; intervals near it cannot be told from nothing",
            }),
        );
    }
    cal.insert("globaltimer_step_ns".into(), json!(rec.globaltimer_step()));
    p.insert("calibration".into(), Value::Object(cal));
    p.insert(
        "modes".into(),
        json!({
            "idle": "stream synchronized before the run: the start event fires when recorded, before the launch lands, so launch latency is inside the device interval",
            "held": "a gate kernel holds the stream while start event, kernel and end event are queued; the host then releases it (as nvbench does): launch latency is outside the device interval; host completion then starts just before the release",
        }),
    );
    p.insert(
        "runs".into(),
        json!({
            "spins": rec.options.spins, "warmup": rec.options.warmup, "measured": rec.options.runs,
            "detailed_per_group": rec.options.detail,
        }),
    );
    let demos = &rec.demos;
    p.insert(
        "demonstrations".into(),
        json!({
            "demo-timing-disabled": format!("cuEventElapsedTime on two events created with CU_EVENT_DISABLE_TIMING, both completed: {}", demos.timing_disabled.elapsed),
            "demo-event-incomplete": format!("end event held behind a gate: cuEventQuery answered {}; cuEventElapsedTime answered {} and returned after {} (it does not block)", demos.event_incomplete.query, demos.event_incomplete.elapsed, demos.event_incomplete.call),
            "demo-cross-stream": format!("no dependency between the streams; the driver still answered {}", demos.cross_stream.elapsed),
            "demo-cross-stream-joined": format!("stream B waits on A's end event; the driver answered {}", demos.cross_stream_joined.elapsed),
            "demo-wait-event": format!("host waited on stream A's end event; a query of B's end event right after answered {}", demos.wait_event.b_query_after_wait),
            "demo-wait-device": format!("host synchronized the device; a query of B's end event right after answered {}", demos.wait_device.b_query_after_wait),
        }),
    );
    p
}

/// Builds the case file of a capture.
pub fn capture_case(rec: &CaptureRecord, name: &str) -> RawCase {
    let d = &rec.device;
    let mut case = RawCase::new(name);
    case.description = Some(format!(
        "{}capture on {}: the three boundaries of a %globaltimer spin kernel ({}) with the stream idle and held, \
         the event clock's floor and step, and the unknowns shown on the device. Detailed runs carry events, \
         phases and the host program; every run is in the series.",
        if d.simulated { "SIMULATED " } else { "" },
        d.name,
        rec.options
            .spins
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    case.provenance = Some(provenance(rec));
    case.clocks = vec![
        RawClock {
            id: HOST.into(),
            domain: "host".into(),
            instance: Some(d.host_instance()),
        },
        RawClock {
            id: GPU.into(),
            domain: "device".into(),
            instance: Some(d.event_instance()),
        },
        RawClock {
            id: GLOBALTIMER.into(),
            domain: "device".into(),
            instance: Some(d.globaltimer_instance()),
        },
    ];
    case.streams = [MAIN, SECOND]
        .iter()
        .map(|s| RawStream {
            id: (*s).into(),
            clock: GPU.into(),
            device: d.uuid.clone(),
            kind: None,
        })
        .collect();

    calibration(rec, &mut case);
    for g in &rec.groups {
        for run in &g.runs {
            if run.detail.is_some() {
                detailed_run(g, run, &mut case);
            }
        }
    }
    for g in &rec.groups {
        series(g, &mut case);
    }
    demos(rec, &mut case);
    case
}

fn calibration(rec: &CaptureRecord, case: &mut RawCase) {
    if let Some((a, b)) = rec.calibration.first_pair {
        case.events
            .push(event("calibration-first".into(), MAIN, Some(a)));
        case.events
            .push(event("calibration-second".into(), MAIN, Some(b)));
        case.program.push(record("calibration-first".into()));
        case.program.push(record("calibration-second".into()));
        case.questions.push(RawQuestion::DeviceInterval {
            id: "calibration-consecutive-events".into(),
            start: "calibration-first".into(),
            end: "calibration-second".into(),
            expect: known(diff(b, a)),
        });
    }
    if !rec.calibration.consecutive.is_empty() {
        case.series.push(RawSeries {
            id: "calibration-consecutive-events".into(),
            label: Some(
                "elapsed time of two events recorded back to back on an idle stream".into(),
            ),
            warmup: Vec::new(),
            measured: rec.calibration.consecutive.iter().map(|v| t(*v)).collect(),
            failed: Vec::new(),
        });
    }
}

fn detailed_run(g: &Group, run: &Run, case: &mut RawCase) {
    let Some(pos) = run.detail else { return };
    let p = format!("{}-r{}", g.id(), run.index);
    let id = |s: &str| format!("{p}-{s}");
    let h = run.host;
    case.events.push(event(id("start"), MAIN, Some(pos.start)));
    case.events.push(event(id("end"), MAIN, Some(pos.end)));
    case.phases.push(phase(
        id("kernel"),
        format!(
            "spin kernel {} ({}), placed between its events",
            g.spin,
            g.mode.describe()
        ),
        MAIN,
        pos.start,
        pos.end,
    ));
    if let Some((b0, b1)) = run.body {
        case.phases.push(RawPhase {
            id: id("body").into(),
            label: Some(format!("kernel body by %globaltimer (asked {})", g.spin).into()),
            stream: None,
            clock: Some(GLOBALTIMER.into()),
            start: t(Nanos::new(b0)),
            end: t(Nanos::new(b1)),
        });
    }
    match (g.mode, pos.held) {
        (Mode::Held, Some(held)) => {
            case.events.push(event(id("held"), MAIN, Some(held)));
            case.phases.push(phase(
                id("gate"),
                "gate kernel: holds the stream until the host releases it".into(),
                MAIN,
                held,
                pos.start,
            ));
            case.program.push(record(id("held")));
            case.program.push(launch(id("gate")));
            case.program.push(timer(true, id("submission"), h.t0));
        }
        _ => {
            case.program.push(timer(true, id("host-completion"), h.t0));
            case.program.push(timer(true, id("submission"), h.t0));
        }
    }
    case.program.push(record(id("start")));
    case.program.push(launch(id("kernel")));
    case.program.push(record(id("end")));
    case.program.push(timer(false, id("submission"), h.t1));
    if g.mode == Mode::Held {
        case.program.push(timer(true, id("host-completion"), h.t2));
    }
    case.program
        .push(host_wait_event(id("wait"), id("end"), h.t3));
    case.program.push(timer(false, id("host-completion"), h.t3));
    case.questions.push(RawQuestion::Submission {
        id: id("submission"),
        timer: id("submission"),
        expect: known(h.submission()),
    });
    case.questions.push(RawQuestion::DeviceInterval {
        id: id("device-interval"),
        start: id("start"),
        end: id("end"),
        expect: known(diff(pos.end, pos.start)),
    });
    case.questions.push(RawQuestion::HostCompletion {
        id: id("host-completion"),
        timer: id("host-completion"),
        work: Some(vec![id("kernel").into()]),
        expect: known(h.completion()),
    });
}

/// One boundary's values over a group's runs: warm-ups, measured, failed.
fn split(g: &Group, value: impl Fn(&Run) -> Option<Nanos>) -> RawSeries {
    let mut s = RawSeries {
        id: String::new(),
        label: None,
        warmup: Vec::new(),
        measured: Vec::new(),
        failed: Vec::new(),
    };
    for run in &g.runs {
        let Some(v) = value(run) else { continue };
        if run.failure.is_some() {
            s.failed.push(t(v));
        } else if run.warmup {
            s.warmup.push(t(v));
        } else {
            s.measured.push(t(v));
        }
    }
    s
}

fn series(g: &Group, case: &mut RawCase) {
    for boundary in Boundary::ALL {
        let mut s = split(g, |r| boundary.value(r));
        if s.measured.is_empty() && s.warmup.is_empty() && s.failed.is_empty() {
            continue;
        }
        s.id = format!("{}-{}", g.id(), boundary.suffix());
        let label = boundary.label(g.mode);
        s.label = Some(format!("{label}, spin {}, {}", g.spin, g.mode.describe()));
        case.questions.push(RawQuestion::SteadyState {
            id: format!("{}-steady", s.id),
            series: s.id.clone(),
            min_warmup: None,
            tolerance_percent: None,
            expect: None,
        });
        case.series.push(s);
    }
}

fn demos(rec: &CaptureRecord, case: &mut RawCase) {
    let demos = &rec.demos;
    // Timing disabled: both events completed, neither has a timestamp.
    for id in ["demo-untimed-start", "demo-untimed-end"] {
        case.events.push(RawEvent {
            id: id.into(),
            stream: MAIN.into(),
            timing: false,
            state: RawEventState::Completed,
            at: None,
        });
        case.program.push(record(id.into()));
    }
    case.questions.push(RawQuestion::DeviceInterval {
        id: "demo-timing-disabled".into(),
        start: "demo-untimed-start".into(),
        end: "demo-untimed-end".into(),
        expect: if demos.timing_disabled.elapsed.error_name() == Some(DriverAnswer::INVALID_HANDLE)
        {
            unknown("timing-disabled")
        } else {
            None
        },
    });

    // Event incomplete: the end event was pending when read.
    let pending = demos.event_incomplete.elapsed.error_name() == Some(DriverAnswer::NOT_READY);
    case.events.push(event(
        "demo-pending-start".into(),
        MAIN,
        Some(demos.event_incomplete.start),
    ));
    case.events.push(RawEvent {
        id: "demo-pending-end".into(),
        stream: MAIN.into(),
        timing: true,
        state: if pending {
            RawEventState::Pending
        } else {
            RawEventState::Completed
        },
        at: if pending {
            None
        } else {
            Some(t(demos.event_incomplete.end))
        },
    });
    case.program.push(record("demo-pending-start".into()));
    case.program.push(record("demo-pending-end".into()));
    case.questions.push(RawQuestion::DeviceInterval {
        id: "demo-event-incomplete".into(),
        start: "demo-pending-start".into(),
        end: "demo-pending-end".into(),
        expect: if pending {
            unknown("event-incomplete")
        } else {
            None
        },
    });

    cross(&demos.cross_stream, "demo-cross-stream", case);
    cross(&demos.cross_stream_joined, "demo-cross-stream-joined", case);
    wait_scope(&demos.wait_event, "demo-wait-event", &rec.device.uuid, case);
    wait_scope(
        &demos.wait_device,
        "demo-wait-device",
        &rec.device.uuid,
        case,
    );
}

fn cross(demo: &CrossStreamDemo, p: &str, case: &mut RawCase) {
    let id = |s: &str| format!("{p}-{s}");
    case.events.push(event(id("a-start"), MAIN, Some(demo.a.0)));
    case.events.push(event(id("a-end"), MAIN, Some(demo.a.1)));
    case.events
        .push(event(id("b-start"), SECOND, Some(demo.b.0)));
    case.events.push(event(id("b-end"), SECOND, Some(demo.b.1)));
    case.phases.push(phase(
        id("a-kernel"),
        "stream A's spin kernel, between its events".into(),
        MAIN,
        demo.a.0,
        demo.a.1,
    ));
    case.phases.push(phase(
        id("b-kernel"),
        "stream B's spin kernel, between its events".into(),
        SECOND,
        demo.b.0,
        demo.b.1,
    ));
    case.program.push(record(id("a-start")));
    case.program.push(launch(id("a-kernel")));
    case.program.push(record(id("a-end")));
    if demo.dependency {
        case.program.push(RawOp::StreamWait {
            stream: SECOND.into(),
            event: id("a-end"),
        });
    }
    case.program.push(record(id("b-start")));
    case.program.push(launch(id("b-kernel")));
    case.program.push(record(id("b-end")));
    case.questions.push(RawQuestion::DeviceInterval {
        id: p.into(),
        start: id("a-start"),
        end: id("b-end"),
        expect: if demo.dependency {
            known(diff(demo.b.1, demo.a.0))
        } else {
            unknown("cross-stream")
        },
    });
    case.questions.push(RawQuestion::Intervals {
        id: id("kernels"),
        phases: Some(vec![id("a-kernel").into(), id("b-kernel").into()]),
        expect: Some(RawExpectIntervals {
            verdict: None,
            reason: None,
            count: Some(2),
            sum: None,
            union: None,
            span: None,
            gaps: None,
            overlap: None,
            overlap_regions: None,
            max_depth: None,
        }),
    });
}

fn wait_scope(demo: &WaitScopeDemo, p: &str, device: &str, case: &mut RawCase) {
    let id = |s: &str| format!("{p}-{s}");
    case.events.push(event(id("a-start"), MAIN, Some(demo.a.0)));
    case.events.push(event(id("a-end"), MAIN, Some(demo.a.1)));
    case.events
        .push(event(id("b-start"), SECOND, Some(demo.b.0)));
    case.events.push(event(id("b-end"), SECOND, Some(demo.b.1)));
    case.phases.push(phase(
        id("a-kernel"),
        "stream A's short spin kernel".into(),
        MAIN,
        demo.a.0,
        demo.a.1,
    ));
    case.phases.push(phase(
        id("b-kernel"),
        "stream B's long spin kernel".into(),
        SECOND,
        demo.b.0,
        demo.b.1,
    ));
    let (t0, t1) = demo.host;
    case.program.push(timer(true, p.into(), t0));
    case.program.push(record(id("a-start")));
    case.program.push(launch(id("a-kernel")));
    case.program.push(record(id("a-end")));
    case.program.push(record(id("b-start")));
    case.program.push(launch(id("b-kernel")));
    case.program.push(record(id("b-end")));
    let by_device = demo.wait == "device";
    case.program.push(if by_device {
        host_wait_device(id("wait"), device, t1)
    } else {
        host_wait_event(id("wait"), id("a-end"), t1)
    });
    case.program.push(timer(false, p.into(), t1));
    case.questions.push(RawQuestion::HostCompletion {
        id: p.into(),
        timer: p.into(),
        work: None,
        expect: if by_device {
            known(diff(t1, t0))
        } else {
            unknown("wait-misses-work")
        },
    });
}
