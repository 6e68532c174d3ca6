//! Input errors: what every reader of user files (cases, forms, traces) returns for
//! malformed input — a stable code, the file, the path of the field, and the line where the
//! format has lines.
//!
//! Malformed input is never a verdict: it is an error, printed as
//! `FILE[:LINE]: PATH: error[CODE]: message`, and the commands exit 2 on it.

use std::fmt;

/// A file that cannot be read, parsed or validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file, as the user named it (empty until [`InputError::in_file`]).
    pub file: String,
    /// Path of the offending field, like `phases[1].end` or `start.clock.instance` (`$` for
    /// the whole file).
    pub path: String,
    /// Stable code, such as `reversed-interval`.
    pub code: &'static str,
    /// What is wrong and what was expected.
    pub message: String,
    /// Line (1-based) where the format has lines and the position is known.
    pub line: Option<usize>,
}

impl InputError {
    /// An error at `path` with `code`.
    pub fn new(path: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        InputError {
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

    /// The same error, at `line`.
    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }
}

impl fmt::Display for InputError {
    /// `fixtures/x.json: phases[1].end: error[reversed-interval]: ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}: error[{}]: {}", self.path, self.code, self.message)
    }
}

impl std::error::Error for InputError {}
