//! The host clock a lab reads, behind a trait: the real monotonic clock in use, a scripted
//! fake in tests.
//!
//! Every reading names the [`Point`] it is taken at (which run, which boundary). The real
//! clock ignores the name; the [`FakeClock`] answers from a script keyed by it. Because the
//! answer depends on *what* is read and not on the order of the calls, a fake run is exactly
//! reproducible even though the worker threads read the clock concurrently with the caller:
//! the tables, CSV and JSON of a fake run are snapshot-tested without any timing noise.
//!
//! The real clock, [`MonotonicClock`], is `CLOCK_MONOTONIC` read through `clock_gettime`
//! (the clock `std::time::Instant` uses on Linux). Its origin is the boot, so its instance is
//! the kernel's boot id (`/proc/sys/kernel/random/boot_id`): two runs of the lab in one boot
//! share the clock, two boots do not. Where no boot id can be read, the instance falls back
//! to this process, with a note, which is narrower but still true.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::clock::ClockId;
use crate::units::Nanos;

/// A boundary of one run (or of calibration), at which the clock is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Boundary {
    /// Caller, just before the submit call.
    SubmitStart,
    /// Caller, right after the submit call returned.
    SubmitReturn,
    /// Caller, just before it blocks on the result.
    WaitStart,
    /// Caller, right after the result arrived in its hands.
    ResultReady,
    /// Caller, after comparing the digest with the reference.
    DigestChecked,
    /// Worker thread, just before the hash work.
    WorkStart,
    /// Worker thread, right after the hash work (before handing the result back).
    WorkEnd,
    /// Calibration trial start (caller thread).
    CalibrationStart,
    /// Calibration trial end.
    CalibrationEnd,
    /// Reference digest computation start (caller thread).
    ReferenceStart,
    /// Reference digest computation end.
    ReferenceEnd,
}

/// Where a reading is taken: the run (or calibration trial) index and the boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    /// Run index in the whole record (warm-ups first), or calibration trial index.
    pub run: usize,
    /// Which boundary.
    pub boundary: Boundary,
}

impl Point {
    /// Boundary `boundary` of run (or trial) `run`.
    pub const fn new(run: usize, boundary: Boundary) -> Self {
        Point { run, boundary }
    }
}

/// What a clock says about itself, for the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClockInfo {
    /// How it is read (`CLOCK_MONOTONIC via clock_gettime`, `scripted`).
    pub source: String,
    /// The resolution the system reports, if any.
    pub resolution: Option<Nanos>,
    /// Anything a reader should know (a fallback instance, ...).
    pub notes: Vec<String>,
}

/// A host clock that labs read; one declared clock for every reading of a lab run.
///
/// Implementations must be monotonic across threads: a reading taken after another one,
/// on any thread, is not smaller.
pub trait HostClock: Send + Sync {
    /// The clock's identity (domain `host`, instance: what fixes its epoch).
    fn id(&self) -> ClockId;
    /// How it is read and its resolution.
    fn info(&self) -> ClockInfo;
    /// Reads the clock at `point`.
    fn read(&self, point: Point) -> Nanos;
}

/// The real host clock: `CLOCK_MONOTONIC`, whose epoch is the boot.
///
/// Invariants: `id.domain == "host"`; the instance names the boot (or, when the boot id
/// cannot be read, this process).
#[derive(Clone, Debug)]
pub struct MonotonicClock {
    id: ClockId,
    info: ClockInfo,
}

impl MonotonicClock {
    /// The monotonic clock of this boot.
    pub fn new() -> Self {
        let mut notes = Vec::new();
        let instance = match std::fs::read_to_string("/proc/sys/kernel/random/boot_id") {
            Ok(text) if !text.trim().is_empty() => format!("boot-{}", text.trim()),
            _ => {
                notes.push(
                    "no boot id could be read: the instance is this process, so these timestamps \
                     compare only with others of the same process"
                        .to_owned(),
                );
                format!("process-{}", std::process::id())
            }
        };
        MonotonicClock {
            id: ClockId::new("host", instance),
            info: ClockInfo {
                source: imp::SOURCE.to_owned(),
                resolution: imp::resolution(),
                notes,
            },
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        MonotonicClock::new()
    }
}

impl HostClock for MonotonicClock {
    fn id(&self) -> ClockId {
        self.id.clone()
    }

    fn info(&self) -> ClockInfo {
        self.info.clone()
    }

    fn read(&self, _point: Point) -> Nanos {
        imp::now()
    }
}

#[cfg(unix)]
mod imp {
    use crate::units::Nanos;

    pub const SOURCE: &str = "CLOCK_MONOTONIC via clock_gettime";

    // `time_t` and `c_long` are 32-bit on some targets: the conversions are not useless there.
    #[allow(clippy::useless_conversion)]
    fn timespec_nanos(ts: &libc::timespec) -> Nanos {
        Nanos::new(i64::from(ts.tv_sec) * 1_000_000_000 + i64::from(ts.tv_nsec))
    }

    pub fn now() -> Nanos {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on the
        // supported platforms, so the call cannot fail.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        debug_assert_eq!(rc, 0);
        timespec_nanos(&ts)
    }

    pub fn resolution() -> Option<Nanos> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: as above; `clock_getres` only writes `ts`.
        let rc = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
        (rc == 0).then(|| timespec_nanos(&ts))
    }
}

#[cfg(not(unix))]
mod imp {
    use std::sync::OnceLock;
    use std::time::Instant;

    use crate::units::Nanos;

    pub const SOURCE: &str = "std::time::Instant from a process origin";

