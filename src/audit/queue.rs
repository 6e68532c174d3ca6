//! Queue length per stream: how much work the host had launched that the GPU had not yet
//! finished (or not yet started), over time, exact in integer ns.
//!
//! Every activity joined to its launch call (same correlation) is **outstanding** from the
//! call's start to the activity's end, and **pending** from the call's start to the
//! activity's start. HTA 0.5.0's queue length (`get_queue_length_time_series`) is the pending
//! count: +1 at the launch call's start, −1 at the activity's *start*.
//!
//! ```text
//! host:    [L1]  [L2]    [L3]
//! stream:      [k1=========)[k2==)   [k3==)
//! outstanding: 1  2        1    0 1  1    0      max 2
//! pending:     1 0 1       0      1  0           max 1 (k2 waits for k1)
//! ```
//!
//! Per stream: the maximum depth and the exact time at depth ≥ 1 (the measure of the union
//! of the intervals, ns). Intervals are half-open, so at one instant ends are counted before
//! starts. An activity that starts before its launch call (an integrity problem the audit
//! reports) has an empty pending interval. Cost: O(n log n).

use std::collections::BTreeMap;

use serde::Serialize;

use super::index::Index;

/// One stream's queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QueueRow {
    /// `gpu0`.
    pub device: String,
    /// `gpu0-s7`.
    pub stream: String,
    /// Activities joined to their launch call (the others are not in the queue).
    pub launched: u64,
    /// Activities of the stream with no launch call in the trace.
    pub unlaunched: u64,
    /// Launched and not yet finished: call start → activity end.
    pub outstanding: Depth,
    /// Launched and not yet started (HTA's queue length): call start → activity start.
    pub pending: Depth,
}

/// A depth over time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Depth {
    /// The largest depth reached.
    pub max: u64,
    /// Time at depth ≥ 1, ns.
    pub time_at_1_or_more_ns: i128,
    /// Time at the largest depth, ns.
    pub time_at_max_ns: i128,
}

/// The depth of half-open intervals `[a, b)` (empty ones ignored).
pub fn depth(intervals: &[(i64, i64)]) -> Depth {
    let mut edges: Vec<(i64, i64)> = Vec::with_capacity(intervals.len() * 2);
    for &(a, b) in intervals {
        if a < b {
            edges.push((a, 1));
            edges.push((b, -1));
        }
    }
    edges.sort_unstable();
    let mut out = Depth::default();
    let mut level: i64 = 0;
    let mut prev = 0i64;
    for (k, &(t, delta)) in edges.iter().enumerate() {
        if k > 0 && level > 0 {
            let len = i128::from(t) - i128::from(prev);
            out.time_at_1_or_more_ns += len;
            if level as u64 == out.max {
                out.time_at_max_ns += len;
            }
        }
        level += delta;
        if level as u64 > out.max && delta > 0 {
            out.max = level as u64;
            out.time_at_max_ns = 0;
        }
        prev = t;
    }
    out
}

/// One stream's launched intervals so far: outstanding, pending, and the unlaunched count.
type StreamIntervals = (Vec<(i64, i64)>, Vec<(i64, i64)>, u64);

/// The queue of every stream with activities, by device then stream.
pub fn queue_rows(index: &Index) -> Vec<QueueRow> {
    let trace = index.trace;
    let mut by_stream: BTreeMap<(i64, i64), StreamIntervals> = BTreeMap::new();
    for (i, a) in trace.activities.iter().enumerate() {
        let entry = by_stream.entry((a.device, a.stream)).or_default();
        match index.launch[i] {
            Some(c) => {
                let call = trace.calls[c].start;
                entry.0.push((call, a.end));
                entry.1.push((call, a.start));
            }
            None => entry.2 += 1,
        }
    }
    by_stream
        .into_iter()
        .map(
            |((device, stream), (outstanding, pending, unlaunched))| QueueRow {
                device: format!("gpu{device}"),
                stream: format!("gpu{device}-s{stream}"),
                launched: outstanding.len() as u64,
                unlaunched,
                outstanding: depth(&outstanding),
                pending: depth(&pending),
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The module's drawing: L1 at 0, L2 at 6, L3 at 20; k1 [4, 14), k2 [14, 18), k3 [22, 26).
    #[test]
    fn the_drawing_outstanding_and_pending() {
        let out = depth(&[(0, 14), (6, 18), (20, 26)]);
        assert_eq!(out.max, 2);
        assert_eq!(out.time_at_1_or_more_ns, 18 + 6);
        assert_eq!(out.time_at_max_ns, 14 - 6);
        let pending = depth(&[(0, 4), (6, 14), (20, 22)]);
        assert_eq!(
            (
                pending.max,
                pending.time_at_1_or_more_ns,
                pending.time_at_max_ns
            ),
            (1, 4 + 8 + 2, 14)
        );
    }

    /// An end and a start at one instant do not overlap; empty intervals count nothing.
    #[test]
    fn touching_intervals_do_not_stack() {
        let d = depth(&[(0, 10), (10, 20), (5, 5), (30, 25)]);
        assert_eq!(
            (d.max, d.time_at_1_or_more_ns, d.time_at_max_ns),
            (1, 20, 20)
        );
        assert_eq!(depth(&[]), Depth::default());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Max depth and the times agree with a tick-by-tick count.
        #[test]
        fn depth_matches_a_tick_oracle(raw in proptest::collection::vec((0i64..50, 0i64..15), 0..12)) {
            let iv: Vec<(i64, i64)> = raw.iter().map(|&(a, l)| (a, a + l)).collect();
            let d = depth(&iv);
            let at = |t: i64| iv.iter().filter(|&&(a, b)| a <= t && t < b).count() as u64;
            let max = (0..70).map(at).max().unwrap_or(0);
            prop_assert_eq!(d.max, max);
            prop_assert_eq!(d.time_at_1_or_more_ns, (0..70).filter(|&t| at(t) >= 1).count() as i128);
            let at_max = if max == 0 { 0 } else { (0..70).filter(|&t| at(t) == max).count() as i128 };
            prop_assert_eq!(d.time_at_max_ns, at_max);
        }
    }
}
