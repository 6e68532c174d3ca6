//! `worksheet capture` and `worksheet lab streams`: arguments, the backend choice, the files
//! written and what is printed.
//!
//! Both commands exist in every build. Without the `cuda` feature (and without
//! `--simulate`) they exit with [`EXIT_NO_CUDA`] and "CUDA not available: this binary was
//! built without the `cuda` feature"; with it, a machine without libcuda or NVRTC gets the
//! same exit code and the missing library's name, before any driver call.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use comfy_table::{presets::ASCII_MARKDOWN, Table};

use crate::capture::backend::{Backend, BackendError};
use crate::capture::build::capture_case;
use crate::capture::record::{CaptureOptions, CaptureRecord};
use crate::capture::relations::{self, Relation};
use crate::capture::report::{calibration_text, demos_table, runs_csv, summary_table};
use crate::capture::sim::Sim;
use crate::case::load_case_str;
use crate::check::check_paths;
use crate::cmd::exit::{Failure, EXIT_FAILED, EXIT_INPUT, EXIT_OK};
use crate::engine::evaluate;
use crate::lab::streams::{self, StreamsOptions, StreamsRecord};
use crate::units::Nanos;

pub use crate::cmd::exit::EXIT_NO_CUDA;

/// Arguments of `worksheet capture`.
#[derive(Clone, Debug, Args)]
pub struct CaptureArgs {
    /// The capture file to write (case format).
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        default_value = "capture.json"
    )]
    pub out: PathBuf,
    /// The per-run CSV to write. Default: the capture file's name with `.runs.csv`.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Spin lengths of the kernel, comma-separated values with units.
    #[arg(long, value_delimiter = ',', default_value = "10us,100us,1ms")]
    pub spin: Vec<Nanos>,
    /// Warm-up runs per spin length and mode (recorded, not in statistics).
    #[arg(long, default_value_t = 20)]
    pub warmup: usize,
    /// Measured runs per spin length and mode.
    #[arg(long, default_value_t = 200)]
    pub runs: usize,
    /// Measured runs per group written with every event, phase and timer.
    #[arg(long, default_value_t = 3)]
    pub detail: usize,
    /// Pairs of consecutive events for the calibration of the event floor.
    #[arg(long, default_value_t = 200)]
    pub calibration_pairs: usize,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Overwrite output files that already exist.
    #[arg(long)]
    pub force: bool,
    /// Run against the built-in simulator (invented numbers, marked simulated) instead of a GPU.
    #[arg(long)]
    pub simulate: bool,
}

impl CaptureArgs {
    fn options(&self) -> CaptureOptions {
        let spins: Vec<String> = self
            .spin
            .iter()
            .map(|s| s.to_string().replace(' ', ""))
            .collect();
        CaptureOptions {
            spins: self.spin.clone(),
            warmup: self.warmup,
            runs: self.runs,
            detail: self.detail,
            calibration_pairs: self.calibration_pairs,
            command: format!(
                "worksheet capture --spin {} --warmup {} --runs {} --detail {} --calibration-pairs {} --device {}{}",
                spins.join(","),
                self.warmup,
                self.runs,
                self.detail,
                self.calibration_pairs,
                self.device,
                if self.simulate { " --simulate" } else { "" }
            ),
        }
    }
}

/// Arguments of `worksheet lab streams`.
#[derive(Clone, Debug, Args)]
pub struct StreamsArgs {
    /// The lab's capture file to write (case format).
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        default_value = "lab-streams.json"
    )]
    pub out: PathBuf,
    /// Buffer size in MiB (of `u32` words), copied in, computed and copied out.
    #[arg(long, default_value_t = 64)]
    pub mib: usize,
    /// Streams of the concurrent pipeline.
    #[arg(long, default_value_t = 4)]
    pub streams: usize,
    /// Chunks of the concurrent pipeline (dealt round-robin over the streams).
    #[arg(long, default_value_t = 16)]
    pub chunks: usize,
    /// LCG steps per word in the kernel (its arithmetic weight).
    #[arg(long, default_value_t = 1000)]
    pub iters: u32,
    /// Warm-up repetitions of each pipeline.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Measured repetitions of each pipeline.
    #[arg(long = "runs", alias = "reps", default_value_t = 10)]
    pub reps: usize,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Overwrite output files that already exist.
    #[arg(long)]
    pub force: bool,
    /// Run against the built-in simulator (invented numbers, marked simulated) instead of a GPU.
    #[arg(long)]
    pub simulate: bool,
}

