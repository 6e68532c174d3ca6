//! The `program` section: the host's ops in order, each resolved against the declarations.
//! An event is recorded once, a phase launched once, a timer started then stopped once;
//! after the walk, every recorded event is checked against the program (it is recorded, and
//! its stream's timestamps do not go backwards), and the timers are collected.

use std::collections::HashMap;

use super::ids::{time, Declared, IdTable, Result};
use crate::case::implicit::implicit_wait;
use crate::case::raw::{RawHostWait, RawImplicit, RawOp, RawTime};
use crate::case::{
    CaseError, ClockIdx, EventState, ImplicitWait, Op, OpIdx, PhaseIdx, TimerDef, WaitTarget,
};
use crate::units::Nanos;

/// The validated program and what the questions need from the walk.
pub(super) struct Program {
    /// The ops in order.
    pub ops: Vec<Op>,
    /// Per event: the op that records it.
    pub recorded: Vec<Option<OpIdx>>,
    /// The timers, in order of their first op.
    pub timers: Vec<TimerDef>,
}

/// A clock reading: the clock and its value.
type Reading = (ClockIdx, Nanos);

/// A timer while the program is walked: its id, and its start and stop (op, reading) so far.
struct TimerDraft<'a> {
    id: &'a str,
    start: Option<(OpIdx, Reading)>,
    stop: Option<(OpIdx, Reading)>,
}

/// What the walk over the program has seen so far.
struct Walk<'a, 'd> {
    declared: &'d Declared<'d>,
    /// The devices the streams belong to (a host wait may target one).
    devices: Vec<&'d str>,
    recorded: Vec<Option<OpIdx>>,
    launched: Vec<Option<OpIdx>>,
    wait_ids: IdTable<'a>,
    timer_ids: HashMap<&'a str, usize>,
    timers: Vec<TimerDraft<'a>>,
}

/// The path of `field` of op `k`.
fn at(k: OpIdx, field: &str) -> String {
    format!("program[{k}].{field}")
}

/// A `bad-program` error at op `k`.
fn bad(k: OpIdx, msg: String) -> CaseError {
    CaseError::new(format!("program[{k}]"), "bad-program", msg)
}

/// The validated program. `launches` holds the phases already resolved by `preresolve`
/// (one per op).
pub(super) fn program<'d>(
    raw: &[RawOp],
    launches: &[Option<PhaseIdx>],
    declared: &'d Declared<'d>,
) -> Result<Program> {
    let mut walk = Walk {
        declared,
        devices: declared.streams.iter().map(|s| s.device.as_str()).collect(),
        recorded: vec![None; declared.events.len()],
        launched: vec![None; declared.phases.len()],
        wait_ids: IdTable::new("host wait", "program"),
        timer_ids: HashMap::new(),
        timers: Vec::new(),
    };
    let mut ops = Vec::with_capacity(raw.len());
    for (k, op) in raw.iter().enumerate() {
        ops.push(walk.op(k, op, launches[k])?);
    }
    every_event_recorded(declared, &walk.recorded, raw.is_empty())?;
    stream_order(declared, &ops)?;
    let timers = timers(walk.timers)?;
    Ok(Program {
        ops,
        recorded: walk.recorded,
        timers,
    })
}

