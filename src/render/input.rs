//! What `render` and `report` read: a case file (fixture, capture, lab output), or a trace
//! (Kineto JSON / .json.gz, Nsight Systems .sqlite) imported in memory on the way, so that
//! a trace is drawn without writing a case first. Case files of any size are streamed.

use std::io::Read;
use std::path::Path;

use crate::case::{load_case_file, load_case_str, Case};
use crate::exit::Failure;

/// What the input was read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A case file (fixture, capture, lab output).
    Case,
    /// A trace, imported: the importer's format line.
    Trace(String),
}

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Reads `path` as a case, or, when it is a trace, imports it into one.
///
/// # Errors
/// [`Failure`] (exit 2) with the case loader's or the importer's message.
pub fn load_input(path: &Path) -> Result<(Case, Source), Failure> {
    // Only a regular file is peeked at: opening a FIFO or a device would block. Anything
    // else goes to the case reader, which refuses it at once (`not-a-file`).
    if crate::input::require_file(path).is_err() {
        return Ok((load_case_file(path)?, Source::Case));
    }
    let mut head = Vec::new();
    if let Ok(file) = crate::input::open_file(path) {
        let _ = file.take(16).read_to_end(&mut head);
    }
    let import = |path: &Path| -> Result<(Case, Source), Failure> {
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
        Err(e) if crate::case::is_too_long_string(&e) => Err(e.into()),
        Err(e) => {
            // A trace: it says so near its start, or it is too large to be explained as
            // a case (cases that large are streamed, so only a failed one lands here).
            let trace = e.code == "too-large"
                || match crate::case::read_case_text(path) {
                    Ok(t) => t
                        .get(..t.len().min(1 << 16))
                        .unwrap_or(&t)
                        .contains("\"traceEvents\""),
                    Err(e) => e.code == "too-large",
                };
            if trace {
                import(path)
            } else {
                Err(e.into())
            }
        }
    }
}