    pub fn now() -> Nanos {
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        let origin = *ORIGIN.get_or_init(Instant::now);
        Nanos::new(i64::try_from(origin.elapsed().as_nanos()).unwrap_or(i64::MAX))
    }

    pub fn resolution() -> Option<Nanos> {
        None
    }
}

/// The readings of one scripted run, as offsets from its submission start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunScript {
    /// Submission return.
    pub submit_return: Nanos,
    /// Wait start.
    pub wait_start: Nanos,
    /// Work start on the worker.
    pub work_start: Nanos,
    /// Work end on the worker.
    pub work_end: Nanos,
    /// Result in the caller's hands.
    pub result_ready: Nanos,
    /// Digest compared.
    pub digest_checked: Nanos,
}

impl RunScript {
    /// A run of the shape `submit 20 us, work 30 us … 50.03 ms`, in microseconds:
    /// `[submit_return, wait_start, work_start, work_end, result_ready, digest_checked]`.
    pub fn micros(offsets: [i64; 6]) -> Self {
        let us = |v: i64| Nanos::new(v * 1_000);
        RunScript {
            submit_return: us(offsets[0]),
            wait_start: us(offsets[1]),
            work_start: us(offsets[2]),
            work_end: us(offsets[3]),
            result_ready: us(offsets[4]),
            digest_checked: us(offsets[5]),
        }
    }
}

/// A scripted clock: run `r` starts at `origin + r × period` and reads its boundaries at the
/// offsets of its [`RunScript`] (the default, or an override for that run). Calibration trial
/// `k` lasts `calibration[k]` (the last entry repeats), and the reference computation lasts
/// `reference`.
#[derive(Clone, Debug)]
pub struct FakeClock {
    origin: Nanos,
    period: Nanos,
    default: RunScript,
    overrides: BTreeMap<usize, RunScript>,
    calibration: Vec<Nanos>,
    reference: Nanos,
}

impl FakeClock {
    /// Runs every `period`, from `origin`, all shaped like `default`.
    pub fn new(origin: Nanos, period: Nanos, default: RunScript) -> Self {
        FakeClock {
            origin,
            period,
            default,
            overrides: BTreeMap::new(),
            calibration: vec![Nanos::new(1_000_000)],
            reference: Nanos::new(1_000_000),
        }
    }

    /// Run `run` is shaped like `script` instead of the default.
    pub fn with_run(mut self, run: usize, script: RunScript) -> Self {
        self.overrides.insert(run, script);
        self
    }

    /// Calibration trials last these durations, in order (the last one repeats).
    pub fn with_calibration(mut self, trials: Vec<Nanos>) -> Self {
        assert!(!trials.is_empty(), "a calibration script needs a trial");
        self.calibration = trials;
        self
    }

    /// The reference digest computation lasts `duration`.
    pub fn with_reference(mut self, duration: Nanos) -> Self {
        self.reference = duration;
        self
    }

    fn run_start(&self, run: usize) -> Nanos {
        let k = i64::try_from(run).expect("few runs");
        Nanos::new(self.origin.as_i64() + k * self.period.as_i64())
    }
}

impl HostClock for FakeClock {
    fn id(&self) -> ClockId {
        ClockId::new("host", "fake-boot")
    }

    fn info(&self) -> ClockInfo {
        ClockInfo {
            source: "scripted (tests)".to_owned(),
            resolution: Some(Nanos::new(1)),
            notes: Vec::new(),
        }
    }

    fn read(&self, point: Point) -> Nanos {
        let before_runs = |offset: i64| Nanos::new(self.origin.as_i64() - offset);
        match point.boundary {
            // Calibration and the reference happen before the first run: placed before origin.
            Boundary::CalibrationStart => before_runs(1_000_000_000),
            Boundary::CalibrationEnd => {
                let d = self.calibration[point.run.min(self.calibration.len() - 1)];
                Nanos::new(before_runs(1_000_000_000).as_i64() + d.as_i64())
            }
            Boundary::ReferenceStart => before_runs(500_000_000),
            Boundary::ReferenceEnd => {
                Nanos::new(before_runs(500_000_000).as_i64() + self.reference.as_i64())
            }
            _ => {
                let s = self.overrides.get(&point.run).unwrap_or(&self.default);
                let offset = match point.boundary {
                    Boundary::SubmitStart => Nanos::ZERO,
                    Boundary::SubmitReturn => s.submit_return,
                    Boundary::WaitStart => s.wait_start,
                    Boundary::WorkStart => s.work_start,
                    Boundary::WorkEnd => s.work_end,
                    Boundary::ResultReady => s.result_ready,
                    Boundary::DigestChecked => s.digest_checked,
                    _ => unreachable!("handled above"),
                };
                Nanos::new(self.run_start(point.run).as_i64() + offset.as_i64())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_is_on_the_host_domain_and_does_not_go_back() {
        let c = MonotonicClock::new();
        assert_eq!(c.id().domain, "host");
        assert!(!c.id().instance.is_empty());
        let a = c.read(Point::new(0, Boundary::SubmitStart));
        let b = c.read(Point::new(0, Boundary::SubmitReturn));
        assert!(b >= a);
    }

    #[test]
    fn fake_clock_answers_by_point_not_by_call_order() {
        let c = FakeClock::new(
            Nanos::new(1_000_000),
            Nanos::new(100_000_000),
            RunScript::micros([20, 25, 30, 50_030, 50_060, 50_062]),
        );
        let end = c.read(Point::new(1, Boundary::WorkEnd));
        let start = c.read(Point::new(1, Boundary::SubmitStart));
        assert_eq!(start, Nanos::new(101_000_000));
        assert_eq!(end, Nanos::new(151_030_000));
    }
}
