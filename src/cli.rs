//! The command line: argument types (clap) and the commands, which render to a writer.
//!
//! `src/main.rs` only calls [`main_with_args`]. Exit codes are part of the interface:
//! 0 success, 1 a failed check or contradiction, 2 a usage or input error, 3 CUDA not
//! available (`capture`, `lab streams`). A closed output pipe (`worksheet check | head`) is
//! not an error.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use crate::cmd::capture::CaptureArgs;
pub use crate::cmd::check::Format;
pub use crate::cmd::exit::{Failure, EXIT_FAILED, EXIT_INPUT, EXIT_NO_CUDA, EXIT_OK};
use crate::progress;

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

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay case files and compare every expected result with the engine's answer.
    Check(crate::cmd::check::CheckArgs),
    /// Print every result a case file implies, with no expectations needed.
    Eval(crate::cmd::eval::EvalArgs),
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
    /// Write a trace's or several ranks' phases, collectives, clock relations, summary
    /// numbers, kernel and op tables as Parquet or CSV tables for an existing engine, or as a
    /// Perfetto (Chrome trace) file.
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
    crate::memory::map_large_blocks();
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
        Command::Check(args) => crate::cmd::check::run(args, out),
        Command::Eval(args) => crate::cmd::eval::run(args, out),
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
            .map(crate::cmd::lesson::outcome_code)
            .map_err(crate::cmd::lesson::failure),
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
