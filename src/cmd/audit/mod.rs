//! `worksheet audit INPUT [--format text|json|markdown] [--fail-on info|warning|error]
//! [--explain CODE]`.
//!
//! Exit codes (mapped by the CLI): 0 no finding at or above `--fail-on` (by default nothing
//! fails), 1 at least one, 2 the input is malformed or unreadable.

pub mod folder;

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::audit::{audit, render, AuditOptions, Severity};
use crate::cmd::import::Compat;
use crate::error::InputError;
use crate::import::{read_audit_trace, ImportOptions};
use crate::peer::hta::{compat_of as compat_hta_of, HtaTap};
use crate::trace::open::read_audit_trace_tapped;

/// Output format of `worksheet audit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AuditFormat {
    /// Findings, step table and breakdown for people.
    Text,
    /// `{"format": "worksheet-audit", "version": 1, ...}`.
    Json,
    /// The same as text, as Markdown.
    Markdown,
}

/// The lowest severity that makes `audit` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Any finding.
    Info,
    /// Warnings and errors.
    Warning,
    /// Errors only.
    Error,
}

impl From<FailOn> for Severity {
    fn from(f: FailOn) -> Severity {
        match f {
            FailOn::Info => Severity::Info,
            FailOn::Warning => Severity::Warning,
            FailOn::Error => Severity::Error,
        }
    }
}

/// Arguments of `worksheet audit`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples (the last: exit 1 on any warning or error):\n  worksheet audit tests/data/traces/nccl_data.json.gz\n  worksheet audit tests/data/nsys/fuser_report1.sqlite --format json\n  worksheet audit tests/data/traces/nccl_data.json.gz --explain sync-in-loop\n  worksheet audit tests/data/ranks --clocks-within 0\n  worksheet audit tests/data/traces/nccl_data.json.gz --fail-on warning\n\n\
--explain CODE prints the intervals behind a finding's figures. A folder of ranks:\neach rank audited, then the straggler finding across ranks.\nReads a PyTorch profiler (Kineto) trace (.json / .json.gz), an Nsight Systems SQLite export, or a case file. \
Every finding code is explained, with a drawn timeline and a fix, in docs/findings.md. \
--compat hta adds HTA 0.5.0's temporal breakdown reproduced from its defaults (docs/hta-compat.md).\n\
Exit codes: 0 no finding at or above --fail-on (by default nothing fails), 1 at least one, 2 the input is malformed."
)]
pub struct AuditArgs {
    /// The trace: Kineto `*.json` / `*.json.gz`, an Nsight Systems `*.sqlite` export, or a case
    /// file; or a folder of ranks' traces (each rank audited, then the `straggler` finding
    /// across ranks).
    pub input: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = AuditFormat::Text)]
    pub format: AuditFormat,
    /// Exit 1 when a finding of this severity or above exists.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,
    /// Round Kineto timestamps finer than 1 ns to the nearest ns instead of refusing them.
    #[arg(long)]
    pub round_sub_ns: bool,
    /// Also print a peer's numbers reproduced from its defaults, with the delta each of its
    /// assumptions causes (`hta`: HTA 0.5.0's temporal breakdown, as `import --compat hta`;
    /// Kineto traces only).
    #[arg(long, value_enum, value_name = "PEER")]
    pub compat: Option<Compat>,
    /// Print the intervals behind a finding's figures (text output), so each can be checked
    /// by hand: the sets, their measures and their pieces.
    #[arg(long, value_name = "CODE", value_parser = clap::builder::PossibleValuesParser::new(crate::audit::CODES))]
    pub explain: Option<String>,
    /// How many kernel rows the text and Markdown views show (largest total first; JSON has
    /// them all).
    #[arg(long, value_name = "N", default_value_t = crate::audit::render::DEFAULT_TOP)]
    pub top: usize,
    /// A folder of ranks only: how well their clocks agree, as `worksheet import
    /// --clocks-within` (docs/ranks.md); repeatable.
    #[arg(long = "clocks-within", value_name = "DURATION")]
    pub clocks_within: Vec<String>,
    /// No progress bar (one is drawn on standard error while a large trace is read, when
    /// standard error is a terminal).
    #[arg(long, short)]
    pub quiet: bool,
}

/// What `audit` ended with: whether a finding reached `--fail-on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditOutcome {
    /// At least one finding at or above `--fail-on`.
    pub failed: bool,
}

/// Why `audit` stopped.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The input is malformed or unreadable (exit 2).
    #[error(transparent)]
    Input(#[from] InputError),
    /// Writing the report failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Runs `worksheet audit`: reads the input, audits it, writes the report to `out`.
///
/// # Errors
/// [`AuditError::Input`] for a malformed input, [`AuditError::Io`] when writing fails.
pub fn run(args: &AuditArgs, out: &mut dyn Write) -> Result<AuditOutcome, AuditError> {
    if args.input.is_dir() {
        return folder::run(args, out);
    }
    if let Some(first) = args.clocks_within.first() {
        return Err(crate::import::ranks::declare::option_error(format!(
            "`{first}`: --clocks-within relates the clocks of several ranks; give a folder of their traces"
        ))
        .into());
    }
    let options = ImportOptions {
        round_sub_ns: args.round_sub_ns,
    };
    // `--compat hta` gathers HTA's rows in the audit's own pass.
    let mut tap = args.compat.map(|Compat::Hta| HtaTap::new(&options));
    let trace = match tap.as_mut() {
        Some(tap) => read_audit_trace_tapped(&args.input, &options, tap)?,
        None => read_audit_trace(&args.input, &options)?,
    };
    let report = audit(
        &trace,
        &args.input.display().to_string(),
        &AuditOptions::default(),
    );
    let hta = match tap {
        Some(tap) => Some(compat_hta_of(
            &args.input,
            trace.source != "kineto",
            &options,
            tap,
        )?),
        None => None,
    };
    if let Some(code) = &args.explain {
        out.write_all(crate::escape::printable(&render::explain(&report, code)).as_bytes())?;
        return Ok(AuditOutcome {
            failed: args.fail_on.is_some_and(|f| report.fails(f.into())),
        });
    }
    let text = match (args.format, &hta) {
        (AuditFormat::Text, None) => render::to_text_top(&report, args.top),
        (AuditFormat::Text, Some(hta)) => {
            format!(
                "{}\n{}",
                render::to_text_top(&report, args.top),
                hta.to_text()
            )
        }
        (AuditFormat::Markdown, None) => render::to_markdown(&report),
        (AuditFormat::Markdown, Some(hta)) => format!(
            "{}\n## HTA compatibility\n\n```text\n{}```\n",
            render::to_markdown(&report),
            hta.to_text()
        ),
        (AuditFormat::Json, None) => render::to_json(&report),
        (AuditFormat::Json, Some(hta)) => {
            let mut value = serde_json::to_value(&report).map_err(std::io::Error::from)?;
            if let Some(map) = value.as_object_mut() {
                map.insert(
                    "compat_hta".to_owned(),
                    serde_json::to_value(hta).map_err(std::io::Error::from)?,
                );
            }
            serde_json::to_string_pretty(&value).map_err(std::io::Error::from)? + "\n"
        }
    };
    out.write_all(crate::escape::printable(&text).as_bytes())?;
    Ok(AuditOutcome {
        failed: args.fail_on.is_some_and(|f| report.fails(f.into())),
    })
}
