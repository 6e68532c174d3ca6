//! A slow, obviously correct model of wait coverage (SPEC §4): the coverage counterpart of
//! [`DenseOracle`](super::DenseOracle).
//!
//! [`crate::schedule`] answers coverage with per-stream frontiers closed over dependencies,
//! in O(positions + dependencies). This model answers the same question the long way, reading
//! SPEC §4 sentence by sentence, so that a property test can compare the two on every wait of
//! every generated program:
//!
//! 1. *"Work in one stream runs in submission order."* Every op submitted to a stream (record,
//!    launch, stream-wait) is ordered after every earlier op of the same stream.
//! 2. *"Work in another stream is ordered only by a declared dependency (a stream waits on an
//!    event of another stream)."* A `stream-wait` is ordered after the `record` of its event,
//!    when that record comes earlier in the program; otherwise it waits for nothing.
//!    *"On the legacy default stream, work is also ordered after the earlier work of every
//!    blocking stream of the device"* (§4, implicit waits): an op of a stream declared
//!    `legacy-default` is ordered after every earlier op of each stream of its device declared
//!    `blocking` (not `non-blocking`, `per-thread-default` or undeclared).
//! 3. Order is transitive: the model takes the reflexive-transitive closure of 1 and 2 with
//!    Warshall's algorithm, an O(n³) triple loop over the program's ops, on a matrix of
//!    booleans.
//! 4. A host **wait** guarantees that some stream ops have completed (its *ends*): an
//!    **event** wait, the event's record, if it precedes the wait; a **stream** wait, every op
//!    submitted to that stream before the wait; a **device** wait, every op submitted before
//!    the wait to any stream whose `device` is that device. An **implicit** wait (a copy whose
//!    return is a wait) ends at the copy itself for a device-to-host copy, and at its
//!    stream's ops submitted before the copy for a pageable host-to-device copy (never the
//!    copy, never anything after it). A wait covers every op ordered at or before one of its
//!    ends.
//!
//! ```text
//!  ordered[a][b]   "b cannot complete before a has"     stream A: a0 ── a1 ── wait(e) ── a3
//!  (reflexive, transitive)                              stream B: b0 ── record(e) ─┘
//!  host wait on stream A after a3: ends = {a0, a1, wait(e), a3}; covers a0, a1, b0, record(e), …
//! ```
//!
//! Nothing here calls [`crate::schedule`]: the model shares no code with what it checks. It is
//! quadratic in memory and cubic in time, so it is for generated programs of a few dozen ops.
//!
//! **A reading made explicit.** For a pageable host-to-device copy on the legacy default
//! stream, the model covers the blocking streams' work only through the legacy stream's ops
//! before the copy (rule 2 applies to the ops, and the ends are those ops), as
//! [`crate::schedule`] does. Blocking work submitted after the legacy stream's last op and
//! before the copy is not covered: an under-claim, never an over-claim.

use crate::case::{
    Case, EventIdx, ImplicitKind, Op, OpIdx, PhaseIdx, StreamIdx, StreamKind, WaitTarget,
};
use crate::units::Nanos;
use crate::verdict::Reason;

/// The programs [`CoverageModel::new`] accepts, at most this many ops long.
pub const MODEL_MAX_OPS: usize = 512;

/// The order of a case's stream ops, and what each host wait covers, computed naively.
#[derive(Clone, Debug)]
pub struct CoverageModel<'c> {
    case: &'c Case,
    /// For each program op, the stream it is submitted to (records, launches, stream-waits).
    stream_of: Vec<Option<StreamIdx>>,
    /// `ordered[a][b]`: stream op `b` cannot complete before stream op `a` has (`a == b`
    /// included). Always `false` for ops that run in no stream.
    ordered: Vec<Vec<bool>>,
}

