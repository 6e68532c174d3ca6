//! What every command that reads one case reads (`render`, `report`, `eval`, `check
//! --expect`, `compare`): a case file (fixture, capture, lab output), a trace (Kineto JSON /
//! .json.gz, Nsight Systems .sqlite), or a folder of traces ([`crate::import::folder`]), a
//! trace or folder imported in memory on the way, so that nothing needs a case written
//! first. Case files of any size are streamed.

use std::io::Read;
use std::path::Path;

use crate::case::{load_case_file, load_case_str, Case};
use crate::error::InputError;

/// What the input was read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A case file (fixture, capture, lab output).
    Case,
    /// A trace, imported: the importer's format line.
    Trace(String),
}

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Whether `path` is a regular file that starts as an SQLite database does (an Nsight
/// Systems export). Only a regular file is opened: a FIFO or a device would block.
pub fn is_sqlite(path: &Path) -> bool {
    if crate::input::require_file(path).is_err() {
        return false;
    }
    let mut head = Vec::new();
    if let Ok(file) = crate::input::open_file(path) {
        let _ = file.take(16).read_to_end(&mut head);
    }
    head.starts_with(SQLITE_MAGIC)
}

/// Reads `path` as a case, or, when it is a trace, imports it into one; a folder is its one
/// trace, or the ranks of one job imported as `worksheet import DIR` does (the merged case,
/// with its straggler part).
///
/// # Errors
/// [`InputError`] (exit 2 at the command line) with the case loader's or the
/// importer's message.
pub fn load_input(path: &Path) -> Result<(Case, Source), InputError> {
    load_input_declared(path, &[])
}

/// [`load_input`], with `--clocks-within` declarations for a folder of ranks
/// (docs/ranks.md).
///
/// # Errors
/// As [`load_input`]; a declaration for anything but a folder of ranks is `bad-value`.
pub fn load_input_declared(
    path: &Path,
    clocks_within: &[String],
) -> Result<(Case, Source), InputError> {
    if path.is_dir() {
        let paths = [path.to_path_buf()];
        let one = crate::import::folder::one_trace(&paths)?;
        if let (Some(one), true) = (&one, clocks_within.is_empty()) {
            let imported =
                crate::import::import_path_audited(one, &crate::import::ImportOptions::default())?;
            let case = load_case_str(&imported.case.to_json_pretty(), &one.display().to_string())?;
            return Ok((case, Source::Trace(imported.format)));
        }
        let folder = crate::import::ranks::folder::import_folder(
            &paths,
            clocks_within,
            &crate::import::ImportOptions::default(),
        )?;
        let name = path.display().to_string();
        let case = load_case_str(&folder.merged.to_json_pretty(), &name)?;
        let format = format!("{} ranks of one job", folder.ranks.ranks.len());
        return Ok((case, Source::Trace(format)));
    }
    if let Some(first) = clocks_within.first() {
        return Err(crate::import::ranks::declare::option_error(format!(
            "`{first}`: --clocks-within relates the clocks of several ranks; give a folder of their traces"
        )));
    }
    // Only a regular file is peeked at: opening a FIFO or a device would block. Anything
    // else goes to the case reader, which refuses it at once (`not-a-file`).
    if crate::input::require_file(path).is_err() {
        return Ok((load_case_file(path)?, Source::Case));
    }
    let mut head = Vec::new();
    if let Ok(file) = crate::input::open_file(path) {
        let _ = file.take(16).read_to_end(&mut head);
    }
    let import = |path: &Path| -> Result<(Case, Source), InputError> {
        let imported =
            crate::import::import_path_audited(path, &crate::import::ImportOptions::default())?;
        let name = path.display().to_string();
        let case = load_case_str(&imported.case.to_json_pretty(), &name)?;
        Ok((case, Source::Trace(imported.format)))
    };
    if head.starts_with(SQLITE_MAGIC) {
        return import(path);
    }
    match load_case_file(path) {
        Ok(case) => Ok((case, Source::Case)),
        // A case string past its bound: a case, refused (no trace is read as a case that far).
        Err(e) if crate::case::is_too_long_string(&e) => Err(e),
        Err(e) => {
            // A trace: it says so near its start, or it is too large to be explained as
            // a case (cases that large are streamed, so only a failed one lands here).
            let (says_trace, too_large) = match crate::case::read_case_text(path) {
                Ok(t) => (
                    t.get(..t.len().min(1 << 16))
                        .unwrap_or(&t)
                        .contains("\"traceEvents\""),
                    e.code == "too-large",
                ),
                Err(read) => (false, e.code == "too-large" || read.code == "too-large"),
            };
            if says_trace {
                import(path)
            } else if too_large {
                // Too large for a case: a trace, unless it is not JSON at all, when the
                // case reader's `too-large` says more than the importer's `bad-syntax`.
                import(path).map_err(|ie| if ie.code == "bad-syntax" { e } else { ie })
            } else {
                Err(e)
            }
        }
    }
}
