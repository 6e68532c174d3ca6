//! Stream order, declared dependencies and wait coverage (SPEC §4).
//!
//! Work in one stream runs in submission order; work in another stream is ordered only by
//! a declared dependency (a `stream-wait` on an event recorded earlier in the program). A
//! host wait covers:
//!
//! - an **event**: everything at or before the event's position in its stream, plus whatever
//!   those positions depend on through cross-stream waits (transitively);
//! - a **stream**: everything submitted to that stream before the wait (and its dependencies);
//! - a **device**: everything submitted to any stream of that device before the wait.
//!
//! ```text
//! stream A:  record(start) ── launch(p1) ── wait(B.join) ── record(end)
//!                                               │
//! stream B:  launch(p2) ── record(join) ◄───────┘
//! host:      ... host-wait(end)  → covers p1 (order in A) and p2 (through the join)
//! ```
//!
//! Two implicit orders come from CUDA's documented behaviour (SPEC §4, "Implicit waits"),
//! and only where the input declares what they need:
//!
//! - **Legacy default stream.** Every op of a stream declared `legacy-default` is ordered
//!   after the work submitted earlier to each stream of its device declared `blocking`
//!   (not `non-blocking`, not `per-thread-default`, not a stream whose kind is undeclared).
//!   The converse order (a blocking stream's later work waits for the legacy stream) is also
//!   CUDA's, but SPEC §4 does not use it, so neither does this module.
//! - **Implicit waits.** A host wait that is a copy (`implicit`) covers its stream up to and
//!   including the copy (device-to-host), or up to the op before it (pageable host-to-device),
//!   and what those positions depend on: never work submitted to the stream after the copy.
//!
//! ```text
//! legacy L:  launch(k1) ─────────── copy(D2H) ── host returns   covers k1, b1 (blocking B
//! blocking B:  launch(b1) ──┘                                     before the copy), not n1
//! non-blocking N: launch(n1)
//! ```
//!
//! Coverage is a *frontier*: for each stream, the highest position known complete.
//! Closing a frontier over dependencies costs O(positions + dependencies); the legacy order
//! adds at most one dependency per (legacy op, blocking stream) pair whose blocking stream
//! received work since the previous legacy op.

use std::collections::HashMap;

use crate::case::{Case, EventIdx, Op, OpIdx, StreamIdx, StreamKind, WaitTarget};

/// For each stream, the highest position (index into that stream's ops) known complete.
pub type Frontier = Vec<Option<usize>>;

/// The per-stream order of a case's program, with its cross-stream dependencies.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// For each stream, the program indices of its ops in order.
    stream_ops: Vec<Vec<OpIdx>>,
    /// For each program op, its (stream, position) if it is a stream op.
    op_position: Vec<Option<(StreamIdx, usize)>>,
    /// For a stream-wait op: the position it waits for (the awaited event's record).
    waits_for: HashMap<OpIdx, (StreamIdx, usize)>,
    /// For each event, the program index of its record op.
    record_op: Vec<Option<OpIdx>>,
    /// For an op of a legacy default stream: the last positions of the device's blocking
    /// streams submitted before it (only those that grew since the previous legacy op).
    legacy_deps: HashMap<OpIdx, Vec<(StreamIdx, usize)>>,
}

impl Schedule {
    /// Builds the schedule of `case`'s program. O(program length).
    pub fn new(case: &Case) -> Self {
        let mut stream_ops = vec![Vec::new(); case.streams.len()];
        let mut op_position = vec![None; case.program.len()];
        let mut waits_for = HashMap::new();
        let mut record_op = vec![None; case.events.len()];
        for (k, op) in case.program.iter().enumerate() {
            let stream = match op {
                Op::Record(e) => {
                    record_op[*e] = Some(k);
                    Some(case.events[*e].stream)
                }
                Op::Launch(p) => case.phases[*p].stream,
                Op::StreamWait { stream, event } => {
                    // Waiting on an event that was not recorded yet waits for nothing.
                    if let Some(r) = record_op[*event] {
                        if let Some(pos) = op_position[r] {
                            waits_for.insert(k, pos);
                        }
                    }
                    Some(*stream)
                }
                Op::HostWait { .. } | Op::TimerStart(_) | Op::TimerStop(_) => None,
            };
            if let Some(s) = stream {
                op_position[k] = Some((s, stream_ops[s].len()));
                stream_ops[s].push(k);
            }
        }
        let legacy_deps = legacy_dependencies(case, &stream_ops, &op_position);
        Schedule {
            stream_ops,
            op_position,
            waits_for,
            record_op,
            legacy_deps,
        }
    }

