//! Look-ups every finding shares, built once from a [`Trace`]: the launch call of each
//! activity, the blocking host syncs (nested ones counted once), the per-device activity
//! lists in start order, and the profiler's own final sync.

use std::collections::{BTreeMap, HashMap};

use crate::interval_set::IntervalSet;
use crate::stats::{nearest_rank, Percentile};
use crate::trace::model::{CallRole, CopyDirection, RangeKind, Trace};

/// Activity index → the index of its launch call (the first call with its correlation), if
/// in the trace: [`Index::launch`], for a caller that needs this look-up alone (the import's
/// step questions).
pub fn launch_calls(trace: &Trace) -> Vec<Option<usize>> {
    let mut by_corr: HashMap<i64, usize> = HashMap::with_capacity(trace.calls.len());
    for (i, c) in trace.calls.iter().enumerate() {
        if let Some(corr) = c.correlation {
            by_corr.entry(corr).or_insert(i);
        }
    }
    trace
        .activities
        .iter()
        .map(|a| a.correlation.and_then(|c| by_corr.get(&c).copied()))
        .collect()
}

/// One blocking host sync: the host could not run on until GPU work had finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSync {
    /// What blocked: the call or op name, with the copy direction for copies.
    pub what: String,
    /// The host thread.
    pub thread: Option<i64>,
    /// Start, ns.
    pub start: i64,
    /// Return, ns.
    pub end: i64,
    /// The device it waited on, when known.
    pub device: Option<i64>,
}

/// The shared look-ups.
pub struct Index<'t> {
    /// The trace.
    pub trace: &'t Trace,
    /// Activity index → the index of its launch call (same correlation), if in the trace.
    pub launch: Vec<Option<usize>>,
    /// Blocking host syncs in start order, nested ones removed.
    pub syncs: Vec<HostSync>,
    /// Device → activity indices in (start, end) order.
    pub by_device: BTreeMap<i64, Vec<usize>>,
    /// Index into `syncs` of the profiler's own final device sync, when there is one.
    pub profiler_sync: Option<usize>,
    /// The earliest time in the trace: evidence times are printed relative to it.
    pub origin: i64,
}

