//! Integrity findings: what peers drop or count silently. `kernel-before-launch`,
//! `same-stream-overlap`, `zero-timestamp`, `negative-duration`, `outside-window`,
//! `gpu-without-launch`, and the shape findings `no-steps` and `no-gpu-work`.
//!
//! ```text
//! same-stream-overlap:            kernel-before-launch:
//! stream 7: [a=======)            host:        [cudaLaunchKernel)
//!                [b=====)         gpu:     [k==)   ← starts before its launch: skew
//!                |---| overlap
//! ```

use std::collections::BTreeMap;

use super::finding::{Evidence, Finding, Severity};
use super::index::Index;
use crate::trace::model::ProblemKind;
use crate::units::Nanos;

/// `kernel-before-launch`: activities that start before the call that launched them.
pub fn kernel_before_launch(index: &Index) -> Option<Finding> {
    let trace = index.trace;
    let mut offenders: Vec<(i128, usize)> = index
        .launch
        .iter()
        .enumerate()
        .filter_map(|(a, c)| {
            let call = &trace.calls[(*c)?];
            let act = &trace.activities[a];
            // i128: a kernel at i64::MIN launched at +6 s is 2^63 ns + 6 s early, past i64
            // (the i64 difference wrapped to -9223372030.56 s, review D10's trace)
            (act.start < call.start).then_some((i128::from(call.start) - i128::from(act.start), a))
        })
        .collect();
    if offenders.is_empty() {
        return None;
    }
    offenders.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let worst = offenders[0].0;
    Some(Finding {
        figures: Vec::new(),
        code: "kernel-before-launch",
        severity: Severity::Error,
        message: format!(
            "{} GPU activit(ies) start before the host call that launched them (worst by {}): the host and device timelines of this trace disagree, so no claim that compares them holds",
            offenders.len(),
            crate::units::format_wide(worst)
        ),
        count: offenders.len() as u64,
        evidence: Evidence::capped(offenders.iter().map(|&(off, a)| {
            let act = &trace.activities[a];
            format!(
                "{} (correlation {}) on gpu{}-s{} at {}, {} before its launch",
                short(&act.name),
                shown_correlation(act.correlation.unwrap_or_default()),
                act.device,
                act.stream,
                index.at(act.start),
                crate::units::format_wide(off)
            )
        })),
        fix: "the GPU clock was not aligned with the host's: profile again with a CUDA ≥ 11.6 / recent Kineto (CUPTI then timestamps on the host clock), and compare host and device times of this trace only with that skew in mind".to_owned(),
    })
}

