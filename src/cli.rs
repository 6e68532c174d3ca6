//! The command line: argument types (clap) and the commands, which render to a writer.
//!
//! `src/main.rs` only calls [`main_with_args`]. Exit codes are part of the interface:
//! 0 success, 1 a failed check or contradiction, 2 a usage or input error, 3 CUDA not
//! available (`capture`, `lab streams`). A closed output pipe (`worksheet check | head`) is
//! not an error.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};

use crate::check::CheckReport;
use crate::cmd::capture::CaptureArgs;
use crate::engine::{evaluate, Outcome, Report};
pub use crate::exit::{Failure, EXIT_FAILED, EXIT_INPUT, EXIT_NO_CUDA, EXIT_OK};
use crate::progress;
use crate::verdict::Verdict;

const AFTER_HELP: &str = "\
Examples (replay and check every case; every answer of one case):
  worksheet check fixtures/
  worksheet eval fixtures/cases/three-boundaries.json

Exit codes: 0 all checks pass, 1 a check failed, 2 usage or input error,
3 CUDA not available (capture, lab streams).
Reason codes (unknown verdicts): no-wait, wait-misses-work, cross-domain,
cross-instance, timing-disabled, event-incomplete, cross-stream, empty-set,
not-causal, single-warmup, drift, overflow, incomparable, dependency-unrecorded,
inconsistent-relation.";

/// The cargo features this binary was built with, in a fixed order (`parquet`, `cuda`,
/// `proptest`); empty when none.
pub fn enabled_features() -> Vec<&'static str> {
    let mut features = Vec::new();
    if cfg!(feature = "parquet") {
        features.push("parquet");
    }
    if cfg!(feature = "cuda") {
        features.push("cuda");
    }
    if cfg!(feature = "proptest") {
        features.push("proptest");
    }
    features
}

/// What `--version` prints after the name: `0.1.0 (features: parquet, cuda)`, or
/// `(features: none)`, so a bug report says which build it came from.
static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let features = enabled_features();
    let list = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(", ")
    };
    format!("{} (features: {list})", env!("CARGO_PKG_VERSION"))
});

