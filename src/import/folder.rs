//! A folder given where a trace is expected, read the way the PyTorch profiler writes one
//! (issue 26 §6, review N14).
//!
//! - A TensorBoard log folder: the traces are `plugins/profile/*/*.pt.trace.json[.gz]`, under
//!   the folder itself or under each of its run folders (`*/plugins/profile/*/…`).
//! - Otherwise the folder's own `*.json` / `*.json.gz` files ([`super::ranks::listing`]).
//! - One trace found is a single import ([`one_trace`]), not a "multi-rank import of one".
//! - Several are ranks of one job only when each says which rank it is
//!   (`distributedInfo.rank`): several runs of one rank are refused, listed
//!   ([`refuse_unranked`]).

use std::path::{Path, PathBuf};

use super::ImportError;

pub use super::ranks::listing::tensorboard_traces;

/// The one trace `paths` name when they are a single folder holding exactly one trace
/// (TensorBoard layout or not); `None` for anything else (a file, several paths, a folder
/// of several traces).
///
/// # Errors
/// What listing the folder returns (`io`), and `bad-value` for a folder holding no trace,
/// or one trace beside entries named like traces that cannot be read (a FIFO, a dangling
/// link), naming it and what was skipped.
pub fn one_trace(paths: &[PathBuf]) -> Result<Option<PathBuf>, ImportError> {
    let [dir] = paths else {
        return Ok(None);
    };
    if !dir.is_dir() {
        return Ok(None);
    }
    let listing = super::ranks::listing::list_any(paths)?;
    // An entry named like a trace that cannot be read (a FIFO, a dangling link) says the
    // folder meant more than one trace: that stays the multi-rank error naming it.
    let meant_more = listing.skipped.iter().any(|s| {
        let name = s.path.to_string_lossy();
        name.ends_with(".json") || name.ends_with(".json.gz")
    });
    match listing.files.as_slice() {
        [_] if meant_more => Err(super::ranks::listing::too_few(paths, &listing)),
        [one] => Ok(Some(one.clone())),
        [] => Err(super::ranks::listing::no_trace(dir, &listing)),
        _ => Ok(None),
    }
}

pub use super::ranks::folder::refuse_unranked;

/// Imports the folder `dir` in memory, as every command that reads a case reads a folder
/// given as its input: its one trace (with the audit, as `worksheet import` writes it), or
/// the ranks of one job, merged into one case ([`super::ranks::MultiRank::take_merged`]).
///
/// # Errors
/// Listing errors, a folder of no trace, traces without a rank ([`refuse_unranked`]), and
/// the importer's errors.
pub fn import_folder(dir: &Path) -> Result<super::Imported, ImportError> {
    let paths = [dir.to_path_buf()];
    if let Some(one) = one_trace(&paths)? {
        return super::import_path_audited(&one, &super::ImportOptions::default());
    }
    let folder =
        super::ranks::folder::import_folder(&paths, &[], &super::ImportOptions::default())?;
    let mut imported = super::Imported::from_case(
        folder.merged,
        format!("{} ranks of one job", folder.ranks.ranks.len()),
    );
    imported.notes = folder.notes;
    Ok(imported)
}
