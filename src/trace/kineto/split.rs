//! Cutting a Kineto trace's text into whole events, on the decompressing thread, so that the
//! parser reads each event from a slice instead of byte by byte from a reader.
//!
//! `serde_json` parses a slice 2–3× faster per byte than a `Read` (its reader path goes
//! through `Read::bytes` and keeps a line and column count for every byte). The splitter
//! runs on the thread that gunzips the text: it follows the document's structure only as
//! far as it must — strings (with `memchr` to their closing quote), nesting depth, and the
//! commas and colons of the top-level object and of the `traceEvents` array — and hands the
//! parser [`Piece`]s: each top-level key and value as its own text, and the events in
//! batches of about [`BATCH_BYTES`] and at most [`BATCH_EVENTS`] events, each event a span of
//! the batch's text. It checks no value: the parser does, with the same visitors as the
//! careful reader.
//!
//! The splitter is a fast path, not a second reader. Whenever it cannot follow the text
//! (not an object or array, a stray byte between two values, nesting deeper than
//! [`MAX_DEPTH`], one value past [`MAX_VALUE_BYTES`], an escaped top-level key, or trouble
//! reading: a damaged gzip stream, bytes that are not UTF-8, the size cap), it sends
//! [`Piece::Unsure`] and stops; the importer then reads the file again with the careful
//! streaming reader (`read.rs`), which reports the exact path, code and message of the
//! problem. So the fast path changes no answer and no error; it only decides how fast a
//! well-formed trace is read.
//!
//! Memory: the events in flight ([`BATCHES_IN_FLIGHT`] batches) and the value being cut. A
//! batch holds at most [`BATCH_BYTES`] of text (and one event past it) and [`BATCH_EVENTS`]
//! spans with their readings ahead, whatever the events' size: a bomb of `{}` events costs
//! what a real trace does.

use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

pub(crate) use super::handoff::{too_many_events, MAX_EVENTS};
use super::read::Ahead;

/// A batch of events, each read ahead or not ([`super::handoff::Batch`]).
pub(crate) type Batch = super::handoff::Batch<Ahead>;
/// What the splitter hands the parser ([`super::handoff::Piece`]).
pub(crate) type Piece = super::handoff::Piece<Ahead>;
/// The parser's end of the splitter's thread ([`super::handoff::Pieces`]).
pub(crate) type Pieces = super::handoff::Pieces<Ahead>;
use std::sync::Arc;
use std::thread::Scope;

/// Bytes of events in one batch handed to the parser (a batch ends at an event's end).
pub(crate) const BATCH_BYTES: usize = 1 << 19;

/// Events in one batch at most. A real trace's events are about 250 bytes (about 2,000 to a
/// batch of [`BATCH_BYTES`]); without this bound a batch of 3-byte `{},` events held 175,000
/// spans and their readings ahead (about 16 MB for 0.5 MB of text), and a bomb of them took
/// 184–194 MB to refuse (`docs/limits.md`).
pub(crate) const BATCH_EVENTS: usize = 1 << 12;

/// Batches (and top-level pieces) the splitter may have ready before it waits: enough to
/// keep both threads busy; each costs about `BATCH_BYTES + READ_BYTES` of text, and at most
/// [`BATCH_EVENTS`] spans with their readings ahead.
pub(crate) const BATCHES_IN_FLIGHT: usize = 2;

/// Bytes read from the text at a time.
const READ_BYTES: usize = 1 << 18;

/// The deepest nesting the splitter follows inside one value. The careful reader parses
/// the whole document with `serde_json`'s recursion limit (128 levels, counted from the
/// top); a slice parser counts from the event. Deeper text goes to the careful reader, so
/// that both refuse the same traces.
pub(crate) const MAX_DEPTH: usize = 100;

/// The longest single value (an event, or a top-level value) the splitter holds whole;
/// a longer one goes to the careful reader, which streams it.
pub(crate) const MAX_VALUE_BYTES: usize = 64 << 20;
/// Why the splitter stopped early.
enum Stop {
    /// It could not follow the text (the parser is told [`Piece::Unsure`]).
    Unsure,
    /// The parser is gone.
    Closed,
}