    /// An empty frontier (nothing known complete).
    pub fn empty_frontier(&self) -> Frontier {
        vec![None; self.stream_ops.len()]
    }

    /// The (stream, position) of program op `op`, if it runs in a stream.
    pub fn position(&self, op: OpIdx) -> Option<(StreamIdx, usize)> {
        self.op_position.get(op).copied().flatten()
    }

    /// The program index of event `e`'s record op.
    pub fn record_op(&self, e: EventIdx) -> Option<OpIdx> {
        self.record_op.get(e).copied().flatten()
    }

    /// Whether the stream-wait at program index `op` found its event already recorded.
    pub fn stream_wait_effective(&self, op: OpIdx) -> bool {
        self.waits_for.contains_key(&op)
    }

    /// Extends `frontier` so that position `pos` of `stream` and everything it depends on
    /// is complete.
    pub fn close(&self, frontier: &mut Frontier, stream: StreamIdx, pos: usize) {
        let mut pending = vec![(stream, pos)];
        while let Some((s, p)) = pending.pop() {
            let first_new = match frontier[s] {
                Some(done) if done >= p => continue,
                Some(done) => done + 1,
                None => 0,
            };
            frontier[s] = Some(p);
            for op in &self.stream_ops[s][first_new..=p] {
                if let Some(&dep) = self.waits_for.get(op) {
                    pending.push(dep);
                }
                if let Some(deps) = self.legacy_deps.get(op) {
                    pending.extend(deps.iter().copied());
                }
            }
        }
    }

    /// What the host wait at program index `wait_op`, targeting `target`, covers. An implicit
    /// wait (a copy) covers its stream up to the copy, or up to the op before it.
    pub fn wait_coverage(&self, case: &Case, wait_op: OpIdx, target: &WaitTarget) -> Frontier {
        let mut frontier = self.empty_frontier();
        if let Some(Op::HostWait {
            implicit: Some(implicit),
            ..
        }) = case.program.get(wait_op)
        {
            if let Some((s, p)) = self.position(implicit.copy_op) {
                if implicit.kind.covers_the_copy() {
                    self.close(&mut frontier, s, p);
                } else if p > 0 {
                    self.close(&mut frontier, s, p - 1);
                }
            }
            return frontier;
        }
        match target {
            WaitTarget::Event(e) => {
                if let Some(r) = self.record_op(*e).filter(|&r| r < wait_op) {
                    if let Some((s, p)) = self.position(r) {
                        self.close(&mut frontier, s, p);
                    }
                }
            }
            WaitTarget::Stream(s) => self.close_stream_before(&mut frontier, *s, wait_op),
            WaitTarget::Device(device) => {
                for (s, def) in case.streams.iter().enumerate() {
                    if &def.device == device {
                        self.close_stream_before(&mut frontier, s, wait_op);
                    }
                }
            }
        }
        frontier
    }

    /// Closes over the last op of stream `s` submitted before program index `before`.
    fn close_stream_before(&self, frontier: &mut Frontier, s: StreamIdx, before: OpIdx) {
        let submitted = self.stream_ops[s].partition_point(|&k| k < before);
        if submitted > 0 {
            self.close(frontier, s, submitted - 1);
        }
    }

    /// Whether program op `op` (a stream op) is inside `frontier`.
    pub fn covers(&self, frontier: &Frontier, op: OpIdx) -> bool {
        match self.position(op) {
            Some((s, p)) => frontier[s].is_some_and(|done| done >= p),
            None => false,
        }
    }

    /// Whether stream op `later` is ordered after stream op `earlier` (same stream, or
    /// through declared dependencies).
    pub fn depends_on(&self, later: OpIdx, earlier: OpIdx) -> bool {
        let Some((s, p)) = self.position(later) else {
            return false;
        };
        let mut frontier = self.empty_frontier();
        self.close(&mut frontier, s, p);
        self.covers(&frontier, earlier)
    }
}

