//! `worksheet compare`: its arguments, the comparison written in the chosen format, and the
//! exit code `--fail-on` gives. The comparison itself is `crate::compare`'s.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cmd::exit::{Failure, EXIT_FAILED, EXIT_OK};

/// The examples and rules `worksheet compare --help` prints.
pub const COMPARE_HELP: &str = "\
Examples (two simulated captures, then their comparison):
  worksheet capture --simulate -o before.json
  worksheet capture --simulate --runs 40 -o after.json
  worksheet compare before.json after.json
  worksheet compare before.json after.json --threshold 2 --fail-on slower
  worksheet compare before.json after.json --format markdown

BASE and NEW may also be raw traces (Kineto, Nsight Systems) or folders of
them, imported in memory. Rows are sorted by impact, |total(NEW) - total(BASE)|:
the time a row gained or lost in all. A run's steps (step:NAME#N:host) are also
compared as one sample, `steps step:NAME#*:host`, the warm-up left out; the
one-step rows stay. Past 15 rows the text is a summary; --all prints them all.

Exit codes: 0 compared (whatever the verdicts), 1 a row matches --fail-on,
2 a file is malformed, missing or not a run.";

/// Arguments of `worksheet compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference run.
    pub base: PathBuf,
    /// The run compared with it.
    pub new: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormatArg::Text)]
    pub format: CompareFormatArg,
    /// Text: every row, names whole (by default a comparison of more than 15 rows prints
    /// the headline and the 15 rows of largest |Δ total|, one line each).
    #[arg(long)]
    pub all: bool,
    /// The smallest change that counts, in percent (default 5).
    #[arg(long, value_name = "PCT", default_value = "5")]
    pub threshold: String,
    /// Exit 1 when a row is slower; or slower, ambiguous or unknown; or anything but same.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOnArg>,
}

/// Output format of `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareFormatArg {
    /// A table for people.
    Text,
    /// The versioned JSON report.
    Json,
    /// A Markdown table.
    Markdown,
}

/// `--fail-on` of `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// A row is slower.
    Slower,
    /// A row is slower, ambiguous or unknown.
    Ambiguous,
    /// A row is anything but same.
    Any,
}

/// Runs `worksheet compare`: the two runs compared and written; exit 1 when a row matches
/// `--fail-on`.
///
/// # Errors
/// A [`Failure`] (exit 2) for a malformed, missing or non-run input, or a bad threshold.
pub fn run(args: &CompareArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    use crate::compare::{render::CompareFormat, FailOn, Options};
    let threshold_ppm = crate::compare::parse_threshold(&args.threshold)
        .map_err(|e| Failure::input(format!("error: --threshold: {e}")))?;
    let comparison =
        crate::compare::compare_files(&args.base, &args.new, Options { threshold_ppm })?;
    let format = match args.format {
        CompareFormatArg::Text => CompareFormat::Text,
        CompareFormatArg::Json => CompareFormat::Json,
        CompareFormatArg::Markdown => CompareFormat::Markdown,
    };
    crate::compare::render::write_with(&comparison, format, args.all, out)?;
    let fail_on = args.fail_on.map(|f| match f {
        FailOnArg::Slower => FailOn::Slower,
        FailOnArg::Ambiguous => FailOn::Ambiguous,
        FailOnArg::Any => FailOn::Any,
    });
    Ok(match fail_on {
        Some(f) if comparison.fails(f) => EXIT_FAILED,
        _ => EXIT_OK,
    })
}
