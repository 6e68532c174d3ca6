//! What the splitter (`split.rs`) hands the parser (`read/pieces.rs`): the [`Piece`]s of a
//! trace, the [`Batch`]es of events with each event read ahead or not, and the event budget
//! [`MAX_EVENTS`]. Its own file so that the reader, which reads the pieces, and the
//! splitter, which reads events ahead with the reader's `read::ahead` (the `A` of a
//! [`Batch`]), share these types without a circle of files.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;

/// The most events a trace may hold (2^25 = 33,554,432): under the 2 GiB cap on its text, a
/// trace with more would average under 64 bytes an event, and a profiler's event (name,
/// `ph`, `ts`, `pid`, `tid`, ...) is longer. Past it the trace is refused (`too-large`) at
/// once, so a bomb of tiny events (`{},` × 10^9) costs seconds, not minutes (review D6).
pub(crate) const MAX_EVENTS: usize = 1 << 25;

/// The refusal of a trace past [`MAX_EVENTS`]; `events_path` is `traceEvents` or `$`.
pub(crate) fn too_many_events(events_path: &str) -> crate::error::InputError {
    let path = if events_path == "$" {
        format!("[{MAX_EVENTS}]")
    } else {
        format!("{events_path}[{MAX_EVENTS}]")
    };
    crate::error::InputError::new(
        path,
        "too-large",
        format!(
            "the trace holds more than {MAX_EVENTS} events: under the {} byte cap that would be under 64 bytes an event, shorter than any profiler's event; the rest is not read",
            crate::trace::MAX_TRACE_BYTES
        ),
    )
}

/// Events of the `traceEvents` array, cut: each span is one event's text in `text`.
#[derive(Debug)]
pub(crate) struct Batch<A> {
    /// The text the spans index.
    pub(crate) text: Vec<u8>,
    /// `(start, end)` of each event in `text`, in order.
    pub(crate) spans: Vec<(usize, usize)>,
    /// Each event read ahead on the splitter's thread (`read::ahead`), one per
    /// span; or none, for the parser to scan (see `split.rs`, `Splitter::queued`; only
    /// `split::in_thread_refusing` reads ahead).
    pub(crate) ahead: Vec<A>,
}

/// What the splitter hands the parser, in document order.
#[derive(Debug)]
pub(crate) enum Piece<A> {
    /// The document is an object: [`Piece::Key`]s follow, each with its value.
    Object,
    /// The document is a bare array of events: [`Piece::Events`] follow, then
    /// [`Piece::EventsEnd`].
    Array,
    /// A top-level key, as JSON text (with its quotes).
    Key(Vec<u8>),
    /// The value of the last key, as JSON text.
    Value(Vec<u8>),
    /// The value of the last key (`traceEvents`) is an array: [`Piece::Events`] follow, then
    /// [`Piece::EventsEnd`].
    EventsBegin,
    /// Some events of the array.
    Events(Batch<A>),
    /// The array of events ended.
    EventsEnd,
    /// The document ended, with nothing but whitespace after it.
    End,
    /// The splitter cannot follow the text: read it with the careful reader.
    Unsure,
}

/// The parser's end of the splitter's thread (`split::in_thread`): the pieces, and a way
/// back for the text of a batch once read, so that the splitter fills the same few buffers again instead of asking the
/// allocator (and the kernel) for fresh memory for every batch.
pub(crate) struct Pieces<A> {
    pub(super) rx: Receiver<Piece<A>>,
    pub(super) spent: SyncSender<Vec<u8>>,
    /// Batches sent and not yet received: the splitter reads a batch ahead only while the
    /// parser has one waiting (`split.rs`, `Splitter::queued`).
    pub(super) queued: Arc<AtomicUsize>,
}

impl<A> Pieces<A> {
    /// The next piece; `None` when the splitter is gone.
    pub(crate) fn recv(&self) -> Option<Piece<A>> {
        let piece = self.rx.recv().ok()?;
        if let Piece::Events(_) = piece {
            self.queued.fetch_sub(1, Ordering::Relaxed);
        }
        Some(piece)
    }

    /// Hands a batch's text back to the splitter for reuse (dropped if it has enough).
    pub(crate) fn give_back(&self, text: Vec<u8>) {
        let _ = self.spent.try_send(text);
    }
}
