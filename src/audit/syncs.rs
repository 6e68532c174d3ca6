//! Findings about ordering: `sync-in-loop`, `profiler-sync`, `dependency-unrecorded`.
//!
//! ```text
//! host:  [launch][launch]...[cudaStreamSynchronize ......)  (python, next launches)
//! gpu:    [k1=====][k2============)                          ·······idle·······[k3==
//!                                                    sync return ──┘ next start ──┘
//! ```
//!
//! The GPU idle after a sync runs from the sync's return to the next activity start on the
//! device it waited on (any device when the trace does not say which).

use std::collections::{BTreeMap, BTreeSet};

use super::finding::{Evidence, Figure, Finding, Severity};
use super::index::{percent, Index};
use crate::interval_set::IntervalSet;
use crate::trace::model::{CallRole, Step};
use crate::units::Nanos;

/// `sync-in-loop`: blocking host syncs inside profiler steps.
///
/// The idle figure is a set, not a sum: per device, the windows from each sync's return to
/// the device's next activity start are united (`W`), and the device's idle time inside them
/// is `|W ∩ (span − busy)|`. Windows that overlap count once, and the figure can never exceed
/// the device's idle time, let alone the trace. The steady-state share is the same set
/// clipped to the steady steps' host windows, over the measure of those windows.
pub fn sync_in_loop(index: &Index, steps: &[Step], steady_from: usize) -> Option<Finding> {
    let mut per_step: Vec<usize> = vec![0; steps.len()];
    let mut evidence = Vec::new();
    let mut windows: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    let mut count = 0u64;
    for (k, sync) in index.syncs.iter().enumerate() {
        if Some(k) == index.profiler_sync {
            continue;
        }
        let Some(step) = steps
            .iter()
            .position(|s| s.start <= sync.start && sync.start < s.end)
        else {
            continue;
        };
        count += 1;
        per_step[step] += 1;
        let devices: Vec<i64> = match sync.device {
            Some(d) => vec![d],
            None => index.by_device.keys().copied().collect(),
        };
        for d in devices {
            if let Some(next) = index.next_start(Some(d), sync.end) {
                windows.entry(d).or_default().push((sync.end, next));
            }
        }
        evidence.push(format!(
            "{}: {} at {}, returned {}, next GPU start {}",
            steps[step].name,
            sync.what,
            index.at(sync.start),
            index.at(sync.end),
            index
                .next_start(sync.device, sync.end)
                .map_or_else(|| "none".to_owned(), |n| index.at(n))
        ));
    }
    if count == 0 {
        return None;
    }
    let steady_steps = &steps[steady_from.min(steps.len())..];
    let steady = IntervalSet::from_pairs(steady_steps.iter().map(|s| (s.start, s.end)));
    let mut figures = Vec::new();
    let mut idle_parts = Vec::new();
    for (device, list) in &windows {
        let (idle, steady_idle) = idle_after(index, *device, list, &steady);
        idle_parts.push(format!(
            "{} on gpu{device}, {} of the steady-state steps' time",
            idle.display,
            percent(i128::from(steady_idle.value_ns), steady.measure_ns())
        ));
        figures.push(idle);
        figures.push(steady_idle);
    }
    let idle_text = if idle_parts.is_empty() {
        "no GPU work follows them".to_owned()
    } else {
        format!("after them the GPU is idle {}", idle_parts.join("; "))
    };
    let with_syncs = per_step.iter().filter(|&&n| n > 0).count();
    let distinct: BTreeSet<usize> = per_step.iter().copied().collect();
    let per = if distinct.len() == 1 {
        format!("{} per step", per_step[0])
    } else {
        format!(
            "per step: {}",
            per_step
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Some(Finding {
        figures,
        code: "sync-in-loop",
        severity: Severity::Warning,
        message: format!(
            "{count} blocking host syncs in {with_syncs} of {} steps ({per}); {idle_text} (the union of the windows from each sync's return to the next GPU start, less busy time)",
            steps.len(),
        ),
        count,
        evidence: Evidence::capped(evidence),
        fix: "move the sync out of the loop: keep values on the GPU (no `.item()`, `.cpu()`, `print(tensor)` per step), copy to pinned memory with `non_blocking=True` and wait once, or sync every N steps".to_owned(),
    })
}

/// The device's idle time inside the sync windows (`idle_ns`), and its part inside the steady
/// steps (`steady_idle_ns`), as figures with their sets.
fn idle_after(
    index: &Index,
    device: i64,
    windows: &[(i64, i64)],
    steady: &IntervalSet,
) -> (Figure, Figure) {
    let w = IntervalSet::from_pairs(windows.iter().copied());
    let busy = index.busy(device);
    let span = busy
        .extent()
        .map_or_else(IntervalSet::new, |e| IntervalSet::from_intervals([e]));
    let idle_in_w = w.intersection(&span).difference(&busy);
    let clock = format!("gpu{device}");
    let whole = Figure::of_sets(
        "idle_ns",
        clock.clone(),
        format!(
            "|W ∩ (span({clock}) − busy({clock}))|, W = ∪ [sync return, next start on {clock})"
        ),
        vec![
            ("W: sync return → next start".to_owned(), w.clone()),
            ("busy inside W".to_owned(), busy.intersection(&w)),
            ("idle after syncs".to_owned(), idle_in_w.clone()),
        ],
    );
    let steady_part = Figure::of_sets(
        "steady_idle_ns",
        clock.clone(),
        format!(
            "|idle after syncs ∩ S|, S = ∪ steady steps' host windows ({} ns)",
            steady.measure_ns()
        ),
        vec![
            ("S: steady steps".to_owned(), steady.clone()),
            (
                "idle after syncs in S".to_owned(),
                idle_in_w.intersection(steady),
            ),
        ],
    );
    (whole, steady_part)
}

/// `profiler-sync`: the trace's last wait is the profiler's own device synchronize.
pub fn profiler_sync(index: &Index) -> Option<Finding> {
    let k = index.profiler_sync?;
    let s = &index.syncs[k];
    Some(Finding {
        figures: Vec::new(),
        code: "profiler-sync",
        severity: Severity::Info,
        message: format!(
            "the last wait, {} at {} (returned {}), is device-wide with nothing launched after it: most likely the profiler's own synchronize when it stops, not the program's",
            s.what,
            index.at(s.start),
            index.at(s.end)
        ),
        count: 1,
        evidence: Evidence::capped([format!(
            "{} on thread {} at {}, {} long",
            s.what,
            s.thread.map_or_else(|| "?".to_owned(), |t| t.to_string()),
            index.at(s.start),
            Nanos::new(s.end - s.start)
        )]),
        fix: "do not read it as the program's completion: a claim that all work finished needs a wait the program itself issued (the import's `completion:before-final-sync` asks exactly that)".to_owned(),
    })
}

/// The stream pairs whose order a trace leaves unknown: every pair of streams of one device
/// that runs work, when the trace has stream-wait calls whose joins it did not record.
pub fn unrecorded_pairs(index: &Index) -> Vec<((i64, i64), (i64, i64))> {
    let unrecorded = index
        .trace
        .calls
        .iter()
        .any(|c| CallRole::of(&c.name) == CallRole::StreamWait && !c.sync_recorded);
    if !unrecorded {
        return Vec::new();
    }
    let streams: BTreeSet<(i64, i64)> = index
        .trace
        .activities
        .iter()
        .map(|a| (a.device, a.stream))
        .collect();
    let list: Vec<(i64, i64)> = streams.into_iter().collect();
    let mut pairs = Vec::new();
    for (i, a) in list.iter().enumerate() {
        for b in &list[i + 1..] {
            if a.0 == b.0 {
                pairs.push((*a, *b));
            }
        }
    }
    pairs
}

/// `dependency-unrecorded`: stream-wait calls without the sync rows that say what they join.
pub fn dependency_unrecorded(index: &Index) -> Option<Finding> {
    let unrecorded = |role: CallRole| {
        index
            .trace
            .calls
            .iter()
            .filter(move |c| CallRole::of(&c.name) == role && !c.sync_recorded)
    };
    let waits: Vec<_> = unrecorded(CallRole::StreamWait).collect();
    if waits.is_empty() {
        return None;
    }
    let records = unrecorded(CallRole::EventRecord).count();
    let pairs = unrecorded_pairs(index);
    let pair_text: Vec<String> = pairs
        .iter()
        .map(|(a, b)| format!("gpu{}-s{} ↔ gpu{}-s{}", a.0, a.1, b.0, b.1))
        .collect();
    let mut evidence: Vec<String> = Vec::new();
    if !pair_text.is_empty() {
        evidence.push(format!("order unknown between: {}", pair_text.join(", ")));
    }
    evidence.extend(waits.iter().map(|c| {
        format!(
            "{} (correlation {}) at {}",
            c.name,
            c.correlation
                .map_or_else(|| "?".to_owned(), |v| v.to_string()),
            index.at(c.start)
        )
    }));
    Some(Finding {
        figures: Vec::new(),
        code: "dependency-unrecorded",
        severity: if pairs.is_empty() {
            Severity::Info
        } else {
            Severity::Warning
        },
        message: format!(
            "{} stream-wait call(s) and {records} event-record call(s) without sync rows: the trace does not record which streams or events they join, so the order of {} stream pair(s) is unknown (cross-stream questions answer `unknown (dependency-unrecorded)`)",
            waits.len(),
            pairs.len()
        ),
        count: waits.len() as u64,
        evidence: Evidence::capped(evidence),
        fix: "profile with sync events recorded: PyTorch `torch.profiler.profile(..., experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True))` (Kineto `cuda_sync` rows), or Nsight Systems with CUDA event tracing (`--cuda-event-trace=true`)".to_owned(),
    })
}
