//! `worksheet export`: its arguments, the files refused before any work, and the tables or
//! the Perfetto file written. The tables themselves are `crate::export`'s.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::cmd::exit::{Failure, EXIT_INPUT, EXIT_OK};
use crate::export::{Input, Table};
use crate::output::refuse_existing;

/// `worksheet export`'s arguments.
#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  worksheet export tests/data/traces/nccl_data.json.gz --parquet tables/\n  \
worksheet export tests/data/ranks --parquet job/ --force\n  \
worksheet export tests/data/traces/nccl_data.json.gz --csv tables/\n  \
worksheet export tests/data/traces/nccl_data.json.gz --perfetto nccl.json\n\n\
Tables (docs/parquet.md): phases, steps, collectives, relations, findings,\n\
summary, kernels, ops, as `<table>.parquet`, or with --csv as `<table>.csv`\n\
(which needs no `parquet` feature).\n\
Perfetto (docs/perfetto.md): a Chrome trace-event JSON file for ui.perfetto.dev.\n\
Exit codes: 0 written, 2 malformed input, an existing file without --force, or a build without the `parquet` feature."
)]
#[command(
    override_usage = "worksheet export [OPTIONS] <INPUT>... --parquet <DIR>\n       \
worksheet export [OPTIONS] <INPUT>... --csv <DIR>\n       \
worksheet export [OPTIONS] <INPUT>... --perfetto <FILE>"
)]
#[command(group(clap::ArgGroup::new("to").required(true).multiple(true).args(["parquet", "csv", "perfetto"])))]
pub struct ExportArgs {
    /// What to export: a Kineto trace, several (ranks of one job), a folder of rank traces
    /// (as `worksheet import` takes them), or a case file.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Write Parquet tables into this folder (created when missing), one file per table.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Write the same tables as CSV into this folder (created when missing), one
    /// `<table>.csv` per table (may be the `--parquet` folder).
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
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

/// Runs `worksheet export`: the files refused, the input loaded and its tables built once,
/// then written ([`write_loaded`]).
///
/// # Errors
/// A [`Failure`] with exit code 2: malformed input, a file that exists without `--force`, or
/// a build without the `parquet` feature.
pub fn run(args: &ExportArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    refuse_before_work(args)?;
    let input = crate::export::tables::load(&args.inputs, args.round_sub_ns, &args.clocks_within)?;
    let tables = crate::export::build(&input)?;
    write(args, &input, &tables, out)
}

/// [`run`] for an input already loaded (`crate::export::tables::load` of `args.inputs`) and
/// its tables built (`crate::export::build`): the same refusals and the same files, without
/// reading or building again (the `export` fuzz target checks the tables, then writes them).
///
/// # Errors
/// As [`run`], less the input's own errors.
pub fn write_loaded(
    args: &ExportArgs,
    input: &Input,
    tables: &[Table],
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    refuse_before_work(args)?;
    write(args, input, tables, out)
}

/// What is refused before any work: `--parquet` without the feature, and every file that
/// exists without `--force`.
fn refuse_before_work(args: &ExportArgs) -> Result<(), Failure> {
    if args.parquet.is_some() && !cfg!(feature = "parquet") {
        return Err(Failure {
            message: "error[unsupported]: this worksheet was built without the `parquet` feature; build it with `cargo build --features parquet`".to_owned(),
            code: EXIT_INPUT,
        });
    }
    // Every file is refused before any work; a folder that does not exist yet holds no file
    // to refuse (it is created below).
    if let Some(dir) = args.parquet.as_ref().filter(|d| d.is_dir()) {
        for name in crate::export::tables::NAMES {
            refuse_existing(&crate::export::table_path(dir, name), args.force)?;
        }
    }
    if let Some(dir) = args.csv.as_ref().filter(|d| d.is_dir()) {
        for name in crate::export::tables::NAMES {
            refuse_existing(&crate::export::csv::table_path(dir, name), args.force)?;
        }
    }
    if let Some(path) = &args.perfetto {
        refuse_existing(path, args.force)?;
    }
    Ok(())
}

/// Writes the tables and the Perfetto file `args` asks for, then the input's notes.
fn write(
    args: &ExportArgs,
    input: &Input,
    tables: &[Table],
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    // With `--perfetto -` the trace goes to standard output, so the messages go to stderr.
    let mut stderr = std::io::stderr();
    let out: &mut dyn Write = match &args.perfetto {
        Some(path) if crate::output::is_stdout(path) => &mut stderr,
        _ => out,
    };
    if let Some(dir) = &args.parquet {
        crate::export::write_parquet(dir, tables, args.force, out)?;
    }
    if let Some(dir) = &args.csv {
        crate::export::csv::write_csv(dir, tables, args.force, out)?;
    }
    if let Some(path) = &args.perfetto {
        let text = crate::export::perfetto::trace_json(input, tables)?;
        crate::output::write_output(path, text.as_bytes(), args.force)?;
        writeln!(out, "{}: {} byte(s)", path.display(), text.len())?;
    }
    for note in &input.skipped {
        writeln!(out, "note: {}", crate::escape::printable(note))?;
    }
    Ok(EXIT_OK)
}
