//! The capture procedure: which calls are made, in which order, inside which timer.
//!
//! Generic over [`Backend`], so the very code that runs on the GPU is also run against the
//! simulator in tests.
//!
//! 1. **Setup, outside every timer**: two streams, the events, the slots for the kernel's
//!    timer readings, a few spin launches and one gate cycle (module load, PTX JIT and first
//!    launches cost far more than a steady launch).
//! 2. **Calibration**: pairs of events recorded back to back on an idle stream; their
//!    elapsed readings give the floor of two consecutive events, and with every other
//!    reading, the event clock's step.
//! 3. **Groups**: for each spin length, in each [`Mode`], `warmup` then `runs` runs. The
//!    first `detail` measured runs of a group also read where their events sit on the
//!    event clock (from an anchor event re-recorded just before, so the `f32` offset is
//!    short and exact to the nanosecond).
//! 4. **Demonstrations** of the unknowns, on the device ([`Demos`]).
//! 5. The kernel's `%globaltimer` readings are read back once, at the end.

use super::backend::{Backend, BackendError, EventId, StreamId};
use super::record::{
    utc_now, Calibration, CaptureOptions, CaptureRecord, CrossStreamDemo, Demos, DriverAnswer,
    EventIncompleteDemo, EventPositions, Group, HostReadings, Mode, Run, TimingDisabledDemo,
    WaitScopeDemo,
};
use crate::units::Nanos;

/// The short spin used for warm-up and for the demonstrations that need "some work".
const SHORT: Nanos = Nanos::new(10_000);
/// The spin of stream A in the two-stream demonstrations.
const DEMO_A: Nanos = Nanos::new(100_000);
/// The spin of stream B in the two-stream demonstrations: longer than A's, so a wait on
/// A's end returns while B still runs.
const DEMO_B: Nanos = Nanos::new(1_000_000);
/// Calibration pairs discarded before the measured ones.
const CALIBRATION_WARMUP: usize = 10;

fn elapsed_or_fail<B: Backend>(
    b: &mut B,
    start: EventId,
    end: EventId,
    what: &str,
) -> Result<Nanos, BackendError> {
    match b.elapsed(start, end) {
        DriverAnswer::Elapsed { value } => Ok(value),
        other => Err(BackendError::Other(format!(
            "reading the elapsed time of {what}: the driver answered {other}"
        ))),
    }
}

/// An anchor event on one stream and its position on the event clock.
///
/// Positions are offsets from the anchor: `position(ev) = anchor + elapsed(anchor, ev)`.
/// Re-anchoring records the other anchor event and adds the elapsed time between the two,
/// so each offset read stays short (an `f32` millisecond count is exact to the nanosecond
/// below about 8 ms).
struct Anchor {
    events: [EventId; 2],
    current: usize,
    position: Nanos,
    stream: StreamId,
}

impl Anchor {
    fn new<B: Backend>(b: &mut B, stream: StreamId) -> Result<Self, BackendError> {
        let events = [b.new_event(true)?, b.new_event(true)?];
        b.record(events[0], stream)?;
        b.wait_event(events[0])?;
        Ok(Anchor {
            events,
            current: 0,
            position: Nanos::ZERO,
            stream,
        })
    }

    fn advance<B: Backend>(&mut self, b: &mut B) -> Result<(), BackendError> {
        let next = 1 - self.current;
        b.record(self.events[next], self.stream)?;
        b.wait_event(self.events[next])?;
        let step = elapsed_or_fail(b, self.events[self.current], self.events[next], "anchors")?;
        self.position = Nanos::new(self.position.as_i64() + step.as_i64());
        self.current = next;
        Ok(())
    }

    fn position_of<B: Backend>(&self, b: &mut B, event: EventId) -> Result<Nanos, BackendError> {
        let offset = elapsed_or_fail(b, self.events[self.current], event, "an event's offset")?;
        Ok(Nanos::new(self.position.as_i64() + offset.as_i64()))
    }
}

/// The streams and events of the spin runs.
struct Kit {
    main: StreamId,
    second: StreamId,
    start: EventId,
    end: EventId,
    held: EventId,
}

