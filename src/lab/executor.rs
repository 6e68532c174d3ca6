//! The executor lab: calibrate, submit to a thread pool, wait, verify, and summarize.
//!
//! One run, all readings on one host clock:
//!
//! ```text
//! caller  t0 submit ─┐ t1 return   t2 wait ───────────────────────┐ t3 result ready  t4 digest checked
//!                    │  (queued)                                   │
//! worker             └──► w0 [============ hash work ============) w1 ── send result ──┘
//!
//! submission      t0 → t1   (makes no completion claim)
//! wait for result t2 → t3
//! caller total    t0 → t3   (completion: the caller waited on this job's result)
//! work            w0 → w1   (read by the worker on the same clock)
//! share of the work after submission returned: (w1 − max(w0, t1)) / (w1 − w0)
//! ```
//!
//! The lab is generic over the [`HostClock`] and the [`Work`], so tests run it with a
//! scripted clock and scripted digests (including a wrong one) and snapshot its output; in
//! use it runs on [`super::clock::MonotonicClock`] and [`super::work::HashWork`]. The pool is
//! always the real [`ThreadPool`]: with the fake clock, the readings depend only on the run
//! and boundary, so thread scheduling cannot change a fake run's numbers.
//!
//! Every run is kept. A run whose digest differs from the reference, or whose readings are
//! out of order, is a *failed* run: it stays in the raw log and the counts, and is left out
//! of the statistics.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use super::clock::{Boundary, ClockInfo, HostClock, Point};
use super::pool::{Lost, ThreadPool};
use super::work::{Call, Digest, Work};
use crate::clock::ClockId;
use crate::stats::{steady_state, Outcome, Outliers, Phase, SampleSet, SteadyStatePolicy, Summary};
use crate::units::Nanos;
use crate::verdict::Verdict;

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LabConfig {
    /// Measured runs.
    pub runs: usize,
    /// Warm-up runs before them (recorded, left out of the statistics).
    pub warmup: usize,
    /// Wanted duration of one job's work.
    pub target: Nanos,
    /// Worker threads in the pool.
    pub threads: usize,
    /// Passes per job given by the user (`--passes`): the work is pinned and calibration
    /// only predicts its duration. `None`: calibration chooses the passes for `target`.
    pub passes: Option<u64>,
}

/// One calibration trial: `passes` passes took `elapsed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Trial {
    /// Passes computed.
    pub passes: u64,
    /// How long they took on the host clock.
    pub elapsed: Nanos,
}

/// How the work size was chosen, and the duration it predicts.
///
/// Invariants: `passes >= 1`; `trials` is non-empty; the last `median_of` trials all ran
/// `basis_passes` passes, and `basis_median` is their nearest-rank median.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Calibration {
    /// The target duration.
    pub target: Nanos,
    /// Trials, in order: doubling trials, then the repeated trials of the basis.
    pub trials: Vec<Trial>,
    /// Passes per job.
    pub passes: u64,
    /// Whether the passes were given (`--passes`) rather than chosen.
    pub pinned: bool,
    /// The pass count of the trials the prediction rests on.
    pub basis_passes: u64,
    /// How many trials of `basis_passes` the median is over.
    pub median_of: usize,
    /// Their nearest-rank median duration.
    pub basis_median: Nanos,
    /// Predicted duration of one job's work (`passes` passes), scaled exactly from the
    /// median: `passes × basis_median / basis_passes`, rounded down.
    pub estimate: Nanos,
}

/// The largest number of doubling trials.
const MAX_TRIALS: usize = 40;
/// The largest number of passes calibration will try.
const MAX_PASSES: u64 = 1 << 40;
/// Trials of the basis pass count whose median calibration uses (one noisy trial, a
/// descheduled thread on a busy machine, cannot move a median of five).
pub const CALIBRATION_REPEATS: usize = 5;
/// Trials of a pinned pass count whose median predicts its duration.
pub const PINNED_REPEATS: usize = 3;

fn trial<C: HostClock + ?Sized, W: Work + ?Sized>(
    clock: &C,
    work: &W,
    k: usize,
    passes: u64,
) -> Trial {
    let start = clock.read(Point::new(k, Boundary::CalibrationStart));
    std::hint::black_box(work.compute(passes, Call::Calibration(k)));
    let end = clock.read(Point::new(k, Boundary::CalibrationEnd));
    Trial {
        passes,
        elapsed: Nanos::new((end.as_i64() - start.as_i64()).max(0)),
    }
}

