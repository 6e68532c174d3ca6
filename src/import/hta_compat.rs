//! `--compat hta`: HTA 0.5.0's temporal breakdown of a Kineto trace, reproduced rule by rule,
//! beside the exact one, with the difference each of HTA's assumptions makes.
//!
//! Holistic Trace Analysis (`holistictraceanalysis` 0.5.0, `TraceAnalysis(...)
//! .get_temporal_breakdown()`) reports, per rank, `kernel_time` (first GPU start to last GPU
//! end), `idle_time` (kernel time − merged busy time), `compute_time` (merged time of the
//! "computation" kernels) and `non_compute_time` (the rest of the busy time). Its numbers
//! differ from the exact ones because of four defaults, each reproduced here from HTA's
//! source (`hta/common/trace_parser.py`, `trace.py`, `trace_filter.py`,
//! `analyzers/breakdown_analysis.py`, `utils/utils.py`):
//!
//! 1. **Last-`ProfilerStep` filter** (`Trace._filter_irrelevant_gpu_kernels`). When the trace
//!    has at least two distinct names containing `ProfilerStep`, HTA takes the largest `ts` of
//!    any non-GPU row so named — the host `ProfilerStep#N` ranges *and* the GPU-side
//!    `gpu_user_annotation` rows, which have no `stream` — as the last step's start. It keeps
//!    the non-GPU rows that start before it, and a GPU row only when a kept non-GPU row has
//!    its correlation: GPU work whose launching call starts at or after that instant is
//!    dropped. (A GPU row is one with `args.stream ≥ 0` and `args.correlation ≥ 0`, or named
//!    `Event Sync` / `Context Sync`.)
//! 2. **GPU rows without a CPU correlation dropped.** The same inner join drops GPU rows whose
//!    correlation no non-GPU row carries (the launch is outside the trace). Separated from 1
//!    here: "uncorrelated" means no row at all, "after the last step" means a launch at or
//!    after the last step's start.
//! 3. **Whole-µs rounding** (`round_down_time_stamps`). When the `ts` column is floating point
//!    — some event's `ts` has a fraction or exponent, or is missing — and
//!    `HTA_DISABLE_NS_ROUNDING` is not set, every event's start becomes `ceil(ts)` and its end
//!    `floor(ts + dur)` (in µs of the trace's own `ts`, before any base). An event shorter
//!    than the µs grid can come out *reversed*; HTA then subtracts it. Traces with integer
//!    `ts` are not rounded.
//! 4. **`cuda_sync` rows counted as busy.** The breakdown pools every kept row whose
//!    `args.stream` is not −1: `Stream Sync`, `Stream Wait Event` and `Context Sync` (stream
//!    4294967295) rows are busy GPU time. (`Stream Wait Event` even counts as compute: its
//!    name has no `Sync`.)
//!
//! Busy time is HTA's merge (`merge_kernel_intervals`): rows sorted by start; a row opens a
//! new group when it starts strictly after every earlier end; busy = Σ (group max end − group
//! min start); kernel time = last group's end − first group's start. Compute rows are those
//! whose name does not match `^nccl.*Kernel`, `.*Memcpy`, `Memset…` or `.*Sync` (Python
//! `re.match`: anchored at the start, `.` stops at a newline). HTA pools all devices of a
//! trace (a rank).
//!
//! ```text
//!  host   ProfilerStep#5 [==========)  ProfilerStep#6 [=========)    ← largest ts = cut
//!  launch    L1      L2                  L3 (starts after the cut: its kernel is dropped)
//!  GPU          [k1]    [k2]                  [k3]
//!  HTA busy     [k1]    [k2]                                          span ends at k2
//! ```
//!
//! Everything is integer nanoseconds, read exactly from the number's text; "exact" means all
//! four assumptions off: every row with a stream but the `cuda_sync` rows, nothing dropped,
//! no rounding, with HTA's classes. Each assumption's delta is HTA's default minus HTA's
//! default with that one assumption off; the four need not add up to default − exact (they
//! interact), and the remainder is reported as such.

use std::collections::{BTreeSet, HashSet};
use std::io::Read as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::kineto::exact_number;
use super::{decode_text, ImportError, ImportOptions, MAX_TRACE_BYTES};
use crate::units::{Nanos, Unit};

type Result<T> = std::result::Result<T, ImportError>;

/// The HTA release whose defaults this module reproduces.
pub const HTA_VERSION: &str = "0.5.0";

/// The nanoseconds in one µs: HTA rounds to this grid.
const MICRO: i64 = 1_000;

