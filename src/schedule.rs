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
//! Coverage is a *frontier*: for each stream, the highest position known complete.
//! Closing a frontier over dependencies costs O(positions + dependencies).

use std::collections::HashMap;

use crate::case::{Case, EventIdx, Op, OpIdx, StreamIdx, WaitTarget};

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
        Schedule {
            stream_ops,
            op_position,
            waits_for,
            record_op,
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
            }
        }
    }

    /// What the host wait at program index `wait_op`, targeting `target`, covers.
    pub fn wait_coverage(&self, case: &Case, wait_op: OpIdx, target: &WaitTarget) -> Frontier {
        let mut frontier = self.empty_frontier();
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

/// Merges `other` into `into` (the union of two coverages).
pub fn merge(into: &mut Frontier, other: &Frontier) {
    for (a, b) in into.iter_mut().zip(other) {
        *a = (*a).max(*b);
    }
}