/// Repeats trials of `passes` until `repeats` of them are the last ones in `trials`, and
/// returns their nearest-rank median.
fn repeat_median<C: HostClock + ?Sized, W: Work + ?Sized>(
    clock: &C,
    work: &W,
    trials: &mut Vec<Trial>,
    passes: u64,
    repeats: usize,
) -> Nanos {
    let have = trials
        .iter()
        .rev()
        .take_while(|t| t.passes == passes)
        .count()
        .min(repeats);
    for _ in have..repeats {
        let k = trials.len();
        trials.push(trial(clock, work, k, passes));
    }
    let mut last: Vec<Nanos> = trials[trials.len() - repeats..]
        .iter()
        .map(|t| t.elapsed)
        .collect();
    last.sort();
    last[crate::stats::nearest_rank(crate::stats::Percentile::MEDIAN, last.len()) - 1]
}

fn scaled(passes: u64, median: Nanos, basis: u64) -> Nanos {
    let est = i128::from(passes) * i128::from(median.as_i64()) / i128::from(basis.max(1));
    Nanos::new(i64::try_from(est).unwrap_or(i64::MAX))
}

/// Finds the number of passes whose work lasts about `target` on this machine: doubles the
/// passes until one trial lasts at least a quarter of the target, repeats that pass count
/// until [`CALIBRATION_REPEATS`] trials of it are in, and scales their **median** linearly
/// (exactly, in integers). Time: O(log(target / one pass)) trials.
pub fn calibrate<C: HostClock + ?Sized, W: Work + ?Sized>(
    clock: &C,
    work: &W,
    target: Nanos,
) -> Calibration {
    let target_ns = target.as_i64().max(1);
    let mut passes: u64 = 1;
    let mut trials = Vec::new();
    for k in 0..MAX_TRIALS {
        let t = trial(clock, work, k, passes);
        trials.push(t);
        if t.elapsed.as_i64().saturating_mul(4) >= target_ns || passes >= MAX_PASSES {
            break;
        }
        passes = passes.saturating_mul(if t.elapsed.as_i64() == 0 { 16 } else { 2 });
    }
    let median = repeat_median(clock, work, &mut trials, passes, CALIBRATION_REPEATS);
    let elapsed = i128::from(median.as_i64().max(1));
    let chosen = (i128::from(passes) * i128::from(target_ns) / elapsed).max(1);
    let chosen = u64::try_from(chosen).unwrap_or(MAX_PASSES).min(MAX_PASSES);
    Calibration {
        target,
        trials,
        passes: chosen,
        pinned: false,
        basis_passes: passes,
        median_of: CALIBRATION_REPEATS,
        basis_median: median,
        estimate: scaled(chosen, Nanos::new(elapsed as i64), passes),
    }
}

/// The calibration of pinned work (`--passes`): the passes are given, and the median of
/// [`PINNED_REPEATS`] trials of exactly those passes predicts one job's work.
pub fn calibrate_pinned<C: HostClock + ?Sized, W: Work + ?Sized>(
    clock: &C,
    work: &W,
    target: Nanos,
    passes: u64,
) -> Calibration {
    let passes = passes.clamp(1, MAX_PASSES);
    let mut trials = Vec::new();
    let median = repeat_median(clock, work, &mut trials, passes, PINNED_REPEATS);
    Calibration {
        target,
        trials,
        passes,
        pinned: true,
        basis_passes: passes,
        median_of: PINNED_REPEATS,
        basis_median: median,
        estimate: median,
    }
}

/// The calibration `config` asks for: pinned when it gives the passes, else chosen for its
/// target.
pub fn calibrate_for<C: HostClock + ?Sized, W: Work + ?Sized>(
    clock: &C,
    work: &W,
    config: &LabConfig,
) -> Calibration {
    match config.passes {
        Some(p) => calibrate_pinned(clock, work, config.target, p),
        None => calibrate(clock, work, config.target),
    }
}

/// The clock readings of one run, in nanoseconds on the lab's host clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Stamps {
    /// t0: caller, before the submit call.
    pub submit_start: Nanos,
    /// t1: caller, after the submit call returned.
    pub submit_return: Nanos,
    /// t2: caller, before it blocks on the result.
    pub wait_start: Nanos,
    /// t3: caller, with the result in hand.
    pub result_ready: Nanos,
    /// t4: caller, after comparing the digest.
    pub digest_checked: Nanos,
    /// w0: worker, before the work.
    pub work_start: Nanos,
    /// w1: worker, after the work.
    pub work_end: Nanos,
}