/// Which of HTA's default assumptions to apply. [`HtaOptions::HTA_DEFAULTS`] is HTA 0.5.0's
/// `get_temporal_breakdown()`; [`HtaOptions::EXACT`] switches all four off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtaOptions {
    /// Drop GPU work launched at or after the last `ProfilerStep`'s start.
    pub last_step_filter: bool,
    /// Drop GPU rows whose correlation no host row carries.
    pub drop_uncorrelated: bool,
    /// Round starts up and ends down to whole µs (when HTA would: float `ts`).
    pub us_rounding: bool,
    /// Count `cuda_sync` rows as busy GPU time.
    pub sync_rows_busy: bool,
}

impl HtaOptions {
    /// HTA 0.5.0's defaults.
    pub const HTA_DEFAULTS: HtaOptions = HtaOptions {
        last_step_filter: true,
        drop_uncorrelated: true,
        us_rounding: true,
        sync_rows_busy: true,
    };
    /// Every assumption off: the exact breakdown.
    pub const EXACT: HtaOptions = HtaOptions {
        last_step_filter: false,
        drop_uncorrelated: false,
        us_rounding: false,
        sync_rows_busy: false,
    };

    /// These options with `assumption` switched off.
    #[must_use]
    pub fn without(self, assumption: Assumption) -> HtaOptions {
        let mut o = self;
        match assumption {
            Assumption::LastStepFilter => o.last_step_filter = false,
            Assumption::UncorrelatedDropped => o.drop_uncorrelated = false,
            Assumption::UsRounding => o.us_rounding = false,
            Assumption::SyncRowsBusy => o.sync_rows_busy = false,
        }
        o
    }
}

/// One of HTA's default assumptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Assumption {
    /// GPU work launched at or after the last `ProfilerStep` start is dropped.
    LastStepFilter,
    /// GPU rows without a host correlation are dropped.
    UncorrelatedDropped,
    /// Starts rounded up, ends down, to whole µs.
    UsRounding,
    /// `cuda_sync` rows count as busy.
    SyncRowsBusy,
}

impl Assumption {
    /// All four, in the order they are reported.
    pub const ALL: [Assumption; 4] = [
        Assumption::LastStepFilter,
        Assumption::UncorrelatedDropped,
        Assumption::UsRounding,
        Assumption::SyncRowsBusy,
    ];

    /// Stable kebab-case code.
    pub fn code(self) -> &'static str {
        match self {
            Assumption::LastStepFilter => "last-step-filter",
            Assumption::UncorrelatedDropped => "uncorrelated-dropped",
            Assumption::UsRounding => "us-rounding",
            Assumption::SyncRowsBusy => "sync-rows-busy",
        }
    }
}

/// HTA's four numbers for one trace (one rank), in ns.
///
/// Invariants: `idle + compute + non_compute == kernel_time` (HTA defines `non_compute` so).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Breakdown {
    /// `kernel_time`: first merged start to last merged end.
    pub kernel_time_ns: i64,
    /// `idle_time`: kernel time − merged busy time.
    pub idle_ns: i64,
    /// `compute_time`: merged time of compute rows.
    pub compute_ns: i64,
    /// `non_compute_time`: kernel time − compute − idle.
    pub non_compute_ns: i64,
    /// Rows pooled.
    pub rows: usize,
    /// Rows whose rounded end is before their rounded start (HTA subtracts them; with such
    /// rows at equal starts, HTA's unstable sort can change its sum).
    pub reversed_rows: usize,
}

impl Breakdown {
    /// `self − other`, field by field (rows too, as signed).
    fn minus(&self, other: &Breakdown) -> Delta {
        Delta {
            kernel_time_ns: self.kernel_time_ns - other.kernel_time_ns,
            idle_ns: self.idle_ns - other.idle_ns,
            compute_ns: self.compute_ns - other.compute_ns,
            non_compute_ns: self.non_compute_ns - other.non_compute_ns,
            rows: self.rows as i64 - other.rows as i64,
        }
    }
}

/// A difference of two breakdowns, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Delta {
    /// Kernel time (span).
    pub kernel_time_ns: i64,
    /// Idle.
    pub idle_ns: i64,
    /// Compute.
    pub compute_ns: i64,
    /// Non-compute.
    pub non_compute_ns: i64,
    /// Rows pooled.
    pub rows: i64,
}

impl Delta {
    fn sub(self, o: Delta) -> Delta {
        Delta {
            kernel_time_ns: self.kernel_time_ns - o.kernel_time_ns,
            idle_ns: self.idle_ns - o.idle_ns,
            compute_ns: self.compute_ns - o.compute_ns,
            non_compute_ns: self.non_compute_ns - o.non_compute_ns,
            rows: self.rows - o.rows,
        }
    }
}

