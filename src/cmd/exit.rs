//! Exit codes and [`Failure`], the one error type every command returns.
//!
//! Only the command layer (`cmd/`) and `cli.rs` name them: the modules below return their
//! own errors and outcomes ([`InputError`], [`crate::error::Refusal`], a lesson's or a form's
//! error), and each command maps those to a code here, so `cli.rs` depends on the commands,
//! never the reverse. Exit codes are public interface: 0 success, 1 a failed check or
//! contradiction, 2 a usage or input error, 3 CUDA not available.

use std::io;

use crate::error::InputError;

/// Exit code: everything checked agrees.
pub const EXIT_OK: u8 = 0;
/// Exit code: a check failed (an expectation disagrees, a form has contradictions, a
/// comparison row matches `--fail-on`).
pub const EXIT_FAILED: u8 = 1;
/// Exit code: bad usage or malformed input.
pub const EXIT_INPUT: u8 = 2;
/// Exit code: CUDA is not available (no `cuda` feature, no driver, no device) or the device
/// failed.
pub const EXIT_NO_CUDA: u8 = 3;

/// A command's failure: what to print on stderr and the exit code.
#[derive(Debug)]
pub struct Failure {
    /// Message lines.
    pub message: String,
    /// Exit code.
    pub code: u8,
}

impl Failure {
    /// An input or usage error (exit 2) with `message`.
    pub fn input(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: EXIT_INPUT,
        }
    }
}

impl From<InputError> for Failure {
    /// Malformed input: the message names file, field and code; exit 2.
    fn from(e: InputError) -> Self {
        Failure {
            message: e.to_string(),
            code: EXIT_INPUT,
        }
    }
}

impl From<io::Error> for Failure {
    /// A closed pipe (`worksheet check | head`) is a normal end: exit 0, say nothing.
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure {
                message: String::new(),
                code: EXIT_OK,
            }
        } else {
            Failure {
                message: format!("error: writing output: {e}"),
                code: EXIT_INPUT,
            }
        }
    }
}

impl From<crate::error::Refusal> for Failure {
    /// A refused request (an output that exists, a folder that cannot be written): exit 2.
    fn from(e: crate::error::Refusal) -> Self {
        Failure {
            message: e.message,
            code: EXIT_INPUT,
        }
    }
}

impl From<crate::error::Stopped> for Failure {
    /// A refusal (exit 2), or the output stream failing (a closed pipe is exit 0).
    fn from(e: crate::error::Stopped) -> Self {
        match e {
            crate::error::Stopped::Refused(r) => r.into(),
            crate::error::Stopped::Write(io) => io.into(),
        }
    }
}
