//! A deterministic device simulator implementing [`Backend`], for tests and `--simulate`.
//!
//! It keeps one timeline for host and device. Host calls cost fixed amounts; device work in
//! a stream runs in order, no earlier than a fixed latency after it was submitted; a gate
//! blocks its stream until released; copies share one engine per direction. Events are
//! stamped in 32 ns steps, as on an H200. The numbers are invented and say nothing about a
//! real GPU: a capture made with it is marked `simulated` everywhere.
//!
//! What it is for: running the real procedure ([`super::procedure`], and the lab `crate::lab::streams`)
//! end to end with no GPU, so that the order of calls, the case a capture writes and the
//! verdicts it implies are tested here and in CI.

use std::collections::VecDeque;
use std::ops::Range;

use super::backend::{Backend, BackendError, EventId, StreamId};
use super::lcg::lcg_jump;
use super::record::{ms_to_nanos, DeviceInfo, DriverAnswer};
use crate::units::Nanos;

/// Host cost of one clock reading.
const READ: i64 = 30;
/// Host cost of an event record call.
const RECORD_CALL: i64 = 600;
/// Host cost of a kernel launch or a copy call.
const LAUNCH_CALL: i64 = 2_500;
/// Host cost of a cheap call (query, elapsed, release, stream-wait).
const CHEAP_CALL: i64 = 300;
/// Host delay between the device finishing and a spin-wait returning.
const WAKE: i64 = 5_000;
/// Earliest a kernel starts after its launch call returned.
const KERNEL_LATENCY: i64 = 4_000;
/// Earliest an event fires after its record call returned.
const EVENT_LATENCY: i64 = 800;
/// Device time an event occupies its stream.
const EVENT_COST: i64 = 1_300;
/// Device time a kernel spends around its body.
const KERNEL_OVERHEAD: i64 = 1_000;
/// Event timestamps come in steps of this many ns.
const STEP: i64 = 32;
/// `%globaltimer`'s value at the simulator's time zero.
const GLOBALTIMER_EPOCH: i64 = 1_764_460_800_000_000_000;
/// Copy bandwidth, bytes per ns (50 GB/s).
const COPY_BYTES_PER_NS: i64 = 50;
/// Lab kernel throughput, LCG steps per ns.
const STEPS_PER_NS: i64 = 16_000;

#[derive(Clone, Debug)]
enum Work {
    Record { event: usize, generation: u64 },
    Spin { length: i64, slot: Option<usize> },
    Gate { generation: u32 },
    Wait { event: usize, generation: u64 },
    CopyIn(Range<usize>),
    Compute(Range<usize>, u32),
    CopyOut(Range<usize>),
}

#[derive(Clone, Debug)]
struct Pending {
    work: Work,
    submitted: i64,
}

#[derive(Clone, Debug, Default)]
struct Stream {
    free_at: i64,
    queue: VecDeque<Pending>,
}

#[derive(Clone, Debug)]
struct Event {
    timing: bool,
    generation: u64,
    time: Option<i64>,
}

/// The simulator. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct Sim {
    now: i64,
    streams: Vec<Stream>,
    events: Vec<Event>,
    gates: u32,
    releases: Vec<i64>,
    slots: Vec<(i64, i64)>,
    copy_in_free: i64,
    copy_out_free: i64,
    host_in: Vec<u32>,
    host_out: Vec<u32>,
    device: Vec<u32>,
}

fn up_to_step(t: i64) -> i64 {
    (t + STEP - 1).div_euclid(STEP) * STEP
}

impl Sim {
    /// A fresh simulator at time zero.
    pub fn new() -> Self {
        Sim::default()
    }

    fn host(&mut self, cost: i64) {
        self.now += cost;
    }

    fn submit(&mut self, stream: StreamId, work: Work) -> Result<(), BackendError> {
        let s = self
            .streams
            .get_mut(stream.0)
            .ok_or_else(|| BackendError::Other(format!("simulator: no stream {}", stream.0)))?;
        s.queue.push_back(Pending {
            work,
            submitted: self.now,
        });
        Ok(())
    }

    /// Runs every op that can run, in stream order, until nothing moves.
    fn advance(&mut self) {
        loop {
            let mut progress = false;
            for s in 0..self.streams.len() {
                while let Some(p) = self.streams[s].queue.front().cloned() {
                    if !self.try_run(s, &p) {
                        break;
                    }
                    self.streams[s].queue.pop_front();
                    progress = true;
                }
            }
            if !progress {
                return;
            }
        }
    }