/// `same-stream-overlap`: two activities of one stream overlap.
pub fn same_stream_overlap(index: &Index) -> Option<Finding> {
    let trace = index.trace;
    let mut by_stream: BTreeMap<(i64, i64), Vec<usize>> = BTreeMap::new();
    for (i, a) in trace.activities.iter().enumerate() {
        by_stream.entry((a.device, a.stream)).or_default().push(i);
    }
    let mut overlaps: Vec<(i128, usize, usize)> = Vec::new();
    for list in by_stream.values_mut() {
        list.sort_by_key(|&i| (trace.activities[i].start, trace.activities[i].end));
        let mut reach: Option<usize> = None;
        for &i in list.iter() {
            let a = &trace.activities[i];
            if let Some(r) = reach {
                let prev = &trace.activities[r];
                if a.start < prev.end {
                    overlaps.push((i128::from(a.end.min(prev.end)) - i128::from(a.start), r, i));
                }
                if a.end > prev.end {
                    reach = Some(i);
                }
            } else {
                reach = Some(i);
            }
        }
    }
    if overlaps.is_empty() {
        return None;
    }
    overlaps.sort_by(|x, y| y.0.cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    // From compute capability 9.0 on, a kernel launched with programmatic stream
    // serialization (programmatic dependent launch) may start before its predecessor in the
    // same stream finishes: such an overlap is what ran, not a broken trace.
    let compute = |device: i64| {
        trace
            .devices
            .iter()
            .find(|d| d.id == device)
            .and_then(|d| d.compute)
    };
    let dependent_launch = overlaps
        .iter()
        .all(|&(_, p, _)| compute(trace.activities[p].device).is_some_and(|(major, _)| major >= 9));
    let (severity, meaning, fix) = if dependent_launch {
        let (major, minor) = compute(trace.activities[overlaps[0].1].device).unwrap_or((9, 0));
        (
            Severity::Info,
            format!("consistent with programmatic dependent launch on compute capability {major}.{minor} (≥ 9.0), where a kernel may start before its predecessor in the stream ends: the overlap is what ran"),
            "nothing to fix in the trace: unions and spans are exact; per-stream sums count the overlap twice, and \"one stream runs in order\" does not hold for these kernels".to_owned(),
        )
    } else {
        (
            Severity::Warning,
            "work in one stream runs in order, so these times are not what ran".to_owned(),
            "union and span stay exact, but per-stream sums count the overlap twice; check the profiler version (timestamps of concurrent kernels in one stream, e.g. from graphs or green contexts, are a known CUPTI artefact); on compute capability 9.0 and later, programmatic dependent launch overlaps kernels of one stream by design, and a trace whose `deviceProperties` say so gets this finding as info".to_owned(),
        )
    };
    Some(Finding {
        figures: Vec::new(),
        code: "same-stream-overlap",
        severity,
        message: format!(
            "{} pair(s) of activities overlap on one stream (largest overlap {}): {meaning}",
            overlaps.len(),
            crate::units::format_wide(overlaps[0].0)
        ),
        count: overlaps.len() as u64,
        evidence: Evidence::capped(overlaps.iter().map(|&(len, p, q)| {
            let (a, b) = (&trace.activities[p], &trace.activities[q]);
            format!(
                "gpu{}-s{}: {} [{}, {}) and {} [{}, {}) overlap by {}",
                a.device,
                a.stream,
                short(&a.name),
                index.at(a.start),
                index.at(a.end),
                short(&b.name),
                index.at(b.start),
                index.at(b.end),
                crate::units::format_wide(len)
            )
        })),
        fix,
    })
}

/// `zero-timestamp` and `negative-duration`, from the problems the reader counted.
pub fn problems(index: &Index) -> Vec<Finding> {
    let mut out = Vec::new();
    for (kind, code, severity, what, fix) in [
        (
            ProblemKind::ZeroTimestamp,
            "zero-timestamp",
            Severity::Warning,
            "GPU event(s) have a relative timestamp of exactly 0: Kineto clamps negative relative times to 0, so their start is likely an artefact",
            "treat these events' times as unknown; a recent PyTorch/Kineto fixes the clamping",
        ),
        (
            ProblemKind::NegativeDuration,
            "negative-duration",
            Severity::Error,
            "event(s) have a negative duration and were left out of every number",
            "the trace is damaged: profile again, or report the profiler version that wrote it",
        ),
    ] {
        let list: Vec<_> = index.trace.problems.iter().filter(|p| p.kind == kind).collect();
        if list.is_empty() {
            continue;
        }
        out.push(Finding {
            figures: Vec::new(),
            code,
            severity,
            message: format!("{} {what}", list.len()),
            count: list.len() as u64,
            evidence: Evidence::capped(list.iter().map(|p| {
                format!(
                    "{} `{}` at {}, duration {}",
                    p.at,
                    short(&p.name),
                    index.at(p.start),
                    Nanos::new(p.duration)
                )
            })),
            fix: fix.to_owned(),
        });
    }
    out
}

/// `outside-window`: activities or calls outside the profiler's stated window.
pub fn outside_window(index: &Index) -> Option<Finding> {
    let (lo, hi) = index.trace.window?;
    let trace = index.trace;
    let acts = trace
        .activities
        .iter()
        .filter(|a| a.start < lo || a.end > hi)
        .map(|a| {
            (
                a.start,
                a.end,
                format!("{} on gpu{}-s{}", short(&a.name), a.device, a.stream),
            )
        });
    let calls = trace
        .calls
        .iter()
        .filter(|c| c.start < lo || c.end > hi)
        .map(|c| (c.start, c.end, c.name.to_string()));
    let all: Vec<(i64, i64, String)> = acts.chain(calls).collect();
    if all.is_empty() {
        return None;
    }
    Some(Finding {
        figures: Vec::new(),
        code: "outside-window",
        severity: Severity::Warning,
        message: format!(
            "{} event(s) lie partly or wholly outside the profiler's window [{}, {}): they are counted in every number, but the profiler did not claim to record that time completely",
            all.len(),
            index.at(lo),
            index.at(hi)
        ),
        count: all.len() as u64,
        evidence: Evidence::capped(all.iter().map(|(s, e, what)| {
            format!("{what} [{}, {})", index.at(*s), index.at(*e))
        })),
        fix: "compare only what lies inside the window, or profile a longer window (profiler schedule) so the steps of interest are whole".to_owned(),
    })
}

/// `gpu-without-launch`: GPU activities whose launch call is not in the trace.
pub fn gpu_without_launch(index: &Index) -> Option<Finding> {
    let trace = index.trace;
    if trace.calls.is_empty() && trace.source == "case" {
        return None;
    }
    let orphans: Vec<usize> = (0..trace.activities.len())
        .filter(|&a| index.launch[a].is_none())
        .collect();
    if orphans.is_empty() {
        return None;
    }
    let no_corr = orphans
        .iter()
        .filter(|&&a| trace.activities[a].correlation.is_none())
        .count();
    Some(Finding {
        figures: Vec::new(),
        code: "gpu-without-launch",
        severity: Severity::Info,
        message: format!(
            "{} of {} GPU activities have no launching call in the trace ({no_corr} with no correlation id at all): worksheet keeps them in every interval number; HTA drops them",
            orphans.len(),
            trace.activities.len()
        ),
        count: orphans.len() as u64,
        evidence: Evidence::capped(orphans.iter().map(|&a| {
            let act = &trace.activities[a];
            format!(
                "{} on gpu{}-s{} at {} (correlation {})",
                short(&act.name),
                act.device,
                act.stream,
                index.at(act.start),
                act.correlation
                    .map_or_else(|| "none".to_owned(), |c| shown_correlation(c).to_string())
            )
        })),
        fix: "their launch delay and launching op are unknown; start the profiler earlier (a `wait`/`warmup` step) so launches before the window are recorded".to_owned(),
    })
}

/// `no-steps` (info) and `no-gpu-work` (warning): what the audit can judge at all.
pub fn shape(index: &Index, host_steps: usize) -> Vec<Finding> {
    let trace = index.trace;
    let mut out = Vec::new();
    if trace.activities.is_empty() {
        out.push(Finding {
            figures: Vec::new(),
            code: "no-gpu-work",
            severity: Severity::Warning,
            message: format!(
                "the trace has no GPU activity (kernel, copy or set){}: nothing on the device can be judged",
                if host_steps > 0 {
                    format!(", though it has {host_steps} step(s)")
                } else {
                    String::new()
                }
            ),
            count: 0,
            evidence: Evidence::capped([format!(
                "{} host call(s), {} step(s), {} range(s)",
                trace.calls.len(),
                host_steps,
                trace.ranges.len()
            )]),
            fix: "profile with CUDA activities enabled (`activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]`, or nsys `--trace=cuda`)".to_owned(),
        });
    }
    if host_steps == 0 && trace.source != "case" {
        out.push(Finding {
            figures: Vec::new(),
            code: "no-steps",
            severity: Severity::Info,
            message: "no `ProfilerStep#N` markers: the whole window is audited as one; per-step numbers and `cold-steps` need steps".to_owned(),
            count: 0,
            evidence: Evidence::default(),
            fix: "profile with a schedule and call `prof.step()` once per iteration (or push an NVTX range `ProfilerStep#N` per iteration)".to_owned(),
        });
    }
    out
}

/// A correlation id as the profiler wrote it: the Nsight Systems reader keeps the process
/// id in the high 32 bits (CUPTI numbers correlations per process), which is left out here.
fn shown_correlation(c: i64) -> i64 {
    c & 0xFFFF_FFFF
}

/// A kernel name cut for evidence lines.
fn short(name: &str) -> String {
    match name.char_indices().nth(60) {
        None => name.to_owned(),
        Some((i, _)) => format!("{}…", &name[..i]),
    }
}