impl Stamps {
    /// The orderings that must hold on one monotonic clock, and which of them fail:
    /// `t0 ≤ t1 ≤ t2 ≤ t3 ≤ t4` (caller program order) and `t0 ≤ w0 ≤ w1 ≤ t3` (the work
    /// starts after it was submitted and ends before its result is received).
    pub fn order_violations(&self) -> Vec<&'static str> {
        let s = self;
        [
            (
                s.submit_start <= s.submit_return,
                "submit start ≤ submit return",
            ),
            (
                s.submit_return <= s.wait_start,
                "submit return ≤ wait start",
            ),
            (s.wait_start <= s.result_ready, "wait start ≤ result ready"),
            (
                s.result_ready <= s.digest_checked,
                "result ready ≤ digest checked",
            ),
            (s.submit_start <= s.work_start, "submit start ≤ work start"),
            (s.work_start <= s.work_end, "work start ≤ work end"),
            (s.work_end <= s.result_ready, "work end ≤ result ready"),
        ]
        .into_iter()
        .filter(|(ok, _)| !ok)
        .map(|(_, what)| what)
        .collect()
    }
}

/// Why a run failed; a failed run is kept and reported, never dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Digest matches, readings in order.
    Ok,
    /// The worker returned a digest other than the reference.
    WrongDigest,
    /// The readings contradict program order (a clock that went back).
    ClockOrder,
}

impl RunStatus {
    /// The kebab-case code.
    pub fn code(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::WrongDigest => "wrong-digest",
            RunStatus::ClockOrder => "clock-order",
        }
    }
}

/// Everything recorded about one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunRecord {
    /// Index in the whole record (warm-ups first), from 0.
    pub index: usize,
    /// `w1`, `w2`, … for warm-ups, `1`, `2`, … for measured runs.
    pub label: String,
    /// Warm-up or measured.
    pub phase: Phase,
    /// Which worker thread ran the job.
    pub worker: usize,
    /// The clock readings.
    pub stamps: Stamps,
    /// The digest the worker returned.
    pub digest: Digest,
    /// Ok, or why the run failed.
    pub status: RunStatus,
}

impl RunRecord {
    /// Whether the run failed (it stays in the record either way).
    pub fn failed(&self) -> bool {
        self.status != RunStatus::Ok
    }
}

/// The machine a lab ran on, as far as it matters for reading the numbers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Machine {
    /// CPUs available to this process.
    pub cpus: usize,
    /// `/proc/loadavg`'s 1, 5 and 15 minute load averages when the lab started, if readable:
    /// other processes competing for the cores show up as noise in every interval.
    pub load_average: Option<String>,
    /// The same when the lab ended (set by [`Machine::ended`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_average_end: Option<String>,
}

fn read_loadavg() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg").ok().map(|text| {
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    })
}

impl Machine {
    /// This machine, now.
    pub fn current() -> Self {
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            load_average: read_loadavg(),
            load_average_end: None,
        }
    }

    /// The same machine with the load average at the end of the lab read now.
    pub fn ended(self) -> Self {
        Machine {
            load_average_end: read_loadavg(),
            ..self
        }
    }

    /// The highest 1-minute load average recorded (start or end), as written, when it
    /// exceeds the CPU count: more runnable threads than cores, so every measured interval
    /// may include time spent waiting for a core.
    pub fn overloaded(&self) -> Option<String> {
        let one_minute = |l: &Option<String>| {
            l.as_deref()
                .and_then(|t| t.split_whitespace().next())
                .and_then(|v| v.parse::<f64>().ok().map(|f| (f, v.to_owned())))
        };
        let highest = [
            one_minute(&self.load_average),
            one_minute(&self.load_average_end),
        ]
        .into_iter()
        .flatten()
        .max_by(|a, b| a.0.total_cmp(&b.0))?;
        // Heuristic, labelled as such where it is reported: load above the core count.
        (highest.0 > self.cpus as f64).then_some(highest.1)
    }
}

/// A reason not to trust a lab run's durations as the work that was asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Caution {
    /// Stable code: `work-off-prediction` or `machine-loaded`.
    pub code: &'static str,
    /// What was seen, with the numbers.
    pub message: String,
}

/// How far the measured work may be from the prediction before a caution: 25 %.
pub const PREDICTION_TOLERANCE_PERCENT: i64 = 25;