/// What one assumption does on this trace.
#[derive(Clone, Debug, Serialize)]
pub struct AssumptionEffect {
    /// Which assumption.
    pub assumption: Assumption,
    /// Whether HTA applies it to this trace at all.
    pub applies: bool,
    /// Why (or why not), with the numbers: the cut instant, rows dropped, …
    pub why: String,
    /// HTA's default minus HTA's default with this assumption off (absent when either has
    /// no rows).
    pub delta: Option<Delta>,
}

/// The `--compat hta` answer for one trace.
#[derive(Clone, Debug, Serialize)]
pub struct HtaCompat {
    /// The HTA release reproduced.
    pub hta_version: &'static str,
    /// The rank (`distributedInfo.rank`), when the trace says.
    pub rank: Option<i64>,
    /// Devices (`args.device`) of the pooled rows: HTA pools them into one breakdown.
    pub devices: Vec<i64>,
    /// HTA 0.5.0's defaults (absent: no row is left, HTA itself fails on an empty frame).
    pub hta_defaults: Option<Breakdown>,
    /// All four assumptions off.
    pub exact: Option<Breakdown>,
    /// One entry per assumption, in [`Assumption::ALL`] order.
    pub assumptions: Vec<AssumptionEffect>,
    /// (HTA default − exact) − Σ deltas: what the assumptions do only together.
    pub interaction: Option<Delta>,
}

/// The fields of one event HTA's breakdown looks at.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    cat: Option<&'a RawValue>,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Args<'a> {
    #[serde(borrow, default)]
    stream: Option<&'a RawValue>,
    #[serde(borrow, default)]
    correlation: Option<&'a RawValue>,
    #[serde(borrow, default)]
    device: Option<&'a RawValue>,
}

/// One row HTA keeps (`dur` and `cat` present, `cat` not `Trace`) that can matter.
#[derive(Clone, Debug)]
struct Row {
    /// Event index (tie-break of the sort).
    index: usize,
    /// `ts` in ns of the trace's own µs (no base added).
    ts: i64,
    dur: i64,
    stream: i64,
    correlation: i64,
    device: Option<i64>,
    /// GPU row in HTA's sense (`_filter_gpu_kernels_with_cuda_sync`).
    gpu: bool,
    /// Name contains `ProfilerStep`.
    step: bool,
    /// `cat == "cuda_sync"`.
    sync: bool,
    /// HTA's `KernelType.COMPUTATION`.
    compute: bool,
}

/// What HTA's breakdown needs from a trace.
#[derive(Clone, Debug, Default)]
pub struct HtaTrace {
    rows: Vec<Row>,
    /// Distinct symbols (names and categories) containing `ProfilerStep`.
    step_symbols: usize,
    /// HTA's `ts` column is floating point (a fractional, exponent or missing `ts`).
    float_ts: bool,
    /// Some `ts` is not a number at all (the column is not float; HTA does not round).
    non_numeric_ts: bool,
    rank: Option<i64>,
}

/// A JSON integer (or a string holding one), as Python's `int()` reads it; `None` otherwise.
fn int_like(raw: &RawValue) -> Option<i64> {
    let text = raw.get();
    if let Ok(v) = text.parse::<i64>() {
        return Some(v);
    }
    let s: String = serde_json::from_str(text).ok()?;
    s.trim().parse().ok()
}

/// A JSON string's value; `None` for anything else.
fn string_of(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str(raw?.get()).ok()
}

/// HTA's `is_compute_kernel`: not `^nccl.*Kernel`, `.*Memcpy`, `Memset…`, `.*Sync`
/// (`re.match`, so anchored at the start; `.` does not cross a newline).
pub fn is_hta_compute(name: &str) -> bool {
    let first_line = name.split('\n').next().unwrap_or("");
    let nccl = name
        .strip_prefix("nccl")
        .is_some_and(|rest| rest.split('\n').next().unwrap_or("").contains("Kernel"));
    !(nccl
        || first_line.contains("Memcpy")
        || name.starts_with("Memset")
        || first_line.contains("Sync"))
}