/// How far a scan got.
enum Scan {
    /// The value ends just before this index.
    Done(usize),
    /// The text ends first: read more.
    More,
    /// Too deep to follow.
    Unsure,
}

/// Cuts `text` into [`Piece`]s on a thread of `scope`. When the [`Pieces`] are dropped (the
/// parser stopped), the thread stops at its next piece.
pub(crate) fn in_thread<'scope, R: Read + Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    text: R,
) -> Pieces {
    spawn(scope, text, None, false)
}

/// [`in_thread`] for the importer ([`super::read::read_pieces`]): setting `refusal` when
/// the trace passes [`MAX_EVENTS`] (the splitter then stops, and the caller need not read
/// the file again to learn why), and reading each event ahead ([`Batch::ahead`]), so that
/// the scan of the events runs on the splitter's thread while the main thread builds
/// (issue 24 §2).
pub(crate) fn in_thread_refusing<'scope, R: Read + Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    text: R,
    refusal: Option<crate::trace::source::Refusal>,
) -> Pieces {
    spawn(scope, text, refusal, true)
}

/// The splitter's thread, reading events ahead when `read_ahead`.
fn spawn<'scope, R: Read + Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    text: R,
    refusal: Option<crate::trace::source::Refusal>,
    read_ahead: bool,
) -> Pieces {
    let (tx, rx) = sync_channel(BATCHES_IN_FLIGHT);
    let (spent, reuse) = sync_channel(BATCHES_IN_FLIGHT + 2);
    let queued = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&queued);
    scope.spawn(move || {
        split(
            text,
            &tx,
            Some(&reuse),
            (READ_BYTES, BATCH_BYTES),
            refusal.as_ref(),
            read_ahead.then_some(&*counter),
        );
    });
    Pieces { rx, spent, queued }
}

/// Cuts `text` into pieces sent to `tx`, reading `read_bytes` at a time and batching about
/// `batch_bytes` of events; buffers the parser gave back come from `reuse`.
fn split<R: Read>(
    text: R,
    tx: &SyncSender<Piece>,
    reuse: Option<&Receiver<Vec<u8>>>,
    (read_bytes, batch_bytes): (usize, usize),
    refusal: Option<&crate::trace::source::Refusal>,
    queued: Option<&AtomicUsize>,
) {
    let mut splitter = Splitter {
        src: text,
        tx,
        reuse,
        buf: Vec::new(),
        pos: 0,
        spans: Vec::new(),
        span_bytes: 0,
        read_bytes,
        batch_bytes,
        events: 0,
        events_path: "$",
        refusal,
        queued,
    };
    if let Err(Stop::Unsure) = splitter.document() {
        // Nothing more to do whether or not the parser is still there.
        let _ = tx.send(Piece::Unsure);
    }
}

/// JSON whitespace.
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The end of the string whose opening quote is just before `i`.
fn string_end(buf: &[u8], mut i: usize) -> Scan {
    loop {
        let Some(k) = buf
            .get(i..)
            .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
        else {
            return Scan::More;
        };
        let j = i + k;
        if buf[j] == b'"' {
            return Scan::Done(j + 1);
        }
        // A backslash: the next byte is escaped, whatever it is.
        i = j + 2;
    }
}

