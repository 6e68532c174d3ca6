//! `worksheet check`: its arguments, the output format it shares with `eval`, and its exit
//! code (0 every expectation holds, 1 one disagrees, 2 an input is malformed or missing).
//! Replaying and comparing are `crate::check`'s.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::check::{CheckFormat, CheckReport};
use crate::cmd::exit::{Failure, EXIT_FAILED, EXIT_INPUT, EXIT_OK};

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

impl From<Format> for CheckFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Text => CheckFormat::Text,
            Format::Json => CheckFormat::Json,
            Format::Csv => CheckFormat::Csv,
        }
    }
}

/// Arguments of `worksheet check`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  worksheet check fixtures/\n  worksheet check fixtures/cases/three-boundaries.json --format json\n  \
worksheet import tests/data/ranks/rank0.json.gz -o r0.json --expect\n  \
worksheet check tests/data/ranks/rank0.json.gz --expect r0.json\n\n\
With --expect CASE, each input (a trace, a folder of traces or a case, imported\n\
in memory) is checked against the expectations CASE states, by question id; a\n\
question CASE expects that the input does not ask fails.\n\n\
Exit codes: 0 all cases pass, 1 an expected value disagrees, 2 a file is malformed or missing."
)]
pub struct CheckArgs {
    /// Case files or folders (searched recursively for *.json and *.json.gz); `-` reads
    /// standard input. Default: fixtures/. With --expect: traces, folders of traces or
    /// cases, each one input.
    pub paths: Vec<PathBuf>,
    /// Check every input against the expectations this case file states (written by
    /// `worksheet import TRACE -o CASE --expect`), question by question id.
    #[arg(long, value_name = "CASE")]
    pub expect: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Checks the cases `args.paths` (or the inputs against `--expect CASE`), writing the
/// results to `out` as they come.
///
/// # Errors
/// [`Failure`] (exit 2) for a file that is malformed or missing, or no input given where
/// there is no `fixtures/` folder.
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    match &args.expect {
        Some(expect) => run_against(&args.paths, expect, args.format, out),
        None => run_cases(&args.paths, args.format, out),
    }
}

/// `check INPUT... --expect CASE`.
fn run_against(
    paths: &[PathBuf],
    expect: &Path,
    format: Format,
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    if paths.is_empty() {
        return Err(Failure::input(
            "error: --expect checks the inputs given: name a trace, a folder or a case",
        ));
    }
    let checks = crate::check::expect::check_against(paths, expect)?;
    let mut cases = checks.into_iter().map(Ok);
    let totals = crate::check::write_checks(&mut cases, Vec::new(), format.into(), out)?;
    Ok(failed_code(totals.failed))
}

/// `check [CASE|FOLDER...]`: every case states its own expectations.
fn run_cases(paths: &[PathBuf], format: Format, out: &mut dyn Write) -> Result<u8, Failure> {
    let paths = if paths.is_empty() {
        // The default only makes sense inside a checkout; elsewhere say what is missing.
        if !Path::new("fixtures").is_dir() {
            return Err(Failure::input(
                "error: no case files given, and there is no `fixtures/` folder here \
                 (run `worksheet check FILE|FOLDER...`, or run it in the repository)",
            ));
        }
        vec![PathBuf::from("fixtures")]
    } else {
        paths.to_vec()
    };
    let totals = crate::check::check_to(&paths, format.into(), out)?;
    if !totals.errors.is_empty() {
        let lines: Vec<String> = totals.errors.iter().map(|e| e.to_string()).collect();
        return Err(Failure {
            message: lines.join("\n"),
            code: EXIT_INPUT,
        });
    }
    Ok(failed_code(totals.failed))
}

/// 0 when no check failed, else 1.
fn failed_code(failed: usize) -> u8 {
    if failed == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
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
