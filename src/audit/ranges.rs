//! Findings about what host-side numbers mean: `host-range-measures-submission` and
//! `launch-queue-delay`.
//!
//! ```text
//! host:  [record_function "fwd" ....)          ← closes here: 40 µs of *submission*
//!           [launch][launch][launch]
//! gpu:          [k1=====][k2==========][k3====]   ← the work it launched ends 300 µs later
//! ```
//!
//! A range's work is the GPU activities whose launch call runs on the range's thread and
//! starts inside it. It "measures submission" when that work ends after the range closes and
//! no blocking sync inside the range, after the last launch, waits for it.

use std::collections::BTreeMap;

use super::finding::{Evidence, Finding, Severity};
use super::index::{percent, quantile, Index};
use crate::stats::Percentile;
use crate::trace::model::{RangeKind, Step};
use crate::units::format_wide as wide;

/// Per range name: what its ranges show.
#[derive(Default)]
struct ByName {
    ranges: usize,
    flagged: usize,
    after: i128,
    total: i128,
    host: Vec<i128>,
    gpu: Vec<i128>,
    first: Option<(i64, i128)>,
}

/// `host-range-measures-submission`.
pub fn host_range_measures_submission(index: &Index) -> Option<Finding> {
    let trace = index.trace;
    // Launch calls per thread in start order: (call start, activity).
    let mut launches: BTreeMap<Option<i64>, Vec<(i64, i64, usize)>> = BTreeMap::new();
    for (a, c) in index.launch.iter().enumerate() {
        if let Some(c) = *c {
            let call = &trace.calls[c];
            launches
                .entry(call.thread)
                .or_default()
                .push((call.start, call.end, a));
        }
    }
    for list in launches.values_mut() {
        list.sort_unstable();
    }
    let mut by_name: BTreeMap<&str, ByName> = BTreeMap::new();
    for r in &trace.ranges {
        if r.kind != RangeKind::Annotation {
            continue;
        }
        let Some(list) = launches.get(&r.thread) else {
            continue;
        };
        let from = list.partition_point(|l| l.0 < r.start);
        let to = list.partition_point(|l| l.0 < r.end);
        let inside = &list[from..to];
        if inside.is_empty() {
            continue;
        }
        let acts: Vec<_> = inside.iter().map(|l| &trace.activities[l.2]).collect();
        let last_end = acts.iter().map(|a| a.end).max().unwrap_or(r.end);
        let first_start = acts.iter().map(|a| a.start).min().unwrap_or(r.start);
        let last_launch_return = inside.iter().map(|l| l.1).max().unwrap_or(r.start);
        let waited = index
            .syncs
            .iter()
            .any(|s| s.thread == r.thread && s.start >= last_launch_return && s.end <= r.end);
        let entry = by_name.entry(group_name(&r.name)).or_default();
        entry.ranges += 1;
        if last_end <= r.end || waited {
            continue;
        }
        entry.flagged += 1;
        for a in &acts {
            entry.total += i128::from(a.end) - i128::from(a.start);
            entry.after += (i128::from(a.end) - i128::from(a.start.max(r.end))).max(0);
        }
        entry.host.push(i128::from(r.end) - i128::from(r.start));
        entry
            .gpu
            .push(i128::from(last_end) - i128::from(first_start));
        entry
            .first
            .get_or_insert((r.start, i128::from(last_end) - i128::from(r.end)));
    }
    let mut flagged: Vec<(&str, ByName)> =
        by_name.into_iter().filter(|(_, b)| b.flagged > 0).collect();
    if flagged.is_empty() {
        return None;
    }
    flagged.sort_by(|a, b| b.1.flagged.cmp(&a.1.flagged).then(a.0.cmp(b.0)));
    let count: usize = flagged.iter().map(|(_, b)| b.flagged).sum();
    let lines: Vec<String> = flagged
        .iter_mut()
        .map(|(name, b)| {
            let host = quantile(&mut b.host, Percentile::MEDIAN).unwrap_or(0);
            let gpu = quantile(&mut b.gpu, Percentile::MEDIAN).unwrap_or(0);
            let (at, late) = b.first.unwrap_or((0, 0));
            format!(
                "`{name}`: {} of {} ranges close before their GPU work ends; {} of that work ran after the close; median host range {} vs median GPU span {}; first at {} (work ends {} after the close)",
                b.flagged,
                b.ranges,
                percent(b.after, b.total),
                wide(host),
                wide(gpu),
                index.at(at),
                wide(late)
            )
        })
        .collect();
    let (top, b) = &flagged[0];
    Some(Finding {
        figures: Vec::new(),
        code: "host-range-measures-submission",
        severity: Severity::Warning,
        message: format!(
            "{count} annotation range(s) under {} name(s) close before the GPU work launched inside them has finished, with no wait inside: their length is submission time, not the work's (most: `{top}`, {} of {})",
            flagged.len(),
            b.flagged,
            b.ranges
        ),
        count: count as u64,
        evidence: Evidence::capped(lines),
        fix: "read the GPU side (the kernels, or `gpu_user_annotation` ranges) for how long the work took; to time the block on the host, end the range after a wait that covers its work (`torch.cuda.synchronize()` or an event's `synchronize()`), or time it with CUDA events".to_owned(),
    })
}