/// The cautions of a lab run: the median measured work more than
/// [`PREDICTION_TOLERANCE_PERCENT`] from calibration's prediction (exact integer test), and a
/// machine whose 1-minute load average exceeded its CPU count.
pub fn cautions(lab: &LabRun, work_median: Option<Nanos>) -> Vec<Caution> {
    let mut out = Vec::new();
    let predicted = lab.calibration.estimate.as_i64();
    if let Some(m) = work_median {
        let diff = i128::from(m.as_i64()) - i128::from(predicted);
        if diff.abs() * 100 > i128::from(PREDICTION_TOLERANCE_PERCENT) * i128::from(predicted) {
            let ratio = if predicted > 0 {
                format!(
                    " ({:.2}× the prediction)",
                    m.as_i64() as f64 / predicted as f64
                )
            } else {
                String::new()
            };
            out.push(Caution {
                code: "work-off-prediction",
                message: format!(
                    "the median work per job was {m}, calibration predicted {} for {} passes{ratio}: more than {PREDICTION_TOLERANCE_PERCENT} % apart, so the machine ran the work at a different speed than during calibration",
                    lab.calibration.estimate, lab.calibration.passes
                ),
            });
        }
    }
    if let Some(m) = &lab.machine {
        if let Some(load) = m.overloaded() {
            out.push(Caution {
                code: "machine-loaded",
                message: format!(
                    "the 1-minute load average was {load} on {} CPU(s) (more runnable threads than cores): every interval may include time spent waiting for a core",
                    m.cpus
                ),
            });
        }
    }
    out
}

/// What to do about cautions, for the report and the lesson.
pub fn caution_advice(passes: u64) -> String {
    format!(
        "rerun when the machine is quieter, or pin the work with `--passes {passes}` so that runs compare whatever the load"
    )
}

/// A whole lab run: configuration, clock, calibration, reference and every run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LabRun {
    /// What was asked for.
    pub config: LabConfig,
    /// The one host clock every reading is on.
    pub clock: ClockId,
    /// How that clock is read.
    pub clock_info: ClockInfo,
    /// What the work is.
    pub work: String,
    /// How the work size was chosen.
    pub calibration: Calibration,
    /// The reference digest, computed once on the caller thread.
    pub reference: Digest,
    /// How long computing the reference took on the caller thread.
    pub reference_time: Nanos,
    /// Every run, warm-ups first, in run order.
    pub runs: Vec<RunRecord>,
    /// The machine, when the caller recorded it (the CLI does; tests leave it out).
    pub machine: Option<Machine>,
}

/// A step of a lab run, for progress display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The reference digest is computed; runs start.
    ReferenceDone,
    /// `done` of `total` runs are complete.
    RunDone {
        /// Runs complete.
        done: usize,
        /// Runs in all (warm-ups included).
        total: usize,
    },
}

/// What can stop a lab run.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The pool could not start its threads.
    #[error("cannot start the worker threads: {0}")]
    Spawn(#[from] std::io::Error),
    /// A job never returned its result.
    #[error("run {run}: {source}")]
    Lost {
        /// The run's label.
        run: String,
        /// The cause.
        source: Lost,
    },
}

/// Runs the lab: computes the reference digest on the caller thread, then `warmup + runs`
/// jobs, one at a time, each submitted to the pool and waited for before the next.
///
/// # Errors
/// [`LabError`] when the pool cannot start or a job loses its result. A wrong digest is not
/// an error: the run is recorded as failed.
pub fn run_lab<C, W>(
    clock: Arc<C>,
    work: Arc<W>,
    config: &LabConfig,
    calibration: Calibration,
    progress: &mut dyn FnMut(Step),
) -> Result<LabRun, LabError>
where
    C: HostClock + 'static,
    W: Work + 'static,
{
    let passes = calibration.passes;
    let r0 = clock.read(Point::new(0, Boundary::ReferenceStart));
    let reference = work.compute(passes, Call::Reference);
    let r1 = clock.read(Point::new(0, Boundary::ReferenceEnd));
    progress(Step::ReferenceDone);

    let pool = ThreadPool::new(config.threads)?;
    let total = config.warmup + config.runs;
    let mut runs = Vec::with_capacity(total);
    for index in 0..total {
        let (phase, label) = if index < config.warmup {
            (Phase::Warmup, format!("w{}", index + 1))
        } else {
            (Phase::Measured, format!("{}", index - config.warmup + 1))
        };
        let (job_clock, job_work) = (Arc::clone(&clock), Arc::clone(&work));
        let job = move |worker: usize| {
            let w0 = job_clock.read(Point::new(index, Boundary::WorkStart));
            let digest = job_work.compute(passes, Call::Run(index));
            let w1 = job_clock.read(Point::new(index, Boundary::WorkEnd));
            (worker, w0, w1, digest)
        };
        let t0 = clock.read(Point::new(index, Boundary::SubmitStart));
        let handle = pool.submit(job);
        let t1 = clock.read(Point::new(index, Boundary::SubmitReturn));
        let t2 = clock.read(Point::new(index, Boundary::WaitStart));
        let result = handle.wait();
        let t3 = clock.read(Point::new(index, Boundary::ResultReady));
        let (worker, w0, w1, digest) = result.map_err(|source| LabError::Lost {
            run: label.clone(),
            source,
        })?;
        let digest_ok = digest == reference;
        let t4 = clock.read(Point::new(index, Boundary::DigestChecked));
        let stamps = Stamps {
            submit_start: t0,
            submit_return: t1,
            wait_start: t2,
            result_ready: t3,
            digest_checked: t4,
            work_start: w0,
            work_end: w1,
        };
        let status = if !digest_ok {
            RunStatus::WrongDigest
        } else if !stamps.order_violations().is_empty() {
            RunStatus::ClockOrder
        } else {
            RunStatus::Ok
        };
        runs.push(RunRecord {
            index,
            label,
            phase,
            worker,
            stamps,
            digest,
            status,
        });
        progress(Step::RunDone {
            done: index + 1,
            total,
        });
    }
    Ok(LabRun {
        config: config.clone(),
        clock: clock.id(),
        clock_info: clock.info(),
        work: work.describe(),
        calibration,
        reference,
        reference_time: Nanos::new(r1.as_i64().saturating_sub(r0.as_i64())),
        runs,
        machine: None,
    })
}

