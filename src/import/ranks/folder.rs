//! A folder of ranks (or several traces) for the commands that draw or audit it (`report`,
//! `render`, `audit`): the multi-rank import exactly as `worksheet import DIR` runs it, so
//! every view states the `straggler` finding from the one computation
//! ([`super::summarize_all`] → [`super::straggler`]).
//!
//! The merged case carries that computation's straggler part in its provenance
//! (`provenance.stragglers`, [`provenance_entry`]): `import DIR -o case.json` writes it, and
//! `report case.json` draws it, so a folder and the case imported from it give one page.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::listing::Listing;
use super::{declare, import_ranks_declared, summarize_all, MultiRank, RankOptions, RanksSummary};
use crate::audit::Audit;
use crate::case::raw::RawCase;
use crate::import::{ImportError, ImportOptions};

/// The key of the straggler part in the merged case's provenance.
pub const PROVENANCE_KEY: &str = "stragglers";

/// The straggler part of a multi-rank summary, as the merged case carries it: the findings,
/// the per-rank rows, how many instances have no certain last rank, and what declaration
/// would decide the open ones. The same values as `import --format json`'s `ranks`.
pub fn provenance_entry(ranks: &RanksSummary) -> Value {
    json!({
        "findings": ranks.findings,
        "per_rank": ranks.stragglers,
        "ambiguous_last": ranks.ambiguous_last,
        "undecided": ranks.undecided,
    })
}

/// A folder of ranks, imported.
#[derive(Debug)]
pub struct Folder {
    /// The merged case (every rank's prefixed sections and the cross-rank case), with
    /// `provenance.stragglers`.
    pub merged: RawCase,
    /// The multi-rank summary (the straggler findings among it).
    pub ranks: RanksSummary,
    /// Each rank and its file, in rank order.
    pub files: Vec<(u32, PathBuf)>,
    /// Each rank's audit (or why its model could not be read), in the order of `files`;
    /// empty unless [`import_folder_audited`] asked for them.
    pub audits: Vec<Result<Audit, ImportError>>,
    /// The import's notes and every folder entry not read.
    pub notes: Vec<String>,
}

/// Imports `paths` (a folder, or several traces) as `import` does, with the
/// `--clocks-within` declarations `clocks_within`.
///
/// # Errors
/// [`ImportError`] for malformed traces, a bad or contradicted declaration, or fewer than two
/// traces; `internal` when the merged case does not validate (an importer bug).
pub fn import_folder(
    paths: &[PathBuf],
    clocks_within: &[String],
    options: &ImportOptions,
) -> Result<Folder, ImportError> {
    import_folder_with(paths, clocks_within, options, false)
}

/// [`import_folder`], with each rank's audit ([`Folder::audits`], `worksheet audit DIR`'s)
/// made in the rank's import pass from the model it records: each file is read once.
///
/// # Errors
/// What [`import_folder`] returns.
pub fn import_folder_audited(
    paths: &[PathBuf],
    clocks_within: &[String],
    options: &ImportOptions,
) -> Result<Folder, ImportError> {
    import_folder_with(paths, clocks_within, options, true)
}

/// [`import_folder`], with the ranks' audits when `audits`.
fn import_folder_with(
    paths: &[PathBuf],
    clocks_within: &[String],
    options: &ImportOptions,
    audits: bool,
) -> Result<Folder, ImportError> {
    let listing = super::listing::list(paths)?;
    let declared = clocks_within
        .iter()
        .map(|t| declare::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    let how = RankOptions {
        expect: false,
        keep_cases: true,
        progress: false,
        audits,
    };
    let mut multi = import_ranks_declared(&listing.files, options, how, &declared)?;
    refuse_unranked(paths, &listing, &multi)?;
    let files = multi
        .ranks
        .iter()
        .map(|r| (r.rank, PathBuf::from(&r.file)))
        .collect();
    let audits = multi
        .ranks
        .iter_mut()
        .filter_map(|r| r.audit.take())
        .collect();
    let mut notes = multi.notes.clone();
    notes.extend(listing.notes());
    let internal = |what: String| {
        ImportError::new(
            "$",
            "internal",
            format!("{what}; please report this with the traces"),
        )
    };
    let summaries = summarize_all(&mut multi, false, true).map_err(|e| {
        internal(format!(
            "the merged multi-rank case does not validate ({e})"
        ))
    })?;
    let merged = summaries
        .merged
        .ok_or_else(|| internal("the ranks' cases were not kept for the merged case".into()))?;
    Ok(Folder {
        merged,
        ranks: summaries.ranks,
        files,
        audits,
        notes,
    })
}

/// Refuses a job read from a folder whose traces do not all say which rank they are
/// (`distributedInfo.rank`): they may be several runs of one rank (two profiler runs of one
/// worker, hours apart), which are no job. The error lists every file. Traces named one by
/// one keep the argument order as their ranks (a note says so).
///
/// # Errors
/// `bad-value` naming the folder(s) and listing the traces without a rank.
pub fn refuse_unranked(
    paths: &[PathBuf],
    listing: &Listing,
    multi: &MultiRank,
) -> Result<(), ImportError> {
    if !paths.iter().any(|p| p.is_dir()) {
        return Ok(());
    }
    let unranked: Vec<&str> = multi
        .ranks
        .iter()
        .filter(|r| r.facts.rank.is_none())
        .map(|r| r.file.as_str())
        .collect();
    if unranked.is_empty() {
        return Ok(());
    }
    let given: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    Err(ImportError::new(
        "distributedInfo.rank",
        "bad-value",
        format!(
            "the folder holds {} traces, and {} of them say(s) no rank (no distributedInfo.rank, or one that is not a whole number from 0 below 2^32): several runs of one rank are not a job. Give one trace, or name the files one by one to read them as ranks in argument order. The traces: {}",
            listing.files.len(),
            unranked.len(),
            listing
                .files
                .iter()
                .map(|f| {
                    let f = f.display().to_string();
                    let mark = if unranked.contains(&f.as_str()) { " (no rank)" } else { "" };
                    format!("`{f}`{mark}")
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .in_file(given.join(", ")))
}