impl HtaTrace {
    /// Reads HTA's view of a Kineto trace from its JSON text.
    ///
    /// # Errors
    /// [`ImportError`] for text that is not a Kineto trace, or a pooled row whose `ts` /
    /// `dur` is not an exact number (`wrong-type`, `inexact-value`, `overflow`).
    pub fn from_text(text: &str, options: &ImportOptions) -> Result<HtaTrace> {
        #[derive(Deserialize)]
        struct Top<'a> {
            #[serde(rename = "traceEvents", borrow, default)]
            trace_events: Option<Vec<&'a RawValue>>,
            #[serde(rename = "distributedInfo", default)]
            distributed_info: Option<serde_json::Value>,
        }
        let bad = |e: serde_json::Error| {
            ImportError::new("$", "bad-syntax", format!("not a Kineto trace: {e}"))
        };
        let (events, rank, prefix) = if text.trim_start().starts_with('[') {
            let events: Vec<&RawValue> = serde_json::from_str(text).map_err(bad)?;
            (events, None, "")
        } else {
            let top: Top = serde_json::from_str(text).map_err(bad)?;
            let rank = top
                .distributed_info
                .as_ref()
                .and_then(|d| d.get("rank"))
                .and_then(serde_json::Value::as_i64);
            let events = top.trace_events.ok_or_else(|| {
                ImportError::new("traceEvents", "missing-field", "no `traceEvents` array")
            })?;
            (events, rank, "traceEvents")
        };
        let mut trace = HtaTrace {
            rank,
            ..HtaTrace::default()
        };
        let mut symbols = BTreeSet::new();
        let mut rounded = 0;
        for (index, raw) in events.iter().enumerate() {
            let at = format!("{prefix}[{index}]");
            let Ok(head) = serde_json::from_str::<Head>(raw.get()) else {
                continue; // not an object: HTA's frame has no row for it
            };
            match head.ts.map(RawValue::get) {
                None | Some("null") => trace.float_ts = true,
                Some(t) if t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
                    if t.contains(['.', 'e', 'E']) {
                        trace.float_ts = true;
                    }
                }
                Some(_) => trace.non_numeric_ts = true,
            }
            let present = |v: Option<&RawValue>| v.is_some_and(|v| v.get() != "null");
            if !present(head.dur) || !present(head.cat) {
                continue;
            }
            let cat = string_of(head.cat);
            if cat.as_deref() == Some("Trace") {
                continue;
            }
            let name = string_of(head.name).unwrap_or_default();
            let args: Option<Args> = head
                .args
                .and_then(|a| serde_json::from_str::<Args>(a.get()).ok());
            let stream = args
                .as_ref()
                .and_then(|a| a.stream)
                .and_then(int_like)
                .unwrap_or(-1);
            let correlation = args
                .as_ref()
                .and_then(|a| a.correlation)
                .and_then(|c| c.get().parse().ok())
                .unwrap_or(-1);
            let device = args.as_ref().and_then(|a| a.device).and_then(int_like);
            let step = name.contains("ProfilerStep");
            if step {
                symbols.insert(name.clone());
            }
            if let Some(c) = cat.as_deref().filter(|c| c.contains("ProfilerStep")) {
                symbols.insert(c.to_owned());
            }
            let gpu = (stream >= 0 && correlation >= 0)
                || name == "Event Sync"
                || name == "Context Sync";
            // Rows that can matter: pooled (a stream), a step, or a host row's correlation.
            if stream == -1 && !step && (gpu || correlation < 0) {
                continue;
            }
            let number = |raw: Option<&RawValue>, field: &str, rounded: &mut u64| {
                let path = format!("{at}.{field}");
                let raw = raw.ok_or_else(|| {
                    ImportError::new(&path, "missing-field", format!("needs `{field}`"))
                })?;
                exact_number(raw, 3, &path, options, rounded)?.ok_or_else(|| {
                    ImportError::new(&path, "wrong-type", "expected a number of microseconds")
                })
            };
            let ts = number(head.ts, "ts", &mut rounded)?;
            let dur = number(head.dur, "dur", &mut rounded)?;
            trace.rows.push(Row {
                index,
                ts,
                dur,
                stream,
                correlation,
                device,
                gpu,
                step,
                sync: cat.as_deref() == Some("cuda_sync"),
                compute: is_hta_compute(&name),
            });
        }
        trace.step_symbols = symbols.len();
        Ok(trace)
    }

    /// Whether HTA rounds this trace's times to whole µs.
    pub fn rounds(&self) -> bool {
        self.float_ts && !self.non_numeric_ts
    }

    /// Whether HTA's last-step filter runs (two or more `ProfilerStep` symbols).
    pub fn filters(&self) -> bool {
        self.step_symbols >= 2
    }

    /// `[start, end)` of a row as HTA sees it under `options`.
    fn times(&self, row: &Row, options: &HtaOptions) -> (i64, i64) {
        let end = row.ts.saturating_add(row.dur);
        if options.us_rounding && self.rounds() {
            let start = row.ts.div_euclid(MICRO) * MICRO;
            let start = if start < row.ts { start + MICRO } else { start };
            (start, end.div_euclid(MICRO) * MICRO)
        } else {
            (row.ts, end)
        }
    }

    /// The last step's start under `options` (rounded when rounding applies).
    fn last_step_start(&self, options: &HtaOptions) -> Option<i64> {
        self.rows
            .iter()
            .filter(|r| !r.gpu && r.step)
            .map(|r| self.times(r, options).0)
            .max()
    }

    /// The rows HTA pools under `options`, with their times.
    fn pooled(&self, options: &HtaOptions) -> Vec<(&Row, i64, i64)> {
        let filter =
            self.filters() && (options.last_step_filter || options.drop_uncorrelated);
        let cut = if filter {
            self.last_step_start(options)
        } else {
            None
        };
        let host_kept = |r: &Row| match cut {
            Some(cut) if options.last_step_filter => self.times(r, options).0 < cut,
            _ => true,
        };
        let (all, kept): (HashSet<i64>, HashSet<i64>) = if filter {
            let hosts = || self.rows.iter().filter(|r| !r.gpu);
            (
                hosts().map(|r| r.correlation).collect(),
                hosts()
                    .filter(|r| host_kept(r))
                    .map(|r| r.correlation)
                    .collect(),
            )
        } else {
            (HashSet::new(), HashSet::new())
        };
        self.rows
            .iter()
            .filter(|r| r.stream != -1 && (options.sync_rows_busy || !r.sync))
            .filter(|r| {
                if !filter {
                    true
                } else if !r.gpu {
                    host_kept(r)
                } else {
                    kept.contains(&r.correlation)
                        || (!options.drop_uncorrelated && !all.contains(&r.correlation))
                }
            })
            .map(|r| {
                let (s, e) = self.times(r, options);
                (r, s, e)
            })
            .collect()
    }

    /// HTA's temporal breakdown under `options`; `None` when no row is pooled.
    pub fn breakdown(&self, options: &HtaOptions) -> Option<Breakdown> {
        let rows = self.pooled(options);
        let mut all: Vec<(i64, i64, usize)> = rows.iter().map(|(r, s, e)| (*s, *e, r.index)).collect();
        let mut compute: Vec<(i64, i64, usize)> = rows
            .iter()
            .filter(|(r, _, _)| r.compute)
            .map(|(r, s, e)| (*s, *e, r.index))
            .collect();
        let (kernel_time, busy) = merge(&mut all)?;
        let compute_ns = merge(&mut compute).map_or(0, |(_, busy)| busy);
        let idle = kernel_time - busy;
        Some(Breakdown {
            kernel_time_ns: kernel_time,
            idle_ns: idle,
            compute_ns,
            non_compute_ns: kernel_time - compute_ns - idle,
            rows: rows.len(),
            reversed_rows: rows.iter().filter(|(_, s, e)| e < s).count(),
        })
    }

    /// The whole comparison: HTA's defaults, exact, and each assumption's effect.
    pub fn compare(&self) -> HtaCompat {
        let defaults = self.breakdown(&HtaOptions::HTA_DEFAULTS);
        let exact = self.breakdown(&HtaOptions::EXACT);
        let mut assumptions = Vec::new();
        let mut sum = Delta::default();
        let mut complete = true;
        for a in Assumption::ALL {
            let without = self.breakdown(&HtaOptions::HTA_DEFAULTS.without(a));
            let delta = match (&defaults, &without) {
                (Some(d), Some(w)) => Some(d.minus(w)),
                _ => None,
            };
            match delta {
                Some(d) => {
                    sum.kernel_time_ns += d.kernel_time_ns;
                    sum.idle_ns += d.idle_ns;
                    sum.compute_ns += d.compute_ns;
                    sum.non_compute_ns += d.non_compute_ns;
                    sum.rows += d.rows;
                }
                None => complete = false,
            }
            let (applies, why) = self.explain(a);
            assumptions.push(AssumptionEffect {
                assumption: a,
                applies,
                why,
                delta,
            });
        }
        let interaction = match (&defaults, &exact) {
            (Some(d), Some(e)) if complete => Some(d.minus(e).sub(sum)),
            _ => None,
        };
        let devices: BTreeSet<i64> = self
            .pooled(&HtaOptions::EXACT)
            .iter()
            .filter_map(|(r, _, _)| r.device)
            .collect();
        HtaCompat {
            hta_version: HTA_VERSION,
            rank: self.rank,
            devices: devices.into_iter().collect(),
            hta_defaults: defaults,
            exact,
            assumptions,
            interaction,
        }
    }

    /// Whether HTA applies `a` here, and a sentence with the numbers.
    fn explain(&self, a: Assumption) -> (bool, String) {
        let d = HtaOptions::HTA_DEFAULTS;
        let dropped = |o: HtaOptions| {
            self.pooled(&o).len() as i64 - self.pooled(&d).len() as i64
        };
        match a {
            Assumption::LastStepFilter | Assumption::UncorrelatedDropped
                if !self.filters() =>
            {
                (
                    false,
                    format!(
                        "not applied: HTA filters only with two or more ProfilerStep names, this trace has {}",
                        self.step_symbols
                    ),
                )
            }
            Assumption::LastStepFilter => {
                let cut = self.last_step_start(&d).map_or_else(
                    || "none".to_owned(),
                    |c| format!("{} µs", Nanos::new(c).format_in(Unit::Micros)),
                );
                (
                    true,
                    format!(
                        "last ProfilerStep starts at ts {cut}; {} rows launched at or after it dropped",
                        dropped(d.without(a))
                    ),
                )
            }
            Assumption::UncorrelatedDropped => (
                true,
                format!(
                    "{} GPU rows whose correlation no host row carries dropped",
                    dropped(d.without(a))
                ),
            ),
            Assumption::UsRounding if self.rounds() => (
                true,
                "ts has decimals: starts rounded up, ends down, to whole µs".to_owned(),
            ),
            Assumption::UsRounding => (
                false,
                if self.non_numeric_ts {
                    "not applied: some ts is not a number".to_owned()
                } else {
                    "not applied: every ts is a whole number of µs".to_owned()
                },
            ),
            Assumption::SyncRowsBusy => {
                let n = self.rows.iter().filter(|r| r.sync && r.stream != -1).count();
                (
                    n > 0,
                    format!("{n} cuda_sync rows with a stream (≠ −1) in the trace"),
                )
            }
        }
    }
}