impl<'c> CoverageModel<'c> {
    /// Builds the order of `case`'s program (rules 1–3 of the module docs).
    ///
    /// # Panics
    /// When the program is longer than [`MODEL_MAX_OPS`]: the model is for small programs.
    pub fn new(case: &'c Case) -> Self {
        let n = case.program.len();
        assert!(
            n <= MODEL_MAX_OPS,
            "CoverageModel is for small programs: {n} ops is too many"
        );
        let stream_of: Vec<Option<StreamIdx>> = case
            .program
            .iter()
            .map(|op| match op {
                Op::Record(e) => Some(case.events[*e].stream),
                Op::Launch(p) => case.phases[*p].stream,
                Op::StreamWait { stream, .. } => Some(*stream),
                _ => None,
            })
            .collect();
        let mut ordered = vec![vec![false; n]; n];
        for b in 0..n {
            let Some(sb) = stream_of[b] else { continue };
            // Rule 1: every earlier op of the same stream, and the op itself.
            for a in 0..=b {
                if stream_of[a] == Some(sb) {
                    ordered[a][b] = true;
                }
            }
            // Rule 2, legacy default stream: after every earlier op of its device's blocking
            // streams.
            if case.streams[sb].kind == Some(StreamKind::LegacyDefault) {
                for a in 0..b {
                    if let Some(sa) = stream_of[a] {
                        let other = &case.streams[sa];
                        if other.kind == Some(StreamKind::Blocking)
                            && other.device == case.streams[sb].device
                        {
                            ordered[a][b] = true;
                        }
                    }
                }
            }
            // Rule 2: a stream-wait follows its event's record, if that came earlier.
            if let Op::StreamWait { event, .. } = &case.program[b] {
                if let Some(r) = record_before(case, *event, b) {
                    ordered[r][b] = true;
                }
            }
        }
        // Rule 3: Warshall's transitive closure.
        // (Row `m` does not change during step `m`: `a = m` only ORs row `m` into itself.)
        for m in 0..n {
            let from_m = ordered[m].clone();
            for row in ordered.iter_mut().filter(|row| row[m]) {
                for (cell, &through_m) in row.iter_mut().zip(&from_m) {
                    *cell |= through_m;
                }
            }
        }
        CoverageModel {
            case,
            stream_of,
            ordered,
        }
    }

    /// The stream program op `op` is submitted to, if any.
    pub fn stream_of(&self, op: OpIdx) -> Option<StreamIdx> {
        self.stream_of[op]
    }

    /// Whether stream op `later` cannot complete before stream op `earlier` has: the same op,
    /// an earlier op of the same stream, or joined through declared dependencies.
    pub fn ordered(&self, earlier: OpIdx, later: OpIdx) -> bool {
        self.ordered[earlier][later]
    }

    /// The stream ops that the host wait at program index `wait_op` guarantees complete
    /// (rule 4 of the module docs). Empty for an op that is not a host wait.
    pub fn ends(&self, wait_op: OpIdx) -> Vec<OpIdx> {
        let Op::HostWait {
            target, implicit, ..
        } = &self.case.program[wait_op]
        else {
            return Vec::new();
        };
        if let Some(implicit) = implicit {
            return match implicit.kind {
                ImplicitKind::SyncCopyDtoh | ImplicitKind::AsyncCopyDtohPageable => {
                    vec![implicit.copy_op]
                }
                ImplicitKind::PageableHtod => {
                    let copy_stream = self.stream_of[implicit.copy_op];
                    (0..implicit.copy_op)
                        .filter(|&y| copy_stream.is_some() && self.stream_of[y] == copy_stream)
                        .collect()
                }
            };
        }
        let submitted_before = |keep: &dyn Fn(StreamIdx) -> bool| -> Vec<OpIdx> {
            (0..wait_op)
                .filter(|&y| self.stream_of[y].is_some_and(keep))
                .collect()
        };
        match target {
            WaitTarget::Event(e) => record_before(self.case, *e, wait_op).into_iter().collect(),
            WaitTarget::Stream(s) => submitted_before(&|t| t == *s),
            WaitTarget::Device(d) => submitted_before(&|t| self.case.streams[t].device == *d),
        }
    }

    /// Whether the host wait at `wait_op` covers program op `op`.
    pub fn covers(&self, wait_op: OpIdx, op: OpIdx) -> bool {
        self.ends(wait_op).iter().any(|&end| self.ordered[op][end])
    }

    /// The program indices of the launches that the host wait at `wait_op` covers, in
    /// program order.
    pub fn covered_launches(&self, wait_op: OpIdx) -> Vec<OpIdx> {
        let ends = self.ends(wait_op);
        (0..self.case.program.len())
            .filter(|&k| matches!(self.case.program[k], Op::Launch(_)))
            .filter(|&k| ends.iter().any(|&end| self.ordered[k][end]))
            .collect()
    }

    /// The program index of phase `p`'s launch, if the program launches it.
    pub fn launch_of(&self, p: PhaseIdx) -> Option<OpIdx> {
        self.case
            .program
            .iter()
            .position(|op| matches!(op, Op::Launch(q) if *q == p))
    }

