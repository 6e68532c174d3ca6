//! Running a lesson's measurement: the fixture, the executor lab or the streams lab, behind
//! the [`Bench`] trait, so that tests run every lesson end to end with a scripted clock and
//! the simulator, and the command runs them with the host clock and (feature `cuda`) a GPU.
//!
//! The result is a [`Measured`]: the case file (the lesson's `extend` already applied) that
//! `check` grades against, the lab's raw files (CSV log, JSON and Markdown reports) and the
//! report to print. Everything the measurement produced is kept; nothing is graded here.

use std::sync::Arc;

use serde_json::Value;

use super::model::{Lesson, Measurement};
use crate::capture::sim::Sim;
use crate::case::load_case_str;
use crate::error::InputError;
use crate::lab::clock::{FakeClock, HostClock, MonotonicClock};
use crate::lab::executor::{analyze, calibrate_for, run_lab, LabConfig, LabRun, Machine};
use crate::lab::export;
use crate::lab::streams::{self, StreamsOptions, StreamsRecord};
use crate::lab::work::{HashWork, ScriptedWork, Work};
use crate::units::Nanos;

/// The built-in fixture cases a lesson may name, embedded in the binary.
pub const FIXTURES: [(&str, &str); 8] = [
    (
        "three-boundaries",
        include_str!("../../fixtures/cases/three-boundaries.json"),
    ),
    (
        "overlapping-phases",
        include_str!("../../fixtures/cases/overlapping-phases.json"),
    ),
    (
        "phases-with-gap",
        include_str!("../../fixtures/cases/phases-with-gap.json"),
    ),
    (
        "two-host-boots",
        include_str!("../../fixtures/cases/two-host-boots.json"),
    ),
    (
        "cross-clock-subtraction",
        include_str!("../../fixtures/cases/cross-clock-subtraction.json"),
    ),
    (
        "submission-only",
        include_str!("../../fixtures/cases/submission-only.json"),
    ),
    (
        "device-sync-vs-event-wait",
        include_str!("../../fixtures/cases/device-sync-vs-event-wait.json"),
    ),
    (
        "wait-on-other-event",
        include_str!("../../fixtures/cases/wait-on-other-event.json"),
    ),
];

/// Why a measurement could not run.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The lesson needs CUDA and this build or machine has none (pass `--simulate`).
    #[error("{0}")]
    NoCuda(String),
    /// The lab itself failed (a thread that would not start, a device error).
    #[error("the measurement failed: {0}")]
    Failed(String),
    /// The lesson names something that does not exist or makes an invalid case.
    #[error("{0}")]
    Lesson(InputError),
}

/// Where the labs run: the real host clock and GPU, or scripted stand-ins.
pub trait Bench {
    /// Runs the executor lab with `config`.
    ///
    /// # Errors
    /// [`MeasureError::Failed`] when the pool cannot run.
    fn executor(&mut self, config: &LabConfig) -> Result<LabRun, MeasureError>;
    /// Runs the streams lab with `options`; the flag says whether it was simulated.
    ///
    /// # Errors
    /// [`MeasureError::NoCuda`] without a GPU (and no simulation), else a device failure.
    fn streams(&mut self, options: &StreamsOptions) -> Result<(StreamsRecord, bool), MeasureError>;
}

/// This machine: `CLOCK_MONOTONIC` and the hash work; for streams, the GPU (feature `cuda`,
/// device 0) or, with `simulate`, the simulator.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostBench {
    /// Run the streams lab on the simulator.
    pub simulate: bool,
}

fn run_executor<C: HostClock + 'static, W: Work + 'static>(
    clock: Arc<C>,
    work: Arc<W>,
    config: &LabConfig,
) -> Result<LabRun, MeasureError> {
    let calibration = calibrate_for(clock.as_ref(), work.as_ref(), config);
    run_lab(clock, work, config, calibration, &mut |_| {})
        .map_err(|e| MeasureError::Failed(e.to_string()))
}

fn simulate_streams(options: &StreamsOptions) -> Result<(StreamsRecord, bool), MeasureError> {
    let rec =
        streams::run(&mut Sim::new(), options).map_err(|e| MeasureError::Failed(e.to_string()))?;
    Ok((rec, true))
}

impl Bench for HostBench {
    fn executor(&mut self, config: &LabConfig) -> Result<LabRun, MeasureError> {
        let machine = Machine::current();
        let lab = run_executor(
            Arc::new(MonotonicClock::new()),
            Arc::new(HashWork::default()),
            config,
        )?;
        Ok(LabRun {
            machine: Some(machine.ended()),
            ..lab
        })
    }

