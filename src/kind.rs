//! Which kind of `worksheet` file a JSON document is, so that a file given to the wrong
//! command gets the command to use instead (a form to `eval`, a case to `import`, a trace
//! to `check`) rather than a list of unknown fields.
//!
//! Only consulted after a file has failed to load, so the extra parse costs nothing on the
//! good path.

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::error::InputError;

#[derive(Deserialize)]
struct Peek {
    format: Option<String>,
    #[serde(rename = "traceEvents")]
    trace_events: Option<IgnoredAny>,
}

/// What a JSON document says it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `"format": "worksheet-case"`.
    Case,
    /// `"format": "worksheet-form"`.
    Form,
    /// A Kineto / Chrome trace (`traceEvents`).
    Trace,
    /// Another `worksheet-…` report (check, eval, compare, …).
    Report(String),
    /// Not JSON, or nothing recognisable.
    Unknown,
}

/// Peeks at `text`.
pub fn peek(text: &str) -> FileKind {
    kind_of(serde_json::from_str::<Peek>(text))
}

/// Peeks at the JSON document `reader` gives, streaming: values are skipped, not kept, so a
/// document of any size is looked at in bounded memory.
pub fn peek_reader(reader: impl std::io::Read) -> FileKind {
    kind_of(serde_json::from_reader::<_, Peek>(std::io::BufReader::new(
        reader,
    )))
}

fn kind_of(peeked: Result<Peek, serde_json::Error>) -> FileKind {
    match peeked {
        Ok(p) => match p.format.as_deref() {
            Some("worksheet-case") => FileKind::Case,
            Some("worksheet-form") => FileKind::Form,
            Some(f) if f.starts_with("worksheet-") => FileKind::Report(f.to_owned()),
            _ if p.trace_events.is_some() => FileKind::Trace,
            _ => FileKind::Unknown,
        },
        Err(_) => FileKind::Unknown,
    }
}

/// A `wrong-kind` error for a file of kind `found` given where a case is expected, or `None`
/// when the file does not say it is something else.
pub fn not_a_case(text: &str) -> Option<InputError> {
    let hint = match peek(text) {
        FileKind::Form => "this is a worksheet-form, not a case: use `worksheet form check FILE` (and `--capture CASE` to answer it from a case)".to_owned(),
        FileKind::Trace => "this is a raw trace, not a case: import it first with `worksheet import FILE -o case.json`".to_owned(),
        FileKind::Report(f) => format!("this is a `{f}` report (command output), not a case"),
        FileKind::Case | FileKind::Unknown => return None,
    };
    Some(InputError::new("format", "wrong-kind", hint))
}

/// A `wrong-kind` error for a case (or report) given where a form is expected.
pub fn not_a_form(text: &str) -> Option<InputError> {
    let hint = match peek(text) {
        FileKind::Case => "this is a worksheet-case, not a form: use `worksheet eval`, `check` or `render` on it, or `worksheet form check FORM --capture FILE`".to_owned(),
        FileKind::Trace => "this is a raw trace, not a form: `worksheet import FILE -o case.json` turns it into a case".to_owned(),
        FileKind::Report(f) => format!("this is a `{f}` report (command output), not a form"),
        FileKind::Form | FileKind::Unknown => return None,
    };
    Some(InputError::new("format", "wrong-kind", hint))
}

/// A `wrong-kind` error for a worksheet file given to `import`.
pub fn not_a_trace(text: &str) -> Option<InputError> {
    not_a_trace_kind(peek(text))
}

/// A `wrong-kind` error for a worksheet file of `kind` given to `import`.
pub fn not_a_trace_kind(kind: FileKind) -> Option<InputError> {
    let hint = match kind {
        FileKind::Case => "already a worksheet case: use `worksheet eval`, `check` or `render` on it (or `compare`)",
        FileKind::Form => "this is a worksheet-form: use `worksheet form check FILE`",
        FileKind::Report(_) => "this is a worksheet report (command output), not a trace",
        FileKind::Trace | FileKind::Unknown => return None,
    };
    Some(InputError::new("format", "wrong-kind", hint))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_recognised() {
        assert_eq!(
            peek(r#"{"format": "worksheet-case", "version": 1}"#),
            FileKind::Case
        );
        assert_eq!(peek(r#"{"format": "worksheet-form"}"#), FileKind::Form);
        assert_eq!(peek(r#"{"traceEvents": []}"#), FileKind::Trace);
        assert_eq!(
            peek(r#"{"format": "worksheet-eval"}"#),
            FileKind::Report("worksheet-eval".into())
        );
        assert_eq!(peek("not json"), FileKind::Unknown);
        assert!(not_a_case(r#"{"format": "worksheet-case"}"#).is_none());
        let e = not_a_case(r#"{"format": "worksheet-form"}"#).unwrap();
        assert_eq!(e.code, "wrong-kind");
        assert!(e.message.contains("worksheet form check"));
    }
}