impl StreamsArgs {
    fn options(&self) -> StreamsOptions {
        StreamsOptions {
            words: self.mib * (1 << 20) / 4,
            streams: self.streams,
            chunks: self.chunks,
            iters: self.iters,
            warmup: self.warmup,
            reps: self.reps,
            command: format!(
                "worksheet lab streams --mib {} --streams {} --chunks {} --iters {} --warmup {} --runs {} --device {}{}",
                self.mib, self.streams, self.chunks, self.iters, self.warmup, self.reps, self.device,
                if self.simulate { " --simulate" } else { "" }
            ),
        }
    }
}

fn device_failure(e: BackendError) -> Failure {
    Failure {
        message: match e {
            BackendError::Unavailable(_) => e.to_string(),
            other => format!("error: device: {other}"),
        },
        code: EXIT_NO_CUDA,
    }
}

/// The message and code when this build has no CUDA.
pub fn no_cuda_feature() -> Failure {
    Failure {
        message: "CUDA not available: this binary was built without the `cuda` feature \
                  (rebuild with `cargo build --release --features cuda`, or pass --simulate)"
            .into(),
        code: EXIT_NO_CUDA,
    }
}

fn write_file(path: &Path, text: &str, force: bool) -> Result<(), Failure> {
    Ok(crate::output::write_output(path, text.as_bytes(), force)?)
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into())
}

fn csv_path(args: &CaptureArgs) -> PathBuf {
    args.csv.clone().unwrap_or_else(|| {
        args.out
            .with_file_name(format!("{}.runs.csv", stem(&args.out)))
    })
}

/// Runs `worksheet capture`.
///
/// # Errors
/// [`EXIT_NO_CUDA`] without CUDA; [`EXIT_INPUT`] when a file cannot be written.
pub fn run_capture(args: &CaptureArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    // Refuse before any device time is spent.
    crate::output::refuse_existing(&args.out, args.force)?;
    crate::output::refuse_existing(&csv_path(args), args.force)?;
    if args.simulate {
        let mut sim = Sim::new();
        return capture_with(&mut sim, args, out);
    }
    #[cfg(feature = "cuda")]
    {
        let mut gpu = crate::cuda::CudaBackend::open(args.device).map_err(device_failure)?;
        capture_with(&mut gpu, args, out)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(no_cuda_feature())
    }
}

fn relations_table(list: &[Relation]) -> String {
    let mut t = Table::new();
    crate::table::fit(&mut t);
    t.load_preset(ASCII_MARKDOWN)
        .set_header(vec!["relation", "kind", "holds", "detail"]);
    for r in list {
        t.add_row(vec![
            r.id.to_owned(),
            if r.law { "law" } else { "observation" }.to_owned(),
            match (r.holds, r.law) {
                (true, _) => "yes",
                (false, true) => "NO",
                (false, false) => "no (not a failure)",
            }
            .to_owned(),
            r.detail.clone(),
        ]);
    }
    t.to_string()
}

/// Writes a case file, replays it with `check`, and returns (passed, failed) checks.
fn write_and_replay(path: &Path, json: &str, force: bool) -> Result<(usize, usize), Failure> {
    write_file(path, json, force)?;
    let report = check_paths(&[path.to_path_buf()])?;
    if let Some(e) = report.errors.first() {
        return Err(Failure {
            message: format!("error: the written capture does not load: {e}"),
            code: EXIT_FAILED,
        });
    }
    let checks: usize = report.cases.iter().map(|c| c.checks.len()).sum();
    let failed: usize = report
        .cases
        .iter()
        .map(|c| c.checks.iter().filter(|r| !r.passed).count())
        .sum();
    Ok((checks - failed, failed))
}

fn header(rec_device: &crate::capture::record::DeviceInfo, date: &str) -> String {
    format!(
        "{}{} ({}), compute capability {}, CUDA driver {} ({}), context {}, host {} boot {}, {}",
        if rec_device.simulated {
            "SIMULATED — "
        } else {
            ""
        },
        rec_device.name,
        rec_device.uuid,
        rec_device.compute_capability,
        rec_device.driver_cuda_version,
        rec_device.driver_version,
        rec_device.context,
        rec_device.hostname,
        rec_device.boot_id,
        date
    )
}

