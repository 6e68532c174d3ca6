//! Errors of Nsight Systems exports: a stable code, the file, where in it, and what was
//! expected. Shaped like [`crate::case::CaseError`], so the CLI prints both the same way.

use std::fmt;

/// An export that cannot be read. Never a verdict and never a panic: malformed input is its
/// own outcome, naming the file and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NsysError {
    /// The file, as the user named it.
    pub file: String,
    /// Where: `$` for the whole file, a table (`CUPTI_ACTIVITY_KIND_KERNEL`), a column
    /// (`CUPTI_ACTIVITY_KIND_KERNEL.start`) or a row (`CUPTI_ACTIVITY_KIND_KERNEL[rowid 12].end`).
    pub location: String,
    /// Stable code, one of [`NsysError::CODES`].
    pub code: &'static str,
    /// What is wrong and what was expected.
    pub message: String,
}

impl NsysError {
    /// An error at `location` with `code` (the file is added by [`NsysError::in_file`]).
    pub(crate) fn new(
        location: impl Into<String>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        NsysError {
            file: String::new(),
            location: location.into(),
            code,
            message: message.into(),
        }
    }

    /// The same error, attributed to `file`.
    pub(crate) fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = file.into();
        self
    }

    /// Every code an export can produce:
    ///
    /// | code | when |
    /// |---|---|
    /// | `io` | the file cannot be opened or read |
    /// | `empty-file` | the file has no bytes |
    /// | `not-sqlite` | the file does not start with the SQLite header |
    /// | `truncated` | the header promises more pages than the file holds |
    /// | `corrupt` | SQLite finds the database damaged while reading it |
    /// | `not-nsys` | an SQLite database without any Nsight Systems table |
    /// | `no-cuda-activity` | an Nsight Systems export without CUDA rows (not traced with `--trace=cuda`) |
    /// | `missing-column` | a table lacks a column the reader needs |
    /// | `bad-row` | a row holds NULL or a non-integer where a value is needed, or ends before it starts |
    /// | `sqlite` | any other SQLite failure |
    pub const CODES: [&'static str; 10] = [
        "io",
        "empty-file",
        "not-sqlite",
        "truncated",
        "corrupt",
        "not-nsys",
        "no-cuda-activity",
        "missing-column",
        "bad-row",
        "sqlite",
    ];

    /// Maps an SQLite error met at `location` to a code.
    pub(crate) fn sqlite(location: impl Into<String>, err: &rusqlite::Error) -> Self {
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
}

impl fmt::Display for NsysError {
    /// `trace.sqlite: CUPTI_ACTIVITY_KIND_KERNEL[rowid 3].end: error[bad-row]: ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: error[{}]: {}",
            self.file, self.location, self.code, self.message
        )
    }
}

impl std::error::Error for NsysError {}