/// Runs the whole capture on `b`.
///
/// # Errors
/// A driver failure, or an answer the procedure cannot go on without (an anchor's elapsed
/// time). A failed *run* (a gate that timed out, a refused elapsed time) is recorded in the
/// run, not returned.
pub fn capture<B: Backend>(
    b: &mut B,
    options: &CaptureOptions,
) -> Result<CaptureRecord, BackendError> {
    let kit = Kit {
        main: b.new_stream()?,
        second: b.new_stream()?,
        start: b.new_event(true)?,
        end: b.new_event(true)?,
        held: b.new_event(true)?,
    };
    let per_group = options.warmup + options.runs;
    let slots = per_group * options.spins.len() * Mode::ALL.len();
    b.reserve_slots(slots.max(1))?;

    // Setup costs, outside every timer.
    for _ in 0..3 {
        b.spin(kit.main, SHORT, None)?;
    }
    b.gate(kit.main)?;
    b.release()?;
    b.sync_device()?;

    let mut anchor = Anchor::new(b, kit.main)?;
    let calibration = calibrate(b, &kit, &mut anchor, options.calibration_pairs)?;

    let mut groups = Vec::new();
    let mut slot = 0;
    for &spin in &options.spins {
        for mode in Mode::ALL {
            let mut runs = Vec::with_capacity(per_group);
            for index in 0..per_group {
                let warmup = index < options.warmup;
                let detail = !warmup && index - options.warmup < options.detail;
                runs.push(run_once(
                    b,
                    &kit,
                    &mut anchor,
                    RunPlan {
                        mode,
                        spin,
                        slot,
                        index,
                        warmup,
                        detail,
                    },
                )?);
                slot += 1;
            }
            groups.push(Group { spin, mode, runs });
        }
    }

    let demos = demonstrate(b, &kit, &mut anchor)?;

    let readings = b.read_slots(slot)?;
    let mut k = 0;
    for group in &mut groups {
        for run in &mut group.runs {
            run.body = readings.get(k).copied().filter(|(a, z)| z >= a && *a != 0);
            k += 1;
        }
    }

    Ok(CaptureRecord {
        device: b.info(),
        date: utc_now(),
        options: options.clone(),
        calibration,
        groups,
        demos,
    })
}

fn calibrate<B: Backend>(
    b: &mut B,
    kit: &Kit,
    anchor: &mut Anchor,
    pairs: usize,
) -> Result<Calibration, BackendError> {
    let mut consecutive = Vec::with_capacity(pairs);
    let mut first_pair = None;
    for i in 0..CALIBRATION_WARMUP + pairs {
        let first_measured = i == CALIBRATION_WARMUP;
        if first_measured {
            anchor.advance(b)?;
        }
        b.sync_stream(kit.main)?;
        b.record(kit.start, kit.main)?;
        b.record(kit.end, kit.main)?;
        b.wait_event(kit.end)?;
        let d = elapsed_or_fail(b, kit.start, kit.end, "two consecutive events")?;
        if first_measured {
            let a = anchor.position_of(b, kit.start)?;
            first_pair = Some((a, Nanos::new(a.as_i64() + d.as_i64())));
        }
        if i >= CALIBRATION_WARMUP {
            consecutive.push(d);
        }
    }
    Ok(Calibration {
        consecutive,
        first_pair,
    })
}

struct RunPlan {
    mode: Mode,
    spin: Nanos,
    slot: usize,
    index: usize,
    warmup: bool,
    detail: bool,
}