/// Honest GPU and async timing: exact per-clock interval algebra, and "unknown, with a
/// reason" wherever the evidence does not support a claim.
#[derive(Debug, Parser)]
#[command(name = "worksheet", version = VERSION.as_str(), about, after_help = AFTER_HELP, max_term_width = 80)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Output format of `check` and `eval`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table for people.
    Text,
    /// The complete report as JSON.
    Json,
    /// One row per comparison (check) or answer (eval).
    Csv,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay case files and compare every expected result with the engine's answer.
    #[command(
        after_help = "Examples:\n  worksheet check fixtures/\n  worksheet check fixtures/cases/three-boundaries.json --format json\n  \
worksheet import tests/data/ranks/rank0.json.gz -o r0.json --expect\n  \
worksheet check tests/data/ranks/rank0.json.gz --expect r0.json\n\n\
With --expect CASE, each input (a trace, a folder of traces or a case, imported\n\
in memory) is checked against the expectations CASE states, by question id; a\n\
question CASE expects that the input does not ask fails.\n\n\
Exit codes: 0 all cases pass, 1 an expected value disagrees, 2 a file is malformed or missing."
    )]
    Check {
        /// Case files or folders (searched recursively for *.json and *.json.gz); `-` reads
        /// standard input. Default: fixtures/. With --expect: traces, folders of traces or
        /// cases, each one input.
        paths: Vec<PathBuf>,
        /// Check every input against the expectations this case file states (written by
        /// `worksheet import TRACE -o CASE --expect`), question by question id.
        #[arg(long, value_name = "CASE")]
        expect: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print every result a case file implies, with no expectations needed.
    #[command(
        after_help = "Examples:\n  worksheet eval fixtures/cases/three-boundaries.json\n  \
worksheet eval tests/data/traces/nccl_data.json.gz\n\n\
Exit codes: 0 evaluated, 2 the file is malformed or missing."
    )]
    Eval {
        /// The case file (plain or gzipped; `-` reads standard input), or a trace (Kineto JSON
        /// / .json.gz, Nsight Systems .sqlite) or a folder of traces, imported in memory.
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Measure the three boundaries of a %globaltimer spin kernel on a CUDA GPU (feature
    /// `cuda`) and write them as a capture file, a per-run CSV and a summary table.
    #[command(
        after_help = "Examples:\n  worksheet capture -o capture.json\n  worksheet capture --simulate --runs 20\n\n\
Exit codes: 0 captured and every law holds (ordering, containment, quantum;\n\
host tendencies are printed as observations, never the exit code), 1 a replayed\n\
check or law fails, 2 a file cannot be written, 3 CUDA not available (built\n\
without the `cuda` feature, no libcuda or NVRTC, no device) or the device failed."
    )]
    Capture(CaptureArgs),
    /// Boundary-declaration forms: print a blank (`new`), fill it in (`fill`), check it
    /// (`check`; with `--capture FILE`, answer it from a capture or case).
    Form(crate::cmd::form::FormArgs),
    /// Teaching labs that really measure (`worksheet lab executor`, `worksheet lab streams`).
    Lab {
        /// Which lab.
        #[command(subcommand)]
        lab: crate::cmd::lab::LabCommand,
    },
    /// Draw the timeline of a case file or trace: SVG, PNG, or a terminal sketch.
    Render(crate::cmd::render::RenderArgs),
    /// Write one self-contained HTML page of a case, capture, lab case or trace: answers,
    /// per-stream and per-device tables, zoomable timeline panels per clock.
    Report(crate::cmd::report::ReportArgs),
    /// Turn a PyTorch profiler (Kineto) trace (plain or .json.gz) or an Nsight Systems SQLite
    /// export into a case, and print its interval algebra per stream and device.
    Import(crate::cmd::import::ImportArgs),
    /// Write a trace's or several ranks' phases, collectives, clock relations and summary
    /// numbers as Parquet tables for an existing engine, or as a Perfetto (Chrome trace) file.
    Export(crate::cmd::export::ExportArgs),
    /// Compare two runs (captures, lab reports, cases, imported traces): same, faster,
    /// slower or ambiguous per measurement, with the change and the noise.
    #[command(after_help = crate::cmd::compare::COMPARE_HELP)]
    Compare(crate::cmd::compare::CompareArgs),
    /// Audit a trace: findings with stable codes (docs/findings.md), a per-step table and an
    /// exposed-time breakdown that adds up.
    Audit(crate::cmd::audit::AuditArgs),
    /// Lessons to hand out: a measurement, a handout, answers checked against it.
    Lesson(crate::cmd::lesson::LessonArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(after_help = "Examples (bash: the line for ~/.bashrc):\n  \
source <(worksheet completions bash)\n  \
worksheet completions zsh > ~/.zfunc/_worksheet\n  \
worksheet completions fish > ~/.config/fish/completions/worksheet.fish")]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) of worksheet, or of one command (`worksheet-import`).
    #[command(after_help = "Examples:\n  \
worksheet man > ~/.local/share/man/man1/worksheet.1\n  \
worksheet man import | man -l -")]
    Man {
        /// The command whose page to print (default: the page of worksheet itself).
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
}

/// Parses `args` and runs the command, writing to stdout and stderr; returns the exit code.
pub fn main_with_args<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_INPUT } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result =
        run(&cli, &mut out).and_then(|code| out.flush().map(|_| code).map_err(Failure::from));
    crate::input::release_stdin();
    match result {
        Ok(code) => code,
        Err(failure) => {
            if !failure.message.is_empty() {
                // An error may quote the input (a name, a value, a file name).
                let message = crate::escape::printable(&failure.message);
                let _ = writeln!(io::stderr(), "{message}");
            }
            failure.code
        }
    }
}

