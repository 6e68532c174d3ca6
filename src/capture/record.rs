//! What a capture recorded: plain data, in integer nanoseconds, with each number's clock.
//!
//! The procedure ([`super::procedure`]) fills these types; the builder ([`super::build`])
//! turns them into a case file; the report ([`super::report`]) into CSV and tables. The
//! driver's `f32` milliseconds are converted exactly once, by [`ms_to_nanos`].

use std::fmt;

use serde::Serialize;

use crate::units::Nanos;

/// Converts an elapsed time the driver returned (`f32` milliseconds) to whole nanoseconds,
/// rounding to the nearest. This is the one place the `f32` edge is crossed.
///
/// An `f32` holds 24 significant bits: below about 8 ms the conversion is exact to the
/// nanosecond, and the driver's readings are multiples of its event step (32 ns on an H200).
///
/// ```
/// use worksheet::capture::ms_to_nanos;
/// assert_eq!(ms_to_nanos(0.001_312).as_i64(), 1_312);
/// assert_eq!(ms_to_nanos(1.000_032).as_i64(), 1_000_032);
/// ```
pub fn ms_to_nanos(ms: f32) -> Nanos {
    Nanos::new((f64::from(ms) * 1e6).round() as i64)
}

/// What the driver answered to one call, as the case and the report keep it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "answer", rename_all = "kebab-case")]
pub enum DriverAnswer {
    /// `CUDA_SUCCESS` with no value (a query of a completed event).
    Success,
    /// `CUDA_SUCCESS` with an elapsed time, converted by [`ms_to_nanos`].
    Elapsed {
        /// The value.
        value: Nanos,
    },
    /// An error, by the driver's name for it (`CUDA_ERROR_NOT_READY`).
    Error {
        /// The driver's name.
        name: String,
    },
}

impl DriverAnswer {
    /// The driver's error name for "not ready".
    pub const NOT_READY: &'static str = "CUDA_ERROR_NOT_READY";
    /// The driver's error name for an invalid handle (an event without timing).
    pub const INVALID_HANDLE: &'static str = "CUDA_ERROR_INVALID_HANDLE";

    /// The error name, when the answer is an error.
    pub fn error_name(&self) -> Option<&str> {
        match self {
            DriverAnswer::Error { name } => Some(name),
            _ => None,
        }
    }

    /// The elapsed value, when the answer carries one.
    pub fn elapsed(&self) -> Option<Nanos> {
        match self {
            DriverAnswer::Elapsed { value } => Some(*value),
            _ => None,
        }
    }
}

impl fmt::Display for DriverAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverAnswer::Success => f.write_str("CUDA_SUCCESS"),
            DriverAnswer::Elapsed { value } => write!(f, "CUDA_SUCCESS: {value}"),
            DriverAnswer::Error { name } => f.write_str(name),
        }
    }
}

/// The machine a capture ran on, and what fixes each clock's epoch.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DeviceInfo {
    /// Device name (`NVIDIA H200`), or `simulator`.
    pub name: String,
    /// GPU UUID (`GPU-…`).
    pub uuid: String,
    /// The context handle, as text.
    pub context: String,
    /// Compute capability, `major.minor`.
    pub compute_capability: String,
    /// The driver's CUDA version (`13.0`).
    pub driver_cuda_version: String,
    /// The kernel driver's version string, where known (`580.159.04`).
    pub driver_version: String,
    /// The host's boot id (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: String,
    /// The process id of the capture.
    pub pid: u32,
    /// The host's name.
    pub hostname: String,
    /// True when the numbers come from the built-in simulator, not from a GPU.
    pub simulated: bool,
}

impl DeviceInfo {
    /// The host clock's instance: a monotonic clock whose origin is fixed at the start of
    /// this process's capture, on this boot.
    pub fn host_instance(&self) -> String {
        format!(
            "boot {} / pid {} / monotonic clock from capture start",
            self.boot_id, self.pid
        )
    }

    /// The device event clock's instance: the GPU, the context, and the anchor event the
    /// offsets are read from.
    pub fn event_instance(&self) -> String {
        format!(
            "{} / context {} / event offsets from the capture's anchor event",
            self.uuid, self.context
        )
    }

