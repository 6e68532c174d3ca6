//! `worksheet lab`: the labs' subcommands (`executor`, and `streams`, whose arguments live with
//! `capture`'s), their arguments, the progress bar, the report printed and the exit code. The
//! labs themselves (what they measure and how it is analysed) are `crate::lab`'s.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};

use crate::cmd::exit::{Failure, EXIT_FAILED, EXIT_INPUT, EXIT_OK};
use crate::output::{refuse_existing, write_output};
use crate::render::{layout, text};
use crate::units::Nanos;

use crate::lab::clock::MonotonicClock;
use crate::lab::executor::{
    analyze, calibrate_for, run_lab, Analysis, LabConfig, LabRun, Machine, Step,
};
use crate::lab::export;
use crate::lab::work::HashWork;

/// The labs.
#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Submit a calibrated hash task to a thread pool; time submission, wait and completion.
    #[command(
        after_help = "Examples:\n  worksheet lab executor --runs 30 --target-ms 50 --export-csv runs.csv\n  \
worksheet lab executor --export-json report.json --export-case case.json\n  \
worksheet lab executor --passes 24 --export-json a.json\n\n\
Two runs with the same --passes do the same work: `worksheet compare` gives\n\
them verdicts.\n\n\
Exit codes: 0 every digest matched, 1 a run returned a wrong digest (kept and\n\
reported), 2 usage error or an export file exists (use --force)."
    )]
    Executor(ExecutorArgs),
    /// Copy in, compute, copy out on a CUDA GPU (feature `cuda`): serial on one stream vs
    /// chunked over K streams, output verified, every stream's intervals captured.
    #[command(
        after_help = "Examples:\n  worksheet lab streams --mib 64 --streams 4 --chunks 16 -o streams.json\n  \
worksheet lab streams --simulate\n\n\
Exit codes: 0 measured and verified, 1 an output is wrong or a replayed check\n\
fails, 2 a file cannot be written, 3 CUDA not available (built without the\n\
`cuda` feature, no libcuda or NVRTC, no device) or the device failed."
    )]
    Streams(super::capture::StreamsArgs),
}