/// An interval of every run, between two of its readings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// t0 → t1.
    Submission,
    /// t2 → t3.
    Wait,
    /// t0 → t3.
    Total,
    /// w0 → w1.
    Work,
    /// t0 → w0: until a worker picked the job up.
    Pickup,
    /// w1 → t3: from the worker's end to the result in the caller's hands.
    Handoff,
    /// t3 → t4: comparing the digest (not part of the total).
    DigestCheck,
}

impl Measure {
    /// Every measure, in table order.
    pub const ALL: [Measure; 7] = [
        Measure::Submission,
        Measure::Wait,
        Measure::Total,
        Measure::Work,
        Measure::Pickup,
        Measure::Handoff,
        Measure::DigestCheck,
    ];

    /// Stable id (CSV column stem, JSON key).
    pub fn id(self) -> &'static str {
        match self {
            Measure::Submission => "submission",
            Measure::Wait => "wait",
            Measure::Total => "total",
            Measure::Work => "work",
            Measure::Pickup => "pickup",
            Measure::Handoff => "handoff",
            Measure::DigestCheck => "digest_check",
        }
    }

    /// Name for people.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Submission => "submission",
            Measure::Wait => "wait for result",
            Measure::Total => "caller total",
            Measure::Work => "work (on worker)",
            Measure::Pickup => "pickup delay",
            Measure::Handoff => "result handoff",
            Measure::DigestCheck => "digest check",
        }
    }

    /// The two readings it lies between, for people.
    pub fn boundaries(self) -> &'static str {
        match self {
            Measure::Submission => "submit start → submit return",
            Measure::Wait => "wait start → result ready",
            Measure::Total => "submit start → result ready",
            Measure::Work => "work start → work end",
            Measure::Pickup => "submit start → work start",
            Measure::Handoff => "work end → result ready",
            Measure::DigestCheck => "result ready → digest checked",
        }
    }

    /// Its value in one run (negative only when the readings are out of order).
    pub fn of(self, s: &Stamps) -> Nanos {
        let (a, b) = match self {
            Measure::Submission => (s.submit_start, s.submit_return),
            Measure::Wait => (s.wait_start, s.result_ready),
            Measure::Total => (s.submit_start, s.result_ready),
            Measure::Work => (s.work_start, s.work_end),
            Measure::Pickup => (s.submit_start, s.work_start),
            Measure::Handoff => (s.work_end, s.result_ready),
            Measure::DigestCheck => (s.result_ready, s.digest_checked),
        };
        Nanos::new(b.as_i64().saturating_sub(a.as_i64()))
    }
}

/// The share of a run's work that ran after its submission returned, as an exact fraction
/// `after / work` (`0 <= after <= work`, `work > 0`).
///
/// ```text
/// t1 (submit return)
///   |
///  [==)=============================)   w0 … w1
///   after = w1 − max(w0, t1)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Share {
    /// Nanoseconds of work after the submission returned.
    pub after_ns: i64,
    /// Nanoseconds of work in all (> 0).
    pub work_ns: i64,
}

impl Share {
    /// The share of `stamps`' work after its submission returned; `None` for zero-length
    /// work (no share is defined).
    pub fn of(s: &Stamps) -> Option<Share> {
        let work = s.work_end.as_i64().checked_sub(s.work_start.as_i64())?;
        if work <= 0 {
            return None;
        }
        let from = s.work_start.max(s.submit_return).as_i64();
        let after = s.work_end.as_i64().saturating_sub(from).clamp(0, work);
        Some(Share {
            after_ns: after,
            work_ns: work,
        })
    }

    /// The share in tenths of a percent, rounded half up (exact integer arithmetic).
    pub fn per_mille_rounded(self) -> i64 {
        let (a, w) = (i128::from(self.after_ns), i128::from(self.work_ns));
        ((a * 2000 + w) / (2 * w)) as i64
    }
}

