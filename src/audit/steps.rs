//! The per-step view: one row per `ProfilerStep#N` (per device), the steady-state verdict
//! over steps, and the `cold-steps` finding.
//!
//! A step's **device numbers are taken inside its host window** on the trace's one clock:
//! each activity of the device is clipped to `[step start, step end)`, so busy + idle is the
//! step's host duration exactly, and the rows of back-to-back steps add up.
//!
//! ```text
//! host:   [ProfilerStep#4 ...............)[ProfilerStep#5 ....
//! gpu0:      [k1==)  [k2=======)     [k3==|==)
//!                                         └ clipped: the part before the boundary counts in #4
//! busy(#4) = |k1| + |k2| + part of k3     idle(#4) = host duration − busy(#4)
//! ```
//!
//! Syncs are counted by host start inside the window; the launch → start delay is over the
//! activities whose launch call starts inside it. The case `import` writes carries each step
//! as questions (`step:<name>:host`, an elapsed time between two marks, and
//! `step:<name>:launched`, the interval algebra of the work launched in the step).

use serde::Serialize;

use super::finding::{Evidence, Figure, Finding, Severity};
use super::index::{quantile, Index};
use crate::interval::{analyze_numbers, Interval};
use crate::stats::{
    steady_state, warmup_prefix, Percentile, SampleSet, SteadyStatePolicy, WarmupPrefix,
};
use crate::trace::model::{Step, WorkClass};
use crate::units::Nanos;
use crate::verdict::Verdict;

/// One step on one device.
#[derive(Clone, Debug, Serialize)]
pub struct StepRow {
    /// `ProfilerStep#N`.
    pub step: String,
    /// The device (`gpu0`).
    pub device: String,
    /// Host start, ns since the trace's origin.
    pub start_ns: i64,
    /// Host duration, ns.
    pub host_ns: i64,
    /// Device busy inside the window (union), ns.
    pub busy_ns: i64,
    /// `host_ns − busy_ns`.
    pub idle_ns: i64,
    /// Compute union inside the window, ns.
    pub compute_ns: i64,
    /// Communication union inside the window, ns.
    pub communication_ns: i64,
    /// Copies and sets union inside the window, ns.
    pub memory_ns: i64,
    /// Blocking host syncs that start inside the window (as `sync-in-loop` counts them: the
    /// profiler's own final sync is not one).
    pub syncs: usize,
    /// Activities launched inside the window.
    pub launched: usize,
    /// Median launch-call start → activity start, ns (nearest rank).
    pub launch_delay_median_ns: Option<i64>,
    /// Union of the work launched inside the window (the case's `step:<name>:launched`), ns.
    pub launched_busy_ns: i64,
}

/// The steady-state verdicts over steps (SPEC §9), cold steps counted as warm-up.
#[derive(Clone, Debug, Serialize)]
pub struct StepsSteady {
    /// Over host durations.
    pub host: Verdict,
    /// Over device busy per step (summed over devices).
    pub busy: Verdict,
    /// How many leading steps were counted as warm-up (the cold steps).
    pub warmup_steps: usize,
}

/// Host steps, deduplicated by name (a step recorded as both an op and an annotation is one).
pub fn host_steps(index: &Index) -> Vec<Step> {
    let mut seen = std::collections::HashSet::new();
    index
        .trace
        .steps
        .iter()
        .filter(|s| seen.insert(s.name.clone()))
        .cloned()
        .collect()
}

/// Union of the activities of `device` matching `keep`, clipped to `[lo, hi)`.
fn clipped_union(
    index: &Index,
    device: i64,
    lo: i64,
    hi: i64,
    keep: &dyn Fn(WorkClass) -> bool,
) -> i64 {
    let acts = &index.trace.activities;
    let Some(list) = index.by_device.get(&device) else {
        return 0;
    };
    let end = list.partition_point(|&i| acts[i].start < hi);
    let pieces: Vec<Interval> = list[..end]
        .iter()
        .map(|&i| &acts[i])
        .filter(|a| a.end > lo && keep(a.class()))
        .filter_map(|a| Interval::new(Nanos::new(a.start.max(lo)), Nanos::new(a.end.min(hi))).ok())
        .collect();
    i64::try_from(analyze_numbers(&pieces).union_ns).unwrap_or(i64::MAX)
}

