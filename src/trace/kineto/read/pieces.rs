//! The parser's end of the fast path: a trace cut into [`Piece`]s by the splitter
//! (`kineto/split.rs`) is read event by event, each from its own slice of text: by the
//! memchr scanner where it is sure (`fast.rs`, `trace/scan.rs`; the splitter's thread has
//! already scanned each event, see [`crate::trace::kineto::handoff::Batch::ahead`], so this
//! thread only counts or keeps it), else with the same visitors as the streaming reader.
//!
//! Any trouble at all (the splitter unsure, a value the visitors refuse, an error of the
//! importer's own) makes [`read_pieces`] give up with `None`: the caller then reads the file
//! with the careful reader ([`super::read_trace`]), which reports the exact path, code and
//! message. So a trace read here gives exactly what the careful reader gives, and errors are
//! never worded by this module.

use serde::de::DeserializeSeed;

use super::fast::{take_ahead, take_scanned, Ahead, Taken};
use super::visit::{top_key, Event, TopValue};
use super::{Parsed, State};
use crate::trace::kineto::handoff::{Piece, Pieces};
use crate::trace::kineto::tap::EventTap;
use crate::trace::ReadOptions as ImportOptions;

/// Reads a trace from the splitter's pieces, handing `tap` every top-level value and event
/// on the way; `None` when the careful reader must read it.
pub(crate) fn read_pieces(
    pieces: &Pieces<Ahead>,
    options: &ImportOptions,
    tap: &mut dyn EventTap,
) -> Option<Parsed> {
    let events_path = match pieces.recv()? {
        Piece::Object => "traceEvents",
        Piece::Array => "$",
        _ => return None,
    };
    let mut st = State::new(options, events_path);
    st.place_before_base = true;
    if events_path == "$" {
        tap.events_begin(events_path);
        events(&mut st, pieces, tap)?;
        if !matches!(pieces.recv()?, Piece::End) {
            return None;
        }
    } else {
        entries(&mut st, pieces, tap)?;
    }
    st.finish().ok()
}

/// The top-level object's entries, through [`Piece::End`].
fn entries(st: &mut State<'_>, pieces: &Pieces<Ahead>, tap: &mut dyn EventTap) -> Option<()> {
    let mut seen = 0u8;
    loop {
        let key = match pieces.recv()? {
            Piece::Key(raw) => serde_json::from_slice::<String>(&raw).ok()?,
            Piece::End => return Some(()),
            _ => return None,
        };
        let known = top_key::<serde_json::Error>(st, key, &mut seen).ok()?;
        match pieces.recv()? {
            Piece::Value(raw) => {
                tap.top_value(st.top_key.as_deref().unwrap_or_default(), &raw);
                let mut de = serde_json::Deserializer::from_slice(&raw);
                TopValue { st, known }.deserialize(&mut de).ok()?;
                de.end().ok()?;
            }
            Piece::EventsBegin if known == Some(0) => {
                tap.events_begin("traceEvents");
                events(st, pieces, tap)?;
            }
            _ => return None,
        }
        st.top_key = None;
    }
}

/// The events of the `traceEvents` array (or of a bare array), through
/// [`Piece::EventsEnd`]: each parsed from its own slice, as the streaming reader's sequence
/// visitor would.
fn events(st: &mut State<'_>, pieces: &Pieces<Ahead>, tap: &mut dyn EventTap) -> Option<()> {
    st.events_begin();
    let mut i = 0;
    loop {
        match pieces.recv()? {
            Piece::Events(batch) => {
                let mut ahead = batch.ahead.into_iter();
                for &(start, end) in &batch.spans {
                    st.index = Some(i);
                    let span = &batch.text[start..end];
                    tap.event(i, span);
                    let taken = match ahead.next() {
                        Some(read) => take_ahead(st, span, i, read),
                        None => take_scanned(st, span, i),
                    };
                    if let Taken::Unsure = taken.ok()? {
                        let mut de = serde_json::Deserializer::from_slice(span);
                        Event(st).deserialize(&mut de).ok()?;
                        de.end().ok()?;
                    }
                    i += 1;
                }
                pieces.give_back(batch.text);
            }
            Piece::EventsEnd => break,
            _ => return None,
        }
    }
    st.events_end(i);
    Some(())
}