    /// Runs `p` at the head of stream `s` if nothing blocks it.
    fn try_run(&mut self, s: usize, p: &Pending) -> bool {
        let free = self.streams[s].free_at;
        let end = match &p.work {
            Work::Record { event, generation } => {
                let t = up_to_step(free.max(p.submitted + EVENT_LATENCY));
                if self.events[*event].generation == *generation {
                    self.events[*event].time = Some(t);
                }
                t + EVENT_COST
            }
            Work::Spin { length, slot } => {
                let begin = free.max(p.submitted + KERNEL_LATENCY) + KERNEL_OVERHEAD / 2;
                let body_end = begin + up_to_step(*length);
                if let Some(k) = slot {
                    if let Some(place) = self.slots.get_mut(*k) {
                        *place = (begin + GLOBALTIMER_EPOCH, body_end + GLOBALTIMER_EPOCH);
                    }
                }
                body_end + KERNEL_OVERHEAD / 2
            }
            Work::Gate { generation } => {
                let Some(&released) = self.releases.get(*generation as usize - 1) else {
                    return false;
                };
                free.max(p.submitted + KERNEL_LATENCY).max(released + 1_500)
            }
            Work::Wait { event, generation } => {
                let e = &self.events[*event];
                if e.generation != *generation {
                    free
                } else {
                    match e.time {
                        Some(t) => free.max(t),
                        None => return false,
                    }
                }
            }
            Work::CopyIn(range) => {
                let begin = free.max(p.submitted + 2_000).max(self.copy_in_free);
                let end = begin + (range.len() as i64 * 4) / COPY_BYTES_PER_NS + 1_000;
                self.copy_in_free = end;
                self.device[range.clone()].copy_from_slice(&self.host_in[range.clone()]);
                end
            }
            Work::Compute(range, iters) => {
                let begin = free.max(p.submitted + KERNEL_LATENCY);
                // The closed form stands in for the kernel's loop (tested equal in `streams`).
                let (a, c) = lcg_jump(*iters);
                for w in &mut self.device[range.clone()] {
                    *w = a.wrapping_mul(*w).wrapping_add(c);
                }
                begin + (range.len() as i64 * i64::from(*iters)) / STEPS_PER_NS + KERNEL_OVERHEAD
            }
            Work::CopyOut(range) => {
                let begin = free.max(p.submitted + 2_000).max(self.copy_out_free);
                let end = begin + (range.len() as i64 * 4) / COPY_BYTES_PER_NS + 1_000;
                self.copy_out_free = end;
                self.host_out[range.clone()].copy_from_slice(&self.device[range.clone()]);
                end
            }
        };
        self.streams[s].free_at = end;
        true
    }

    fn event(&self, e: EventId) -> Result<&Event, BackendError> {
        self.events
            .get(e.0)
            .ok_or_else(|| BackendError::Other(format!("simulator: no event {}", e.0)))
    }

    /// The event's device time when it has completed by now.
    fn completed(&mut self, e: EventId) -> Option<i64> {
        self.advance();
        let now = self.now;
        self.events[e.0].time.filter(|t| *t <= now)
    }

    fn never_completes(what: &str) -> BackendError {
        BackendError::Other(format!(
            "simulator: {what} would block forever (work held by an unreleased gate)"
        ))
    }
}