impl PartialOrd for Share {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Share {
    /// By value (`a/b` against `c/d` as `a·d` against `c·b`, exact), then by parts.
    fn cmp(&self, other: &Self) -> Ordering {
        let l = i128::from(self.after_ns) * i128::from(other.work_ns);
        let r = i128::from(other.after_ns) * i128::from(self.work_ns);
        l.cmp(&r)
            .then(self.work_ns.cmp(&other.work_ns))
            .then(self.after_ns.cmp(&other.after_ns))
    }
}

impl fmt::Display for Share {
    /// `99.8 %` (rounded to 0.1 %).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pm = self.per_mille_rounded();
        write!(f, "{}.{} %", pm / 10, pm % 10)
    }
}

/// Statistics of one measure over the runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MeasureStats {
    /// Which measure.
    pub measure: Measure,
    /// Every run's value, failed and warm-up runs included (in run order).
    pub samples: SampleSet,
    /// Statistics of the measured, successful runs (`None` when there are none).
    pub summary: Option<Summary>,
    /// Measured samples outside Tukey's inner fences (kept).
    pub outliers: usize,
}

/// What a lab run shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Analysis {
    /// One entry per [`Measure`], in table order.
    pub measures: Vec<MeasureStats>,
    /// The median (nearest rank) share of work after submission returned, over the
    /// measured successful runs with non-zero work.
    pub share_median: Option<Share>,
    /// How many runs that median is over.
    pub share_runs: usize,
    /// Steady-state claim for the caller total (SPEC §9).
    pub steady_total: Verdict,
    /// Runs whose digest matched the reference, and runs in all.
    pub digests_ok: usize,
    /// Failed runs (wrong digest or readings out of order), kept in the record.
    pub failed: Vec<usize>,
    /// The index of a measured successful run whose caller total is the median.
    pub median_run: Option<usize>,
    /// Why the durations may not be the work asked for (empty: no caution).
    pub cautions: Vec<Caution>,
}

impl MeasureStats {
    /// The summary's median, if any.
    pub fn median(&self) -> Option<Nanos> {
        self.summary.map(|s| s.median())
    }
}

impl Analysis {
    /// The statistics of `measure`.
    pub fn measure(&self, measure: Measure) -> &MeasureStats {
        self.measures
            .iter()
            .find(|m| m.measure == measure)
            .expect("every measure is analysed")
    }
}

