//! The trace floor: profiler output read into the recorded model ([`model`]), in integer ns,
//! before any decision about what it means.
//!
//! This floor sits below the analyses that read it (`audit`, `peer::hta`) and the
//! interpretation that builds a case (`import`), and imports none of them. A newcomer's
//! question "where is a trace read?" has one answer: here.
//!
//! - [`open`]: the front door: a file opened (regular files only, `-` for standard input), its
//!   format detected from its first bytes, refused past the size cap from its size, and the
//!   recorded model read for the audit;
//! - [`source`]: the one text source every JSON reader streams (gunzip on a second thread, the
//!   cap and UTF-8 checked block by block, a `Refusal` shared with the fast path);
//! - [`kineto`]: PyTorch profiler Chrome-trace JSON: the fast path (`split`, events cut on the
//!   gunzipping thread), the careful streaming reader (`read`), exact µs → ns (`number`), the
//!   rows the importer interprets (`kineto::Read`) and the format-neutral model from the same
//!   pass (`neutral`); `lenient` reads a trace the importer refuses, for the audit;
//! - [`nsys`]: Nsight Systems SQLite exports, read-only: schema checks and rows by column name
//!   (`read`), the same rows as the format-neutral model (`neutral`).

pub mod kineto;
pub mod model;
pub mod nsys;
pub mod open;
pub mod scan;
pub mod source;

use std::path::Path;

use crate::error::InputError;

/// The largest trace text read, in bytes (2 GiB), before or after decompression: the
/// decompressor stops one byte past it, so a gzip bomb is refused as `too-large` rather than
/// exhausting memory. (Real Kineto traces reach hundreds of MB; the largest the project
/// knows of is 474 MB.)
pub const MAX_TRACE_BYTES: u64 = 2 * 1024 * 1024 * 1024;
// Standard input (`-`) is copied up to its own cap, so this cap must not exceed it.
const _: () = assert!(crate::input::MAX_STDIN_BYTES >= MAX_TRACE_BYTES);

/// The longest name (a kernel, a call, a string of an export) an import keeps, in bytes
/// (1 MiB): a demangled C++ kernel name reaches some KiB; a name past this is refused as
/// `too-large` where it is read, so that one string costs about twice its size, not once
/// per phase, label and summary line that repeats it (review D9: 19× for a 100 MB string).
pub const MAX_NAME_BYTES: usize = 1 << 20;

/// Options of reading a trace (and of an import), apart from where things are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Round values with digits below 1 ns to the nearest ns (halves away from zero)
    /// instead of refusing them.
    pub round_sub_ns: bool,
}

/// The trace formats `import` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzipped.
    KinetoJson,
    /// An Nsight Systems SQLite export (`nsys export --type sqlite`).
    NsysSqlite,
}

/// The SQLite file header.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Recognises a trace by its first bytes, then by its name.
///
/// # Errors
/// `unsupported-format` for an Nsight Systems report that has not been exported to SQLite.
pub fn detect(path: &Path, head: &[u8]) -> Result<TraceFormat, InputError> {
    if head.starts_with(SQLITE_MAGIC) {
        return Ok(TraceFormat::NsysSqlite);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if name.ends_with(".nsys-rep") || name.ends_with(".qdrep") {
        return Err(InputError::new(
            "$",
            "unsupported-format",
            "an Nsight Systems report is read through its SQLite export: run `nsys export --type sqlite FILE` and import the .sqlite file",
        )
        .in_file(path.display().to_string()));
    }
    if name.ends_with(".sqlite") || name.ends_with(".sqlite3") {
        return Ok(TraceFormat::NsysSqlite);
    }
    Ok(TraceFormat::KinetoJson)
}
