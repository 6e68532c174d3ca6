//! The idle-time breakdown per stream, by HTA's three causes, exact in integer ns.
//!
//! HTA 0.5.0 (`get_idle_time_breakdown`, `_analyze_idle_time_for_stream`) walks each stream's
//! GPU activities (kernels, copies, sets) in start order and calls the gap before each one
//! **host wait** when the call that launched it started after the previous activity ended (the
//! host had not yet asked for it), else **kernel wait** when the gap is shorter than
//! `consecutive_kernel_delay` (30 in the trace's µs: [`KERNEL_WAIT_BELOW_NS`]), else **other**.
//!
//! ```text
//! host:     [launch k1]           [launch k2]  [launch k3]
//! stream:      [k1====)                [k2==)  [k3=====)              [k4==)
//! gap:                 ·host wait·····)     ··)kernel wait  ···other···)
//!                      (k2's launch began after k1 ended)    (≥ 30 µs, launched in time)
//! ```
//!
//! Here the gap is measured from the **latest end so far** (the stream's busy union), not from
//! the previous activity's end as HTA does: where two activities of one stream overlap, HTA's
//! gap can be negative (and is summed so), while here an overlap is simply no gap. So for every
//! stream `host wait + kernel wait + other = span − busy`, exactly, and never more than the
//! stream's span (first start to last end): no time outside the trace, none counted twice.
//! A gap before an activity without a launch call in the trace cannot be host wait (HTA: the
//! join finds no runtime row, so the test is false); it is kernel wait or other by length.
//!
//! The other differences from HTA's numbers are HTA's defaults, named in
//! `docs/hta-views.md` and measured by HTA itself in `tests/hta_views.rs`: whole-µs rounding
//! (`us-rounding`) and the last-`ProfilerStep` filter (`last-step-filter`). Cost: O(n log n).

use std::collections::BTreeMap;

use serde::Serialize;

use super::index::Index;

/// HTA's `consecutive_kernel_delay` default, 30 µs: a gap shorter than this, before an
/// activity launched in time, is kernel wait (a labelled assumption: HTA's threshold).
pub const KERNEL_WAIT_BELOW_NS: i64 = 30_000;

/// One stream's idle time, by cause.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdleRow {
    /// `gpu0`.
    pub device: String,
    /// `gpu0-s7`.
    pub stream: String,
    /// Activities on the stream.
    pub activities: u64,
    /// First start → last end, ns.
    pub span_ns: i128,
    /// The union of the stream's activities, ns.
    pub busy_ns: i128,
    /// Gaps before activities whose launch call started after the stream went idle, ns.
    pub host_wait_ns: i128,
    /// Other gaps shorter than [`KERNEL_WAIT_BELOW_NS`], ns.
    pub kernel_wait_ns: i128,
    /// The remaining gaps, ns.
    pub other_ns: i128,
    /// How many gaps of each cause: `[host wait, kernel wait, other]`.
    pub gaps: [u64; 3],
}

impl IdleRow {
    /// `host wait + kernel wait + other` (equal to `span − busy` by construction).
    pub fn idle_ns(&self) -> i128 {
        self.host_wait_ns + self.kernel_wait_ns + self.other_ns
    }
}

