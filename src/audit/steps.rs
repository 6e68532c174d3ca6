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

use super::finding::{Evidence, Finding, Severity};
use super::index::{percent, quantile, Index};
use super::model::{Step, WorkClass};
use crate::interval::{analyze, Interval};
use crate::stats::{steady_state, Percentile, SampleSet, SteadyStatePolicy};
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
    /// Blocking host syncs that start inside the window.
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
    i64::try_from(analyze(&pieces).union_ns).unwrap_or(i64::MAX)
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
                step: s.name.clone(),
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
                syncs: index
                    .syncs
                    .iter()
                    .filter(|x| {
                        lo <= x.start && x.start < hi && (x.device.is_none_or(|d| d == device))
                    })
                    .count(),
                launched: launched.len(),
                launch_delay_median_ns: quantile(&mut delays, Percentile::MEDIAN),
                launched_busy_ns: i64::try_from(analyze(&launched_iv).union_ns).unwrap_or(i64::MAX),
            });
        }
    }
    rows
}

/// Per-step values of one kind, summed over devices, in step order.
fn per_step(steps: &[Step], rows: &[StepRow], value: impl Fn(&StepRow) -> i64) -> Vec<i64> {
    steps
        .iter()
        .map(|s| rows.iter().filter(|r| r.step == s.name).map(&value).sum())
        .collect()
}

/// The leading steps slower than the steady median by more than the steady-state rule's
/// tolerance (SPEC §9, 5 % by default). The median is the nearest-rank median of all steps,
/// which a minority of cold steps cannot move.
pub fn cold_prefix(values: &[i64], policy: &SteadyStatePolicy) -> (usize, i64) {
    let mut sorted = values.to_vec();
    let Some(median) = quantile(&mut sorted, Percentile::MEDIAN) else {
        return (0, 0);
    };
    let m = Nanos::new(median);
    let cold = values
        .iter()
        .take_while(|&&v| v > median && !policy.tolerance.admits(Nanos::new(v), m, m))
        .count();
    // A prefix of half the steps or more is not "the first steps": the median itself is cold.
    (if cold * 2 >= values.len() { 0 } else { cold }, median)
}

/// The steady-state verdicts and the `cold-steps` finding.
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
    let idle = per_step(steps, rows, |r| r.idle_ns);
    let (cold_host, host_median) = cold_prefix(&host, &policy);
    let (cold_busy, busy_median) = cold_prefix(&busy, &policy);
    let cold = cold_host.max(cold_busy);
    let verdict = |values: &[i64]| {
        let ns: Vec<Nanos> = values.iter().map(|&v| Nanos::new(v.max(0))).collect();
        match SampleSet::from_runs(&ns[..cold], &ns[cold..]) {
            Ok(set) => steady_state(&set, &policy),
            Err(_) => Verdict::unknown(crate::verdict::Reason::SingleWarmup),
        }
    };
    let steady = StepsSteady {
        host: verdict(&host),
        busy: verdict(&busy),
        warmup_steps: cold,
    };
    if cold == 0 {
        return (Some(steady), None);
    }
    let share = |from: usize| {
        let i: i128 = idle[from..].iter().map(|&v| i128::from(v)).sum();
        let h: i128 = host[from..].iter().map(|&v| i128::from(v)).sum();
        percent(i, h)
    };
    let ratio = |v: i64, m: i64| {
        if m <= 0 {
            "n/a".to_owned()
        } else {
            let tenths = (i128::from(v) * 10 + i128::from(m) / 2) / i128::from(m);
            format!("{}.{}×", tenths / 10, tenths % 10)
        }
    };
    let names: Vec<&str> = steps[..cold].iter().map(|s| s.name.as_str()).collect();
    let evidence = Evidence::capped(steps[..cold].iter().enumerate().map(|(k, s)| {
        format!(
            "{} at {}: host {} ({} the steady median {}), device busy {} ({} the median {})",
            s.name,
            index.at(s.start),
            Nanos::new(host[k]),
            ratio(host[k], host_median),
            Nanos::new(host_median),
            Nanos::new(busy[k]),
            ratio(busy[k], busy_median),
            Nanos::new(busy_median)
        )
    }));
    let busy_with: i128 = busy.iter().map(|&v| i128::from(v)).sum();
    let busy_without: i128 = busy[cold..].iter().map(|&v| i128::from(v)).sum();
    let host_with: i128 = host.iter().map(|&v| i128::from(v)).sum();
    let host_without: i128 = host[cold..].iter().map(|&v| i128::from(v)).sum();
    let finding = Finding {
        code: "cold-steps",
        severity: Severity::Warning,
        message: format!(
            "the first {} of {} steps ({}) are slower than the steady state: {} host against a median of {}; device idle {} of the step time with them, {} without; busy {} with them, {} without",
            cold,
            steps.len(),
            names.join(", "),
            ratio(host[0], host_median),
            Nanos::new(host_median),
            share(0),
            share(cold),
            percent(busy_with, host_with),
            percent(busy_without, host_without)
        ),
        count: cold as u64,
        evidence,
        fix: "leave the first steps out of any steady-state number (profiler schedule: `wait`/`warmup` steps before `active`), or report them apart as warm-up".to_owned(),
    };
    (Some(steady), Some(finding))
}