/// HTA's `merge_kernel_intervals` then `_get_idle_time_for_kernels`: sorted by start (ties by
/// event index), a row opens a group when it starts after every earlier end; returns
/// (last group end − first group start, Σ group (max end − min start)). `None` when empty.
fn merge(rows: &mut [(i64, i64, usize)]) -> Option<(i64, i64)> {
    rows.sort_unstable_by_key(|&(s, _, i)| (s, i));
    let (&(first_start, first_end, _), rest) = rows.split_first()?;
    let (mut group_start, mut group_end, mut running) = (first_start, first_end, first_end);
    let mut busy = 0i64;
    for &(s, e, _) in rest {
        if s > running {
            busy += group_end - group_start;
            group_start = s;
            group_end = e;
        } else {
            group_end = group_end.max(e);
        }
        running = running.max(e);
    }
    busy += group_end - group_start;
    Some((group_end - first_start, busy))
}

/// Reads the Kineto trace at `path` and compares HTA's defaults with the exact breakdown.
///
/// # Errors
/// [`ImportError`]: `io`, `too-large`, `bad-syntax`, and [`HtaTrace::from_text`]'s errors.
pub fn compat_path(path: &Path, options: &ImportOptions) -> Result<HtaCompat> {
    let file = path.display().to_string();
    let io_err = |e: std::io::Error| {
        ImportError::new("$", "io", format!("cannot read the file: {e}")).in_file(&file)
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io_err)?
        .take(MAX_TRACE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    let text = decode_text(bytes, &file, MAX_TRACE_BYTES)?;
    let trace = HtaTrace::from_text(&text, options).map_err(|e| e.in_file(&file))?;
    Ok(trace.compare())
}

/// A ns count in exact µs, thousands separated: `338,781` / `336,419.714`.
fn micros(ns: i64) -> String {
    let text = Nanos::new(ns).format_in(Unit::Micros);
    let (sign, body) = text.strip_prefix('-').map_or(("", text.as_str()), |b| ("-", b));
    let (int, frac) = body.split_once('.').map_or((body, None), |(a, b)| (a, Some(b)));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

fn signed_micros(ns: i64) -> String {
    if ns > 0 {
        format!("+{}", micros(ns))
    } else {
        micros(ns)
    }
}

impl HtaCompat {
    /// The comparison as text: one table (µs, exact), then what each assumption does.
    pub fn to_text(&self) -> String {
        use comfy_table::presets::ASCII_MARKDOWN;
        let rank = self
            .rank
            .map_or_else(|| "the trace".to_owned(), |r| format!("rank {r}"));
        let mut s = format!(
            "\n--compat hta: HTA {} get_temporal_breakdown() of {rank}, reproduced (µs, exact; HTA pools devices {:?})\n",
            self.hta_version, self.devices
        );
        let mut t = comfy_table::Table::new();
        t.load_preset(ASCII_MARKDOWN).set_header(vec![
            "breakdown",
            "kernel time (span)",
            "idle",
            "compute",
            "non-compute",
            "rows",
        ]);
        let row = |label: String, b: &Option<Breakdown>| match b {
            Some(b) => vec![
                label,
                micros(b.kernel_time_ns),
                micros(b.idle_ns),
                micros(b.compute_ns),
                micros(b.non_compute_ns),
                b.rows.to_string(),
            ],
            None => vec![label, "— (no rows: HTA fails)".to_owned()],
        };
        t.add_row(row("HTA defaults".to_owned(), &self.hta_defaults));
        t.add_row(row("exact (all four off)".to_owned(), &self.exact));
        let delta_row = |label: String, d: &Option<Delta>| match d {
            Some(d) => vec![
                label,
                signed_micros(d.kernel_time_ns),
                signed_micros(d.idle_ns),
                signed_micros(d.compute_ns),
                signed_micros(d.non_compute_ns),
                format!("{:+}", d.rows),
            ],
            None => vec![label, "—".to_owned()],
        };
        for a in &self.assumptions {
            t.add_row(delta_row(format!("Δ {}", a.assumption.code()), &a.delta));
        }
        t.add_row(delta_row("Δ together only".to_owned(), &self.interaction));
        s.push_str(&format!("{t}\n"));
        for a in &self.assumptions {
            s.push_str(&format!("  {}: {}\n", a.assumption.code(), a.why));
        }
        if let Some(b) = self.hta_defaults.filter(|b| b.reversed_rows > 0) {
            s.push_str(&format!(
                "  {} rows come out reversed by the µs rounding; HTA subtracts them\n",
                b.reversed_rows
            ));
        }
        s.push_str("  Δ = HTA defaults − HTA defaults with that assumption off (docs/hta-compat.md)\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(events: &[String]) -> HtaTrace {
        let text = format!("{{\"traceEvents\": [{}]}}", events.join(","));
        HtaTrace::from_text(&text, &ImportOptions::default()).unwrap()
    }

    fn kernel(name: &str, ts: &str, dur: &str, corr: i64) -> String {
        format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#
        )
    }

    fn launch(ts: &str, corr: i64) -> String {
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{ts},"dur":1,"args":{{"correlation":{corr}}}}}"#
        )
    }

    fn step(n: u32, ts: &str, dur: &str, cat: &str) -> String {
        format!(
            r#"{{"ph":"X","cat":"{cat}","name":"ProfilerStep#{n}","pid":1,"tid":1,"ts":{ts},"dur":{dur},"args":{{}}}}"#
        )
    }

    fn nums(b: Breakdown) -> (i64, i64, i64, i64) {
        (b.kernel_time_ns, b.idle_ns, b.compute_ns, b.non_compute_ns)
    }

    /// ```text
    /// 0    10   20   30   40
    /// [a==)     [n==)
    ///   [b====)
    /// ```
    /// merged busy 0..15 and 20..25 = 20 µs; span 25; compute a ∪ b = 15; nccl 5.
    #[test]
    fn overlapping_rows_merge_and_nccl_is_not_compute() {
        let t = trace(&[
            kernel("a", "0", "10", 1),
            kernel("b", "5", "10", 2),
            kernel("ncclKernel_AllReduce", "20", "5", 3),
            launch("0", 1),
            launch("0", 2),
            launch("0", 3),
        ]);
        let b = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
        assert_eq!(nums(b), (25_000, 5_000, 15_000, 5_000));
        assert!(!t.rounds() && !t.filters());
    }

    /// Steps at 0 and 100 (the GPU-side annotation of step 2 at 150 is the largest ts, so
    /// it is the cut): the kernel launched at 120 stays, the one launched at 160 goes.
    #[test]
    fn the_cut_is_the_largest_profiler_step_ts_gpu_annotations_included() {
        let t = trace(&[
            step(1, "0", "100", "user_annotation"),
            step(2, "100", "100", "user_annotation"),
            step(2, "150", "60", "gpu_user_annotation"),
            launch("10", 1),
            launch("120", 2),
            launch("160", 3),
            kernel("a", "20", "10", 1),
            kernel("b", "130", "10", 2),
            kernel("c", "170", "10", 3),
        ]);
        assert!(t.filters());
        assert_eq!(t.last_step_start(&HtaOptions::HTA_DEFAULTS), Some(150_000));
        let hta = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
        assert_eq!(nums(hta), (120_000, 100_000, 20_000, 0));
        let exact = t.breakdown(&HtaOptions::EXACT).unwrap();
        assert_eq!(nums(exact), (160_000, 130_000, 30_000, 0));
        let c = t.compare();
        let filter = &c.assumptions[0];
        assert!(filter.applies);
        assert_eq!(filter.delta.unwrap().kernel_time_ns, -40_000);
        assert!(filter.why.contains("150 µs; 1 rows"), "{}", filter.why);
    }

    /// A kernel whose correlation no host row carries is dropped only when HTA filters.
    #[test]
    fn uncorrelated_rows_go_only_with_the_filter() {
        let mut events = vec![
            launch("10", 1),
            kernel("a", "20", "10", 1),
            kernel("orphan", "40", "10", 99),
        ];
        let one_step = trace(&events).breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
        assert_eq!(one_step.rows, 2, "no steps: nothing dropped");
        events.push(step(1, "0", "100", "cpu_op"));
        events.push(step(2, "100", "100", "cpu_op"));
        let t = trace(&events);
        let hta = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
        assert_eq!((hta.rows, hta.kernel_time_ns), (1, 10_000));
        let kept = t
            .breakdown(&HtaOptions::HTA_DEFAULTS.without(Assumption::UncorrelatedDropped))
            .unwrap();
        assert_eq!((kept.rows, kept.kernel_time_ns), (2, 30_000));
    }

    /// ```text
    /// µs   10        11        12
    /// ts     10.4 [=== a ===) 11.9     → [11, 11): 0
    ///        10.2 [b) 10.7             → [11, 10): reversed, −1 µs
    /// ```
    #[test]
    fn rounding_ceils_starts_and_floors_ends_and_can_reverse() {
        let t = trace(&[
            kernel("a", "10.4", "1.5", 1),
            kernel("b", "30.2", "0.5", 2),
            launch("0", 1),
            launch("0", 2),
        ]);
        assert!(t.rounds());
        let hta = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
        // a → [11, 11); b → [31, 30): span 30 − 11 = 19, busy 0 + (−1).
        assert_eq!((hta.kernel_time_ns, hta.idle_ns), (19_000, 20_000));
        assert_eq!(hta.reversed_rows, 1);
        let exact = t.breakdown(&HtaOptions::EXACT).unwrap();
        assert_eq!((exact.kernel_time_ns, exact.idle_ns), (20_300, 18_300));
    }

    #[test]
    fn sync_rows_with_a_stream_are_busy_and_wait_event_is_compute() {
        let sync = |name: &str, stream: i64, ts: &str| {
            format!(
                r#"{{"ph":"X","cat":"cuda_sync","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":5,"args":{{"stream":{stream},"correlation":5}}}}"#
            )
        };
        let t = trace(&[
            launch("0", 1),
            launch("0", 5),
            kernel("a", "0", "10", 1),
            sync("Stream Wait Event", 7, "20"),
            sync("Context Sync", 4294967295, "30"),
            sync("Event Sync", -1, "50"),
        ]);
        let hta = t.breakdown(&HtaOptions::HTA_DEFAULTS).unwrap();
        assert_eq!(nums(hta), (35_000, 15_000, 15_000, 5_000));
        let exact = t.breakdown(&HtaOptions::EXACT).unwrap();
        assert_eq!(nums(exact), (10_000, 0, 10_000, 0));
    }

    #[test]
    fn hta_compute_classes_follow_its_regexes() {
        assert!(is_hta_compute("void cudnn::bn_fw"));
        assert!(!is_hta_compute("ncclKernel_AllReduce_RING_LL_Sum_float"));
        assert!(!is_hta_compute("ncclDevKernel_SendRecv"));
        assert!(is_hta_compute("nccl_helper")); // no `Kernel` after `nccl`
        assert!(!is_hta_compute("Memcpy DtoH (Device -> Pinned)"));
        assert!(!is_hta_compute("void at::native::xMemcpy"));
        assert!(!is_hta_compute("Memset (Device)"));
        assert!(is_hta_compute("void fooMemset")); // Memset only at the start
        assert!(!is_hta_compute("Stream Sync"));
        assert!(is_hta_compute("Stream Wait Event"));
        assert!(is_hta_compute("line\nSync")); // `.` stops at a newline
    }

    #[test]
    fn micros_are_exact_and_grouped() {
        assert_eq!(micros(338_781_000), "338,781");
        assert_eq!(micros(336_419_714), "336,419.714");
        assert_eq!(micros(-1_500), "-1.5");
        assert_eq!(signed_micros(2_000), "+2");
        assert_eq!(micros(0), "0");
    }

    #[test]
    fn an_empty_trace_has_no_breakdown() {
        let c = trace(&[]).compare();
        assert!(c.hta_defaults.is_none() && c.exact.is_none() && c.interaction.is_none());
        assert!(c.to_text().contains("no rows"));
    }
}