    fn streams(&mut self, options: &StreamsOptions) -> Result<(StreamsRecord, bool), MeasureError> {
        if self.simulate {
            return simulate_streams(options);
        }
        #[cfg(feature = "cuda")]
        {
            use crate::capture::backend::BackendError;
            let mut gpu = crate::cuda::CudaBackend::open(0).map_err(|e| match e {
                BackendError::Unavailable(_) => {
                    MeasureError::NoCuda(format!("{e}; pass --simulate to run the simulator"))
                }
                other => MeasureError::Failed(other.to_string()),
            })?;
            let rec =
                streams::run(&mut gpu, options).map_err(|e| MeasureError::Failed(e.to_string()))?;
            Ok((rec, false))
        }
        #[cfg(not(feature = "cuda"))]
        {
            Err(MeasureError::NoCuda(
                "CUDA not available: this binary was built without the `cuda` feature; \
                 pass --simulate to run the lesson on the simulator (labelled simulated)"
                    .into(),
            ))
        }
    }
}

/// Scripted stand-ins for tests and demonstrations: a [`FakeClock`] and [`ScriptedWork`]
/// for the executor lab, the simulator for streams.
#[derive(Clone, Debug)]
pub struct ScriptedBench {
    /// The clock every executor reading comes from.
    pub clock: FakeClock,
    /// The work (and which runs return a wrong digest).
    pub work: ScriptedWork,
}

impl Bench for ScriptedBench {
    fn executor(&mut self, config: &LabConfig) -> Result<LabRun, MeasureError> {
        run_executor(
            Arc::new(self.clock.clone()),
            Arc::new(self.work.clone()),
            config,
        )
    }

    fn streams(&mut self, options: &StreamsOptions) -> Result<(StreamsRecord, bool), MeasureError> {
        simulate_streams(options)
    }
}

/// What a measurement produced.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The case file, the lesson's `extend` applied; what `check` grades against.
    pub case_json: String,
    /// The case with the lesson's added clocks, marks, events and phases but not its added
    /// questions: what the handout draws (an added question must not change the picture of
    /// the measured case, for example turn a submission timer into a completion timer).
    pub picture_json: String,
    /// Further files for the lesson folder: `(name, bytes)`.
    pub files: Vec<(&'static str, Vec<u8>)>,
    /// The lab's report for people (empty for a fixture).
    pub report: String,
    /// The command line that reproduces the measurement (empty for a fixture).
    pub command: String,
    /// Whether the numbers come from the simulator.
    pub simulated: bool,
    /// Why the run may not have measured what the lesson asked for (`[code] message`), and
    /// the pass count that pins its work; empty when there is no caution.
    pub cautions: Vec<String>,
    /// The passes per job of an executor run (to pin the work on a rerun).
    pub passes: Option<u64>,
}

/// Runs `lesson`'s measurement on `bench`.
///
/// # Errors
/// [`MeasureError`]: no CUDA, a failed lab, or a lesson that names a missing fixture or
/// whose `extend` makes an invalid case.
pub fn measure(lesson: &Lesson, bench: &mut dyn Bench) -> Result<Measured, MeasureError> {
    let mut measured = match &lesson.raw.measurement {
        Measurement::Fixture { case } => fixture(case)?,
        Measurement::LabExecutor {
            runs,
            warmup,
            target_ms,
            threads,
            passes,
        } => {
            let threads = threads.map_or_else(
                || std::thread::available_parallelism().map_or(1, |n| n.get()),
                |t| t.max(1) as usize,
            );
            let config = LabConfig {
                runs: (*runs).max(1) as usize,
                warmup: *warmup as usize,
                target: Nanos::new(i64::from((*target_ms).max(1)) * 1_000_000),
                threads,
                passes: passes.map(|p| p.max(1)),
            };
            let work = match config.passes {
                Some(p) => format!("--passes {p}"),
                None => format!("--target-ms {target_ms}"),
            };
            let command = format!(
                "worksheet lab executor --runs {} --warmup {} {work} --threads {threads}",
                config.runs, config.warmup
            );
            executor(lesson.id(), &config, command, bench)?
        }
        Measurement::LabStreams {
            mib,
            streams,
            chunks,
            iters,
            warmup,
            reps,
        } => {
            let options = StreamsOptions {
                words: (*mib).max(1) as usize * (1 << 20) / 4,
                streams: (*streams).max(1) as usize,
                chunks: (*chunks).max(1) as usize,
                iters: *iters,
                warmup: *warmup as usize,
                reps: (*reps).max(1) as usize,
                command: format!(
                    "worksheet lab streams --mib {mib} --streams {streams} --chunks {chunks} --iters {iters} --warmup {warmup} --reps {reps}"
                ),
            };
            streams_lab(lesson.id(), &options, bench)?
        }
    };
    measured.picture_json =
        extend_case(&measured.case_json, lesson, false).map_err(MeasureError::Lesson)?;
    measured.case_json =
        extend_case(&measured.case_json, lesson, true).map_err(MeasureError::Lesson)?;
    Ok(measured)
}

