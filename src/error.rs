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

/// The stable code of a serde data error, from its message: `missing-field`,
/// `unknown-field`, `duplicate-field`, `unknown-variant`, `wrong-type` (a value of the wrong
/// JSON type or shape), else `bad-value` (a value of the right type that is refused).
pub(crate) fn serde_data_code(message: &str) -> &'static str {
    const CODES: [(&str, &str); 7] = [
        ("missing field", "missing-field"),
        ("unknown field", "unknown-field"),
        ("duplicate field", "duplicate-field"),
        ("unknown variant", "unknown-variant"),
        ("invalid type", "wrong-type"),
        ("invalid length", "wrong-type"),
        ("data did not match any variant", "wrong-type"),
    ];
    CODES
        .iter()
        .find(|(prefix, _)| message.starts_with(prefix))
        .map_or("bad-value", |(_, code)| code)
}

/// A serde_json message without its " at line L column C" suffix (readers report the line
/// in its own place).
///
/// Rust type names in serde's "expected …" become words a user knows: `expected u32` →
/// `expected an integer`, `expected f64` → `expected a number`.
pub(crate) fn without_position(message: &str) -> String {
    let message = match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    };
    plain_types(message)
}

fn plain_types(message: &str) -> String {
    const INTEGERS: [&str; 12] = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
    ];
    let Some(at) = message.rfind("expected ") else {
        return message.to_owned();
    };
    let (head, tail) = message.split_at(at + "expected ".len());
    let word_end = tail
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(tail.len());
    let (word, rest) = tail.split_at(word_end);
    let plain = if INTEGERS.contains(&word) {
        if word.starts_with('u') {
            "a non-negative integer"
        } else {
            "an integer"
        }
    } else if word == "f32" || word == "f64" {
        "a number"
    } else {
        return message.to_owned();
    };
    format!("{head}{plain}{rest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_map_to_stable_codes() {
        assert_eq!(serde_data_code("missing field `format`"), "missing-field");
        assert_eq!(
            serde_data_code("invalid type: string \"1\", expected u32"),
            "wrong-type"
        );
        assert_eq!(
            serde_data_code("unknown variant `done`, expected one of"),
            "unknown-variant"
        );
        assert_eq!(serde_data_code("`x` is not a decimal number"), "bad-value");
        assert_eq!(
            without_position("EOF while parsing a list at line 3 column 0"),
            "EOF while parsing a list"
        );
    }

    #[test]
    fn rust_type_names_become_words() {
        assert_eq!(
            without_position("invalid type: string \"1\", expected u32 at line 3 column 14"),
            "invalid type: string \"1\", expected a non-negative integer"
        );
        assert_eq!(
            without_position("invalid type: map, expected i64"),
            "invalid type: map, expected an integer"
        );
        assert_eq!(
            without_position("invalid type: string \"x\", expected f64"),
            "invalid type: string \"x\", expected a number"
        );
        assert_eq!(
            without_position("invalid type: integer `1`, expected a string"),
            "invalid type: integer `1`, expected a string"
        );
        assert_eq!(without_position("expected u32x"), "expected u32x");
    }
}
