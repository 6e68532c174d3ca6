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

mod read;
mod tap;
mod text;

use std::collections::{BTreeSet, HashSet};
use std::io::Read as _;
use std::path::Path;

use serde::Serialize;

use crate::error::InputError as ImportError;
use crate::trace::open::decode_text;
use crate::trace::{ReadOptions as ImportOptions, MAX_TRACE_BYTES};
use crate::units::{Nanos, Unit};

pub use read::is_hta_compute;
pub use tap::HtaTap;

type Result<T> = std::result::Result<T, ImportError>;

/// The HTA release whose defaults this module reproduces.
pub const HTA_VERSION: &str = "0.5.0";

/// The nanoseconds in one µs: HTA rounds to this grid.
const MICRO: i64 = 1_000;

/// Which of HTA's default assumptions to apply. [`HtaOptions::HTA_DEFAULTS`] is HTA 0.5.0's
/// `get_temporal_breakdown()`; [`HtaOptions::EXACT`] switches all four off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
    /// Whether HTA 0.5.0 stops here with an `AssertionError` (`idle <= kernel_time`,
    /// `compute <= kernel_time`, `non_compute >= 0`): µs rounding made the busy time negative.
    pub fn hta_fails(&self) -> bool {
        self.idle_ns > self.kernel_time_ns
            || self.compute_ns > self.kernel_time_ns
            || self.non_compute_ns < 0
    }

    /// `self − other`, field by field (rows too, as signed).
    fn minus(&self, other: &Breakdown) -> Delta {
        Delta {
            kernel_time_ns: self.kernel_time_ns.saturating_sub(other.kernel_time_ns),
            idle_ns: self.idle_ns.saturating_sub(other.idle_ns),
            compute_ns: self.compute_ns.saturating_sub(other.compute_ns),
            non_compute_ns: self.non_compute_ns.saturating_sub(other.non_compute_ns),
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
            kernel_time_ns: self.kernel_time_ns.saturating_sub(o.kernel_time_ns),
            idle_ns: self.idle_ns.saturating_sub(o.idle_ns),
            compute_ns: self.compute_ns.saturating_sub(o.compute_ns),
            non_compute_ns: self.non_compute_ns.saturating_sub(o.non_compute_ns),
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
    /// The assumptions HTA was taken to apply: its defaults, less rounding when
    /// `HTA_DISABLE_NS_ROUNDING=1` (HTA's own switch) was set.
    pub hta_options: HtaOptions,
    /// The rank (`distributedInfo.rank`), when the trace says.
    pub rank: Option<i64>,
    /// Devices (`args.device`) of the pooled rows: HTA pools them into one breakdown.
    pub devices: Vec<i64>,
    /// HTA 0.5.0 under `hta_options` (absent: no row is left; HTA itself fails on an empty
    /// frame).
    pub hta_defaults: Option<Breakdown>,
    /// All four assumptions off.
    pub exact: Option<Breakdown>,
    /// One entry per assumption, in [`Assumption::ALL`] order.
    pub assumptions: Vec<AssumptionEffect>,
    /// (HTA default − exact) − Σ deltas: what the assumptions do only together.
    pub interaction: Option<Delta>,
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

impl HtaTrace {
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
            let start = if start < row.ts {
                start.saturating_add(MICRO)
            } else {
                start
            };
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
        let filter = self.filters() && (options.last_step_filter || options.drop_uncorrelated);
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
        let mut all: Vec<(i64, i64, usize)> =
            rows.iter().map(|(r, s, e)| (*s, *e, r.index)).collect();
        let mut compute: Vec<(i64, i64, usize)> = rows
            .iter()
            .filter(|(r, _, _)| r.compute)
            .map(|(r, s, e)| (*s, *e, r.index))
            .collect();
        let (kernel_time, busy) = merge(&mut all)?;
        let compute_ns = merge(&mut compute).map_or(0, |(_, busy)| busy);
        let idle = kernel_time.saturating_sub(busy);
        Some(Breakdown {
            kernel_time_ns: kernel_time,
            idle_ns: idle,
            compute_ns,
            non_compute_ns: kernel_time.saturating_sub(compute_ns).saturating_sub(idle),
            rows: rows.len(),
            reversed_rows: rows.iter().filter(|(_, s, e)| e < s).count(),
        })
    }

    /// The whole comparison: HTA under `hta` (normally [`HtaOptions::HTA_DEFAULTS`]), exact,
    /// and each assumption's effect (HTA under `hta` minus HTA with that one also off).
    pub fn compare(&self, hta: HtaOptions) -> HtaCompat {
        let defaults = self.breakdown(&hta);
        let exact = self.breakdown(&HtaOptions::EXACT);
        let mut assumptions = Vec::new();
        let mut sum = Delta::default();
        let mut complete = true;
        for a in Assumption::ALL {
            let without = self.breakdown(&hta.without(a));
            let delta = match (&defaults, &without) {
                (Some(d), Some(w)) => Some(d.minus(w)),
                _ => None,
            };
            match delta {
                Some(d) => {
                    sum.kernel_time_ns = sum.kernel_time_ns.saturating_add(d.kernel_time_ns);
                    sum.idle_ns = sum.idle_ns.saturating_add(d.idle_ns);
                    sum.compute_ns = sum.compute_ns.saturating_add(d.compute_ns);
                    sum.non_compute_ns = sum.non_compute_ns.saturating_add(d.non_compute_ns);
                    sum.rows += d.rows;
                }
                None => complete = false,
            }
            let (applies, why) = self.explain(a, hta);
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
            hta_options: hta,
            rank: self.rank,
            devices: devices.into_iter().collect(),
            hta_defaults: defaults,
            exact,
            assumptions,
            interaction,
        }
    }

    /// Whether HTA applies `a` here, and a sentence with the numbers.
    fn explain(&self, a: Assumption, d: HtaOptions) -> (bool, String) {
        let dropped = |o: HtaOptions| self.pooled(&o).len() as i64 - self.pooled(&d).len() as i64;
        if d.without(a) == d {
            let why = match a {
                Assumption::UsRounding => "off: HTA_DISABLE_NS_ROUNDING=1",
                _ => "off",
            };
            return (false, why.to_owned());
        }
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

/// Arithmetic saturates: a trace whose times lie ~292 years apart gets clamped numbers, not
/// a panic (HTA's floats would be as meaningless).
///
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
            busy = busy.saturating_add(group_end.saturating_sub(group_start));
            group_start = s;
            group_end = e;
        } else {
            group_end = group_end.max(e);
        }
        running = running.max(e);
    }
    busy = busy.saturating_add(group_end.saturating_sub(group_start));
    Some((group_end.saturating_sub(first_start), busy))
}