impl<'a> Walk<'a, '_> {
    /// Op `k`, resolved; `launch` is its phase when `preresolve` took it.
    fn op(&mut self, k: OpIdx, op: &'a RawOp, launch: Option<PhaseIdx>) -> Result<Op> {
        let d = self.declared;
        match op {
            RawOp::Record { event } => self.record(k, event),
            RawOp::Launch { phase } => self.launch(k, phase, launch),
            RawOp::StreamWait { stream, event } => {
                let s = d.stream_ids.resolve(stream, || at(k, "stream"))?;
                let e = d.event_ids.resolve(event, || at(k, "event"))?;
                Ok(Op::StreamWait {
                    stream: s,
                    event: e,
                })
            }
            RawOp::HostWait(wait) => {
                let RawHostWait {
                    id,
                    event,
                    stream,
                    device,
                    clock,
                    at: returned,
                    implicit,
                    copy,
                } = &**wait;
                // A unique id, one target, a return reading with its clock, and (for an
                // implicit wait) the copy that makes it one.
                self.wait_ids.add(id, k, at(k, "id"))?;
                let target = self.wait_target(k, id, event, stream, device)?;
                let returned = self.wait_returned(k, clock, returned)?;
                let implicit = self.wait_implicit(k, id, implicit, copy, &target)?;
                Ok(Op::HostWait {
                    id: id.clone(),
                    target,
                    returned,
                    implicit,
                })
            }
            RawOp::TimerStart {
                timer,
                clock,
                at: reading,
            }
            | RawOp::TimerStop {
                timer,
                clock,
                at: reading,
            } => {
                let is_start = matches!(op, RawOp::TimerStart { .. });
                self.timer(k, is_start, timer, clock, reading)
            }
        }
    }

    /// `record`: the event is recorded once, and not declared `not-recorded`.
    fn record(&mut self, k: OpIdx, event: &str) -> Result<Op> {
        let d = self.declared;
        let e = d.event_ids.resolve(event, || at(k, "event"))?;
        if d.events[e].state == EventState::NotRecorded {
            return Err(CaseError::new(
                at(k, "event"),
                "inconsistent-event",
                format!("event `{event}` is declared `not-recorded` but the program records it"),
            ));
        }
        if let Some(first) = self.recorded[e] {
            return Err(bad(k, format!("event `{event}` is already recorded at program[{first}]; record each event once")));
        }
        self.recorded[e] = Some(k);
        Ok(Op::Record(e))
    }

    /// `launch`: the phase has a stream and is launched once.
    fn launch(&mut self, k: OpIdx, phase: &str, launch: Option<PhaseIdx>) -> Result<Op> {
        let d = self.declared;
        let p = match launch {
            Some(p) => p,
            None => d.phase_ids.resolve(phase, || at(k, "phase"))?,
        };
        let phase = &d.phases[p].id;
        if d.phases[p].stream.is_none() {
            return Err(bad(
                k,
                format!(
                    "phase `{phase}` has no stream, so it cannot be launched; give it a `stream`"
                ),
            ));
        }
        if let Some(first) = self.launched[p] {
            return Err(bad(
                k,
                format!("phase `{phase}` is already launched at program[{first}]"),
            ));
        }
        self.launched[p] = Some(k);
        Ok(Op::Launch(p))
    }

    /// The implicit-wait part of a host wait: `implicit` and `copy` together, or neither.
    fn wait_implicit(
        &self,
        k: OpIdx,
        id: &str,
        implicit: &Option<RawImplicit>,
        copy: &Option<String>,
        target: &WaitTarget,
    ) -> Result<Option<ImplicitWait>> {
        match (implicit, copy) {
            (None, None) => Ok(None),
            (Some(kind), Some(copy)) => {
                let d = self.declared;
                let p = d.phase_ids.resolve(copy, || at(k, "copy"))?;
                Ok(Some(
                    implicit_wait(id, *kind, p, target, &d.phases, &d.streams, &self.launched)
                        .map_err(|msg| bad(k, msg))?,
                ))
            }
            (Some(_), None) => Err(CaseError::new(
                at(k, "copy"),
                "missing-field",
                "an implicit wait names the `copy` (a phase) that makes it a wait",
            )),
            (None, Some(_)) => Err(CaseError::new(
                at(k, "implicit"),
                "missing-field",
                "a wait's `copy` goes with `implicit`, which says why the copy is a wait",
            )),
        }
    }

    /// A host wait's one target: an event, a stream or a device.
    fn wait_target(
        &self,
        k: OpIdx,
        id: &str,
        event: &Option<String>,
        stream: &Option<String>,
        device: &Option<String>,
    ) -> Result<WaitTarget> {
        let d = self.declared;
        Ok(match (event, stream, device) {
            (Some(e), None, None) => WaitTarget::Event(d.event_ids.resolve(e, || at(k, "event"))?),
            (None, Some(s), None) => {
                WaitTarget::Stream(d.stream_ids.resolve(s, || at(k, "stream"))?)
            }
            (None, None, Some(dev)) => {
                if !self.devices.contains(&dev.as_str()) {
                    return Err(CaseError::new(
                        at(k, "device"),
                        "unknown-reference",
                        format!("no stream belongs to device `{dev}`"),
                    ));
                }
                WaitTarget::Device(dev.clone())
            }
            _ => {
                return Err(bad(
                    k,
                    format!(
                        "host wait `{id}` needs exactly one target: `event`, `stream` or `device`"
                    ),
                ))
            }
        })
    }

    /// A host wait's return reading: `clock` and `at` together, or neither.
    fn wait_returned(
        &self,
        k: OpIdx,
        clock: &Option<String>,
        returned: &Option<RawTime>,
    ) -> Result<Option<Reading>> {
        match (clock, returned) {
            (None, None) => Ok(None),
            (Some(c), Some(t)) => Ok(Some((
                self.declared.clock_ids.resolve(c, || at(k, "clock"))?,
                time(t, || at(k, "at"))?,
            ))),
            (None, Some(_)) => Err(CaseError::new(
                at(k, "clock"),
                "missing-field",
                "a wait's `at` needs the `clock` it was read on",
            )),
            (Some(_), None) => Err(CaseError::new(
                at(k, "at"),
                "missing-field",
                "a wait's `clock` goes with the `at` it was read at",
            )),
        }
    }

    /// `timer-start` / `timer-stop`: a timer is started once, then stopped once.
    fn timer(
        &mut self,
        k: OpIdx,
        is_start: bool,
        timer: &'a str,
        clock: &str,
        reading: &RawTime,
    ) -> Result<Op> {
        if timer.trim().is_empty() {
            return Err(CaseError::new(
                at(k, "timer"),
                "empty-id",
                "a timer needs a non-empty id",
            ));
        }
        let c = self.declared.clock_ids.resolve(clock, || at(k, "clock"))?;
        let reading = (c, time(reading, || at(k, "at"))?);
        let drafts = &mut self.timers;
        let t = *self.timer_ids.entry(timer).or_insert_with(|| {
            drafts.push(TimerDraft {
                id: timer,
                start: None,
                stop: None,
            });
            drafts.len() - 1
        });
        let draft = &mut self.timers[t];
        if is_start {
            if draft.start.is_some() {
                return Err(bad(k, format!("timer `{timer}` is started twice")));
            }
            if draft.stop.is_some() {
                return Err(bad(
                    k,
                    format!("timer `{timer}` is started after it was stopped"),
                ));
            }
            draft.start = Some((k, reading));
            Ok(Op::TimerStart(t))
        } else {
            if draft.start.is_none() {
                return Err(bad(
                    k,
                    format!("timer `{timer}` is stopped before it is started"),
                ));
            }
            if draft.stop.is_some() {
                return Err(bad(k, format!("timer `{timer}` is stopped twice")));
            }
            draft.stop = Some((k, reading));
            Ok(Op::TimerStop(t))
        }
    }
}

