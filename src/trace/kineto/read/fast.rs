//! The fast path's reading of one event: its text scanned by [`scan_event`] (the memchr
//! tokenizer of `trace/scan.rs`, issue 24 §1) instead of `serde_json`, and the event counted
//! or kept exactly as [`State::take_event`] would.
//!
//! Only what is sure is done here: an event the importer ignores (counted under its
//! category), and an event it keeps whose `args`, `ts`, `dur` and `name` all read without
//! trouble. Everything else is left to the visitors ([`super::visit::Event`]), untouched:
//! text the scanner is unsure of (see [`scan_event`]), an event only the audit reads, and
//! any event the careful reader would refuse (a missing or inexact time, a negative `dur`,
//! `args` that do not read, a name too long, past the event budget). [`take_scanned`] decides
//! before it changes anything, so the visitors then read the event as if it came fresh, and
//! word every error.

use super::{kept, EventArgs, Kept, KeptEvent, Pending, State, Text};
use crate::error::InputError as ImportError;
use crate::trace::kineto::neutral::{audit_only, op_external, AuditEvent, AuditOnly};
use crate::trace::scan::{scan_event, EventHead, Time, TimeText};

/// What [`take_scanned`] did with an event.
pub(super) enum Taken {
    /// Counted or kept.
    Done,
    /// Not sure: nothing was changed; the visitors must read the event.
    Unsure,
}

/// Where a string of an event lies in the event's text: `(start, end)`.
type At = (u32, u32);

/// One event read ahead, from its text alone, by [`ahead`]: what [`take_ahead`] needs to
/// count or keep it without reading the text again. Nothing in it depends on the options or
/// on the events before it, so the splitter's thread reads it while the main thread builds
/// (issue 24 §2).
pub(crate) struct Ahead(Reading);

impl std::fmt::Debug for Ahead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.0 {
            Reading::Unsure => "unsure",
            Reading::Ignored { .. } => "ignored",
            Reading::Kept(_) => "kept",
        };
        write!(f, "Ahead({what})")
    }
}

/// What [`ahead`] read.
#[allow(clippy::large_enum_variant)] // by value: a box would cost an allocation per kept event
enum Reading {
    /// Not sure: the visitors must read the event.
    Unsure,
    /// An event the importer does not keep: its `ph` and `cat`, and the host op to file, if
    /// it is one the audit reads with an External id and both times.
    Ignored {
        ph: Option<At>,
        cat: Option<At>,
        op: Option<OpAhead>,
    },
    /// An event the importer keeps, its times not yet rounded or refused.
    Kept(KeptAhead),
}

/// A plain host op as [`op`] reads it, its name not yet interned.
struct OpAhead {
    name: Option<At>,
    external: i64,
    thread: Option<i64>,
    ts: i64,
    dur: i64,
}

/// A kept event as [`kept_of`] reads it, before the options (`--round-sub-ns`) and the
/// names table have their say.
struct KeptAhead {
    cat: &'static str,
    kind: Kept,
    name: Option<At>,
    pid: Option<i64>,
    tid: Option<i64>,
    thread: Option<i64>,
    ts: Option<Time>,
    dur: Option<Time>,
    args: EventArgs,
    /// `ts` is written with a fraction or an exponent.
    fractional_ts: bool,
}

/// Reads the event at `index` from its text `span` into `st`, if the scanner is sure of it.
///
/// # Errors
/// Only from filing a kept event on the clock (an overflow against the base): then the fast
/// path gives up, as it does when a visitor fails.
pub(super) fn take_scanned(
    st: &mut State<'_>,
    span: &[u8],
    index: usize,
) -> Result<Taken, ImportError> {
    if index >= crate::trace::kineto::handoff::MAX_EVENTS {
        return Ok(Taken::Unsure);
    }
    take_ahead(st, span, index, ahead(span))
}

/// Reads the event `span` as far as its text alone allows, for [`take_ahead`]; runs on any
/// thread.
pub(crate) fn ahead(span: &[u8]) -> Ahead {
    Ahead(read_ahead(span).unwrap_or(Reading::Unsure))
}

