//! `worksheet import`: its arguments, the single-trace run (the case with `-o`, the summary,
//! `--compat hta`), and the hand-over to the multi-rank import ([`ranks`]) for
//! several traces or a folder. The meaning of a trace (the case it becomes) is `crate::import`'s.

pub mod ranks;
mod write;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::cmd::exit::{Failure, EXIT_INPUT, EXIT_OK};
use crate::import::{
    audit_imported, import_path_tapped, import_path_with, ranks as rank_import, summarize_owned,
    summarize_writing, ImportError, ImportOptions, Imported, Summary,
};
use crate::output::refuse_existing;
use crate::peer::hta::HtaTap;

/// Output format of the summary `import` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SummaryFormat {
    /// Tables for people.
    Text,
    /// The summary as JSON (exact values as text and as integer ns).
    Json,
}

/// Arguments of `worksheet import`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  worksheet import tests/data/traces/nccl_data.json.gz -o trace-case.json\n  \
worksheet import tests/data/traces/nccl_data.json.gz --format json\n  \
worksheet import tests/data/ranks/rank0.json.gz -o rank0.json.gz --expect\n  \
worksheet check rank0.json.gz\n  \
worksheet import tests/data/nsys/fuser_report1.sqlite -o report-case.json.gz\n\n\
Reads PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzipped, and Nsight Systems SQLite exports \
(`nsys export --type sqlite`, opened read-only). Without -o, only the summary is printed.\n\
Exit codes: 0 imported, 2 the trace is malformed or unsupported, or the output\n\
exists (use --force)."
)]
pub struct ImportArgs {
    /// The trace file: Kineto `*.json` / `*.json.gz`, or an Nsight Systems `*.sqlite` export.
    /// A folder, or several files, are the ranks of one job: one multi-rank case. `-` reads
    /// standard input (any of these formats, gzipped or not).
    pub file: PathBuf,
    /// More trace files: with FILE, the ranks of one job (Kineto traces; rank from
    /// `distributedInfo`, else the argument order), imported as one case with one clock per
    /// rank, related by their collectives.
    #[arg(value_name = "MORE")]
    pub more: Vec<PathBuf>,
    /// Write the case here (gzipped when the name ends in `.gz`; `-`: to standard output, and
    /// the summary to standard error). Never overwritten without --force.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Summary format.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    pub format: SummaryFormat,
    /// Embed the current answers as expectations, so `worksheet check` replays them.
    #[arg(long)]
    pub expect: bool,
    /// Round timestamps finer than 1 ns to the nearest ns (counted and noted) instead of
    /// refusing them as `inexact-value`.
    #[arg(long)]
    pub round_sub_ns: bool,
    /// Also print a peer's numbers reproduced from its defaults, with the delta each of its
    /// assumptions causes (`hta`: HTA 0.5.0's temporal breakdown; Kineto traces only;
    /// `HTA_DISABLE_NS_ROUNDING=1` in the environment switches HTA's µs rounding off, as in HTA).
    #[arg(long, value_enum, value_name = "PEER")]
    pub compat: Option<Compat>,
    /// Several ranks only: declare that the ranks' clocks agree within DURATION (`0`: one host
    /// clock; `1ms` fits NTP, `1us` PTP), or `RANKS=DURATION` for a group (`0-7=0`);
    /// repeatable. A declared relation (SPEC §10): every answer that uses it says so.
    #[arg(long = "clocks-within", value_name = "DURATION")]
    pub clocks_within: Vec<String>,
    /// No progress bar (one is drawn on standard error while a large trace is read, when
    /// standard error is a terminal).
    #[arg(long, short)]
    pub quiet: bool,
    /// How many kernel and op rows the text view shows (largest total first; JSON has them
    /// all), as `worksheet audit --top`.
    #[arg(long, value_name = "N", default_value_t = crate::audit::render::DEFAULT_TOP)]
    pub top: usize,
}

/// Peers whose numbers `--compat` reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Compat {
    /// Holistic Trace Analysis 0.5.0's `get_temporal_breakdown()` (docs/hta-compat.md).
    Hta,
}