/// The legacy default stream's implicit order: for each op of a `legacy-default` stream, the
/// last op of each `blocking` stream of its device submitted before it, when that stream has
/// grown since the previous op of the legacy stream (earlier ones are reached through it).
fn legacy_dependencies(
    case: &Case,
    stream_ops: &[Vec<OpIdx>],
    op_position: &[Option<(StreamIdx, usize)>],
) -> HashMap<OpIdx, Vec<(StreamIdx, usize)>> {
    let mut deps = HashMap::new();
    for (l, def) in case.streams.iter().enumerate() {
        if def.kind != Some(StreamKind::LegacyDefault) {
            continue;
        }
        let blocking: Vec<StreamIdx> = (0..case.streams.len())
            .filter(|&b| {
                case.streams[b].kind == Some(StreamKind::Blocking)
                    && case.streams[b].device == def.device
            })
            .collect();
        if blocking.is_empty() {
            continue;
        }
        let mut seen: Vec<usize> = vec![0; blocking.len()];
        for &op in &stream_ops[l] {
            let mut here = Vec::new();
            for (i, &b) in blocking.iter().enumerate() {
                let submitted = stream_ops[b].partition_point(|&k| k < op);
                if submitted > seen[i] {
                    seen[i] = submitted;
                    here.push((b, submitted - 1));
                }
            }
            if !here.is_empty() {
                debug_assert!(op_position[op].is_some_and(|(s, _)| s == l));
                deps.insert(op, here);
            }
        }
    }
    deps
}

