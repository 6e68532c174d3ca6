//! Errors of form files: a stable code, the file, the field and (where known) the line.
//!
//! A malformed form is neither clean nor contradictory: `worksheet form` exits 2 on it and
//! names the field, the way [`crate::case::CaseError`] does for case files.

pub use crate::error::InputError as FormError;

/// Every error code a form file can produce, for documentation and tests.
pub const FORM_ERROR_CODES: [&str; 24] = [
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
    "not-a-file",
    "symlink-loop",
    "locked",
    "wrong-kind",
    "end-of-input",
];