/// Arguments of `worksheet lab executor`.
#[derive(Debug, Args)]
pub struct ExecutorArgs {
    /// Measured runs.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub runs: u32,
    /// Warm-up runs before them (recorded, marked, left out of the statistics; the
    /// steady-state check needs at least 2).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub warmup: u32,
    /// Wanted duration of one job's work, in milliseconds (calibrated on this machine).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=60_000))]
    pub target_ms: u32,
    /// Worker threads in the pool (default: the available parallelism).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Pin the work: this many hash passes per job, whatever this machine's speed (the
    /// calibration line of an earlier run names its count). Runs with the same passes do the
    /// same work, so `worksheet compare` gives them a verdict; --target-ms is then only
    /// the label of the prediction.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=(1u64 << 40)))]
    pub passes: Option<u64>,
    /// Write the raw log, one row per run, as CSV.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Write the full report as JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write the report as Markdown.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Write a case file that `worksheet check` replays and `worksheet render` draws.
    #[arg(long, value_name = "FILE")]
    pub export_case: Option<PathBuf>,
    /// Overwrite export files that exist.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

impl ExecutorArgs {
    /// The command line that reproduces this run's measurement (exports left out).
    pub fn command_line(&self, threads: usize) -> String {
        let work = match self.passes {
            Some(p) => format!("--passes {p}"),
            None => format!("--target-ms {}", self.target_ms),
        };
        format!(
            "worksheet lab executor --runs {} --warmup {} {work} --threads {threads}",
            self.runs, self.warmup
        )
    }
}

/// Runs a lab command.
///
/// # Errors
/// [`Failure`] with exit code 2 for an export that exists without `--force`, a thread
/// that cannot start or a job that lost its result.
pub fn run(command: &LabCommand, out: &mut dyn Write) -> Result<u8, Failure> {
    match command {
        LabCommand::Executor(args) => run_executor(args, out),
        LabCommand::Streams(args) => super::capture::run_streams(args, out),
    }
}

fn progress_bar(total: u64, quiet: bool) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if quiet || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let template = if colour {
        "{msg:12} {bar:40.cyan/blue} {pos}/{len} runs, {elapsed}"
    } else {
        "{msg:12} {bar:40} {pos}/{len} runs, {elapsed}"
    };
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

fn run_executor(args: &ExecutorArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    let exports = [
        &args.export_csv,
        &args.export_json,
        &args.export_markdown,
        &args.export_case,
    ];
    // Every export target is checked before the measurement; all problems at once.
    let refused: Vec<String> = exports
        .into_iter()
        .flatten()
        .filter_map(|path| refuse_existing(path, args.force).err())
        .map(|f| f.message)
        .collect();
    if !refused.is_empty() {
        return Err(Failure {
            message: refused.join("\n"),
            code: EXIT_INPUT,
        });
    }
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    let config = LabConfig {
        runs: args.runs as usize,
        warmup: args.warmup as usize,
        target: Nanos::new(i64::from(args.target_ms) * 1_000_000),
        threads,
        passes: args.passes,
    };
    let command = args.command_line(threads);
    let clock = Arc::new(MonotonicClock::new());
    let work = Arc::new(HashWork::default());

    let machine = Machine::current();
    let bar = progress_bar((config.runs + config.warmup) as u64, args.quiet);
    bar.set_message("calibrating");
    let calibration = calibrate_for(clock.as_ref(), work.as_ref(), &config);
    bar.set_message("reference");
    let lab = run_lab(clock, work, &config, calibration, &mut |step| match step {
        Step::ReferenceDone => bar.set_message("running"),
        Step::RunDone { done, .. } => bar.set_position(done as u64),
    })
    .map_err(|e| Failure {
        message: format!("error: {e}"),
        code: EXIT_INPUT,
    })?;
    bar.finish_and_clear();
    let lab = LabRun {
        machine: Some(machine.ended()),
        ..lab
    };

    let analysis = analyze(&lab);
    let case_name = "executor-lab";
    let report = report_text(&lab, &analysis, case_name, &command)?;
    out.write_all(report.as_bytes())?;

    // Each export is written on its own: one that fails does not stop the others.
    let mut written = Vec::new();
    let mut failed = Vec::new();
    let mut export =
        |what: &'static str, p: &Option<std::path::PathBuf>, bytes: &dyn Fn() -> Vec<u8>| {
            if let Some(p) = p {
                match write_output(p, &bytes(), args.force) {
                    Ok(()) => written.push((what, p.clone())),
                    Err(f) => failed.push(f.message),
                }
            }
        };
    export("raw log (CSV)", &args.export_csv, &|| export::csv(&lab));
    export("report (JSON)", &args.export_json, &|| {
        export::json(&lab, &analysis, &command).into_bytes()
    });
    export("report (Markdown)", &args.export_markdown, &|| {
        export::markdown(&lab, &analysis, &command).into_bytes()
    });
    export("case file", &args.export_case, &|| {
        export::case_file(&lab, case_name, &command)
            .to_json_pretty()
            .into_bytes()
    });
    if !written.is_empty() {
        writeln!(out)?;
        for (what, path) in &written {
            writeln!(out, "wrote {what}: {}", path.display())?;
        }
        if let Some((_, p)) = written.iter().find(|(w, _)| *w == "case file") {
            writeln!(
                out,
                "replay: worksheet check {0}\ndraw:   worksheet render {0} -o timeline.svg",
                p.display()
            )?;
        }
    }
    if !failed.is_empty() {
        return Err(Failure {
            message: failed.join("\n"),
            code: EXIT_INPUT,
        });
    }
    Ok(exit_code(&analysis))
}

/// The lab's stdout: the table, then a sketch of the median run drawn from the lab's own
/// case file (so the sketch is also a check that the case file is valid).
///
/// # Errors
/// A [`Failure`] if the generated case does not load (a bug, reported rather than hidden).
pub fn report_text(
    lab: &LabRun,
    analysis: &Analysis,
    case_name: &str,
    command: &str,
) -> Result<String, Failure> {
    let mut text = export::table(lab, analysis);
    let case_json = export::case_file(lab, case_name, command).to_json_pretty();
    let case =
        crate::case::load_case_str(&case_json, &format!("{case_name}.json")).map_err(|e| {
            Failure {
                message: format!("internal error: the lab's case file does not load: {e}"),
                code: EXIT_INPUT,
            }
        })?;
    if let Some(run) = analysis.median_run.map(|i| &lab.runs[i]) {
        let focus = format!("complete-{}", run.label);
        if let Ok(timeline) = layout::layout(
            &case,
            &layout::LayoutOptions {
                focus: Some(focus.clone()),
                ..Default::default()
            },
        ) {
            text.push_str(&format!(
                "\nrun {} (its caller total is the median), drawn from the case file:\n",
                run.label
            ));
            let sketch = text::render(&timeline, &text::TextOptions { width: 100 });
            // The sketch's own title repeats the case name; skip it.
            for line in sketch.lines().skip(2) {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    Ok(text)
}

/// The exit code of a lab run: 1 when any run failed (it is still kept and reported), else 0.
pub fn exit_code(analysis: &Analysis) -> u8 {
    if analysis.failed.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_with_a_wrong_digest_snapshot_and_exit_1() {
        let lab = crate::lab::export::tests::fake_lab();
        let analysis = analyze(&lab);
        let text = report_text(
            &lab,
            &analysis,
            "executor-lab",
            "worksheet lab executor (fake)",
        )
        .unwrap();
        insta::assert_snapshot!(text);
        assert_eq!(exit_code(&analysis), EXIT_FAILED);
    }
}