/// The end of the JSON value that starts at `start` (its first byte, not whitespace).
/// Values are not checked: brackets are only counted, scalars run to the next delimiter.
fn value_end(buf: &[u8], start: usize) -> Scan {
    match buf[start] {
        b'"' => string_end(buf, start + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            while i < buf.len() {
                match buf[i] {
                    b'"' => match string_end(buf, i + 1) {
                        Scan::Done(end) => {
                            i = end;
                            continue;
                        }
                        other => return other,
                    },
                    b'{' | b'[' => {
                        depth += 1;
                        if depth > MAX_DEPTH {
                            return Scan::Unsure;
                        }
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Scan::Done(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            Scan::More
        }
        _ => match buf[start..]
            .iter()
            .position(|&b| matches!(b, b',' | b'}' | b']' | b':') || is_ws(b))
        {
            Some(k) => Scan::Done(start + k),
            None => Scan::More,
        },
    }
}

/// The splitter's state: the text read and not yet handed on.
struct Splitter<'t, R> {
    src: R,
    tx: &'t SyncSender<Piece>,
    reuse: Option<&'t Receiver<Vec<u8>>>,
    /// Text read; `pos` is the first byte not yet consumed.
    buf: Vec<u8>,
    pos: usize,
    /// Events cut and not yet sent: spans of `buf`.
    spans: Vec<(usize, usize)>,
    span_bytes: usize,
    read_bytes: usize,
    batch_bytes: usize,
    /// Events cut so far, against [`MAX_EVENTS`].
    events: usize,
    /// `traceEvents` or `$`, for the refusal's path.
    events_path: &'static str,
    refusal: Option<&'t crate::trace::source::Refusal>,
    /// When set, batches sent and not yet received by the parser: a batch is read ahead
    /// ([`Batch::ahead`]) only while the parser has one waiting, that is while the parser is
    /// the slower of the two threads; else the parser scans it. So the scan's work goes to
    /// whichever core has time, batch by batch (on a loaded machine as on an idle one).
    queued: Option<&'t AtomicUsize>,
}

impl<R: Read> Splitter<'_, R> {
    fn send(&self, piece: Piece) -> Result<(), Stop> {
        self.tx.send(piece).map_err(|_| Stop::Closed)
    }

    /// Reads at least `self.read_bytes`, and at least `want` bytes when more is wanted (so a
    /// long value is rescanned a logarithmic number of times). `false` at the end of the
    /// text.
    fn more(&mut self, want: usize) -> Result<bool, Stop> {
        let chunk = self.read_bytes.max(want);
        let old = self.buf.len();
        self.buf.resize(old + chunk, 0);
        let got = loop {
            match self.src.read(&mut self.buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Trouble reading (damaged gzip, not UTF-8, too large): the careful reader
                // reports it exactly.
                Err(_) => {
                    self.buf.truncate(old);
                    return Err(Stop::Unsure);
                }
            }
        };
        self.buf.truncate(old + got);
        Ok(got > 0)
    }

    /// Skips whitespace; `self.pos` is then at the next byte, which is returned.
    fn next_byte(&mut self) -> Result<u8, Stop> {
        loop {
            if let Some(k) = self.buf[self.pos..].iter().position(|&b| !is_ws(b)) {
                self.pos += k;
                return Ok(self.buf[self.pos]);
            }
            self.pos = self.buf.len();
            self.compact();
            if !self.more(0)? {
                return Err(Stop::Unsure);
            }
        }
    }

    /// The end of the value at `self.pos`, reading as much as it takes.
    fn value(&mut self) -> Result<usize, Stop> {
        loop {
            match value_end(&self.buf, self.pos) {
                // No value at all (`[1,]`): not JSON.
                Scan::Done(end) if end == self.pos => return Err(Stop::Unsure),
                Scan::Done(end) => return Ok(end),
                Scan::Unsure => return Err(Stop::Unsure),
                Scan::More => {
                    let partial = self.buf.len() - self.pos;
                    if partial > MAX_VALUE_BYTES || !self.more(partial)? {
                        return Err(Stop::Unsure);
                    }
                }
            }
        }
    }

    /// Drops the consumed text when no event spans point into it.
    fn compact(&mut self) {
        if self.spans.is_empty() && self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }

    /// The whole document, then only whitespace to the end.
    fn document(&mut self) -> Result<(), Stop> {
        match self.next_byte()? {
            b'{' => {
                self.pos += 1;
                self.send(Piece::Object)?;
                self.object()?;
            }
            b'[' => {
                self.pos += 1;
                self.send(Piece::Array)?;
                self.events()?;
            }
            _ => return Err(Stop::Unsure),
        }
        loop {
            if self.buf[self.pos..].iter().any(|&b| !is_ws(b)) {
                return Err(Stop::Unsure);
            }
            self.pos = self.buf.len();
            self.compact();
            if !self.more(0)? {
                return self.send(Piece::End);
            }
        }
    }

    /// The top-level object's entries, after its `{`, through its `}`.
    fn object(&mut self) -> Result<(), Stop> {
        let mut first = true;
        loop {
            match self.next_byte()? {
                b'}' if first => {
                    self.pos += 1;
                    return Ok(());
                }
                b'"' => {}
                _ => return Err(Stop::Unsure),
            }
            let end = self.value()?;
            let key = self.buf[self.pos..end].to_vec();
            if key.contains(&b'\\') {
                return Err(Stop::Unsure);
            }
            let events = key == b"\"traceEvents\"";
            self.send(Piece::Key(key))?;
            self.pos = end;
            if self.next_byte()? != b':' {
                return Err(Stop::Unsure);
            }
            self.pos += 1;
            if events && self.next_byte()? == b'[' {
                self.pos += 1;
                self.events_path = "traceEvents";
                self.send(Piece::EventsBegin)?;
                self.events()?;
            } else {
                self.next_byte()?;
                let end = self.value()?;
                self.send(Piece::Value(self.buf[self.pos..end].to_vec()))?;
                self.pos = end;
            }
            match self.next_byte()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(Stop::Unsure),
            }
            first = false;
            self.compact();
        }
    }

    /// The events of an array, after its `[`, through its `]`; then [`Piece::EventsEnd`].
    fn events(&mut self) -> Result<(), Stop> {
        if self.next_byte()? == b']' {
            self.pos += 1;
            return self.send(Piece::EventsEnd);
        }
        loop {
            self.next_byte()?;
            let start = self.pos;
            let end = self.value()?;
            self.events += 1;
            if self.events > MAX_EVENTS {
                if let Some(refusal) = self.refusal {
                    let _ = refusal.set(too_many_events(self.events_path));
                }
                return Err(Stop::Unsure);
            }
            self.spans.push((start, end));
            self.span_bytes += end - start;
            self.pos = end;
            match self.next_byte()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    self.flush()?;
                    return self.send(Piece::EventsEnd);
                }
                _ => return Err(Stop::Unsure),
            }
            if self.span_bytes >= self.batch_bytes || self.spans.len() >= BATCH_EVENTS {
                self.flush()?;
            }
        }
    }

    /// Sends the events cut so far as one batch; the text after them stays.
    fn flush(&mut self) -> Result<(), Stop> {
        if self.spans.is_empty() {
            return Ok(());
        }
        let mut next = self
            .reuse
            .and_then(|r| r.try_recv().ok())
            .unwrap_or_else(|| Vec::with_capacity(self.batch_bytes + self.read_bytes));
        next.clear();
        next.extend_from_slice(&self.buf[self.pos..]);
        let mut text = std::mem::replace(&mut self.buf, next);
        text.truncate(self.pos);
        self.pos = 0;
        self.span_bytes = 0;
        let spans = std::mem::take(&mut self.spans);
        let behind = self.queued.filter(|q| q.load(Ordering::Relaxed) > 0);
        let ahead = if behind.is_some() {
            let read = |&(start, end): &(usize, usize)| super::read::ahead(&text[start..end]);
            spans.iter().map(read).collect()
        } else {
            Vec::new()
        };
        if let Some(q) = self.queued {
            q.fetch_add(1, Ordering::Relaxed);
        }
        self.send(Piece::Events(Batch { text, spans, ahead }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `chunk` bytes at a time.
    struct Chunks<'a>(&'a [u8], usize);

    impl Read for Chunks<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// The pieces of `text` as short strings: `{`, `[`, `k:KEY`, `v:VALUE`, `<`, `e:EVENT`,
    /// `>`, `end`, `unsure`; read `chunk` bytes at a time, batching `batch` bytes.
    fn pieces(text: &str, chunk: usize, batch: usize) -> Vec<String> {
        let (tx, rx) = sync_channel(1 << 16);
        split(
            Chunks(text.as_bytes(), chunk),
            &tx,
            None,
            (chunk, batch),
            None,
            None,
        );
        drop(tx);
        let s = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
        let mut out = Vec::new();
        for piece in rx {
            match piece {
                Piece::Object => out.push("{".to_owned()),
                Piece::Array => out.push("[".to_owned()),
                Piece::Key(k) => out.push(format!("k:{}", s(&k))),
                Piece::Value(v) => out.push(format!("v:{}", s(&v))),
                Piece::EventsBegin => out.push("<".to_owned()),
                Piece::Events(b) => {
                    for (a, e) in b.spans {
                        out.push(format!("e:{}", s(&b.text[a..e])));
                    }
                }
                Piece::EventsEnd => out.push(">".to_owned()),
                Piece::End => out.push("end".to_owned()),
                Piece::Unsure => out.push("unsure".to_owned()),
            }
        }
        out
    }

    /// Every way of cutting the text into reads and batches gives the same pieces (or, for
    /// text the splitter cannot follow, ends unsure: how many events it had sent by then
    /// depends on the batch size).
    fn same_for_every_cut(text: &str) -> Vec<String> {
        let whole = pieces(text, 1 << 16, 1 << 20);
        for chunk in 1..12 {
            for batch in [1, 7, 64] {
                let cut = pieces(text, chunk, batch);
                if whole.last().is_some_and(|p| p == "unsure") {
                    assert_eq!(cut.last(), whole.last(), "chunk {chunk} batch {batch}");
                } else {
                    assert_eq!(cut, whole, "chunk {chunk} batch {batch}");
                }
            }
        }
        whole
    }

    #[test]
    fn an_object_is_cut_into_keys_values_and_events() {
        let text = r#" {"schemaVersion": 1, "traceEvents": [ {"ph": "X", "name": "a,]}\"{"} ,
            {"ph":"i","args":{"x":[1,{"y":"]"}]}} ], "baseTimeNanoseconds" : 17 , "e": [] } "#;
        assert_eq!(
            same_for_every_cut(text),
            [
                "{",
                "k:\"schemaVersion\"",
                "v:1",
                "k:\"traceEvents\"",
                "<",
                r#"e:{"ph": "X", "name": "a,]}\"{"}"#,
                r#"e:{"ph":"i","args":{"x":[1,{"y":"]"}]}}"#,
                ">",
                "k:\"baseTimeNanoseconds\"",
                "v:17",
                "k:\"e\"",
                "v:[]",
                "end",
            ]
        );
    }

    #[test]
    fn a_bare_array_and_empty_containers() {
        assert_eq!(
            same_for_every_cut("[{\"a\":1},2, \"s\" ,null]\n"),
            ["[", "e:{\"a\":1}", "e:2", "e:\"s\"", "e:null", ">", "end"]
        );
        assert_eq!(same_for_every_cut("[ ]"), ["[", ">", "end"]);
        assert_eq!(same_for_every_cut("{}"), ["{", "end"]);
        assert_eq!(
            same_for_every_cut(r#"{"traceEvents": []}"#),
            ["{", "k:\"traceEvents\"", "<", ">", "end"]
        );
        // `traceEvents` that is not an array is a plain value.
        assert_eq!(
            same_for_every_cut(r#"{"traceEvents": null}"#),
            ["{", "k:\"traceEvents\"", "v:null", "end"]
        );
    }

    /// What the splitter cannot follow ends in `unsure`, never in a wrong cut.
    #[test]
    fn text_it_cannot_follow_is_unsure() {
        let unsure = |text: &str| {
            let got = same_for_every_cut(text);
            assert_eq!(
                got.last().map(String::as_str),
                Some("unsure"),
                "{text}: {got:?}"
            );
        };
        unsure("");
        unsure("   ");
        unsure("7");
        unsure("\u{feff}{}");
        unsure("{} x");
        unsure("{},");
        unsure(r#"{"a" 1}"#);
        unsure(r#"{"a": 1,}"#);
        unsure(r#"{"a": 1 "b": 2}"#);
        unsure(r#"{"trace\u0045vents": []}"#);
        unsure(r#"{"traceEvents": [1,]}"#);
        unsure(r#"{"traceEvents": [1 2]}"#);
        unsure(r#"{"traceEvents": [{"a": "unterminated}]}"#);
        unsure(r#"{"traceEvents": [{"a": 1}"#);
        unsure(&format!(
            "[{}{}]",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        ));
        // As deep as it follows is fine.
        let deep = format!("[{}{}]", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(same_for_every_cut(&deep).last().unwrap(), "end");
    }

    /// Trouble reading goes to the careful reader.
    #[test]
    fn a_read_error_is_unsure() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("damaged"))
            }
        }
        let (tx, rx) = sync_channel(8);
        split(Failing, &tx, None, (16, 16), None, None);
        drop(tx);
        assert!(matches!(rx.iter().last(), Some(Piece::Unsure)));
    }

    /// Past [`MAX_EVENTS`] the splitter stops at once and leaves the refusal to the reader.
    #[test]
    fn past_the_event_budget_the_splitter_stops_and_sets_the_refusal() {
        // review D6: `{},` × 10^9 took 264 s; past MAX_EVENTS the trace is refused at once
        for (text, path) in [
            ("{\"traceEvents\": [{},{},{},{},{}]}", "traceEvents"),
            ("[{},{},{},{},{}]", ""),
        ] {
            let (tx, rx) = sync_channel(1 << 10);
            let refusal = crate::trace::source::Refusal::default();
            let mut splitter = Splitter {
                src: text.as_bytes(),
                tx: &tx,
                reuse: None,
                buf: Vec::new(),
                pos: 0,
                spans: Vec::new(),
                span_bytes: 0,
                read_bytes: 4,
                batch_bytes: 1 << 20,
                events: MAX_EVENTS - 3,
                events_path: "$",
                queued: None,
                refusal: Some(&refusal),
            };
            assert!(matches!(splitter.document(), Err(Stop::Unsure)));
            drop(tx);
            // the three events under the budget were cut, no batch was sent
            assert!(!rx.into_iter().any(|p| matches!(p, Piece::Events(_))));
            let err = refusal.get().expect("the refusal is set");
            assert_eq!(err.code, "too-large");
            assert_eq!(err.path, format!("{path}[{MAX_EVENTS}]"));
            assert!(err.message.contains("more than 33554432 events"), "{err}");
        }
        // under the budget nothing is refused
        let (tx, _rx) = sync_channel(1 << 10);
        let refusal = crate::trace::source::Refusal::default();
        split(
            "[{},{}]".as_bytes(),
            &tx,
            None,
            (4, 16),
            Some(&refusal),
            None,
        );
        assert!(refusal.get().is_none());
    }

    /// Batches end at events and hold about the batch size.
    #[test]
    fn batches_hold_whole_events() {
        let event = r#"{"ph":"X","cat":"kernel","ts":1,"dur":2}"#;
        let text = format!("[{}]", vec![event; 100].join(","));
        let (tx, rx) = sync_channel(1 << 10);
        split(
            Chunks(text.as_bytes(), 37),
            &tx,
            None,
            (37, 10 * event.len()),
            None,
            Some(&AtomicUsize::new(1 << 20)),
        );
        drop(tx);
        let batches: Vec<Batch> = rx
            .into_iter()
            .filter_map(|p| match p {
                Piece::Events(b) => Some(b),
                _ => None,
            })
            .collect();
        assert_eq!(batches.len(), 10);
        for b in &batches {
            assert_eq!(b.spans.len(), 10);
            assert_eq!(b.ahead.len(), 10, "one event read ahead per span");
            for &(s, e) in &b.spans {
                assert_eq!(&b.text[s..e], event.as_bytes());
            }
        }
    }

    /// A batch holds at most [`BATCH_EVENTS`] events however small they are: 10,000 `{}`
    /// events in a batch size of 1 MiB are three batches (4,096, 4,096 and 1,808 events),
    /// not one of 10,000 (the memory of a `{}` bomb, `docs/limits.md`).
    #[test]
    fn tiny_events_are_batched_by_count() {
        let n = 10_000;
        let text = format!("[{}]", vec!["{}"; n].join(","));
        let (tx, rx) = sync_channel(1 << 10);
        split(
            Chunks(text.as_bytes(), 1 << 12),
            &tx,
            None,
            (1 << 12, 1 << 20),
            None,
            Some(&AtomicUsize::new(1 << 20)),
        );
        drop(tx);
        let sizes: Vec<(usize, usize)> = rx
            .into_iter()
            .filter_map(|p| match p {
                Piece::Events(b) => Some((b.spans.len(), b.ahead.len())),
                _ => None,
            })
            .collect();
        assert_eq!(sizes, vec![(4096, 4096), (4096, 4096), (1808, 1808)]);
        assert_eq!(BATCH_EVENTS, 4096);
    }
}
