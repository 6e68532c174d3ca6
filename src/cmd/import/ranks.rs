//! `worksheet import A B …` / `worksheet import DIR`: the multi-rank import's outcome, printed
//! and written like a single trace's (the case with `-o`, expectations with `--expect`).
//!
//! Without `-o` each rank's case is dropped once the rank is summarised, so memory is bounded
//! by the traces in flight; with `-o` the merged case is the product, kept whole and streamed
//! into the file (its text is never held whole), and memory grows with its size
//! (BENCHMARKS.md, "Many ranks").

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use super::{ImportArgs, SummaryFormat};
use crate::cmd::exit::{Failure, EXIT_INPUT, EXIT_OK};
use crate::import::ranks::{
    declare, import_ranks_declared, summarize_all, RankOptions, RanksSummary, Summaries,
};
use crate::import::{ImportError, ImportOptions, Summary};

/// Everything a multi-rank import prints: the engine's per-rank tables and the ranks' part.
#[derive(Serialize)]
struct Both<'a> {
    /// `worksheet-import-ranks`: what this JSON report is (schemas/).
    format: &'static str,
    /// The report's version; changes as CONTRIBUTING says.
    version: u32,
    /// The single-trace summary of the merged case (per-rank rows, prefixed ids).
    case: &'a Summary,
    /// Relations, collectives, stragglers.
    ranks: &'a RanksSummary,
}

/// Runs a multi-rank import of `paths` (files, or folders of `*.json[.gz]` files).
///
/// # Errors
/// A [`Failure`] with exit code 2 for malformed traces, `--compat`, or an output file that
/// exists without `--force`.
pub fn run(
    args: &ImportArgs,
    paths: &[PathBuf],
    options: &ImportOptions,
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    if args.compat.is_some() {
        return Err(ImportError::new(
            "$",
            "unsupported-format",
            "--compat reproduces a peer's numbers for one trace: import the ranks one at a time for it",
        )
        .into());
    }
    let listing = crate::import::ranks::listing::list(paths)?;
    let how = RankOptions {
        expect: args.expect,
        keep_cases: args.output.is_some(),
        progress: true,
        audits: false,
    };
    let declared = args
        .clocks_within
        .iter()
        .map(|t| declare::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    let mut multi = import_ranks_declared(&listing.files, options, how, &declared)?;
    crate::import::folder::refuse_unranked(paths, &listing, &multi)?;
    let internal = |e: crate::case::CaseError| {
        Failure {
        message: format!(
            "error[internal]: the merged multi-rank case does not validate ({e}); please report this with the traces"
        ),
        code: EXIT_INPUT,
    }
    };
    let Summaries {
        case: mut summary,
        ranks,
        merged,
    } = summarize_all(&mut multi, args.expect, args.output.is_some()).map_err(internal)?;
    // Every folder entry not read is said (review D5).
    summary.notes.extend(listing.notes());
    if let Some(path) = &args.output {
        let merged = merged.ok_or_else(|| Failure {
            message: "error[internal]: the ranks' cases were not kept for -o; please report this"
                .to_owned(),
            code: EXIT_INPUT,
        })?;
        // The product itself: the whole merged case in memory (it grows with the ranks),
        // streamed into the file.
        let bytes = super::write::write_case(path, args.force, &merged)?;
        drop(merged);
        summary.written = Some((path.display().to_string(), bytes));
    }
    match args.format {
        SummaryFormat::Text => {
            out.write_all(summary.to_text_top(args.top).as_bytes())?;
            out.write_all(b"\n")?;
            out.write_all(crate::escape::printable(&ranks.to_text()).as_bytes())?;
        }
        SummaryFormat::Json => {
            serde_json::to_writer_pretty(
                &mut *out,
                &Both {
                    format: "worksheet-import-ranks",
                    version: 1,
                    case: &summary,
                    ranks: &ranks,
                },
            )
            .map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
    }
    Ok(EXIT_OK)
}
