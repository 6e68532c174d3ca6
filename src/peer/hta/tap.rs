//! HTA's rows gathered in the import's (or the audit's) own pass: a [`HtaTap`] sees every
//! event's slice of text as the fast path cuts it, and reads it as [`HtaTrace::from_text`]
//! reads each element of the whole text. The file is read, gunzipped and cut once; no text is
//! held beyond the batch in flight.
//!
//! Why a side record and not the recorded model: HTA's frame has a row for every event with
//! `dur` and `cat` (host ops the importer sets aside too), reads `args.stream` from a string
//! as Python's `int()` does, and rounds only when *some* event's `ts` (any event, metadata
//! included) is written with a fraction or an exponent, or is missing. The model keeps
//! neither the events it does not interpret nor how a number was written.

use std::collections::BTreeSet;

use super::{HtaTrace, Result};
use crate::error::InputError as ImportError;
use crate::trace::kineto::tap::EventTap;
use crate::trace::ReadOptions as ImportOptions;

/// Gathers HTA's view of a Kineto trace from the pass that reads it
/// ([`crate::trace::kineto::tap`]).
#[derive(Debug)]
pub struct HtaTap {
    options: ImportOptions,
    trace: HtaTrace,
    symbols: BTreeSet<String>,
    /// `traceEvents`, or empty for a bare array (HTA's paths: `traceEvents[3]`, `[3]`).
    prefix: &'static str,
    events_seen: bool,
    /// The first error (HTA stops there).
    error: Option<ImportError>,
    abandoned: bool,
}

impl HtaTap {
    /// A tap reading numbers under `options`.
    pub fn new(options: &ImportOptions) -> Self {
        HtaTap {
            options: *options,
            trace: HtaTrace::default(),
            symbols: BTreeSet::new(),
            prefix: "traceEvents",
            events_seen: false,
            error: None,
            abandoned: false,
        }
    }

    /// HTA's view of the trace the pass read; `None` when the pass did not see the whole trace
    /// (the fast path gave up: the caller reads the file itself).
    ///
    /// # Errors
    /// What [`HtaTrace::from_text`] returns for the same text (without the file's name).
    pub fn finish(mut self) -> Option<Result<HtaTrace>> {
        if self.abandoned {
            return None;
        }
        if let Some(e) = self.error {
            return Some(Err(e));
        }
        if !self.events_seen {
            return Some(Err(ImportError::new(
                "traceEvents",
                "missing-field",
                "no `traceEvents` array",
            )));
        }
        self.trace.step_symbols = self.symbols.len();
        Some(Ok(self.trace))
    }
}

impl EventTap for HtaTap {
    fn top_value(&mut self, key: &str, text: &[u8]) {
        if key == "distributedInfo" {
            self.trace.rank = serde_json::from_slice::<serde_json::Value>(text)
                .ok()
                .and_then(|d| d.get("rank").and_then(serde_json::Value::as_i64));
        }
    }

    fn events_begin(&mut self, events_path: &'static str) {
        self.events_seen = true;
        self.prefix = if events_path == "$" { "" } else { events_path };
    }

    fn event(&mut self, index: usize, text: &[u8]) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) =
            self.trace
                .read_event(index, self.prefix, text, &self.options, &mut self.symbols)
        {
            self.error = Some(e);
        }
    }

    fn abandon(&mut self) {
        self.abandoned = true;
    }
}