/// [`ahead`]'s reading; `None` when unsure.
fn read_ahead(span: &[u8]) -> Option<Reading> {
    let head = scan_event(span)?;
    let cat = head.cat.unwrap_or("");
    let kind = kept(cat).filter(|_| head.ph == Some("X"));
    let Some((cat, kind)) = kind else {
        let op = match ignored_op(&head) {
            Some(op) => op.map(|op| op_ahead(span, &op, &head)),
            None => return None,
        };
        return Some(Reading::Ignored {
            ph: at(span, head.ph)?,
            cat: at(span, head.cat)?,
            op: match op {
                None => None,
                Some(op) => Some(op?),
            },
        });
    };
    let args = match head.args {
        Some(raw) => serde_json::from_slice::<EventArgs>(raw).ok()?,
        None => EventArgs::default(),
    };
    if head.name.unwrap_or("").len() > crate::trace::MAX_NAME_BYTES {
        return None;
    }
    Some(Reading::Kept(KeptAhead {
        cat,
        kind,
        name: at(span, head.name)?,
        pid: head.pid,
        tid: head.tid,
        thread: head.thread,
        ts: head.ts.map(|t| t.scaled(3)),
        dur: head.dur.map(|t| t.scaled(3)),
        args,
        fractional_ts: head
            .ts
            .is_some_and(|ts| ts.raw().iter().any(|b| matches!(b, b'.' | b'e' | b'E'))),
    }))
}

/// The host op of an ignored event, as [`op`] reads it (its name left for the main thread).
fn op_ahead(span: &[u8], op: &OpTimes, head: &EventHead<'_>) -> Option<OpAhead> {
    Some(OpAhead {
        name: at(span, head.name)?,
        external: op.external,
        thread: head.thread,
        ts: op.ts,
        dur: op.dur,
    })
}

/// Where `text`, a string [`scan_event`] read from `span`, lies in `span`: `Some(None)` for
/// no string, `None` if it is not a slice of `span` (then the event is left to the visitors).
fn at(span: &[u8], text: Option<&str>) -> Option<Option<At>> {
    let Some(text) = text else {
        return Some(None);
    };
    let start = (text.as_ptr() as usize).checked_sub(span.as_ptr() as usize)?;
    let end = start.checked_add(text.len())?;
    if end > span.len() {
        return None;
    }
    Some(Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?)))
}

/// The text at `at` in `span`: `Some(None)` for no string, `None` if it does not read.
fn text_at(span: &[u8], at: Option<At>) -> Option<Option<&str>> {
    let Some((start, end)) = at else {
        return Some(None);
    };
    let bytes = span.get(start as usize..end as usize)?;
    Some(Some(std::str::from_utf8(bytes).ok()?))
}

/// Counts or keeps the event at `index` (text `span`) as [`ahead`] read it, exactly as
/// [`State::take_event`] would, or leaves it to the visitors, untouched.
///
/// # Errors
/// Only from filing an event on the clock (an overflow against the base).
pub(crate) fn take_ahead(
    st: &mut State<'_>,
    span: &[u8],
    index: usize,
    ahead: Ahead,
) -> Result<Taken, ImportError> {
    if index >= crate::trace::kineto::handoff::MAX_EVENTS {
        return Ok(Taken::Unsure);
    }
    match ahead.0 {
        Reading::Unsure => Ok(Taken::Unsure),
        Reading::Ignored { ph, cat, op } => ignored(st, span, (ph, cat), op, index),
        Reading::Kept(kept_ahead) => {
            let Some(kept_event) = kept_of(st, span, kept_ahead, index) else {
                return Ok(Taken::Unsure);
            };
            if matches!(
                kept_event.event.cat,
                "Kernel" | "Memcpy" | "Memset" | "Runtime"
            ) {
                st.read.legacy_categories = true;
            }
            if kept_event.fractional_ts {
                st.read.fractional_ts = true;
            }
            st.read.rounded += kept_event.rounded;
            let held = super::Held::of(kept_event.event, &mut st.read.names);
            st.file(Pending::Kept(held))?;
            Ok(Taken::Done)
        }
    }
}