/// The per-step rows, step by step and device by device.
pub fn step_rows(index: &Index, steps: &[Step]) -> Vec<StepRow> {
    let trace = index.trace;
    let mut rows = Vec::new();
    for s in steps {
        for &device in index.by_device.keys() {
            let (lo, hi) = (s.start, s.end);
            let launched: Vec<usize> = index.by_device[&device]
                .iter()
                .copied()
                .filter(|&i| {
                    index.launch[i].is_some_and(|c| {
                        let t = trace.calls[c].start;
                        lo <= t && t < hi
                    })
                })
                .collect();
            let mut delays: Vec<i64> = launched
                .iter()
                .map(|&i| {
                    trace.activities[i].start - trace.calls[index.launch[i].unwrap_or(0)].start
                })
                .collect();
            let launched_iv: Vec<Interval> = launched
                .iter()
                .filter_map(|&i| {
                    let a = &trace.activities[i];
                    Interval::new(Nanos::new(a.start), Nanos::new(a.end)).ok()
                })
                .collect();
            let busy = clipped_union(index, device, lo, hi, &|_| true);
            rows.push(StepRow {
                step: s.name.to_string(),
                device: format!("gpu{device}"),
                start_ns: lo - index.origin,
                host_ns: hi - lo,
                busy_ns: busy,
                idle_ns: (hi - lo) - busy,
                compute_ns: clipped_union(index, device, lo, hi, &|c| c == WorkClass::Compute),
                communication_ns: clipped_union(index, device, lo, hi, &|c| {
                    c == WorkClass::Communication
                }),
                memory_ns: clipped_union(index, device, lo, hi, &|c| c == WorkClass::Memory),
                // The same syncs as `sync-in-loop`: the profiler's own final sync is not one.
                syncs: index
                    .syncs
                    .iter()
                    .enumerate()
                    .filter(|(k, x)| {
                        Some(*k) != index.profiler_sync
                            && lo <= x.start
                            && x.start < hi
                            && (x.device.is_none_or(|d| d == device))
                    })
                    .count(),
                launched: launched.len(),
                launch_delay_median_ns: quantile(&mut delays, Percentile::MEDIAN),
                launched_busy_ns: i64::try_from(analyze_numbers(&launched_iv).union_ns)
                    .unwrap_or(i64::MAX),
            });
        }
    }
    rows
}

/// Per-step values of one kind, summed over devices, in step order.
fn per_step(steps: &[Step], rows: &[StepRow], value: impl Fn(&StepRow) -> i64) -> Vec<i64> {
    steps
        .iter()
        .map(|s| rows.iter().filter(|r| *r.step == *s.name).map(&value).sum())
        .collect()
}

/// The steady-state verdicts and the `cold-steps` finding.
///
/// A leading step is slow when the warm-up rule of [`crate::stats::warmup`] names it, by host
/// duration or by device busy time: above the median by more than 5 MADs (at least 1 %), and
/// slower than every step after it. The first step after `profile()` starts usually carries
/// the profiler's own start-up; when only the host time is slow and the step launched no
/// more work than the median step, nothing shows the loop was cold, and the finding says so
/// (severity info) instead of asking for warm-up steps.
pub fn cold_steps(
    index: &Index,
    steps: &[Step],
    rows: &[StepRow],
) -> (Option<StepsSteady>, Option<Finding>) {
    if steps.len() < 2 {
        return (None, None);
    }
    let policy = SteadyStatePolicy::default();
    let host: Vec<i64> = steps.iter().map(|s| s.end - s.start).collect();
    let busy = per_step(steps, rows, |r| r.busy_ns);
    let launched = per_step(steps, rows, |r| r.launched as i64);
    let by_host = warmup_prefix(&as_nanos(&host));
    let by_busy = warmup_prefix(&as_nanos(&busy));
    let cold = by_host.len.max(by_busy.len);
    let verdict = |values: &[i64]| match SampleSet::from_runs(
        &as_nanos(&values[..cold]),
        &as_nanos(&values[cold..]),
    ) {
        Ok(set) => steady_state(&set, &policy),
        Err(_) => Verdict::unknown(crate::verdict::Reason::SingleWarmup),
    };
    let steady = StepsSteady {
        host: verdict(&host),
        busy: verdict(&busy),
        warmup_steps: cold,
    };
    if cold == 0 {
        return (Some(steady), None);
    }
    let mut sorted_launches = launched.clone();
    let median_launches = quantile(&mut sorted_launches, Percentile::MEDIAN).unwrap_or(0);
    let more_work = launched[..cold].iter().any(|&n| n > median_launches);
    let shown_cold = by_busy.len > 0 || more_work;
    let finding = cold_finding(
        index,
        steps,
        (&host, &busy),
        (by_host, by_busy),
        cold,
        shown_cold,
    );
    (Some(steady), Some(finding))
}