impl Backend for Sim {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: "simulator".to_owned(),
            uuid: "GPU-00000000-0000-0000-0000-000000000000".to_owned(),
            context: "0x1".to_owned(),
            compute_capability: "9.0".to_owned(),
            driver_cuda_version: "simulated".to_owned(),
            driver_version: "simulated".to_owned(),
            boot_id: "simulated-boot".to_owned(),
            pid: 0,
            hostname: "simulator".to_owned(),
            simulated: true,
        }
    }

    fn now(&mut self) -> Nanos {
        self.host(READ);
        Nanos::new(self.now)
    }

    fn new_stream(&mut self) -> Result<StreamId, BackendError> {
        self.streams.push(Stream::default());
        Ok(StreamId(self.streams.len() - 1))
    }

    fn new_event(&mut self, timing: bool) -> Result<EventId, BackendError> {
        self.events.push(Event {
            timing,
            generation: 0,
            time: None,
        });
        Ok(EventId(self.events.len() - 1))
    }

    fn record(&mut self, event: EventId, stream: StreamId) -> Result<(), BackendError> {
        self.event(event)?;
        let e = &mut self.events[event.0];
        e.generation += 1;
        e.time = None;
        let generation = e.generation;
        self.host(RECORD_CALL);
        self.submit(
            stream,
            Work::Record {
                event: event.0,
                generation,
            },
        )
    }

    fn spin(
        &mut self,
        stream: StreamId,
        length: Nanos,
        slot: Option<usize>,
    ) -> Result<(), BackendError> {
        self.host(LAUNCH_CALL);
        self.submit(
            stream,
            Work::Spin {
                length: length.as_i64(),
                slot,
            },
        )
    }

    fn gate(&mut self, stream: StreamId) -> Result<(), BackendError> {
        self.gates += 1;
        self.host(LAUNCH_CALL);
        let generation = self.gates;
        self.submit(stream, Work::Gate { generation })
    }

    fn release(&mut self) -> Result<(), BackendError> {
        if self.releases.len() as u32 >= self.gates {
            return Err(BackendError::Other("simulator: no gate to release".into()));
        }
        self.host(CHEAP_CALL);
        let now = self.now;
        self.releases.push(now);
        Ok(())
    }

    fn gate_timeouts(&mut self) -> u32 {
        0
    }

    fn stream_wait(&mut self, stream: StreamId, event: EventId) -> Result<(), BackendError> {
        let generation = self.event(event)?.generation;
        self.host(CHEAP_CALL);
        self.submit(
            stream,
            Work::Wait {
                event: event.0,
                generation,
            },
        )
    }

    fn wait_event(&mut self, event: EventId) -> Result<(), BackendError> {
        self.event(event)?;
        self.advance();
        match self.events[event.0].time {
            Some(t) => {
                self.now = self.now.max(t) + WAKE;
                Ok(())
            }
            None if self.events[event.0].generation == 0 => Ok(()),
            None => Err(Sim::never_completes("waiting on an event")),
        }
    }

    fn sync_stream(&mut self, stream: StreamId) -> Result<(), BackendError> {
        self.advance();
        let s = &self.streams[stream.0];
        if !s.queue.is_empty() {
            return Err(Sim::never_completes("synchronizing a stream"));
        }
        self.now = self.now.max(s.free_at) + WAKE;
        Ok(())
    }

    fn sync_device(&mut self) -> Result<(), BackendError> {
        self.advance();
        if self.streams.iter().any(|s| !s.queue.is_empty()) {
            return Err(Sim::never_completes("synchronizing the device"));
        }
        let last = self.streams.iter().map(|s| s.free_at).max().unwrap_or(0);
        self.now = self.now.max(last) + WAKE;
        Ok(())
    }

    fn elapsed(&mut self, start: EventId, end: EventId) -> DriverAnswer {
        self.host(CHEAP_CALL);
        let invalid = || DriverAnswer::Error {
            name: DriverAnswer::INVALID_HANDLE.to_owned(),
        };
        let (Ok(a), Ok(b)) = (self.event(start), self.event(end)) else {
            return invalid();
        };
        if !a.timing || !b.timing || a.generation == 0 || b.generation == 0 {
            return invalid();
        }
        match (self.completed(start), self.completed(end)) {
            (Some(t0), Some(t1)) => {
                let ms = ((t1 - t0) as f64 / 1e6) as f32;
                DriverAnswer::Elapsed {
                    value: ms_to_nanos(ms),
                }
            }
            _ => DriverAnswer::Error {
                name: DriverAnswer::NOT_READY.to_owned(),
            },
        }
    }

    fn query(&mut self, event: EventId) -> DriverAnswer {
        self.host(CHEAP_CALL);
        if self.event(event).is_err() {
            return DriverAnswer::Error {
                name: DriverAnswer::INVALID_HANDLE.to_owned(),
            };
        }
        if self.events[event.0].generation == 0 || self.completed(event).is_some() {
            DriverAnswer::Success
        } else {
            DriverAnswer::Error {
                name: DriverAnswer::NOT_READY.to_owned(),
            }
        }
    }

    fn reserve_slots(&mut self, slots: usize) -> Result<(), BackendError> {
        self.slots = vec![(0, 0); slots];
        Ok(())
    }

    fn read_slots(&mut self, slots: usize) -> Result<Vec<(i64, i64)>, BackendError> {
        self.sync_device()?;
        Ok(self.slots.iter().take(slots).copied().collect())
    }

    fn lab_alloc(&mut self, words: usize) -> Result<(), BackendError> {
        self.host_in = vec![0; words];
        self.host_out = vec![0; words];
        self.device = vec![0; words];
        Ok(())
    }

    fn lab_input(&mut self) -> &mut [u32] {
        &mut self.host_in
    }

    fn lab_output(&mut self) -> &mut [u32] {
        &mut self.host_out
    }

    fn copy_in(&mut self, stream: StreamId, range: Range<usize>) -> Result<(), BackendError> {
        self.host(LAUNCH_CALL);
        self.submit(stream, Work::CopyIn(range))
    }

    fn compute(
        &mut self,
        stream: StreamId,
        range: Range<usize>,
        iters: u32,
    ) -> Result<(), BackendError> {
        self.host(LAUNCH_CALL);
        self.submit(stream, Work::Compute(range, iters))
    }

    fn copy_out(&mut self, stream: StreamId, range: Range<usize>) -> Result<(), BackendError> {
        self.host(LAUNCH_CALL);
        self.submit(stream, Work::CopyOut(range))
    }
}

