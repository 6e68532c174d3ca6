//! A tap on the fast path: what a reader outside the importer (`peer::hta`) needs of each
//! event, handed to it in the same pass, from the same slices of text the importer parses.
//!
//! ```text
//!  splitter ──batches of event slices──▶ read_pieces ──▶ importer's visitors ──▶ Read
//!                                             └──tap.event(i, slice)──▶ e.g. HTA's rows
//! ```
//!
//! The file is read, gunzipped and cut once; a tap sees every top-level value and every event
//! in document order. When the fast path gives up (the careful reader must read the file),
//! the caller says so with [`EventTap::abandon`]: what the tap saw is then incomplete.

/// Sees the top-level values and every event of a trace the fast path reads.
pub trait EventTap {
    /// A top-level key other than the events (`distributedInfo`, ...) and its JSON text.
    fn top_value(&mut self, key: &str, text: &[u8]);
    /// The events begin: `events_path` is `traceEvents`, or `$` for a bare array.
    fn events_begin(&mut self, events_path: &'static str);
    /// One event's JSON text; `index` is its position in the events array.
    fn event(&mut self, index: usize, text: &[u8]);
    /// The fast path gave up: what this tap saw is not the whole trace.
    fn abandon(&mut self);
}

/// A tap that sees nothing (the importer alone).
pub struct NoTap;

impl EventTap for NoTap {
    fn top_value(&mut self, _: &str, _: &[u8]) {}
    fn events_begin(&mut self, _: &'static str) {}
    fn event(&mut self, _: usize, _: &[u8]) {}
    fn abandon(&mut self) {}
}