/// Analyses a lab run. Time: O(n log n) in the number of runs.
pub fn analyze(lab: &LabRun) -> Analysis {
    let measures: Vec<MeasureStats> = Measure::ALL
        .iter()
        .map(|&measure| {
            let mut samples = SampleSet::new();
            for r in &lab.runs {
                let outcome = if r.failed() {
                    Outcome::Failed
                } else {
                    Outcome::Completed
                };
                // Out-of-order readings make a run failed; its value is clamped to 0 so that
                // it can be kept in the record.
                let value = measure.of(&r.stamps).max(Nanos::ZERO);
                samples
                    .record(value, r.phase, outcome)
                    .expect("clamped values are non-negative");
            }
            let summary = Summary::of(&samples).ok();
            let outliers = Outliers::of(&samples)
                .map(|o| o.counts().outliers())
                .unwrap_or(0);
            MeasureStats {
                measure,
                samples,
                summary,
                outliers,
            }
        })
        .collect();
    let good = || {
        lab.runs
            .iter()
            .filter(|r| r.phase == Phase::Measured && !r.failed())
    };
    let mut shares: Vec<Share> = good().filter_map(|r| Share::of(&r.stamps)).collect();
    shares.sort();
    let share_median = (!shares.is_empty()).then(|| {
        shares[crate::stats::nearest_rank(crate::stats::Percentile::MEDIAN, shares.len()) - 1]
    });
    let total = measures
        .iter()
        .find(|m| m.measure == Measure::Total)
        .expect("total is analysed");
    let steady_total = steady_state(&total.samples, &SteadyStatePolicy::default());
    let median_run = total.median().and_then(|m| {
        good()
            .find(|r| Measure::Total.of(&r.stamps) == m)
            .map(|r| r.index)
    });
    let work_median = measures
        .iter()
        .find(|m| m.measure == Measure::Work)
        .and_then(MeasureStats::median);
    Analysis {
        cautions: cautions(lab, work_median),
        share_runs: shares.len(),
        share_median,
        steady_total,
        digests_ok: lab
            .runs
            .iter()
            .filter(|r| r.status != RunStatus::WrongDigest)
            .count(),
        failed: lab
            .runs
            .iter()
            .filter(|r| r.failed())
            .map(|r| r.index)
            .collect(),
        median_run,
        measures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::clock::{FakeClock, RunScript};
    use crate::lab::work::ScriptedWork;

    fn fake() -> FakeClock {
        FakeClock::new(
            Nanos::new(5_000_000_000),
            Nanos::new(100_000_000),
            RunScript::micros([20, 21, 35, 50_035, 50_060, 50_061]),
        )
    }

    fn scripted(ms: &[i64]) -> FakeClock {
        fake().with_calibration(ms.iter().map(|&ms| Nanos::new(ms * 1_000_000)).collect())
    }

    fn work() -> ScriptedWork {
        ScriptedWork {
            digest: Digest(1),
            wrong: vec![],
        }
    }

    #[test]
    fn calibration_doubles_then_scales_the_median_exactly() {
        // 1 pass: 1 ms, 2: 2 ms, ..., 16: 16 ms ≥ 50/4; four more trials of 16 passes take
        // 40, 16, 14 and 90 ms (a descheduled thread): the median of 16, 40, 16, 14, 90 is
        // 16 ms → 16 × 50 / 16 = 50 passes, predicted 50 ms.
        let clock = scripted(&[1, 2, 4, 8, 16, 40, 16, 14, 90]);
        let c = calibrate(&clock, &work(), Nanos::new(50_000_000));
        assert_eq!(c.trials.len(), 9);
        assert!(c.trials[4..].iter().all(|t| t.passes == 16));
        assert_eq!((c.basis_passes, c.median_of), (16, CALIBRATION_REPEATS));
        assert_eq!(c.basis_median, Nanos::new(16_000_000));
        assert_eq!(c.passes, 50);
        assert!(!c.pinned);
        assert_eq!(c.estimate, Nanos::new(50_000_000));
    }

    #[test]
    fn the_first_trial_that_passes_is_not_the_basis() {
        // The trial that reaches a quarter of the target is a slow outlier (40 ms for 8
        // passes); the others of 8 passes take 8 ms. The old rule (scale the first passing
        // trial) chose 8 × 50 / 40 = 10 passes, 5× too little work.
        let clock = scripted(&[1, 2, 4, 40, 8, 8, 8, 8]);
        let c = calibrate(&clock, &work(), Nanos::new(50_000_000));
        assert_eq!(c.basis_passes, 8);
        assert_eq!(c.basis_median, Nanos::new(8_000_000));
        assert_eq!(c.passes, 50);
        assert_eq!(c.estimate, Nanos::new(50_000_000));
    }

    #[test]
    fn pinned_passes_are_kept_and_their_median_is_the_prediction() {
        let clock = scripted(&[30, 10, 12]);
        let config = LabConfig {
            runs: 1,
            warmup: 0,
            target: Nanos::new(50_000_000),
            threads: 1,
            passes: Some(7),
        };
        let c = calibrate_for(&clock, &work(), &config);
        assert!(c.pinned);
        assert_eq!(c.passes, 7);
        assert_eq!(c.trials.len(), PINNED_REPEATS);
        assert!(c.trials.iter().all(|t| t.passes == 7));
        assert_eq!(c.estimate, Nanos::new(12_000_000));
    }

    fn lab_with(work_us: i64, machine: Option<Machine>) -> LabRun {
        let clock = FakeClock::new(
            Nanos::new(5_000_000_000),
            Nanos::new(100_000_000),
            RunScript::micros([20, 21, 35, 35 + work_us, 60 + work_us, 61 + work_us]),
        )
        .with_calibration(vec![Nanos::new(20_000_000)]);
        let config = LabConfig {
            runs: 5,
            warmup: 2,
            target: Nanos::new(20_000_000),
            threads: 1,
            passes: None,
        };
        let work = Arc::new(work());
        let cal = calibrate_for(&clock, work.as_ref(), &config);
        assert_eq!(cal.estimate, Nanos::new(20_000_000));
        let lab = run_lab(Arc::new(clock), work, &config, cal, &mut |_| {}).unwrap();
        LabRun { machine, ..lab }
    }

    #[test]
    fn work_far_from_the_prediction_gives_a_caution() {
        // Predicted 20 ms; the jobs took 1.7 ms (N1 of the UX review): 0.09× the prediction.
        let a = analyze(&lab_with(1_700, None));
        assert_eq!(a.cautions.len(), 1);
        assert_eq!(a.cautions[0].code, "work-off-prediction");
        assert!(
            a.cautions[0].message.starts_with(
                "the median work per job was 1.7 ms, calibration predicted 20 ms for 1 passes (0.09×"
            ),
            "{}",
            a.cautions[0].message
        );
        // 25 % is the edge: 25.000 ms is within, 25.001 ms is not.
        assert!(analyze(&lab_with(25_000, None)).cautions.is_empty());
        assert!(analyze(&lab_with(15_000, None)).cautions.is_empty());
        assert_eq!(analyze(&lab_with(25_001, None)).cautions.len(), 1);
        assert_eq!(analyze(&lab_with(14_999, None)).cautions.len(), 1);
    }

    #[test]
    fn a_load_above_the_cpu_count_gives_a_caution() {
        let machine = |start: &str, end: Option<&str>| Machine {
            cpus: 2,
            load_average: Some(start.to_owned()),
            load_average_end: end.map(str::to_owned),
        };
        let a = analyze(&lab_with(20_000, Some(machine("5.12 4.00 3.00", None))));
        assert_eq!(a.cautions.len(), 1);
        assert_eq!(a.cautions[0].code, "machine-loaded");
        assert!(a.cautions[0]
            .message
            .starts_with("the 1-minute load average was 5.12 on 2 CPU(s)"));
        // The higher of start and end counts; at or below the core count is no caution.
        let a = analyze(&lab_with(
            20_000,
            Some(machine("0.50 0.4 0.3", Some("2.01 1 1"))),
        ));
        assert!(a.cautions[0].message.contains("was 2.01 on 2"));
        assert!(analyze(&lab_with(
            20_000,
            Some(machine("2.00 1 1", Some("0.1 1 1")))
        ))
        .cautions
        .is_empty());
    }

    #[test]
    fn share_counts_only_work_after_the_return() {
        //  t1 = 20
        //   |   w0 = 35 ........................ w1 = 50_035: all after
        let s = Stamps {
            submit_start: Nanos::new(0),
            submit_return: Nanos::new(20),
            wait_start: Nanos::new(21),
            result_ready: Nanos::new(60),
            digest_checked: Nanos::new(61),
            work_start: Nanos::new(10),
            work_end: Nanos::new(50),
        };
        // work 10..50 (40 ns), after the return 20..50 (30 ns): 75.0 %
        let share = Share::of(&s).unwrap();
        assert_eq!((share.after_ns, share.work_ns), (30, 40));
        assert_eq!(share.to_string(), "75.0 %");
        // work that ended before the return: 0 %
        let early = Stamps {
            work_end: Nanos::new(15),
            ..s
        };
        assert_eq!(Share::of(&early).unwrap().to_string(), "0.0 %");
        // 2/3 rounds to 66.7 %
        let third = Share {
            after_ns: 2,
            work_ns: 3,
        };
        assert_eq!(third.to_string(), "66.7 %");
        assert!(third < share);
    }

    #[test]
    fn a_wrong_digest_is_a_failed_run_that_is_kept() {
        let config = LabConfig {
            runs: 6,
            warmup: 2,
            target: Nanos::new(50_000_000),
            threads: 2,
            passes: None,
        };
        let work = Arc::new(ScriptedWork {
            digest: Digest(0xfeed),
            wrong: vec![4],
        });
        let clock = Arc::new(fake());
        let cal = calibrate_for(clock.as_ref(), work.as_ref(), &config);
        let mut steps = Vec::new();
        let lab = run_lab(clock, work, &config, cal, &mut |s| steps.push(s)).unwrap();
        assert_eq!(lab.runs.len(), 8);
        assert_eq!(lab.runs[4].status, RunStatus::WrongDigest);
        assert_eq!(lab.runs[4].label, "3");
        assert_eq!(steps.last(), Some(&Step::RunDone { done: 8, total: 8 }));
        let a = analyze(&lab);
        assert_eq!(a.failed, vec![4]);
        assert_eq!(a.digests_ok, 7);
        let total = a.measure(Measure::Total);
        assert_eq!(total.samples.len(), 8);
        assert_eq!(total.summary.unwrap().count(), 5);
        assert_eq!(total.median(), Some(Nanos::new(50_060_000)));
        // work 35 us … 50.035 ms, submission returned at 20 us: all of it after.
        assert_eq!(a.share_median.unwrap().to_string(), "100.0 %");
    }

    #[test]
    fn readings_out_of_order_fail_the_run() {
        let s = Stamps {
            submit_start: Nanos::new(10),
            submit_return: Nanos::new(5),
            wait_start: Nanos::new(11),
            result_ready: Nanos::new(20),
            digest_checked: Nanos::new(21),
            work_start: Nanos::new(12),
            work_end: Nanos::new(19),
        };
        // t1 = 5 < t0 = 10: the submission "returned before it started".
        assert_eq!(s.order_violations(), vec!["submit start ≤ submit return"]);
        let late_work = Stamps {
            work_end: Nanos::new(25),
            ..s
        };
        assert!(late_work
            .order_violations()
            .contains(&"work end ≤ result ready"));
    }
}