    /// What SPEC §5 says a host-completion question over `timer` claiming `work` must
    /// answer: the timer's clocks must match; a wait must stand between the timer's start and
    /// stop in the program (and, when its return is recorded on the stop's clock, return by
    /// the stop); and those waits together must cover every claimed phase, launched before
    /// the stop.
    pub fn completion(&self, timer: usize, work: &[PhaseIdx]) -> Result<Nanos, Reason> {
        let case = self.case;
        let t = &case.timers[timer];
        let (start_clock, stop_clock) = (case.clock(t.start.0), case.clock(t.stop.0));
        if start_clock.domain != stop_clock.domain {
            return Err(Reason::CrossDomain);
        }
        if start_clock.instance != stop_clock.instance {
            return Err(Reason::CrossInstance);
        }
        let waits: Vec<OpIdx> = (t.start_op..t.stop_op)
            .filter(|&k| match &case.program[k] {
                Op::HostWait { returned, .. } => match returned {
                    Some((clock, at)) => case.clock(*clock) != stop_clock || *at <= t.stop.1,
                    None => true,
                },
                _ => false,
            })
            .collect();
        if waits.is_empty() {
            return Err(Reason::NoWait);
        }
        let all_covered = work.iter().all(|&p| {
            self.launch_of(p)
                .is_some_and(|k| k < t.stop_op && waits.iter().any(|&w| self.covers(w, k)))
        });
        if !all_covered {
            return Err(Reason::WaitMissesWork);
        }
        t.stop.1.checked_sub(t.start.1).ok_or(Reason::Overflow)
    }

    /// Whether the device interval between events `start` and `end` may be read (SPEC §5):
    /// both timing-enabled and completed, on one clock, in one stream or with `end`'s record
    /// ordered after `start`'s. Returns the reason it may not, checked in the order the SPEC
    /// lists them; the value itself is not the model's business.
    pub fn pair_readable(&self, start: EventIdx, end: EventIdx) -> Result<(), Reason> {
        let case = self.case;
        let (a, b) = (&case.events[start], &case.events[end]);
        if !a.timing || !b.timing {
            return Err(Reason::TimingDisabled);
        }
        let completed =
            |e: &crate::case::EventDef| matches!(e.state, crate::case::EventState::Completed(_));
        if !completed(a) || !completed(b) {
            return Err(Reason::EventIncomplete);
        }
        let (ca, cb) = (
            case.clock(case.streams[a.stream].clock),
            case.clock(case.streams[b.stream].clock),
        );
        if ca.domain != cb.domain {
            return Err(Reason::CrossDomain);
        }
        if ca.instance != cb.instance {
            return Err(Reason::CrossInstance);
        }
        let (Some(ra), Some(rb)) = (
            record_before(case, start, case.program.len()),
            record_before(case, end, case.program.len()),
        ) else {
            return Err(Reason::EventIncomplete);
        };
        if a.stream == b.stream || self.ordered[ra][rb] {
            Ok(())
        } else {
            Err(Reason::CrossStream)
        }
    }
}