/// The name ranges are grouped by: PyTorch's `emit_nvtx` names carry per-call counters
/// (`aten::mm, seq = 12, op_id = 99, sizes = [...]`), which are cut off.
fn group_name(name: &str) -> &str {
    [", seq = ", ", op_id = ", ", sizes = "]
        .iter()
        .filter_map(|m| name.find(m))
        .min()
        .map_or(name, |i| &name[..i])
}

/// Delays below this are "at the floor" whatever the floor is (launch latency is µs-scale).
const NEAR_FLOOR_NS: i64 = 10_000;
/// Fewest delays on a stream before its distribution is judged.
const MIN_DELAYS: usize = 10;

/// One launch: (call start, launch → start delay, activity index).
/// (call start, launch → start delay in i128: a kernel at i64::MIN is 2^63 ns early, activity).
type Launch = (i64, i128, usize);

/// `launch-queue-delay`: per stream, the launch → start delay shows a starved GPU or a deep queue.
pub fn launch_queue_delay(index: &Index, steps: &[Step]) -> Option<Finding> {
    let trace = index.trace;
    let mut by_stream: BTreeMap<(i64, i64), Vec<Launch>> = BTreeMap::new();
    for (a, c) in index.launch.iter().enumerate() {
        if let Some(c) = *c {
            let act = &trace.activities[a];
            by_stream
                .entry((act.device, act.stream))
                .or_default()
                .push((
                    trace.calls[c].start,
                    i128::from(act.start) - i128::from(trace.calls[c].start),
                    a,
                ));
        }
    }
    let mut lines = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut count = 0u64;
    for ((device, stream), mut list) in by_stream {
        if list.len() < MIN_DELAYS {
            continue;
        }
        list.sort_unstable();
        let mut delays: Vec<i128> = list.iter().map(|l| l.1).collect();
        let median = quantile(&mut delays, Percentile::MEDIAN).unwrap_or(0);
        let p90 = quantile(&mut delays, Percentile::P90).unwrap_or(0);
        let max = delays.last().copied().unwrap_or(0);
        let floor = delays.first().copied().unwrap_or(0).max(0);
        // Busy and gaps of the stream over its span.
        let mut acts: Vec<(i64, i64)> = list
            .iter()
            .map(|l| (trace.activities[l.2].start, trace.activities[l.2].end))
            .collect();
        acts.sort_unstable();
        let (mut covered, mut reach) = (0i128, i64::MIN);
        for (s, e) in &acts {
            let s = (*s).max(reach);
            if *e > s {
                covered += i128::from(*e) - i128::from(s);
            }
            reach = reach.max(*e);
        }
        let span = i128::from(reach) - i128::from(acts[0].0);
        let gaps = span - covered;
        // Growth through a window: last third's median against the first third's.
        let windows: Vec<(i64, i64)> = if steps.is_empty() {
            vec![(i64::MIN, i64::MAX)]
        } else {
            steps.iter().map(|s| (s.start, s.end)).collect()
        };
        let mut growing = 0usize;
        let mut judged = 0usize;
        for (lo, hi) in windows {
            let inside: Vec<i128> = list
                .iter()
                .filter(|l| lo <= l.0 && l.0 < hi)
                .map(|l| l.1)
                .collect();
            let k = inside.len() / 3;
            if k < 3 {
                continue;
            }
            judged += 1;
            let first = quantile(&mut inside[..k].to_vec(), Percentile::MEDIAN).unwrap_or(0);
            let last =
                quantile(&mut inside[inside.len() - k..].to_vec(), Percentile::MEDIAN).unwrap_or(0);
            if last > 4 * first.max(i128::from(NEAR_FLOOR_NS / 10))
                && last > i128::from(NEAR_FLOOR_NS)
            {
                growing += 1;
            }
        }
        // A deep queue keeps the GPU busy: growth with the stream mostly idle is not one.
        let (label, which) = if judged > 0 && growing * 2 > judged && gaps * 2 <= span {
            (
                "a deep queue",
                "deep queue: the delay grows through the step (the window without steps) while the stream stays busy, the host runs ahead of the GPU",
            )
        } else if median <= floor + i128::from(NEAR_FLOOR_NS) && gaps * 4 >= span && span > 0 {
            ("a starved GPU", "starved: delays near the floor with the stream idle between kernels, the GPU waits for the host")
        } else {
            continue;
        };
        count += 1;
        labels.push(format!("{label} on gpu{device}-s{stream}"));
        lines.push(format!(
            "gpu{device}-s{stream}: {} launches, delay median {}, P90 {}, max {}, floor {}; idle {} of its span: {which}",
            list.len(),
            wide(median),
            wide(p90),
            wide(max),
            wide(floor),
            percent(gaps, span)
        ));
    }
    if count == 0 {
        return None;
    }
    Some(Finding {
        figures: Vec::new(),
        code: "launch-queue-delay",
        severity: Severity::Info,
        message: format!(
            "launch → start delays on {count} stream(s) show {}",
            labels.join(", ")
        ),
        count,
        evidence: Evidence::capped(lines),
        fix: "starved: cut host work between launches (CUDA graphs, torch.compile, larger kernels, fewer syncs); deep queue: the GPU is the bottleneck, so host-side timings of ops measure queueing, read the device side".to_owned(),
    })
}
