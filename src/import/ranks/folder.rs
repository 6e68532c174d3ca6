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

use super::{declare, import_ranks_declared, summarize_all, RankOptions, RanksSummary};
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
    let listing = super::listing::list(paths)?;
    let declared = clocks_within
        .iter()
        .map(|t| declare::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    let how = RankOptions {
        expect: false,
        keep_cases: true,
        progress: false,
    };
    let mut multi = import_ranks_declared(&listing.files, options, how, &declared)?;
    let files = multi
        .ranks
        .iter()
        .map(|r| (r.rank, PathBuf::from(&r.file)))
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
        notes,
    })
}