/// Merges `other` into `into` (the union of two coverages).
pub fn merge(into: &mut Frontier, other: &Frontier) {
    for (a, b) in into.iter_mut().zip(other) {
        *a = (*a).max(*b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::load_case_str;

    /// Streams A, B, C on device gpu0 and D on gpu1, with `program` as the host program.
    fn case_with(program: &str) -> Case {
        // An event is completed when the program records it, else never recorded.
        let events: Vec<String> = [("a", "A", 1), ("b", "B", 2), ("c", "C", 3)]
            .iter()
            .map(|(id, stream, at)| {
                if program.contains(&format!(r#""record", "event": "{id}""#)) {
                    format!(r#"{{"id": "{id}", "stream": "{stream}", "timing": true, "state": "completed", "at": "{at} us"}}"#)
                } else {
                    format!(r#"{{"id": "{id}", "stream": "{stream}", "timing": true, "state": "not-recorded"}}"#)
                }
            })
            .collect();
        let text = format!(
            r#"{{"format": "worksheet-case", "version": 1,
            "clocks": [{{"id": "gpu", "domain": "device", "instance": "ctx"}}],
            "streams": [{{"id": "A", "clock": "gpu", "device": "gpu0"}}, {{"id": "B", "clock": "gpu", "device": "gpu0"}},
                        {{"id": "C", "clock": "gpu", "device": "gpu0"}}, {{"id": "D", "clock": "gpu", "device": "gpu1"}}],
            "events": [{events}],
            "phases": [{{"id": "pa", "stream": "A", "start": "0 us", "end": "1 us"}},
                       {{"id": "pb", "stream": "B", "start": "0 us", "end": "2 us"}},
                       {{"id": "pc", "stream": "C", "start": "0 us", "end": "3 us"}},
                       {{"id": "pd", "stream": "D", "start": "0 us", "end": "4 us"}}],
            "program": [{program}]}}"#,
            events = events.join(", ")
        );
        load_case_str(&text, "schedule-test.json").expect("valid test case")
    }

    fn covered_phases(case: &Case, wait_op: OpIdx) -> Vec<&str> {
        let schedule = Schedule::new(case);
        let Op::HostWait { target, .. } = &case.program[wait_op] else {
            panic!("not a wait")
        };
        let frontier = schedule.wait_coverage(case, wait_op, target);
        case.program
            .iter()
            .enumerate()
            .filter_map(|(k, op)| match op {
                Op::Launch(p) if schedule.covers(&frontier, k) => Some(&*case.phases[*p].id),
                _ => None,
            })
            .collect()
    }

    ///  C: pc ── record(c)
    ///  B: pb ── wait(c) ── record(b)
    ///  A: pa ── wait(b) ── record(a)   host waits on a: covers pa, pb and pc (two joins)
    #[test]
    fn event_wait_covers_work_joined_through_two_streams() {
        let case = case_with(
            r#"{"op": "launch", "phase": "pc"}, {"op": "record", "event": "c"},
               {"op": "launch", "phase": "pb"}, {"op": "stream-wait", "stream": "B", "event": "c"}, {"op": "record", "event": "b"},
               {"op": "launch", "phase": "pa"}, {"op": "stream-wait", "stream": "A", "event": "b"}, {"op": "record", "event": "a"},
               {"op": "host-wait", "id": "w", "event": "a"}"#,
        );
        assert_eq!(covered_phases(&case, 8), vec!["pc", "pb", "pa"]);
    }

    #[test]
    fn stream_wait_on_an_event_not_yet_recorded_waits_for_nothing() {
        let case = case_with(
            r#"{"op": "launch", "phase": "pa"}, {"op": "stream-wait", "stream": "A", "event": "b"},
               {"op": "record", "event": "a"}, {"op": "launch", "phase": "pb"}, {"op": "record", "event": "b"},
               {"op": "host-wait", "id": "w", "event": "a"}"#,
        );
        assert_eq!(covered_phases(&case, 5), vec!["pa"]);
    }

    #[test]
    fn device_wait_covers_only_that_devices_streams_and_only_work_before_it() {
        let case = case_with(
            r#"{"op": "launch", "phase": "pa"}, {"op": "launch", "phase": "pb"}, {"op": "launch", "phase": "pd"},
               {"op": "host-wait", "id": "w", "device": "gpu0"}, {"op": "launch", "phase": "pc"}"#,
        );
        assert_eq!(covered_phases(&case, 3), vec!["pa", "pb"]);
    }

    #[test]
    fn stream_wait_covers_its_stream_and_what_that_stream_waited_for() {
        let case = case_with(
            r#"{"op": "launch", "phase": "pb"}, {"op": "record", "event": "b"}, {"op": "launch", "phase": "pc"},
               {"op": "stream-wait", "stream": "A", "event": "b"}, {"op": "launch", "phase": "pa"},
               {"op": "host-wait", "id": "w", "stream": "A"}"#,
        );
        assert_eq!(covered_phases(&case, 5), vec!["pb", "pa"]);
    }

    /// L (legacy default), B (blocking), N (non-blocking), all on gpu0:
    ///  B: b1 ─────────────┐          b2 (after the copy)
    ///  N: n1              │
    ///  L:          copy(D2H) ── host returns   covers copy and b1, not n1, not b2
    #[test]
    fn a_legacy_default_copy_covers_earlier_blocking_work_only() {
        let text = r#"{"format": "worksheet-case", "version": 1,
            "clocks": [{"id": "gpu", "domain": "device", "instance": "ctx"}],
            "streams": [{"id": "L", "clock": "gpu", "device": "gpu0", "kind": "legacy-default"},
                        {"id": "B", "clock": "gpu", "device": "gpu0", "kind": "blocking"},
                        {"id": "N", "clock": "gpu", "device": "gpu0", "kind": "non-blocking"}],
            "phases": [{"id": "b1", "stream": "B", "start": "0 us", "end": "1 us"},
                       {"id": "n1", "stream": "N", "start": "0 us", "end": "1 us"},
                       {"id": "copy", "stream": "L", "start": "1 us", "end": "2 us"},
                       {"id": "b2", "stream": "B", "start": "2 us", "end": "3 us"}],
            "program": [{"op": "launch", "phase": "b1"}, {"op": "launch", "phase": "n1"},
                        {"op": "launch", "phase": "copy"}, {"op": "launch", "phase": "b2"},
                        {"op": "host-wait", "id": "w", "stream": "L", "implicit": "sync-copy-dtoh", "copy": "copy"}]}"#;
        let case = load_case_str(text, "legacy.json").expect("valid");
        assert_eq!(covered_phases(&case, 4), vec!["b1", "copy"]);
    }

    /// S: k ── copy(pageable H2D) ── host returns: covers k, not the copy.
    #[test]
    fn a_pageable_htod_copy_covers_the_work_before_it_not_itself() {
        let text = r#"{"format": "worksheet-case", "version": 1,
            "clocks": [{"id": "gpu", "domain": "device", "instance": "ctx"}],
            "streams": [{"id": "S", "clock": "gpu", "device": "gpu0"}],
            "phases": [{"id": "k", "stream": "S", "start": "0 us", "end": "1 us"},
                       {"id": "copy", "stream": "S", "start": "1 us", "end": "2 us"}],
            "program": [{"op": "launch", "phase": "k"}, {"op": "launch", "phase": "copy"},
                        {"op": "host-wait", "id": "w", "stream": "S", "implicit": "pageable-htod", "copy": "copy"}]}"#;
        let case = load_case_str(text, "htod.json").expect("valid");
        assert_eq!(covered_phases(&case, 2), vec!["k"]);
    }

    #[test]
    fn event_wait_does_not_cover_work_after_the_event_in_its_stream() {
        let case = case_with(
            r#"{"op": "record", "event": "a"}, {"op": "launch", "phase": "pa"},
               {"op": "host-wait", "id": "w", "event": "a"}"#,
        );
        assert!(covered_phases(&case, 2).is_empty());
    }
}
