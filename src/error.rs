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

/// A request refused, already worded for the user: the message names the file, a stable
/// `error[code]` and what was expected (an output that exists without `--force`, a folder
/// that cannot be written, a table that cannot be encoded). The commands exit 2 on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The whole message, as printed.
    pub message: String,
}

impl Refusal {
    /// A refusal saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Refusal {
            message: message.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refusal {}

impl From<InputError> for Refusal {
    /// Malformed input, worded as [`InputError`] prints it.
    fn from(e: InputError) -> Self {
        Refusal::new(e.to_string())
    }
}

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

/// Refuses text that starts with a UTF-8 byte-order mark, naming it (serde_json would say
/// only "expected value at line 1 column 1").
///
/// # Errors
/// `bad-syntax` at `$`, line 1.
pub(crate) fn refuse_bom(text: &str) -> Result<(), InputError> {
    if text.starts_with('\u{feff}') {
        return Err(InputError::new(
            "$",
            "bad-syntax",
            "the text starts with a byte-order mark (U+FEFF, bytes EF BB BF); UTF-8 text without a BOM is expected: save the file again without it",
        )
        .at_line(1));
    }
    Ok(())
}

/// A clearer message for a JSON syntax error whose cause serde_json does not name: `NaN`
/// or `Infinity` where a number goes (JSON has neither), and an unpaired UTF-16 surrogate
/// escape such as `\ud800`. Names the field when the value follows a key. `None` when the
/// error is none of these.
pub(crate) fn explain_syntax(text: &str, err: &serde_json::Error) -> Option<String> {
    if err.line() == 0 {
        return None;
    }
    let line_start: usize = text
        .split_inclusive('\n')
        .take(err.line() - 1)
        .map(str::len)
        .sum();
    let at = (line_start + err.column()).min(text.len());
    let from = text.floor_char_boundary_compat(at.saturating_sub(12));
    let to = text.floor_char_boundary_compat((at + 12).min(text.len()));
    let window = &text[from..to];
    let field = |token_at: usize| {
        key_before(&text[..token_at])
            .map(|k| format!(" in field `{k}`"))
            .unwrap_or_default()
    };
    for token in ["-Infinity", "Infinity", "NaN"] {
        if let Some(i) = window.find(token) {
            return Some(format!(
                "`{token}`{} is not a JSON number (JSON has no NaN or Infinity); a finite number is expected",
                field(from + i),
            ));
        }
    }
    let message = err.to_string();
    if !(message.contains("escape") || message.contains("surrogate")) {
        return None;
    }
    let lower = window.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    for i in 0..bytes.len().saturating_sub(5) {
        if bytes[i] == b'\\'
            && bytes[i + 1] == b'u'
            && bytes[i + 2] == b'd'
            && matches!(bytes[i + 3], b'8'..=b'9' | b'a'..=b'f')
        {
            let escape = window.get(i..i + 6).unwrap_or("\\udXXX");
            return Some(format!(
                "`{escape}` is half of a UTF-16 surrogate pair with no other half: JSON strings hold Unicode characters, so a surrogate escape needs its pair (like `\\ud83d\\ude00`)"
            ));
        }
    }
    None
}

/// `str::floor_char_boundary`, which is not stable on the minimum supported Rust.
trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, at: usize) -> usize;
}

impl FloorCharBoundary for str {
    fn floor_char_boundary_compat(&self, mut at: usize) -> usize {
        at = at.min(self.len());
        while !self.is_char_boundary(at) {
            at -= 1;
        }
        at
    }
}

/// The key of `"key": ` just before the end of `text`, if `text` ends with one.
fn key_before(text: &str) -> Option<&str> {
    let t = text
        .trim_end()
        .strip_suffix(':')?
        .trim_end()
        .strip_suffix('"')?;
    let start = t.rfind('"')?;
    let key = &t[start + 1..];
    (key.len() <= 64).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_serde_does_not_name_are_named() {
        let text = "{\n  \"ts\": 5,\n  \"dur\": NaN\n}";
        let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        let m = explain_syntax(text, &e).unwrap();
        assert!(
            m.starts_with("`NaN` in field `dur` is not a JSON number"),
            "{m}"
        );
        let text = "[1, -Infinity]";
        let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        assert!(explain_syntax(text, &e)
            .unwrap()
            .starts_with("`-Infinity` is not"));
        let text = "{\"name\": \"a\\ud800\"}";
        let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        let m = explain_syntax(text, &e).unwrap();
        assert!(
            m.starts_with("`\\ud800` is half of a UTF-16 surrogate pair"),
            "{m}"
        );
        let text = "{\"a\": tru}";
        let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        assert_eq!(explain_syntax(text, &e), None);
        assert_eq!(refuse_bom("\u{feff}{}").unwrap_err().code, "bad-syntax");
        assert!(refuse_bom("{}").is_ok());
    }

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

/// Why work that writes to an output stream stopped: a [`Refusal`], or the stream failing
/// (a closed pipe, `worksheet … | head`, is a normal end at the command line).
#[derive(Debug)]
pub enum Stopped {
    /// Refused, worded for the user (exit 2 at the command line).
    Refused(Refusal),
    /// Writing to the output stream failed.
    Write(std::io::Error),
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stopped::Refused(r) => r.fmt(f),
            Stopped::Write(e) => write!(f, "writing output: {e}"),
        }
    }
}

impl std::error::Error for Stopped {}

impl From<Refusal> for Stopped {
    fn from(e: Refusal) -> Self {
        Stopped::Refused(e)
    }
}

impl From<InputError> for Stopped {
    fn from(e: InputError) -> Self {
        Stopped::Refused(e.into())
    }
}

impl From<std::io::Error> for Stopped {
    fn from(e: std::io::Error) -> Self {
        Stopped::Write(e)
    }
}