/// When there is a program, every event that is not declared `not-recorded` is recorded in it.
fn every_event_recorded(
    declared: &Declared<'_>,
    recorded: &[Option<OpIdx>],
    no_program: bool,
) -> Result<()> {
    for (e, ev) in declared.events.iter().enumerate() {
        if ev.state != EventState::NotRecorded && recorded[e].is_none() && !no_program {
            return Err(CaseError::new(
                format!("events[{e}].state"),
                "inconsistent-event",
                format!(
                    "event `{}` is {} but the program never records it",
                    ev.id,
                    if ev.state == EventState::Pending {
                        "pending"
                    } else {
                        "completed"
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// A stream runs in order, so its completed events' timestamps cannot go backwards
/// along their record order (equal readings are allowed: events come in quanta).
fn stream_order(declared: &Declared<'_>, program: &[Op]) -> Result<()> {
    let (events, streams) = (&declared.events, &declared.streams);
    let mut last_in_stream: Vec<Option<(usize, Nanos)>> = vec![None; streams.len()];
    for op in program {
        if let Op::Record(e) = op {
            if let EventState::Completed(at) = events[*e].state {
                let s = events[*e].stream;
                if let Some((before, before_at)) = last_in_stream[s] {
                    if at < before_at {
                        return Err(CaseError::new(
                            format!("events[{e}].at"),
                            "inconsistent-event",
                            format!(
                                "event `{}` is recorded after event `{}` in stream `{}`, but its timestamp {at} is earlier than {before_at}",
                                events[*e].id, events[before].id, streams[s].id
                            ),
                        ));
                    }
                }
                last_in_stream[s] = Some((*e, at));
            }
        }
    }
    Ok(())
}

/// The timers, each started and stopped.
fn timers(drafts: Vec<TimerDraft<'_>>) -> Result<Vec<TimerDef>> {
    let mut timers = Vec::with_capacity(drafts.len());
    for draft in drafts {
        let (Some((start_op, start)), Some((stop_op, stop))) = (draft.start, draft.stop) else {
            return Err(CaseError::new(
                "program",
                "bad-program",
                format!("timer `{}` is started but never stopped", draft.id),
            ));
        };
        timers.push(TimerDef {
            id: draft.id.to_owned(),
            start_op,
            stop_op,
            start,
            stop,
        });
    }
    Ok(timers)
}