fn fixture(case: &str) -> Result<Measured, MeasureError> {
    let text = FIXTURES
        .iter()
        .find(|(n, _)| *n == case)
        .map(|(_, text)| *text)
        .ok_or_else(|| {
            MeasureError::Lesson(InputError::new(
                "measurement.case",
                "unknown-fixture",
                format!(
                    "no built-in fixture `{case}` (there are: {})",
                    FIXTURES.map(|(n, _)| n).join(", ")
                ),
            ))
        })?;
    Ok(Measured {
        case_json: text.to_owned(),
        picture_json: String::new(),
        files: Vec::new(),
        report: String::new(),
        command: String::new(),
        simulated: false,
        cautions: Vec::new(),
        passes: None,
    })
}

fn executor(
    name: &str,
    config: &LabConfig,
    command: String,
    bench: &mut dyn Bench,
) -> Result<Measured, MeasureError> {
    let lab = bench.executor(config)?;
    let analysis = analyze(&lab);
    Ok(Measured {
        case_json: export::case_file(&lab, name, &command).to_json_pretty(),
        picture_json: String::new(),
        files: vec![
            ("runs.csv", export::csv(&lab)),
            (
                "lab.json",
                export::json(&lab, &analysis, &command).into_bytes(),
            ),
            (
                "report.md",
                export::markdown(&lab, &analysis, &command).into_bytes(),
            ),
        ],
        report: export::table(&lab, &analysis),
        command,
        simulated: false,
        cautions: analysis
            .cautions
            .iter()
            .map(|c| format!("[{}] {}", c.code, c.message))
            .collect(),
        passes: Some(lab.calibration.passes),
    })
}

fn streams_lab(
    name: &str,
    options: &StreamsOptions,
    bench: &mut dyn Bench,
) -> Result<Measured, MeasureError> {
    let (mut rec, simulated) = bench.streams(options)?;
    if simulated {
        rec.options.command = format!("{} --simulate", options.command);
    }
    let report = streams::streams_report(&rec);
    Ok(Measured {
        case_json: streams::streams_case(&rec, name).to_json_pretty(),
        picture_json: String::new(),
        files: vec![("report.txt", report.clone().into_bytes())],
        report,
        command: rec.options.command.clone(),
        simulated,
        cautions: Vec::new(),
        passes: None,
    })
}

/// The case text with the lesson's `extend` arrays appended (its `questions` only with
/// `questions`), checked to load.
///
/// # Errors
/// An [`InputError`] at `extend` when the result is not a valid case.
pub fn extend_case(
    case_json: &str,
    lesson: &Lesson,
    questions: bool,
) -> Result<String, InputError> {
    let Some(extend) = &lesson.raw.extend else {
        return Ok(case_json.to_owned());
    };
    let mut case: Value = serde_json::from_str(case_json)
        .map_err(|e| InputError::new("$", "bad-syntax", e.to_string()))?;
    for (key, items) in extend {
        let Value::Array(items) = items else { continue };
        if key == "questions" && !questions {
            continue;
        }
        let slot = case
            .as_object_mut()
            .ok_or_else(|| InputError::new("$", "wrong-type", "the case is not an object"))?
            .entry(key.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = slot {
            list.extend(items.iter().cloned());
        }
    }
    let mut text = serde_json::to_string_pretty(&case)
        .map_err(|e| InputError::new("$", "bad-syntax", e.to_string()))?;
    text.push('\n');
    load_case_str(&text, "case.json").map_err(|e| {
        InputError::new(
            "extend",
            e.code,
            format!("the extended case is invalid at {}: {}", e.path, e.message),
        )
    })?;
    Ok(text)
}