/// Runs a parsed command, writing its normal output to `out`.
///
/// # Errors
/// A [`Failure`] with the message and exit code for input errors.
pub fn run(cli: &Cli, out: &mut dyn Write) -> Result<u8, Failure> {
    match &cli.command {
        Command::Check {
            paths,
            format,
            expect: Some(expect),
        } => {
            if paths.is_empty() {
                return Err(Failure::input(
                    "error: --expect checks the inputs given: name a trace, a folder or a case",
                ));
            }
            let checks = crate::check::expect::check_against(paths, expect)?;
            let mut cases = checks.into_iter().map(Ok);
            let totals = crate::check::write_checks(&mut cases, Vec::new(), (*format).into(), out)?;
            Ok(if totals.failed == 0 {
                EXIT_OK
            } else {
                EXIT_FAILED
            })
        }
        Command::Check {
            paths,
            format,
            expect: None,
        } => {
            let paths = if paths.is_empty() {
                // The default only makes sense inside a checkout; elsewhere say what is missing.
                if !std::path::Path::new("fixtures").is_dir() {
                    return Err(Failure::input(
                        "error: no case files given, and there is no `fixtures/` folder here \
                         (run `worksheet check FILE|FOLDER...`, or run it in the repository)",
                    ));
                }
                vec![PathBuf::from("fixtures")]
            } else {
                paths.clone()
            };
            let totals = crate::check::check_to(&paths, (*format).into(), out)?;
            if !totals.errors.is_empty() {
                let lines: Vec<String> = totals.errors.iter().map(|e| e.to_string()).collect();
                return Err(Failure {
                    message: lines.join("\n"),
                    code: EXIT_INPUT,
                });
            }
            Ok(if totals.failed == 0 {
                EXIT_OK
            } else {
                EXIT_FAILED
            })
        }
        Command::Eval { file, format } => {
            let (case, _) = crate::import::input::load_input(file)?;
            let report = evaluate(&case);
            write_eval(&report, *format, out).map_err(Failure::from)?;
            Ok(EXIT_OK)
        }
        Command::Capture(args) => crate::cmd::capture::run_capture(args, out),
        Command::Form(args) => crate::cmd::form::run(args, out),
        Command::Lab { lab } => crate::cmd::lab::run(lab, out),
        Command::Render(args) => crate::cmd::render::run(args, out),
        Command::Report(args) => {
            let _bar = progress::for_input(&[args.input.as_path()], args.quiet);
            crate::cmd::report::run(args, out)
        }
        Command::Import(args) => {
            let inputs: Vec<&Path> = std::iter::once(&args.file)
                .chain(&args.more)
                .map(PathBuf::as_path)
                .collect();
            let _bar = progress::for_input(&inputs, args.quiet);
            crate::cmd::import::run(args, out)
        }
        Command::Export(args) => {
            let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
            let _bar = progress::for_input(&inputs, args.quiet);
            crate::cmd::export::run(args, out)
        }
        Command::Compare(args) => crate::cmd::compare::run(args, out),
        Command::Audit(args) => {
            let _bar = progress::for_input(&[args.input.as_path()], args.quiet);
            match crate::cmd::audit::run(args, out) {
                Ok(outcome) if outcome.failed => Ok(EXIT_FAILED),
                Ok(_) => Ok(EXIT_OK),
                Err(crate::cmd::audit::AuditError::Input(e)) => Err(e.into()),
                Err(crate::cmd::audit::AuditError::Io(e)) => Err(e.into()),
            }
        }
        Command::Lesson(args) => crate::cmd::lesson::run(args, out)
            .map(crate::lesson::LessonOutcome::exit_code)
            .map_err(lesson_failure),
        Command::Completions { shell } => {
            clap_complete::generate(
                *shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "worksheet",
                out,
            );
            Ok(EXIT_OK)
        }
        Command::Man { command } => write_man(command.as_deref(), out),
    }
}

/// Writes the roff manual page of `worksheet`, or of its subcommand `command` (named
/// `worksheet-COMMAND`, as `clap_mangen::generate_to` names the pages it writes).
fn write_man(command: Option<&str>, out: &mut dyn Write) -> Result<u8, Failure> {
    let mut cli = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
    cli.build();
    let page = match command {
        None => cli,
        Some(name) => cli.find_subcommand(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
            Failure::input(format!(
                "error: `{}` is not a command; one of: {}",
                crate::escape::printable(name),
                names.join(", ")
            ))
        })?,
    };
    clap_mangen::Man::new(page).render(out)?;
    Ok(EXIT_OK)
}

/// A lesson command's error as a failure: its message and exit code (a closed pipe is exit 0).
fn lesson_failure(e: crate::lesson::LessonError) -> Failure {
    match e {
        crate::lesson::LessonError::Write(io) => Failure::from(io),
        other => Failure {
            code: other.exit_code(),
            message: other.to_string(),
        },
    }
}

use crate::table::{glue, new_table, word_cell};
use comfy_table::Cell;

impl From<Format> for crate::check::CheckFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Text => crate::check::CheckFormat::Text,
            Format::Json => crate::check::CheckFormat::Json,
            Format::Csv => crate::check::CheckFormat::Csv,
        }
    }
}