/// The idle breakdown of every stream of the trace, by device then stream.
pub fn idle_rows(index: &Index) -> Vec<IdleRow> {
    let trace = index.trace;
    let mut by_stream: BTreeMap<(i64, i64), Vec<usize>> = BTreeMap::new();
    for (i, a) in trace.activities.iter().enumerate() {
        by_stream.entry((a.device, a.stream)).or_default().push(i);
    }
    by_stream
        .into_iter()
        .map(|((device, stream), mut list)| {
            let acts = &trace.activities;
            list.sort_by_key(|&i| (acts[i].start, acts[i].end));
            let mut row = IdleRow {
                device: format!("gpu{device}"),
                stream: format!("gpu{device}-s{stream}"),
                activities: list.len() as u64,
                span_ns: 0,
                busy_ns: 0,
                host_wait_ns: 0,
                kernel_wait_ns: 0,
                other_ns: 0,
                gaps: [0; 3],
            };
            let first = acts[list[0]].start;
            let mut reach = acts[list[0]].end;
            let mut run_start = first;
            for &i in &list[1..] {
                let a = &acts[i];
                if a.start > reach {
                    row.busy_ns += i128::from(reach) - i128::from(run_start);
                    let gap = i128::from(a.start) - i128::from(reach);
                    let launched_late =
                        index.launch[i].is_some_and(|c| trace.calls[c].start > reach);
                    let cause = if launched_late {
                        0
                    } else if gap < i128::from(KERNEL_WAIT_BELOW_NS) {
                        1
                    } else {
                        2
                    };
                    row.gaps[cause] += 1;
                    match cause {
                        0 => row.host_wait_ns += gap,
                        1 => row.kernel_wait_ns += gap,
                        _ => row.other_ns += gap,
                    }
                    run_start = a.start;
                }
                reach = reach.max(a.end);
            }
            row.busy_ns += i128::from(reach) - i128::from(run_start);
            row.span_ns = i128::from(reach) - i128::from(first);
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::trace::model::{Activity, ActivityKind, ApiCall, Trace};

    fn trace(acts: &[(i64, i64, i64, Option<i64>)]) -> Trace {
        let mut t = Trace::default();
        for (k, &(stream, start, end, launch)) in acts.iter().enumerate() {
            t.activities.push(Activity {
                kind: ActivityKind::Kernel,
                name: format!("k{k}").into(),
                device: 0,
                stream,
                start,
                end,
                correlation: launch.map(|_| k as i64),
                external: None,
                copy: None,
                collective: None,
                bytes: None,
            });
            if let Some(at) = launch {
                t.calls.push(ApiCall {
                    name: "cudaLaunchKernel".into(),
                    thread: Some(1),
                    start: at,
                    end: at + 5,
                    correlation: Some(k as i64),
                    external: None,
                    sync_recorded: false,
                });
            }
        }
        t
    }

    /// The module's drawing: k2 launched after k1 ended (host wait 40 µs), k3 10 µs after k2
    /// (kernel wait), k4 50 µs after k3 though launched long before (other).
    #[test]
    fn each_gap_gets_htas_cause() {
        let us = 1_000;
        let t = trace(&[
            (7, 10 * us, 20 * us, Some(0)),
            (7, 60 * us, 70 * us, Some(30 * us)),
            (7, 80 * us, 100 * us, Some(31 * us)),
            (7, 150 * us, 160 * us, Some(32 * us)),
        ]);
        let rows = idle_rows(&Index::new(&t));
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.host_wait_ns, r.kernel_wait_ns, r.other_ns),
            (40 * 1000, 10 * 1000, 50 * 1000)
        );
        assert_eq!(r.gaps, [1, 1, 1]);
        assert_eq!((r.span_ns, r.busy_ns), (150_000, 50_000));
        assert_eq!(r.idle_ns(), r.span_ns - r.busy_ns);
    }

    /// A gap of exactly 30 µs is not below the threshold: other. 29.999 µs is kernel wait.
    /// An activity with no launch call in the trace is never host wait.
    #[test]
    fn the_threshold_is_strict_and_an_unlaunched_gap_is_not_host_wait() {
        let t = trace(&[
            (7, 0, 10, None),
            (7, 30_010, 30_020, None),
            (7, 60_019, 60_030, None),
        ]);
        let r = &idle_rows(&Index::new(&t))[0];
        assert_eq!(
            (r.host_wait_ns, r.kernel_wait_ns, r.other_ns),
            (0, 29_999, 30_000)
        );
    }

    /// Overlapping activities of one stream leave no gap (HTA would count k1's start minus
    /// k0's end, negative, and then measure k2's gap from k1's earlier end).
    #[test]
    fn an_overlap_is_no_gap_and_the_next_gap_counts_from_the_latest_end() {
        let t = trace(&[
            (7, 0, 100, Some(0)),
            (7, 50, 60, Some(0)),
            (7, 110, 120, Some(0)),
        ]);
        let r = &idle_rows(&Index::new(&t))[0];
        assert_eq!((r.kernel_wait_ns, r.gaps), (10, [0, 1, 0]));
        assert_eq!((r.span_ns, r.busy_ns), (120, 110));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Per stream the three causes add up to span − busy, tick by tick; busy is the union.
        #[test]
        fn causes_add_up_to_the_idle_ticks_of_each_stream(
            raw in proptest::collection::vec((0i64..2, 0i64..60_000, 0i64..20_000, proptest::option::of(0i64..80_000)), 1..10)
        ) {
            let acts: Vec<(i64, i64, i64, Option<i64>)> =
                raw.iter().map(|&(s, a, len, l)| (s, a, a + len, l)).collect();
            let t = trace(&acts);
            for r in idle_rows(&Index::new(&t)) {
                let s: i64 = r.stream.rsplit('s').next().unwrap().parse().unwrap();
                let mine: Vec<_> = acts.iter().filter(|a| a.0 == s).collect();
                let lo = mine.iter().map(|a| a.1).min().unwrap();
                let hi = mine.iter().map(|a| a.2).max().unwrap();
                let busy = crate::interval_set::IntervalSet::from_pairs(mine.iter().map(|a| (a.1, a.2))).measure_ns();
                prop_assert_eq!(r.span_ns, i128::from(hi - lo));
                prop_assert_eq!(r.busy_ns, busy);
                prop_assert_eq!(r.idle_ns(), r.span_ns - r.busy_ns);
                prop_assert!(r.host_wait_ns >= 0 && r.kernel_wait_ns >= 0 && r.other_ns >= 0);
            }
        }
    }
}
