//! Errors of case files: [`crate::error::InputError`] under its case name, and the codes a
//! case file can produce.

pub use crate::error::InputError as CaseError;

/// Every error code a case file can produce, for documentation and tests.
pub const CASE_ERROR_CODES: [&str; 25] = [
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
    "not-a-file",
    "symlink-loop",
    "wrong-kind",
];
