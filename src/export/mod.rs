//! `worksheet export INPUT… --parquet DIR`: the case's phases, collectives, clock relations,
//! findings and summary numbers as Parquet tables, for an existing engine past one machine.
//!
//! The tables are built here from the same answers `worksheet import` prints ([`tables`]);
//! writing them as Parquet needs the `parquet` cargo feature (the `parquet` crate, without
//! arrow). The schema is versioned and documented in `docs/parquet.md`; every file carries
//! `format` / `version` key-value metadata. Each file is written atomically through
//! [`crate::output`], and none is replaced without `--force` (all are checked before any
//! is written).

#[cfg(feature = "parquet")]
mod parquet;
pub mod perfetto;
pub mod tables;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::exit::{Failure, EXIT_INPUT, EXIT_OK};
use crate::output::refuse_existing;

pub use tables::{build, Column, Input, Table, Values};

/// The value of the `format` key in every file's key-value metadata.
pub const FORMAT: &str = "worksheet-parquet";
/// The schema version (the `version` key); raised on any change to a table's columns.
pub const VERSION: &str = "3";

/// `worksheet export`'s arguments.
#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  worksheet export tests/data/traces/nccl_data.json.gz --parquet tables/\n  \
worksheet export tests/data/ranks --parquet job/ --force\n  \
worksheet export tests/data/traces/nccl_data.json.gz --perfetto nccl.json\n\n\
Tables (docs/parquet.md): phases, steps, collectives, relations, findings, summary.\n\
Perfetto (docs/perfetto.md): a Chrome trace-event JSON file for ui.perfetto.dev.\n\
Exit codes: 0 written, 2 malformed input, an existing file without --force, or a build without the `parquet` feature."
)]
#[command(group(clap::ArgGroup::new("to").required(true).multiple(true).args(["parquet", "perfetto"])))]
pub struct ExportArgs {
    /// What to export: a Kineto trace, several (ranks of one job), a folder of rank traces
    /// (as `worksheet import` takes them), or a case file.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Write Parquet tables into this folder (created when missing), one file per table.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Write a Chrome trace-event JSON file that ui.perfetto.dev opens (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,
    /// Overwrite files that exist.
    #[arg(long)]
    pub force: bool,
    /// Round timestamps finer than 1 ns to the nearest ns instead of refusing them.
    #[arg(long)]
    pub round_sub_ns: bool,
    /// Several ranks only: how well their clocks agree, as `worksheet import --clocks-within`
    /// (docs/ranks.md).
    #[arg(long = "clocks-within", value_name = "DURATION")]
    pub clocks_within: Vec<String>,
    /// No progress bar (one is drawn on standard error while a large trace is read, when
    /// standard error is a terminal).
    #[arg(long, short)]
    pub quiet: bool,
}

/// The files a folder gets: `<table>.parquet`.
pub fn table_path(dir: &Path, table: &str) -> PathBuf {
    dir.join(format!("{table}.parquet"))
}

/// Runs `worksheet export`.
///
/// # Errors
/// A [`Failure`] with exit code 2: malformed input, a file that exists without `--force`, or
/// a build without the `parquet` feature.
pub fn run(args: &ExportArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    if args.parquet.is_some() && !cfg!(feature = "parquet") {
        return Err(Failure {
            message: "error[unsupported]: this worksheet was built without the `parquet` feature; build it with `cargo build --features parquet`".to_owned(),
            code: EXIT_INPUT,
        });
    }
    // Every file is refused before any work; a folder that does not exist yet holds no file
    // to refuse (it is created below).
    if let Some(dir) = args.parquet.as_ref().filter(|d| d.is_dir()) {
        for name in tables::NAMES {
            refuse_existing(&table_path(dir, name), args.force)?;
        }
    }
    if let Some(path) = &args.perfetto {
        refuse_existing(path, args.force)?;
    }
    // With `--perfetto -` the trace goes to standard output, so the messages go to stderr.
    let mut stderr = std::io::stderr();
    let out: &mut dyn Write = match &args.perfetto {
        Some(path) if crate::output::is_stdout(path) => &mut stderr,
        _ => out,
    };
    let input = tables::load(&args.inputs, args.round_sub_ns, &args.clocks_within)?;
    let tables = build(&input)?;
    if let Some(dir) = &args.parquet {
        write_parquet(dir, &tables, args.force, out)?;
    }
    if let Some(path) = &args.perfetto {
        let text = perfetto::trace_json(&input, &tables)?;
        crate::output::write_output(path, text.as_bytes(), args.force)?;
        writeln!(out, "{}: {} byte(s)", path.display(), text.len())?;
    }
    for note in &input.skipped {
        writeln!(out, "note: {}", crate::escape::printable(note))?;
    }
    Ok(EXIT_OK)
}

/// Writes each table as `DIR/<table>.parquet`, creating `DIR` when missing.
fn write_parquet(
    dir: &Path,
    tables: &[Table],
    force: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| Failure {
        message: format!(
            "{}: error[io]: cannot create the folder: {e}",
            dir.display()
        ),
        code: EXIT_INPUT,
    })?;
    for t in tables {
        let path = table_path(dir, t.name);
        let bytes = encode(t)?;
        crate::output::write_output(&path, &bytes, force)?;
        writeln!(
            out,
            "{}: {} row(s), {} byte(s)",
            path.display(),
            t.rows(),
            bytes.len()
        )?;
    }
    Ok(())
}

#[cfg(feature = "parquet")]
fn encode(t: &Table) -> Result<Vec<u8>, Failure> {
    parquet::encode(t).map_err(|e| Failure {
        message: format!(
            "error[internal]: cannot encode the `{}` table as Parquet: {e}",
            t.name
        ),
        code: EXIT_INPUT,
    })
}

#[cfg(not(feature = "parquet"))]
fn encode(_: &Table) -> Result<Vec<u8>, Failure> {
    Err(Failure {
        message: "error[unsupported]: this worksheet was built without the `parquet` feature"
            .to_owned(),
        code: EXIT_INPUT,
    })
}