    /// The `%globaltimer` clock's instance: the GPU's global nanosecond timer.
    pub fn globaltimer_instance(&self) -> String {
        format!("{} / %globaltimer", self.uuid)
    }
}

/// Whether the stream was idle or held behind a gate when a run's start event was recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The stream was synchronized (idle) before the run: the start event fires as soon as it
    /// is recorded, before the launch reaches the device, so launch latency is inside the
    /// device interval.
    Idle,
    /// The stream was held by a gate kernel that the host released after submitting the
    /// run: start event, kernel and end event were queued before the device reached them,
    /// so launch latency is outside the device interval (as nvbench does).
    Held,
}

impl Mode {
    /// Both modes, in report order.
    pub const ALL: [Mode; 2] = [Mode::Idle, Mode::Held];

    /// `idle` or `held`.
    pub fn code(self) -> &'static str {
        match self {
            Mode::Idle => "idle",
            Mode::Held => "held",
        }
    }

    /// A phrase for tables.
    pub fn describe(self) -> &'static str {
        match self {
            Mode::Idle => "stream idle at start",
            Mode::Held => "stream held (gate)",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// The host clock readings of one run, in program order.
///
/// ```text
/// idle:  t0 ─ record(start) launch record(end) ─ t1 ─ wait(end) ─ t3
///        └ submission ─────────────────────────┘
///        └ completion ──────────────────────────────────────────┘
/// held:  gate ─ t0 ─ record launch record ─ t1 ─ t2 release ─ wait(end) ─ t3
///               └ submission ────────────────┘  └ completion ─────────────┘
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HostReadings {
    /// Submission timer start (and, idle, completion timer start).
    pub t0: Nanos,
    /// Submission timer stop.
    pub t1: Nanos,
    /// Completion timer start: `t0` when idle, the reading before the gate's release when held.
    pub t2: Nanos,
    /// The declared wait (on the end event) returned; the completion timer stops here.
    pub t3: Nanos,
}

impl HostReadings {
    /// Host submission: `t1 − t0`.
    pub fn submission(&self) -> Nanos {
        Nanos::new(self.t1.as_i64() - self.t0.as_i64())
    }

    /// Host-observed completion: `t3 − t2`.
    pub fn completion(&self) -> Nanos {
        Nanos::new(self.t3.as_i64() - self.t2.as_i64())
    }
}

/// Where a detailed run's events sit on the device event clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct EventPositions {
    /// The event recorded before the gate (held mode only).
    pub held: Option<Nanos>,
    /// The start event.
    pub start: Nanos,
    /// The end event: `start` plus the pair's own elapsed reading.
    pub end: Nanos,
}

/// One run of the spin kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Run {
    /// Position in the group, warm-ups first.
    pub index: usize,
    /// A warm-up run (recorded, excluded from statistics).
    pub warmup: bool,
    /// Host clock readings.
    pub host: HostReadings,
    /// The device interval: the driver's elapsed time of (start, end), read after the end
    /// event completed.
    pub device: DriverAnswer,
    /// The kernel body, `[first, last]` `%globaltimer` readings inside the kernel.
    pub body: Option<(i64, i64)>,
    /// Event positions, for the runs written in full detail.
    pub detail: Option<EventPositions>,
    /// Why the run failed (the gate timed out, the driver refused), if it did.
    pub failure: Option<String>,
}

impl Run {
    /// The device interval's value, when the driver gave one.
    pub fn device_interval(&self) -> Option<Nanos> {
        self.device.elapsed()
    }

    /// The kernel body's length on `%globaltimer`.
    pub fn body_length(&self) -> Option<Nanos> {
        self.body.map(|(a, b)| Nanos::new(b - a))
    }
}

/// One boundary measured in every run: the three boundaries of a submission, and the
/// kernel body that calibrates them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// The host submission (host clock).
    Submission,
    /// The device interval (event pair).
    DeviceInterval,
    /// The host-observed completion (host clock).
    HostCompletion,
    /// The kernel body (`%globaltimer`).
    Body,
}