fn run_once<B: Backend>(
    b: &mut B,
    kit: &Kit,
    anchor: &mut Anchor,
    plan: RunPlan,
) -> Result<Run, BackendError> {
    if plan.detail {
        anchor.advance(b)?;
    }
    b.sync_stream(kit.main)?;
    let timeouts_before = b.gate_timeouts();
    let host = match plan.mode {
        Mode::Idle => {
            let t0 = b.now();
            b.record(kit.start, kit.main)?;
            b.spin(kit.main, plan.spin, Some(plan.slot))?;
            b.record(kit.end, kit.main)?;
            let t1 = b.now();
            b.wait_event(kit.end)?;
            let t3 = b.now();
            HostReadings { t0, t1, t2: t0, t3 }
        }
        Mode::Held => {
            b.record(kit.held, kit.main)?;
            b.gate(kit.main)?;
            let t0 = b.now();
            b.record(kit.start, kit.main)?;
            b.spin(kit.main, plan.spin, Some(plan.slot))?;
            b.record(kit.end, kit.main)?;
            let t1 = b.now();
            let t2 = b.now();
            b.release()?;
            b.wait_event(kit.end)?;
            let t3 = b.now();
            HostReadings { t0, t1, t2, t3 }
        }
    };
    let device = b.elapsed(kit.start, kit.end);
    let mut failure = None;
    if b.gate_timeouts() != timeouts_before {
        failure = Some("the gate timed out before the host released it".to_owned());
    }
    if let Some(name) = device.error_name() {
        failure = Some(format!("the elapsed time was refused: {name}"));
    }
    let detail = match (plan.detail, device.elapsed()) {
        (true, Some(d)) => {
            let start = anchor.position_of(b, kit.start)?;
            let held = match plan.mode {
                Mode::Held => Some(anchor.position_of(b, kit.held)?),
                Mode::Idle => None,
            };
            Some(EventPositions {
                held,
                start,
                end: Nanos::new(start.as_i64() + d.as_i64()),
            })
        }
        _ => None,
    };
    Ok(Run {
        index: plan.index,
        warmup: plan.warmup,
        host,
        device,
        body: None,
        detail,
        failure,
    })
}

fn demonstrate<B: Backend>(
    b: &mut B,
    kit: &Kit,
    anchor: &mut Anchor,
) -> Result<Demos, BackendError> {
    // Events created without timing: the driver refuses the elapsed time.
    let u0 = b.new_event(false)?;
    let u1 = b.new_event(false)?;
    b.sync_stream(kit.main)?;
    b.record(u0, kit.main)?;
    b.spin(kit.main, SHORT, None)?;
    b.record(u1, kit.main)?;
    b.wait_event(u1)?;
    let timing_disabled = TimingDisabledDemo {
        elapsed: b.elapsed(u0, u1),
    };

    // An end event held behind a gate: read while pending, without blocking.
    anchor.advance(b)?;
    b.sync_stream(kit.main)?;
    let i0 = b.new_event(true)?;
    let i1 = b.new_event(true)?;
    b.record(i0, kit.main)?;
    b.gate(kit.main)?;
    b.spin(kit.main, SHORT, None)?;
    b.record(i1, kit.main)?;
    b.wait_event(i0)?;
    let query = b.query(i1);
    let c0 = b.now();
    let elapsed = b.elapsed(i0, i1);
    let c1 = b.now();
    b.release()?;
    b.wait_event(i1)?;
    let event_incomplete = EventIncompleteDemo {
        start: anchor.position_of(b, i0)?,
        end: anchor.position_of(b, i1)?,
        query,
        elapsed,
        call: Nanos::new(c1.as_i64() - c0.as_i64()),
    };

    let cross_stream = two_streams(b, kit, anchor, false)?;
    let cross_stream_joined = two_streams(b, kit, anchor, true)?;
    let wait_event = wait_scope(b, kit, anchor, false)?;
    let wait_device = wait_scope(b, kit, anchor, true)?;
    Ok(Demos {
        timing_disabled,
        event_incomplete,
        cross_stream,
        cross_stream_joined,
        wait_event,
        wait_device,
    })
}

/// Four events: A's start and end, B's start and end.
fn four_events<B: Backend>(b: &mut B) -> Result<[EventId; 4], BackendError> {
    Ok([
        b.new_event(true)?,
        b.new_event(true)?,
        b.new_event(true)?,
        b.new_event(true)?,
    ])
}

fn two_streams<B: Backend>(
    b: &mut B,
    kit: &Kit,
    anchor: &mut Anchor,
    dependency: bool,
) -> Result<CrossStreamDemo, BackendError> {
    let [a0, a1, b0, b1] = four_events(b)?;
    anchor.advance(b)?;
    b.sync_device()?;
    b.record(a0, kit.main)?;
    b.spin(kit.main, DEMO_A, None)?;
    b.record(a1, kit.main)?;
    if dependency {
        b.stream_wait(kit.second, a1)?;
    }
    b.record(b0, kit.second)?;
    b.spin(kit.second, DEMO_A, None)?;
    b.record(b1, kit.second)?;
    b.sync_device()?;
    let elapsed = b.elapsed(a0, b1);
    Ok(CrossStreamDemo {
        dependency,
        a: (anchor.position_of(b, a0)?, anchor.position_of(b, a1)?),
        b: (anchor.position_of(b, b0)?, anchor.position_of(b, b1)?),
        elapsed,
    })
}