/// A simulator that writes down every call (to test what lies between two readings), and
/// can drop the first copy-out (to test that a wrong output is caught).
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Tape {
    pub(crate) sim: Sim,
    pub(crate) calls: Vec<&'static str>,
    pub(crate) drop_first_copy_out: bool,
    pub(crate) dropped: bool,
}

#[cfg(test)]
impl Backend for Tape {
    fn info(&self) -> DeviceInfo {
        self.sim.info()
    }
    fn now(&mut self) -> Nanos {
        self.calls.push("now");
        self.sim.now()
    }
    fn new_stream(&mut self) -> Result<StreamId, BackendError> {
        self.sim.new_stream()
    }
    fn new_event(&mut self, timing: bool) -> Result<EventId, BackendError> {
        self.sim.new_event(timing)
    }
    fn record(&mut self, e: EventId, s: StreamId) -> Result<(), BackendError> {
        self.calls.push("record");
        self.sim.record(e, s)
    }
    fn spin(&mut self, s: StreamId, l: Nanos, k: Option<usize>) -> Result<(), BackendError> {
        self.calls.push("spin");
        self.sim.spin(s, l, k)
    }
    fn gate(&mut self, s: StreamId) -> Result<(), BackendError> {
        self.calls.push("gate");
        self.sim.gate(s)
    }
    fn release(&mut self) -> Result<(), BackendError> {
        self.calls.push("release");
        self.sim.release()
    }
    fn gate_timeouts(&mut self) -> u32 {
        self.sim.gate_timeouts()
    }
    fn stream_wait(&mut self, s: StreamId, e: EventId) -> Result<(), BackendError> {
        self.calls.push("stream-wait");
        self.sim.stream_wait(s, e)
    }
    fn wait_event(&mut self, e: EventId) -> Result<(), BackendError> {
        self.calls.push("wait-event");
        self.sim.wait_event(e)
    }
    fn sync_stream(&mut self, s: StreamId) -> Result<(), BackendError> {
        self.calls.push("sync-stream");
        self.sim.sync_stream(s)
    }
    fn sync_device(&mut self) -> Result<(), BackendError> {
        self.calls.push("sync-device");
        self.sim.sync_device()
    }
    fn elapsed(&mut self, a: EventId, b: EventId) -> DriverAnswer {
        self.calls.push("elapsed");
        self.sim.elapsed(a, b)
    }
    fn query(&mut self, e: EventId) -> DriverAnswer {
        self.calls.push("query");
        self.sim.query(e)
    }
    fn reserve_slots(&mut self, n: usize) -> Result<(), BackendError> {
        self.sim.reserve_slots(n)
    }
    fn read_slots(&mut self, n: usize) -> Result<Vec<(i64, i64)>, BackendError> {
        self.sim.read_slots(n)
    }
    fn lab_alloc(&mut self, w: usize) -> Result<(), BackendError> {
        self.sim.lab_alloc(w)
    }
    fn lab_input(&mut self) -> &mut [u32] {
        self.sim.lab_input()
    }
    fn lab_output(&mut self) -> &mut [u32] {
        self.sim.lab_output()
    }
    fn copy_in(&mut self, s: StreamId, r: Range<usize>) -> Result<(), BackendError> {
        self.sim.copy_in(s, r)
    }
    fn compute(&mut self, s: StreamId, r: Range<usize>, i: u32) -> Result<(), BackendError> {
        self.sim.compute(s, r, i)
    }
    fn copy_out(&mut self, s: StreamId, r: Range<usize>) -> Result<(), BackendError> {
        self.calls.push("copy-out");
        if self.drop_first_copy_out && !self.dropped {
            self.dropped = true;
            return Ok(());
        }
        self.sim.copy_out(s, r)
    }
}
