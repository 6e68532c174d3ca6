//! Errors of case files: a stable code, the file, the JSON path and (for syntax) the line.

use std::fmt;

/// A case file that cannot be loaded. Never a verdict: malformed input is its own outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseError {
    /// The file, as the user named it.
    pub file: String,
    /// JSON path of the offending field, like `phases[1].end` (`$` for the whole file).
    pub path: String,
    /// Stable code, such as `reversed-interval`.
    pub code: &'static str,
    /// What is wrong and what was expected.
    pub message: String,
    /// Line (1-based) where the format has lines and the position is known.
    pub line: Option<usize>,
}

impl CaseError {
    /// An error at `path` with `code`.
    pub fn new(path: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        CaseError {
            file: String::new(),
            path: path.into(),
            code,
            message: message.into(),
            line: None,
        }
    }

    /// The same error, attributed to `file`.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = file.into();
        self
    }

    /// Every error code a case file can produce, for documentation and tests.
    pub const CODES: [&'static str; 22] = [
        "bad-syntax",
        "too-large",
        "io",
        "unsupported-format",
        "unsupported-version",
        "missing-field",
        "unknown-field",
        "duplicate-field",
        "wrong-type",
        "unknown-variant",
        "missing-unit",
        "unknown-unit",
        "bad-value",
        "inexact-value",
        "overflow",
        "reversed-interval",
        "unknown-reference",
        "duplicate-id",
        "missing-instance",
        "empty-id",
        "inconsistent-event",
        "bad-program",
    ];
}

impl fmt::Display for CaseError {
    /// `fixtures/x.json: phases[1].end: reversed-interval: ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}: error[{}]: {}", self.path, self.code, self.message)
    }
}

impl std::error::Error for CaseError {}