fn wait_scope<B: Backend>(
    b: &mut B,
    kit: &Kit,
    anchor: &mut Anchor,
    device: bool,
) -> Result<WaitScopeDemo, BackendError> {
    let [a0, a1, b0, b1] = four_events(b)?;
    anchor.advance(b)?;
    b.sync_device()?;
    let t0 = b.now();
    b.record(a0, kit.main)?;
    b.spin(kit.main, DEMO_A, None)?;
    b.record(a1, kit.main)?;
    b.record(b0, kit.second)?;
    b.spin(kit.second, DEMO_B, None)?;
    b.record(b1, kit.second)?;
    if device {
        b.sync_device()?;
    } else {
        b.wait_event(a1)?;
    }
    let t1 = b.now();
    let b_query_after_wait = b.query(b1);
    b.sync_device()?;
    Ok(WaitScopeDemo {
        wait: if device { "device" } else { "event" }.to_owned(),
        a: (anchor.position_of(b, a0)?, anchor.position_of(b, a1)?),
        b: (anchor.position_of(b, b0)?, anchor.position_of(b, b1)?),
        host: (t0, t1),
        b_query_after_wait,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::build::capture_case;
    use crate::capture::relations;
    use crate::capture::sim::{Sim, Tape};
    use crate::case::load_case_str;
    use crate::engine::evaluate;

    fn small() -> CaptureOptions {
        CaptureOptions {
            spins: vec![Nanos::new(10_000), Nanos::new(1_000_000)],
            warmup: 3,
            runs: 9,
            detail: 2,
            calibration_pairs: 20,
            command: "test".into(),
        }
    }

    #[test]
    fn the_submission_timer_holds_exactly_record_launch_record() {
        let mut tape = Tape::default();
        let options = CaptureOptions {
            spins: vec![Nanos::new(10_000)],
            warmup: 0,
            runs: 1,
            detail: 0,
            calibration_pairs: 0,
            command: "test".into(),
        };
        capture(&mut tape, &options).unwrap();
        let calls = tape.calls.join(" ");
        // Idle: one reading starts both timers; the wait follows the submission's stop.
        assert!(
            calls.contains("sync-stream now record spin record now wait-event now elapsed"),
            "{calls}"
        );
        // Held: the gate is launched before the timers; the release sits inside completion.
        assert!(
            calls.contains("record gate now record spin record now now release wait-event now"),
            "{calls}"
        );
    }

    #[test]
    fn a_simulated_capture_builds_a_case_whose_expectations_and_relations_hold() {
        let rec = capture(&mut Sim::new(), &small()).unwrap();
        assert_eq!(rec.groups.len(), 4);
        assert!(rec.groups.iter().all(|g| g.runs.len() == 12));
        // A small capture has too few distinct readings to state the 32 ns tick.
        let evidence = rec.event_step_evidence();
        assert!(evidence.distinct < super::super::record::MIN_DISTINCT_FOR_STEP);
        assert_eq!(rec.event_step(), None);
        let json = capture_case(&rec, "sim").to_json_pretty();
        let case = load_case_str(&json, "sim.json").unwrap();
        let report = evaluate(&case);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sim.json");
        std::fs::write(&file, &json).unwrap();
        let checked = crate::check::check_file(&file).unwrap();
        assert!(checked.checks.len() > 20);
        for c in &checked.checks {
            assert!(c.passed, "{c:?}");
        }
        for r in relations::check(&case, &report) {
            assert!(r.holds, "{r:?}");
        }
    }

    #[test]
    fn detailed_runs_are_the_first_measured_ones() {
        let rec = capture(&mut Sim::new(), &small()).unwrap();
        for g in &rec.groups {
            let detailed: Vec<usize> = g
                .runs
                .iter()
                .filter(|r| r.detail.is_some())
                .map(|r| r.index)
                .collect();
            assert_eq!(detailed, vec![3, 4]);
            for r in &g.runs {
                let d = r.detail.map(|p| p.end.as_i64() - p.start.as_i64());
                if let (Some(d), Some(v)) = (d, r.device_interval()) {
                    assert_eq!(d, v.as_i64(), "end − start is the pair's own reading");
                }
            }
        }
    }
}
