//! Errors of Nsight Systems exports: [`crate::error::InputError`] (the file, where in it —
//! `$`, a table, a column or a row such as `CUPTI_ACTIVITY_KIND_KERNEL[rowid 12].end` — a
//! stable code, and what was expected), with the codes an export can produce.

pub use crate::error::InputError as NsysError;

/// Every code an export can produce:
///
/// | code | when |
/// |---|---|
/// | `io` | the file cannot be opened or read |
/// | `not-a-file` | a FIFO, device, socket or folder: refused before it is opened |
/// | `empty-file` | the file has no bytes |
/// | `not-sqlite` | the file does not start with the SQLite header |
/// | `truncated` | the header promises more pages than the file holds |
/// | `corrupt` | SQLite finds the database damaged while reading it |
/// | `not-nsys` | an SQLite database without any Nsight Systems table |
/// | `no-cuda-activity` | an Nsight Systems export without CUDA rows (not traced with `--trace=cuda`) |
/// | `missing-column` | a table lacks a column the reader needs |
/// | `not-a-table` | a view, trigger or virtual table stands where an expected table belongs |
/// | `wrong-column-type` | a column the reader reads is declared with another type (affinity) |
/// | `too-large` | a `StringIds` value past [`crate::trace::MAX_NAME_BYTES`] |
/// | `duplicate-row` | a table returns one rowid twice (a damaged file) |
/// | `bad-row` | a row holds NULL or a non-integer where a value is needed, or ends before it starts |
/// | `sqlite` | any other SQLite failure |
pub const NSYS_ERROR_CODES: [&str; 15] = [
    "io",
    "not-a-file",
    "empty-file",
    "not-sqlite",
    "truncated",
    "corrupt",
    "not-nsys",
    "no-cuda-activity",
    "missing-column",
    "bad-row",
    "sqlite",
    "duplicate-row",
    "not-a-table",
    "wrong-column-type",
    "too-large",
];

/// Maps an SQLite error met at `location` to a code.
pub(crate) fn sqlite_error(location: impl Into<String>, err: &rusqlite::Error) -> NsysError {
    use rusqlite::ErrorCode;
    let code = match err.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt) => "corrupt",
        Some(ErrorCode::NotADatabase) => "not-sqlite",
        Some(ErrorCode::CannotOpen) | Some(ErrorCode::PermissionDenied) => "io",
        _ => "sqlite",
    };
    let message = match code {
        "corrupt" => format!(
            "SQLite finds the database damaged ({err}); an intact `nsys export --type sqlite` file is expected (a truncated copy?)"
        ),
        "not-sqlite" => format!(
            "SQLite does not read it as a database ({err}); an `nsys export --type sqlite` file is expected"
        ),
        _ => format!("SQLite failed: {err}"),
    };
    NsysError::new(location, code, message)
}