impl Boundary {
    /// Every boundary, in report order.
    pub const ALL: [Boundary; 4] = [
        Boundary::Submission,
        Boundary::DeviceInterval,
        Boundary::HostCompletion,
        Boundary::Body,
    ];

    /// Its id suffix: `submission`, `device-interval`, `host-completion` or `body`.
    pub fn suffix(self) -> &'static str {
        match self {
            Boundary::Submission => "submission",
            Boundary::DeviceInterval => "device-interval",
            Boundary::HostCompletion => "host-completion",
            Boundary::Body => "body",
        }
    }

    /// What it is, on which clock, in `mode`: held-mode host completion is timed from just
    /// before the release of the gate, not from the submission, so it gets its own label.
    pub fn label(self, mode: Mode) -> &'static str {
        match (self, mode) {
            (Boundary::Submission, _) => "host submission (host clock)",
            (Boundary::DeviceInterval, _) => "device interval (event pair)",
            (Boundary::HostCompletion, Mode::Held) => {
                "host completion from the release (host clock)"
            }
            (Boundary::HostCompletion, Mode::Idle) => "host-observed completion (host clock)",
            (Boundary::Body, _) => "kernel body (%globaltimer)",
        }
    }

    /// Its value in `run`, when the run has one.
    pub fn value(self, run: &Run) -> Option<Nanos> {
        match self {
            Boundary::Submission => Some(run.host.submission()),
            Boundary::DeviceInterval => run.device_interval(),
            Boundary::HostCompletion => Some(run.host.completion()),
            Boundary::Body => run.body_length(),
        }
    }
}

/// All runs of one spin length in one mode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Group {
    /// The requested spin length.
    pub spin: Nanos,
    /// Idle or held.
    pub mode: Mode,
    /// The runs in order.
    pub runs: Vec<Run>,
}

impl Group {
    /// The group's id prefix: `spin-10us-idle`.
    pub fn id(&self) -> String {
        format!("spin-{}-{}", compact(self.spin), self.mode.code())
    }
}

/// `10 us` → `10us`, for ids.
pub fn compact(value: Nanos) -> String {
    value.to_string().replace(' ', "")
}

/// The event clock's resolution, measured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Calibration {
    /// Elapsed readings of two events recorded back to back on an idle stream.
    pub consecutive: Vec<Nanos>,
    /// Positions of the first consecutive pair on the event clock.
    pub first_pair: Option<(Nanos, Nanos)>,
}

/// The greatest common divisor of the non-zero values, or `None` when all are zero.
///
/// Every elapsed reading is a multiple of the event clock's step; the GCD of many readings
/// is that step (or a multiple of it, with few readings).
pub fn common_step(values: impl IntoIterator<Item = i64>) -> Option<i64> {
    fn gcd(a: i64, b: i64) -> i64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    values
        .into_iter()
        .map(i64::abs)
        .filter(|v| *v != 0)
        .fold(None, |acc, v| Some(acc.map_or(v, |a| gcd(a, v))))
}

/// An event pair whose timing was refused: events created without timing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TimingDisabledDemo {
    /// The driver's answer to the elapsed-time call (expected: invalid handle).
    pub elapsed: DriverAnswer,
}

/// An end event read while still pending (held behind a gate).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EventIncompleteDemo {
    /// Position of the start event (recorded before the gate, so it completed).
    pub start: Nanos,
    /// Position of the end event, read after the gate was released and it completed.
    pub end: Nanos,
    /// The driver's answer to a query of the end event.
    pub query: DriverAnswer,
    /// The driver's answer to the elapsed-time call.
    pub elapsed: DriverAnswer,
    /// How long the elapsed-time call took on the host: it answers, it does not block.
    pub call: Nanos,
}

/// Two kernels on two streams, timed by events in each stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CrossStreamDemo {
    /// Whether stream B waits on an event of stream A after A's kernel.
    pub dependency: bool,
    /// Stream A: start event, and the event after A's kernel.
    pub a: (Nanos, Nanos),
    /// Stream B: the event before B's kernel, and the end event.
    pub b: (Nanos, Nanos),
    /// The driver's elapsed time from A's start to B's end: it answers even without a
    /// dependency; only the dependency makes the number mean "A's start to B's end of work".
    pub elapsed: DriverAnswer,
}

