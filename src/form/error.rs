//! Errors of form files: a stable code, the file, the field and (where known) the line.
//!
//! A malformed form is neither clean nor contradictory: `worksheet form` exits 2 on it and
//! names the field, the way [`crate::case::CaseError`] does for case files.

use std::fmt;

/// A form that cannot be read, parsed or validated (exit 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormError {
    /// The file, as the user named it (empty until [`FormError::in_file`]).
    pub file: String,
    /// The field, like `start.clock.instance` or `included[2]` (`$` for the whole file).
    pub field: String,
    /// Stable code, such as `unknown-step`.
    pub code: &'static str,
    /// What is wrong and what was expected.
    pub message: String,
    /// Line (1-based) where the position is known (syntax errors, CSV rows).
    pub line: Option<usize>,
}

impl FormError {
    /// An error at `field` with `code`.
    pub fn new(field: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        FormError {
            file: String::new(),
            field: field.into(),
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

    /// The same error, at `line`.
    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    /// Every error code a form file can produce, for documentation and tests.
    pub const CODES: [&'static str; 19] = [
        "io",
        "too-large",
        "bad-syntax",
        "not-an-object",
        "unsupported-format",
        "unsupported-version",
        "missing-field",
        "unknown-field",
        "duplicate-field",
        "wrong-type",
        "unknown-variant",
        "bad-value",
        "empty-step",
        "duplicate-step",
        "reserved-step",
        "unknown-step",
        "bad-binding",
        "missing-binding",
        "unknown-reference",
    ];
}

impl fmt::Display for FormError {
    /// `my.json: start.clock: error[wrong-type]: ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(
            f,
            ": {}: error[{}]: {}",
            self.field, self.code, self.message
        )
    }
}

impl std::error::Error for FormError {}