/// Durations as [`Nanos`], negatives (never produced by the readers) clamped to 0.
fn as_nanos(values: &[i64]) -> Vec<Nanos> {
    values.iter().map(|&v| Nanos::new(v.max(0))).collect()
}

/// Whether no two of `steps` overlap on the host clock (touching is not overlapping).
fn disjoint(steps: &[Step]) -> bool {
    let mut spans: Vec<(i64, i64)> = steps
        .iter()
        .map(|s| (s.start, s.end.max(s.start)))
        .collect();
    spans.sort_unstable();
    spans.windows(2).all(|w| w[1].0 >= w[0].1)
}

/// `1.2×`: `v / m` with one decimal, exact integer rounding.
fn ratio(v: i64, m: i64) -> String {
    if m <= 0 {
        return "n/a".to_owned();
    }
    let tenths = (i128::from(v) * 10 + i128::from(m) / 2) / i128::from(m);
    format!("{}.{}×", tenths / 10, tenths % 10)
}

/// The `cold-steps` finding for the first `cold` steps.
fn cold_finding(
    index: &Index,
    steps: &[Step],
    (host, busy): (&[i64], &[i64]),
    (by_host, by_busy): (WarmupPrefix, WarmupPrefix),
    cold: usize,
    shown_cold: bool,
) -> Finding {
    let names: Vec<&str> = steps[..cold].iter().map(|s| &*s.name).collect();
    let (hm, bm) = (by_host.median.as_i64(), by_busy.median.as_i64());
    let evidence = Evidence::capped(steps[..cold].iter().enumerate().map(|(k, s)| {
        format!(
            "{} at {}: host {} ({} the median {}, threshold {}), device busy {} ({} the median {}, threshold {})",
            s.name,
            index.at(s.start),
            Nanos::new(host[k]),
            ratio(host[k], hm),
            by_host.median,
            by_host.threshold,
            Nanos::new(busy[k]),
            ratio(busy[k], bm),
            by_busy.median,
            by_busy.threshold
        )
    }));
    // A sum of durations is a time of the trace only when the steps do not overlap: nested
    // or overlapping steps would count the same host time twice (past the trace's span).
    let excess: Option<i64> =
        disjoint(&steps[..cold]).then(|| host[..cold].iter().map(|&v| (v - hm).max(0)).sum());
    let mut figures = vec![
        Figure::value(
            "median_host_ns",
            "host",
            hm,
            "nearest-rank median of every step's host duration",
        ),
        Figure::value(
            "mad_host_ns",
            "host",
            by_host.mad.as_i64(),
            "nearest-rank median of |host duration − median|",
        ),
        Figure::value(
            "threshold_host_ns",
            "host",
            by_host.threshold.as_i64(),
            "max(median + 5 × MAD, median + 1 %)",
        ),
    ];
    let in_all = match excess {
        Some(excess) => {
            figures.push(Figure::value("excess_ns", "host", excess, "Σ over the slow steps of (host duration − median): a difference of durations on the host clock"));
            format!("{} more than the median in all", Nanos::new(excess))
        }
        None => "these steps overlap on the host clock, so no excess over the median is stated (a sum of their durations would count the same time twice)".to_owned(),
    };
    let rule = "more than 5 MADs (at least 1 %) above the median, and slower than every later step";
    let (severity, message, fix) = if shown_cold {
        (
            Severity::Warning,
            format!(
                "the first {cold} of {} steps ({}) are slower than the steady state ({rule}): {} host against a median of {}, {in_all}",
                steps.len(),
                names.join(", "),
                ratio(host[0], hm),
                by_host.median,
            ),
            "leave the first steps out of any steady-state number (profiler schedule: `wait`/`warmup` steps before `active`), or report them apart as warm-up".to_owned(),
        )
    } else {
        (
            Severity::Info,
            format!(
                "{} is slower than the other {} steps on the host only ({rule}): {} against a median of {}, with no more GPU work launched and no more device busy time than a median step; most likely the profiler's own start-up, not a cold loop",
                names.join(", "),
                steps.len() - cold,
                ratio(host[0], hm),
                by_host.median
            ),
            "leave the profiler's first active step out: `torch.profiler.schedule(wait=…, warmup=1, active=…)` records a warm-up step the trace does not keep; nothing here asks for more warm-up of the loop itself".to_owned(),
        )
    };
    Finding {
        figures,
        code: "cold-steps",
        severity,
        message,
        count: cold as u64,
        evidence,
        fix,
    }
}