/// A short kernel on stream A and a long one on stream B, then a host wait.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WaitScopeDemo {
    /// `event` (a wait on A's end event) or `device` (a device-wide synchronize).
    pub wait: String,
    /// Stream A's events around its kernel.
    pub a: (Nanos, Nanos),
    /// Stream B's events around its kernel.
    pub b: (Nanos, Nanos),
    /// Host: timer start, wait return (= timer stop).
    pub host: (Nanos, Nanos),
    /// The driver's answer to a query of B's end event right after the wait returned.
    pub b_query_after_wait: DriverAnswer,
}

/// The cases the SPEC says are unknown, shown on the device (and their known controls).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Demos {
    /// Events without timing → `timing-disabled`.
    pub timing_disabled: TimingDisabledDemo,
    /// End event pending when read → `event-incomplete`.
    pub event_incomplete: EventIncompleteDemo,
    /// Two streams, no dependency → `cross-stream`.
    pub cross_stream: CrossStreamDemo,
    /// Two streams joined by a wait → known.
    pub cross_stream_joined: CrossStreamDemo,
    /// A wait on stream A's event used to claim B's work → `wait-misses-work`.
    pub wait_event: WaitScopeDemo,
    /// A device-wide synchronize → known.
    pub wait_device: WaitScopeDemo,
}

/// What a capture was asked to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CaptureOptions {
    /// Spin lengths.
    pub spins: Vec<Nanos>,
    /// Warm-up runs per spin length and mode.
    pub warmup: usize,
    /// Measured runs per spin length and mode.
    pub runs: usize,
    /// How many measured runs per group are written with full event detail.
    pub detail: usize,
    /// Consecutive-event pairs for the calibration.
    pub calibration_pairs: usize,
    /// The command line, for provenance.
    pub command: String,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            spins: vec![
                Nanos::new(10_000),
                Nanos::new(100_000),
                Nanos::new(1_000_000),
            ],
            warmup: 20,
            runs: 200,
            detail: 3,
            calibration_pairs: 200,
            command: "worksheet capture".to_owned(),
        }
    }
}

/// Everything one capture recorded.
#[derive(Clone, Debug, Serialize)]
pub struct CaptureRecord {
    /// The machine.
    pub device: DeviceInfo,
    /// When (UTC, RFC 3339).
    pub date: String,
    /// What was asked.
    pub options: CaptureOptions,
    /// The event clock's resolution.
    pub calibration: Calibration,
    /// One group per spin length and mode.
    pub groups: Vec<Group>,
    /// The unknowns shown on the device.
    pub demos: Demos,
}

/// Fewest distinct non-zero readings before a step (quantum) is stated. The GCD of a few
/// readings can be a multiple of the true tick (two readings of 64 and 128 ns say 64 when
/// the timer ticks in 32 ns); with this many distinct values a spurious doubling needs
/// every one of them to fall on the coarser grid.
pub const MIN_DISTINCT_FOR_STEP: usize = 10;

/// A step as the readings support it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepEvidence {
    /// The GCD of the readings, stated only with at least [`MIN_DISTINCT_FOR_STEP`] distinct
    /// non-zero values.
    pub step: Option<i64>,
    /// How many distinct non-zero readings there were.
    pub distinct: usize,
}

impl StepEvidence {
    /// The evidence of `values`.
    pub fn of(values: impl IntoIterator<Item = i64>) -> StepEvidence {
        let mut v: Vec<i64> = values
            .into_iter()
            .map(i64::abs)
            .filter(|x| *x != 0)
            .collect();
        v.sort_unstable();
        v.dedup();
        let distinct = v.len();
        StepEvidence {
            step: if distinct >= MIN_DISTINCT_FOR_STEP {
                common_step(v)
            } else {
                None
            },
            distinct,
        }
    }