/// The program index of event `e`'s record, if it comes before program index `before`.
fn record_before(case: &Case, e: EventIdx, before: OpIdx) -> Option<OpIdx> {
    case.program[..before]
        .iter()
        .position(|op| matches!(op, Op::Record(x) if *x == e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::load_case_str;

    /// Streams A and B on gpu0, C on gpu1; phases pa, pb, pc in them; events a, b, c.
    fn case_with(program: &str) -> Case {
        // An event is completed when the program records it, else never recorded.
        let event = |id: &str, stream: &str, at: u32| {
            if program.contains(&format!(r#""record", "event": "{id}""#)) {
                format!(
                    r#"{{"id": "{id}", "stream": "{stream}", "timing": true, "state": "completed", "at": "{at} us"}}"#
                )
            } else {
                format!(
                    r#"{{"id": "{id}", "stream": "{stream}", "timing": true, "state": "not-recorded"}}"#
                )
            }
        };
        let text = format!(
            r#"{{"format": "worksheet-case", "version": 1,
            "clocks": [{{"id": "g0", "domain": "device", "instance": "ctx-0"}}, {{"id": "g1", "domain": "device", "instance": "ctx-1"}},
                       {{"id": "host", "domain": "host", "instance": "boot"}}],
            "streams": [{{"id": "A", "clock": "g0", "device": "gpu0"}}, {{"id": "B", "clock": "g0", "device": "gpu0"}},
                        {{"id": "C", "clock": "g1", "device": "gpu1"}}],
            "events": [{}, {}, {}],
            "phases": [{{"id": "pa", "stream": "A", "start": "0 us", "end": "1 us"}},
                       {{"id": "pb", "stream": "B", "start": "0 us", "end": "1 us"}},
                       {{"id": "pc", "stream": "C", "start": "0 us", "end": "1 us"}}],
            "program": [{program}]}}"#,
            event("a", "A", 1),
            event("b", "B", 2),
            event("c", "C", 3),
        );
        load_case_str(&text, "coverage-model-test.json").expect("valid test case")
    }

    fn covered(case: &Case, wait_op: OpIdx) -> Vec<&str> {
        CoverageModel::new(case)
            .covered_launches(wait_op)
            .into_iter()
            .map(|k| match case.program[k] {
                Op::Launch(p) => &*case.phases[p].id,
                _ => unreachable!("covered_launches lists launches"),
            })
            .collect()
    }

    #[test]
    fn device_wait_covers_its_own_devices_streams_only() {
        let case = case_with(
            r#"{"op": "launch", "phase": "pa"}, {"op": "launch", "phase": "pb"}, {"op": "launch", "phase": "pc"},
               {"op": "host-wait", "id": "w", "device": "gpu0"}"#,
        );
        assert_eq!(covered(&case, 3), vec!["pa", "pb"]);
    }

    #[test]
    fn a_dependency_on_another_device_carries_coverage_across() {
        let case = case_with(
            r#"{"op": "launch", "phase": "pc"}, {"op": "record", "event": "c"},
               {"op": "stream-wait", "stream": "A", "event": "c"}, {"op": "launch", "phase": "pa"},
               {"op": "host-wait", "id": "w", "device": "gpu0"}"#,
        );
        assert_eq!(covered(&case, 4), vec!["pc", "pa"]);
    }

    #[test]
    fn stream_wait_covers_an_unjoined_stream_never() {
        let case = case_with(
            r#"{"op": "launch", "phase": "pa"}, {"op": "launch", "phase": "pb"},
               {"op": "host-wait", "id": "w", "stream": "A"}"#,
        );
        assert_eq!(covered(&case, 2), vec!["pa"]);
    }

    #[test]
    fn a_stream_wait_on_a_later_record_waits_for_nothing() {
        let case = case_with(
            r#"{"op": "stream-wait", "stream": "A", "event": "b"}, {"op": "launch", "phase": "pb"},
               {"op": "record", "event": "b"}, {"op": "launch", "phase": "pa"},
               {"op": "host-wait", "id": "w", "stream": "A"}"#,
        );
        assert_eq!(covered(&case, 4), vec!["pa"]);
    }

    #[test]
    fn event_wait_covers_what_precedes_the_record_through_two_joins() {
        let case = case_with(
            r#"{"op": "launch", "phase": "pc"}, {"op": "record", "event": "c"},
               {"op": "stream-wait", "stream": "B", "event": "c"}, {"op": "launch", "phase": "pb"}, {"op": "record", "event": "b"},
               {"op": "stream-wait", "stream": "A", "event": "b"}, {"op": "record", "event": "a"}, {"op": "launch", "phase": "pa"},
               {"op": "host-wait", "id": "w", "event": "a"}"#,
        );
        // pa is launched after the record of `a`, so the wait on `a` does not cover it.
        assert_eq!(covered(&case, 8), vec!["pc", "pb"]);
    }

    #[test]
    fn a_wait_covers_nothing_submitted_after_it() {
        let case = case_with(
            r#"{"op": "host-wait", "id": "w", "device": "gpu0"}, {"op": "launch", "phase": "pa"}"#,
        );
        assert!(covered(&case, 0).is_empty());
    }

    #[test]
    fn pair_across_streams_needs_the_end_ordered_after_the_start() {
        let joined = case_with(
            r#"{"op": "record", "event": "a"}, {"op": "stream-wait", "stream": "B", "event": "a"},
               {"op": "record", "event": "b"}"#,
        );
        assert_eq!(CoverageModel::new(&joined).pair_readable(0, 1), Ok(()));
        let unjoined =
            case_with(r#"{"op": "record", "event": "a"}, {"op": "record", "event": "b"}"#);
        assert_eq!(
            CoverageModel::new(&unjoined).pair_readable(0, 1),
            Err(Reason::CrossStream)
        );
        assert_eq!(
            CoverageModel::new(&unjoined).pair_readable(0, 2),
            Err(Reason::EventIncomplete)
        );
    }
}