/// Renders a check report (`worksheet check` itself writes each case as it is checked,
/// through [`crate::check::check_to`], in the same format).
///
/// # Errors
/// Write errors of `out`.
pub fn write_check(report: &CheckReport, format: Format, out: &mut dyn Write) -> io::Result<()> {
    crate::check::write_report(report, format.into(), out)
}

/// Renders every answer of one case.
///
/// # Errors
/// Write errors of `out`.
pub fn write_eval(report: &Report, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Json => {
            let mut value = serde_json::to_value(report)?;
            value["format"] = "worksheet-eval".into();
            value["version"] = 1.into();
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "case", "question", "kind", "verdict", "value", "value_ns", "reason", "detail",
            ])?;
            for a in &report.answers {
                let (verdict, value, ns, reason, detail) = match a.outcome.verdict() {
                    Some(Verdict::Known { value, notes }) => (
                        "known",
                        value.to_string(),
                        value.as_i64().to_string(),
                        String::new(),
                        notes.join("; "),
                    ),
                    Some(Verdict::Bounded { lo, hi, notes }) => (
                        "bounded",
                        format!("[{lo}, {hi}]"),
                        format!("{}..{}", lo.as_i64(), hi.as_i64()),
                        String::new(),
                        notes.join("; "),
                    ),
                    Some(Verdict::Unknown { reason, detail }) => (
                        "unknown",
                        String::new(),
                        String::new(),
                        reason.to_string(),
                        detail.clone(),
                    ),
                    // The same verdict as JSON: known with the union as the value, or
                    // unknown when the set mixes clocks.
                    None => match &a.outcome {
                        Outcome::Intervals(set) => match (set.combined_unknown, set.single()) {
                            (None, Some(an)) => (
                                "known",
                                crate::engine::wide(an.union_ns),
                                an.union_ns.to_string(),
                                String::new(),
                                a.headline(),
                            ),
                            (reason, _) => (
                                "unknown",
                                String::new(),
                                String::new(),
                                reason.map(|r| r.to_string()).unwrap_or_default(),
                                a.headline(),
                            ),
                        },
                        _ => unreachable!("only interval answers have no duration verdict"),
                    },
                };
                w.write_record([
                    report.case.as_str(),
                    &a.id,
                    a.kind,
                    verdict,
                    &value,
                    &ns,
                    &reason,
                    &detail,
                ])?;
            }
            w.flush()
        }
        Format::Text => {
            let safe = |s: &str| crate::escape::printable(s).into_owned();
            writeln!(out, "case {}", safe(&report.case))?;
            let mut table = new_table(&["question", "kind", "answer", "why / notes"]);
            for a in &report.answers {
                let why = match &a.outcome {
                    Outcome::Duration(
                        Verdict::Known { notes, .. } | Verdict::Bounded { notes, .. },
                    )
                    | Outcome::Difference {
                        verdict: Verdict::Known { notes, .. } | Verdict::Bounded { notes, .. },
                        ..
                    } => notes.join("; "),
                    Outcome::Duration(Verdict::Unknown { detail, .. })
                    | Outcome::Difference {
                        verdict: Verdict::Unknown { detail, .. },
                        ..
                    } => detail.clone(),
                    Outcome::Intervals(set) => match set.combined_unknown {
                        Some(r) => format!(
                            "{}; per clock: {}",
                            r.explanation(),
                            set.per_clock
                                .iter()
                                .map(|g| format!(
                                    "{} union {}",
                                    g.clock_id,
                                    crate::engine::wide(g.analysis.union_ns)
                                ))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        None => String::new(),
                    },
                };
                table.add_row(vec![
                    Cell::new(safe(&a.id)),
                    Cell::new(a.kind),
                    word_cell(&safe(&a.headline())),
                    Cell::new(safe(&why)),
                ]);
            }
            // On a narrow terminal: `question (kind): answer — why`, the prose wrapped.
            let record = |c: &[String]| {
                let why = if c[3].is_empty() {
                    String::new()
                } else {
                    format!(" — {}", c[3].replace('\n', " "))
                };
                format!(
                    "{} ({}): {}{why}",
                    glue(&c[0]),
                    c[1],
                    crate::table::glue_items(&c[2])
                )
            };
            writeln!(out, "{}", crate::table::fitted(&table, &record))?;
            Ok(())
        }
    }
}