/// Runs `worksheet import`: one trace, or several (a folder) as the ranks of one job.
///
/// # Errors
/// A [`Failure`] with exit code 2 for a malformed trace or an output that exists without
/// `--force`.
/// Runs `worksheet import`: reads the trace, writes the case when asked, prints the summary.
///
/// # Errors
/// A [`Failure`] with exit code 2 for a malformed or unsupported trace, or an output file
/// that exists without `--force`.
pub fn run(args: &ImportArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    if let Some(path) = &args.output {
        refuse_existing(path, args.force)?;
    }
    // With `-o -` the case goes to standard output, so the summary goes to standard error.
    let mut stderr = std::io::stderr();
    let out: &mut dyn Write = match &args.output {
        Some(path) if crate::output::is_stdout(path) => &mut stderr,
        _ => out,
    };
    let options = ImportOptions {
        round_sub_ns: args.round_sub_ns,
    };
    let paths: Vec<PathBuf> = std::iter::once(args.file.clone())
        .chain(args.more.iter().cloned())
        .collect();
    // A folder holding one trace is that trace (review N14).
    let paths = crate::import::folder::one_trace(&paths)?.map_or(paths, |one| vec![one]);
    let file = paths[0].clone();
    if rank_import::is_multi(&paths) {
        return ranks::run(args, &paths, &options, out);
    }
    if let Some(first) = args.clocks_within.first() {
        return Err(rank_import::declare::option_error(format!(
            "`{first}`: --clocks-within relates the clocks of several ranks; give two or more traces (or a folder of them)"
        ))
        .into());
    }
    // `--compat hta` gathers HTA's rows in the import's own pass.
    let mut tap = args.compat.map(|Compat::Hta| HtaTap::new(&options));
    let (mut imported, trace) = match tap.as_mut() {
        Some(tap) => import_path_tapped(&file, &options, true, tap)?,
        None => import_path_with(&file, &options, true)?,
    };
    let hta = match tap {
        Some(tap) => Some(compat_hta(&file, &imported, &options, tap)?),
        None => None,
    };
    let audit = audit_imported(&mut imported, &file, &options, trace)?;
    let internal = |e: crate::case::CaseError| {
        Failure {
        message: format!(
            "{}: error[internal]: the imported case does not validate ({e}); please report this with the trace",
            file.display()
        ),
        code: EXIT_INPUT,
    }
    };
    let mut summary = match &args.output {
        Some(path) => write_and_summarize(imported, args, path).map_err(|e| match e {
            Stop::Internal(e) => internal(e),
            Stop::Refused(r) => r.into(),
        })?,
        None => summarize_owned(imported, args.expect, false).map_err(internal)?,
    };
    summary.audit = Some(audit);
    match args.format {
        SummaryFormat::Text => {
            out.write_all(summary.to_text_top(args.top).as_bytes())?;
            out.write_all(ops_text(&summary, args.top).as_bytes())?;
            if let Some(hta) = &hta {
                out.write_all(hta.to_text().as_bytes())?;
            }
        }
        SummaryFormat::Json => {
            let mut value = serde_json::to_value(&summary).map_err(std::io::Error::from)?;
            value["format"] = "worksheet-import".into();
            value["version"] = 1.into();
            if let (Some(hta), Some(map)) = (&hta, value.as_object_mut()) {
                let hta = serde_json::to_value(hta).map_err(std::io::Error::from)?;
                map.insert("compat_hta".to_owned(), hta);
            }
            serde_json::to_writer_pretty(&mut *out, &value).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
    }
    Ok(EXIT_OK)
}

/// The audit's op → kernels view, as `worksheet audit --top TOP` prints it (the same
/// renderer and rows): it follows the summary's kernel table; empty when the audit did not
/// run or found no kernels.
fn ops_text(summary: &Summary, top: usize) -> String {
    let Some(audit) = &summary.audit else {
        return String::new();
    };
    let ops = crate::audit::render::ops::ops_text(audit, top);
    if ops.is_empty() {
        return ops;
    }
    // Names come from the trace: escape terminal controls, as the summary does.
    format!("\n{}", crate::escape::printable(&ops))
}

/// `--compat hta`: HTA reads Kineto traces only.
fn compat_hta(
    path: &Path,
    imported: &Imported,
    options: &ImportOptions,
    tap: HtaTap,
) -> Result<crate::peer::hta::HtaCompat, ImportError> {
    crate::peer::hta::compat_of(path, imported.format.starts_with("nsys"), options, tap)
}

/// Why [`write_and_summarize`] stopped.
enum Stop {
    /// The imported case does not validate (an importer bug).
    Internal(crate::case::CaseError),
    /// The output could not be written.
    Refused(crate::error::Refusal),
}

/// The summary of `imported`, with its case streamed to `path` while it is summarised (the
/// case's JSON text is never held whole): staged in a temporary file before the case is
/// validated, and renamed into place only once it validates.
fn write_and_summarize(
    imported: Imported,
    args: &ImportArgs,
    path: &Path,
) -> Result<Summary, Stop> {
    let (mut summary, staged) = summarize_writing(imported, args.expect, |raw| {
        match write::stage_case(path, args.force, raw) {
            Ok((staged, json_bytes)) => (
                usize::try_from(json_bytes).unwrap_or(usize::MAX),
                Ok(staged),
            ),
            Err(refusal) => (0, Err(refusal)),
        }
    })
    .map_err(Stop::Internal)?;
    let bytes = staged.and_then(|s| s.commit()).map_err(Stop::Refused)?;
    summary.written = Some((path.display().to_string(), bytes));
    Ok(summary)
}