/// Reads the Kineto trace at `path` and compares HTA's defaults with the exact breakdown:
/// HTA's rows are gathered by the fast path's one pass ([`HtaTap`], through
/// [`crate::trace::open::read_audit_trace_tapped`]); a trace that path does not read whole
/// is read by [`compat_path_whole`].
///
/// # Errors
/// [`ImportError`]: `io`, `too-large`, `bad-syntax`, and [`HtaTrace::from_text`]'s errors.
pub fn compat_path(path: &Path, options: &ImportOptions, hta: HtaOptions) -> Result<HtaCompat> {
    let mut tap = HtaTap::new(options);
    // The audit's model is not needed here; its errors are HTA's to word, below.
    let _ = crate::trace::open::read_audit_trace_tapped(path, options, &mut tap);
    compat_of_tap(tap, path, options, hta)
}

/// [`compat_path`] from the whole text, read and parsed here: for a trace the fast path does
/// not read whole (a malformed one, one value past 64 MiB, a field the importer refuses).
///
/// # Errors
/// [`ImportError`]: `io`, `too-large`, `bad-syntax`, and [`HtaTrace::from_text`]'s errors.
pub fn compat_path_whole(
    path: &Path,
    options: &ImportOptions,
    hta: HtaOptions,
) -> Result<HtaCompat> {
    let file = path.display().to_string();
    let io_err = |e: std::io::Error| {
        ImportError::new("$", "io", format!("cannot read the file: {e}")).in_file(&file)
    };
    let mut bytes = Vec::new();
    crate::input::open_file(path)
        .map_err(|e| e.in_file(&file))?
        .take(MAX_TRACE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    let text = decode_text(bytes, &file, MAX_TRACE_BYTES)?;
    let trace = HtaTrace::from_text(&text, options).map_err(|e| e.in_file(&file))?;
    Ok(trace.compare(hta))
}

/// What `tap` gathered, compared under `hta`; when the pass did not see the whole trace, the
/// file at `path` is read by [`compat_path_whole`].
fn compat_of_tap(
    tap: HtaTap,
    path: &Path,
    options: &ImportOptions,
    hta: HtaOptions,
) -> Result<HtaCompat> {
    match tap.finish() {
        Some(read) => read
            .map(|trace| trace.compare(hta))
            .map_err(|e| e.in_file(path.display().to_string())),
        None => compat_path_whole(path, options, hta),
    }
}

/// `--compat hta` of `import` and `audit`: HTA 0.5.0's temporal breakdown of the Kineto trace at
/// `path`, with HTA's defaults (and its `HTA_DISABLE_NS_ROUNDING` switch), from what `tap`
/// gathered in the command's own pass over the trace.
///
/// # Errors
/// `unsupported-format` for an Nsight Systems export (`nsys`), and the reader's errors.
pub fn compat_of(
    path: &Path,
    nsys: bool,
    options: &ImportOptions,
    tap: HtaTap,
) -> Result<HtaCompat> {
    if nsys {
        return Err(ImportError::new(
            "$",
            "unsupported-format",
            "--compat hta reproduces HTA, which reads PyTorch profiler (Kineto) traces, not Nsight Systems exports",
        )
        .in_file(path.display().to_string()));
    }
    // HTA's own switch (`hta/configs/env_options.py`): rounding is off only for exactly "1".
    let mut hta = HtaOptions::HTA_DEFAULTS;
    if std::env::var_os("HTA_DISABLE_NS_ROUNDING").is_some_and(|v| v == "1") {
        hta.us_rounding = false;
    }
    compat_of_tap(tap, path, options, hta)
}

#[cfg(test)]
mod tests;