impl<'t> Index<'t> {
    /// Builds the look-ups. Time: O(n log n).
    pub fn new(trace: &'t Trace) -> Index<'t> {
        let launch = launch_calls(trace);
        let mut by_device: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for (i, a) in trace.activities.iter().enumerate() {
            by_device.entry(a.device).or_default().push(i);
        }
        for list in by_device.values_mut() {
            list.sort_by_key(|&i| (trace.activities[i].start, trace.activities[i].end));
        }
        let single_device = (by_device.len() == 1)
            .then(|| by_device.keys().next().copied())
            .flatten();
        // Copies that block: a DtoH copy through a synchronous call, or into pageable memory.
        let mut launched_by: HashMap<usize, usize> = HashMap::new();
        for (a, c) in launch.iter().enumerate() {
            if let Some(c) = c {
                launched_by.insert(*c, a);
            }
        }
        let mut syncs: Vec<HostSync> = Vec::new();
        for (i, c) in trace.calls.iter().enumerate() {
            let role = CallRole::of(&c.name);
            let copy = launched_by.get(&i).map(|&a| &trace.activities[a]);
            let blocking_copy = copy.is_some_and(|a| match a.copy {
                Some(CopyDirection::DeviceToPageable) => true,
                Some(CopyDirection::DeviceToHost) => role == CallRole::SyncCopy,
                _ => false,
            });
            if role.blocks_host() || blocking_copy {
                syncs.push(HostSync {
                    what: match copy {
                        Some(a) if blocking_copy => format!("{} ({})", c.name, a.name),
                        _ => c.name.to_string(),
                    },
                    thread: c.thread,
                    start: c.start,
                    end: c.end,
                    device: copy.map(|a| a.device).or(single_device),
                });
            }
        }
        let syncs = scalar_reads_with_evidence(trace, syncs);
        let syncs = outermost(syncs);
        // The profiler's own sync: the last blocking sync, device-wide, with no launch after it.
        let last_launch = launch.iter().flatten().map(|&c| trace.calls[c].start).max();
        let profiler_sync = syncs.iter().rposition(|_| true).filter(|&k| {
            let s = &syncs[k];
            CallRole::of(&s.what) == CallRole::DeviceSync && last_launch.is_none_or(|l| l < s.start)
        });
        let origin = trace
            .activities
            .iter()
            .map(|a| a.start)
            .chain(trace.calls.iter().map(|c| c.start))
            .chain(trace.steps.iter().map(|s| s.start))
            .chain(trace.ranges.iter().map(|r| r.start))
            .chain(trace.window.map(|w| w.0))
            .min()
            .unwrap_or(0);
        Index {
            trace,
            launch,
            syncs,
            by_device,
            profiler_sync,
            origin,
        }
    }

    /// `t+1.250 ms`: a time relative to the trace's origin.
    pub fn at(&self, t: i64) -> String {
        // exact, or `unknown (overflow)` past i64: saturating printed t+9223372036.854775807 s
        // for every copy of a trace whose first kernel starts at i64::MIN (review D10's trace)
        format!(
            "t+{}",
            crate::units::format_wide(i128::from(t) - i128::from(self.origin))
        )
    }

    /// The union of every activity of `device` (kernels, copies, sets): its busy time.
    pub fn busy(&self, device: i64) -> IntervalSet {
        let acts = &self.trace.activities;
        self.by_device
            .get(&device)
            .map_or_else(IntervalSet::new, |list| {
                IntervalSet::from_pairs(list.iter().map(|&i| (acts[i].start, acts[i].end)))
            })
    }

    /// The first activity on `device` (any device when `None`) that starts at or after `t`.
    pub fn next_start(&self, device: Option<i64>, t: i64) -> Option<i64> {
        let acts = &self.trace.activities;
        let first_in = |list: &Vec<usize>| {
            let k = list.partition_point(|&i| acts[i].start < t);
            list.get(k).map(|&i| acts[i].start)
        };
        match device {
            Some(d) => self.by_device.get(&d).and_then(first_in),
            None => self.by_device.values().filter_map(first_in).min(),
        }
    }
}

/// Attributes call syncs to the scalar reads (`aten::item`, `aten::_local_scalar_dense`) they
/// lie in. A scalar read is a host sync only when a blocking call runs inside it on its
/// thread: an `aten::item` on a CPU tensor (AdamW's step counters) calls no CUDA API and
/// blocks on nothing. A read with blocking calls inside becomes one sync named after the op
/// and what blocked in it (`aten::item → cudaMemcpyAsync (Memcpy DtoH …) + cudaStreamSynchronize`);
/// the calls themselves are then counted once, through it.
fn scalar_reads_with_evidence(trace: &Trace, calls: Vec<HostSync>) -> Vec<HostSync> {
    let mut reads: Vec<&crate::trace::model::HostRange> = trace
        .ranges
        .iter()
        .filter(|r| r.kind == RangeKind::ScalarRead)
        .collect();
    reads.sort_by_key(|r| (r.thread, r.start, std::cmp::Reverse(r.end)));
    let mut out: Vec<HostSync> = Vec::with_capacity(calls.len());
    let mut inside: Vec<Vec<usize>> = vec![Vec::new(); reads.len()];
    for (k, c) in calls.iter().enumerate() {
        let holder = reads
            .iter()
            .position(|r| r.thread == c.thread && r.start <= c.start && c.end <= r.end);
        match holder {
            Some(h) => inside[h].push(k),
            None => out.push(c.clone()),
        }
    }
    for (r, held) in reads.iter().zip(&inside) {
        if held.is_empty() {
            continue;
        }
        let names: Vec<&str> = held.iter().map(|&k| calls[k].what.as_str()).collect();
        out.push(HostSync {
            what: format!("{} → {}", r.name, names.join(" + ")),
            thread: r.thread,
            start: r.start,
            end: r.end,
            device: held.iter().find_map(|&k| calls[k].device),
        });
    }
    out
}

/// Drops syncs that lie inside another sync of the same thread (the `cudaStreamSynchronize`
/// inside an `aten::item`), keeping the outer one; the result is in start order.
fn outermost(mut syncs: Vec<HostSync>) -> Vec<HostSync> {
    syncs.sort_by_key(|s| (s.thread, s.start, std::cmp::Reverse(s.end)));
    let mut kept: Vec<HostSync> = Vec::with_capacity(syncs.len());
    for s in syncs {
        if let Some(last) = kept.last() {
            if last.thread == s.thread && s.start >= last.start && s.end <= last.end {
                continue;
            }
        }
        kept.push(s);
    }
    kept.sort_by_key(|s| (s.start, s.end));
    kept
}

/// Nearest-rank quantile of `values` (sorted here); `None` when empty (SPEC §9's method).
pub fn quantile<T: Ord + Copy>(values: &mut [T], p: Percentile) -> Option<T> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    Some(values[nearest_rank(p, values.len()) - 1])
}

/// `part / whole` as a percentage with one decimal, exact integer rounding half up.
pub fn percent(part: i128, whole: i128) -> String {
    if whole <= 0 {
        return "n/a".to_owned();
    }
    let tenths = (part * 1000 + whole / 2) / whole;
    format!("{}.{}%", tenths / 10, (tenths % 10).abs())
}