/// Runs the capture on `b` and writes and prints its results.
///
/// # Errors
/// As [`run_capture`].
pub fn capture_with<B: Backend>(
    b: &mut B,
    args: &CaptureArgs,
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    let rec = crate::capture::procedure::capture(b, &args.options()).map_err(device_failure)?;
    write_capture(&rec, args, out)
}

/// Writes a finished capture's files and prints its tables; exit 1 when its own replay or a
/// relation fails.
///
/// # Errors
/// As [`run_capture`].
pub fn write_capture(
    rec: &CaptureRecord,
    args: &CaptureArgs,
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    let name = stem(&args.out);
    let json = capture_case(rec, &name).to_json_pretty();
    let csv = runs_csv(rec).map_err(|e| Failure {
        message: format!("error: CSV: {e}"),
        code: EXIT_INPUT,
    })?;
    let csv_file = csv_path(args);
    write_file(&csv_file, &csv, args.force)?;
    let (passed, failed) = write_and_replay(&args.out, &json, args.force)?;
    let case = load_case_str(&json, &args.out.display().to_string())?;
    let report = evaluate(&case);
    let rel = relations::check(&case, &report);
    writeln!(out, "{}", header(&rec.device, &rec.date))?;
    writeln!(out, "{}", calibration_text(rec))?;
    writeln!(out)?;
    writeln!(out, "{}", summary_table(rec))?;
    writeln!(out)?;
    writeln!(out, "{}", demos_table(rec, &report))?;
    writeln!(out)?;
    writeln!(out, "{}", relations_table(&rel))?;
    writeln!(
        out,
        "wrote {} ({} checks replayed: {passed} passed, {failed} failed) and {}",
        args.out.display(),
        passed + failed,
        csv_file.display()
    )?;
    // Observations about the host are printed above, never the exit code.
    Ok(if failed == 0 && relations::laws_hold(&rel) {
        EXIT_OK
    } else {
        EXIT_FAILED
    })
}

/// Runs `worksheet lab streams`.
///
/// # Errors
/// [`EXIT_NO_CUDA`] without CUDA; [`EXIT_INPUT`] when a file cannot be written.
pub fn run_streams(args: &StreamsArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    // Refuse before any device time is spent.
    crate::output::refuse_existing(&args.out, args.force)?;
    if args.simulate {
        let mut sim = Sim::new();
        return streams_with(&mut sim, args, out);
    }
    #[cfg(feature = "cuda")]
    {
        let mut gpu = crate::cuda::CudaBackend::open(args.device).map_err(device_failure)?;
        streams_with(&mut gpu, args, out)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(no_cuda_feature())
    }
}

/// Runs the lab on `b`, writes its capture and prints its report; exit 1 when an output is
/// wrong or the capture's replay fails.
///
/// # Errors
/// As [`run_streams`].
pub fn streams_with<B: Backend>(
    b: &mut B,
    args: &StreamsArgs,
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    let rec = streams::run(b, &args.options()).map_err(device_failure)?;
    write_streams(&rec, &args.out, args.force, out)
}

/// Writes a finished lab's capture (replacing an existing file only with `force`) and prints
/// its report.
///
/// # Errors
/// As [`run_streams`].
pub fn write_streams(
    rec: &StreamsRecord,
    path: &Path,
    force: bool,
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    let json = streams::streams_case(rec, &stem(path)).to_json_pretty();
    let (passed, failed) = write_and_replay(path, &json, force)?;
    writeln!(out, "{}", header(&rec.device, &rec.date))?;
    writeln!(
        out,
        "{} MiB, {} streams, {} chunks, {} LCG steps per word, {} warm-up + {} measured repetitions",
        rec.options.words * 4 / (1 << 20),
        rec.options.streams,
        rec.options.chunks,
        rec.options.iters,
        rec.options.warmup,
        rec.options.reps
    )?;
    writeln!(out)?;
    write!(out, "{}", streams::streams_report(rec))?;
    writeln!(
        out,
        "wrote {} ({} checks replayed: {passed} passed, {failed} failed)",
        path.display(),
        passed + failed
    )?;
    let valid = rec.serial.verification.valid() && rec.concurrent.verification.valid();
    Ok(if failed == 0 && valid {
        EXIT_OK
    } else {
        EXIT_FAILED
    })
}