    /// One phrase: `a multiple of 32 ns (41 distinct readings)` or why it is unknown.
    pub fn describe(&self, what: &str) -> String {
        match self.step {
            Some(s) => format!(
                "every {what} is a multiple of {s} ns ({} distinct readings)",
                self.distinct
            ),
            None => format!(
                "unknown: {} distinct non-zero {what}s, fewer than the {MIN_DISTINCT_FOR_STEP} \
                 needed to state a step",
                self.distinct
            ),
        }
    }
}

impl CaptureRecord {
    /// The event clock's step: the GCD of every elapsed reading of the capture, when enough
    /// distinct readings support it ([`StepEvidence`]).
    pub fn event_step(&self) -> Option<i64> {
        self.event_step_evidence().step
    }

    /// The evidence for [`CaptureRecord::event_step`].
    pub fn event_step_evidence(&self) -> StepEvidence {
        let runs = self
            .groups
            .iter()
            .flat_map(|g| g.runs.iter())
            .filter_map(|r| r.device_interval());
        StepEvidence::of(
            self.calibration
                .consecutive
                .iter()
                .copied()
                .chain(runs)
                .map(Nanos::as_i64),
        )
    }

    /// The `%globaltimer` step: the GCD of every body reading, when enough distinct readings
    /// support it.
    pub fn globaltimer_step(&self) -> Option<i64> {
        self.globaltimer_step_evidence().step
    }

    /// The evidence for [`CaptureRecord::globaltimer_step`].
    pub fn globaltimer_step_evidence(&self) -> StepEvidence {
        StepEvidence::of(
            self.groups
                .iter()
                .flat_map(|g| g.runs.iter())
                .filter_map(|r| r.body)
                .map(|(a, b)| b - a),
        )
    }
}

/// Today's date and time in UTC, RFC 3339, from the system clock (no time-zone data).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    utc_from_unix(secs)
}

/// RFC 3339 text of a Unix time in seconds (proleptic Gregorian, UTC).
///
/// ```
/// assert_eq!(worksheet::capture::utc_from_unix(0), "1970-01-01T00:00:00Z");
/// assert_eq!(worksheet::capture::utc_from_unix(1_764_460_800), "2025-11-30T00:00:00Z");
/// ```
pub fn utc_from_unix(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_needs_enough_distinct_readings() {
        // Two distinct readings of a 32 ns timer: their GCD says 64, so nothing is stated.
        let two = StepEvidence::of([64, 128, 64, 128, 128]);
        assert_eq!(
            two,
            StepEvidence {
                step: None,
                distinct: 2
            }
        );
        assert!(two
            .describe("elapsed reading")
            .starts_with("unknown: 2 distinct"));
        // Ten distinct multiples of 32 (one of them odd): the tick is stated.
        let ten = StepEvidence::of((1..=10).map(|k| 32 * (2 * k + 1)).chain([0, 0]));
        assert_eq!(
            ten,
            StepEvidence {
                step: Some(32),
                distinct: 10
            }
        );
        assert_eq!(
            ten.describe("elapsed reading"),
            "every elapsed reading is a multiple of 32 ns (10 distinct readings)"
        );
    }

    #[test]
    fn f32_milliseconds_round_to_the_event_step() {
        for ns in [0_i64, 32, 1_312, 10_016, 102_912, 1_002_944, 4_000_000] {
            let ms = ns as f32 / 1e6;
            assert_eq!(ms_to_nanos(ms).as_i64(), ns, "{ns} ns");
        }
    }

    #[test]
    fn common_step_is_the_gcd_of_nonzero_readings() {
        assert_eq!(common_step([1_312, 10_016, 0, 1_344]), Some(32));
        assert_eq!(common_step([0, 0]), None);
        assert_eq!(common_step([-64, 96]), Some(32));
    }

    #[test]
    fn host_readings_give_both_host_boundaries() {
        let h = HostReadings {
            t0: Nanos::new(100),
            t1: Nanos::new(5_300),
            t2: Nanos::new(100),
            t3: Nanos::new(21_400),
        };
        assert_eq!(h.submission(), Nanos::new(5_200));
        assert_eq!(h.completion(), Nanos::new(21_300));
    }

    #[test]
    fn dates_are_utc_rfc3339() {
        assert_eq!(utc_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_from_unix(1_798_761_599), "2026-12-31T23:59:59Z");
    }
}