/// An event the importer does not keep: counted under its category (and its host op filed).
///
/// # Errors
/// Only from filing a host op on the clock.
fn ignored(
    st: &mut State<'_>,
    span: &[u8],
    (ph, cat): (Option<At>, Option<At>),
    op: Option<OpAhead>,
    index: usize,
) -> Result<Taken, ImportError> {
    let (Some(ph), Some(cat)) = (text_at(span, ph), text_at(span, cat)) else {
        return Ok(Taken::Unsure);
    };
    let op_event = match op {
        None => None,
        Some(op) => {
            let Some(name) = text_at(span, op.name) else {
                return Ok(Taken::Unsure);
            };
            Some(AuditEvent {
                what: AuditOnly::Op,
                name: st.read.names.get(name.unwrap_or("")),
                external: Some(op.external),
                thread: op.thread,
                ts: op.ts,
                dur: op.dur,
            })
        }
    };
    set_text(&mut st.fields.ph, ph);
    set_text(&mut st.fields.cat, cat);
    st.count_ignored();
    if let Some(event) = op_event {
        st.file(Pending::Audit(index, event))?;
    }
    Ok(Taken::Done)
}

/// A plain host op's External id and times.
struct OpTimes {
    external: i64,
    ts: i64,
    dur: i64,
}

/// The host op of an event the importer does not keep: `Some(None)` when there is none to
/// file (not `X`, not an op the audit reads, no External id), `Some(Some(_))` to file, `None`
/// when the visitors must read it (an event only the audit reads that is not a plain host
/// op, or a `ts` / `dur` that is missing, not an exact ns or not a number: they count it as
/// unreadable or round it).
fn ignored_op(head: &EventHead<'_>) -> Option<Option<OpTimes>> {
    if head.ph != Some("X") {
        return Some(None);
    }
    match audit_only(head.cat.unwrap_or(""), Some(head.name.unwrap_or(""))) {
        None => Some(None),
        Some(AuditOnly::Op) => op(head),
        Some(_) => None,
    }
}

/// A plain host op (neither a step nor a scalar read) as the visitors would file it, see
/// [`ignored_op`].
fn op(head: &EventHead<'_>) -> Option<Option<OpTimes>> {
    // `scan_event` refuses any `\` escape, so a key `External id` / `external id` is here
    // only as its plain text: without that text there is no id, and no need to parse.
    let named = |args: &&[u8]| memchr::memmem::find(args, b"xternal id\"").is_some();
    let Some(external) = head.args.filter(named).and_then(op_external) else {
        return Some(None);
    };
    // A missing time makes the op unreadable: the visitors count it (`audit_times`).
    let (ts, dur) = (head.ts?, head.dur?);
    let exact = |t: TimeText<'_>| match t.scaled(3) {
        Time::Exact(v) => Some(v),
        Time::Rounded(_) | Time::Overflow | Time::NotANumber => None,
    };
    let (ts, dur) = (exact(ts)?, exact(dur)?);
    Some(Some(OpTimes { external, ts, dur }))
}

fn set_text(text: &mut Text, value: Option<&str>) {
    text.buf.clear();
    if let Some(v) = value {
        text.buf.push_str(v);
    }
    text.set = value.is_some();
}

/// A kept event, how many of its times were rounded, and whether `ts` has a fraction.
struct KeptTimes {
    event: KeptEvent,
    rounded: u64,
    fractional_ts: bool,
}

/// The kept event `k` is, when its times read under the options (`None`: the visitors must
/// read it, to keep it or to word its error).
fn kept_of(st: &State<'_>, span: &[u8], k: KeptAhead, index: usize) -> Option<KeptTimes> {
    let round = st.options.round_sub_ns;
    let mut rounded = 0;
    let mut ns = |time: Option<Time>| match time? {
        Time::Exact(v) => Some(v),
        Time::Rounded(v) if round => {
            rounded += 1;
            Some(v)
        }
        Time::Rounded(_) | Time::Overflow | Time::NotANumber => None,
    };
    let ts = ns(k.ts)?;
    let dur = ns(k.dur).filter(|&d| d >= 0)?;
    let name = text_at(span, k.name)?.unwrap_or("");
    Some(KeptTimes {
        event: KeptEvent {
            index,
            cat: k.cat,
            kind: k.kind,
            name: name.to_owned(),
            pid: k.pid,
            tid: k.tid,
            thread: k.thread,
            ts,
            dur,
            args: k.args,
        },
        rounded,
        fractional_ts: k.fractional_ts,
    })
}
