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
    if index >= crate::trace::kineto::split::MAX_EVENTS {
        return Ok(Taken::Unsure);
    }
    let Some(head) = scan_event(span) else {
        return Ok(Taken::Unsure);
    };
    let cat = head.cat.unwrap_or("");
    let kind = kept(cat).filter(|_| head.ph == Some("X"));
    let Some((cat, kind)) = kind else {
        return ignored(st, &head, index);
    };
    let Some(kept_event) = kept_of(st, &head, index, cat, kind) else {
        return Ok(Taken::Unsure);
    };
    if matches!(cat, "Kernel" | "Memcpy" | "Memset" | "Runtime") {
        st.read.legacy_categories = true;
    }
    if head
        .ts
        .is_some_and(|ts| ts.raw().iter().any(|b| matches!(b, b'.' | b'e' | b'E')))
    {
        st.read.fractional_ts = true;
    }
    st.read.rounded += kept_event.rounded;
    let held = super::Held::of(kept_event.event, &mut st.read.names);
    st.file(Pending::Kept(held))?;
    Ok(Taken::Done)
}

/// An event the importer does not keep: counted under its category, unless the audit reads
/// it (then the visitors take it; a plain host op is taken here, see [`op`]).
///
/// # Errors
/// Only from filing a host op on the clock.
fn ignored(st: &mut State<'_>, head: &EventHead<'_>, index: usize) -> Result<Taken, ImportError> {
    let mut op_event = None;
    if head.ph == Some("X") {
        let name = head.name.unwrap_or("");
        match audit_only(head.cat.unwrap_or(""), Some(name)) {
            None => {}
            Some(AuditOnly::Op) => match op(st, head) {
                Some(event) => op_event = event,
                None => return Ok(Taken::Unsure),
            },
            Some(_) => return Ok(Taken::Unsure),
        }
    }
    set_text(&mut st.fields.ph, head.ph);
    set_text(&mut st.fields.cat, head.cat);
    st.count_ignored();
    if let Some(event) = op_event {
        st.file(Pending::Audit(index, event))?;
    }
    Ok(Taken::Done)
}

/// A plain host op (neither a step nor a scalar read) as the visitors would file it:
/// `Some(None)` when it is not filed (no External id, or no `ts` / `dur`), `Some(Some(_))`
/// to file, `None` when the visitors must read it (a time that is not an exact ns or not a
/// number: they word, count or round it).
fn op(st: &mut State<'_>, head: &EventHead<'_>) -> Option<Option<AuditEvent>> {
    // `scan_event` refuses any `\` escape, so a key `External id` / `external id` is here
    // only as its plain text: without that text there is no id, and no need to parse.
    let named = |args: &&[u8]| memchr::memmem::find(args, b"xternal id\"").is_some();
    let Some(external) = head.args.filter(named).and_then(op_external) else {
        return Some(None);
    };
    let (Some(ts), Some(dur)) = (head.ts, head.dur) else {
        return Some(None);
    };
    let exact = |t: TimeText<'_>| match t.scaled(3) {
        Time::Exact(v) => Some(v),
        Time::Rounded(_) | Time::Overflow | Time::NotANumber => None,
    };
    let (ts, dur) = (exact(ts)?, exact(dur)?);
    Some(Some(AuditEvent {
        what: AuditOnly::Op,
        name: st.read.names.get(head.name.unwrap_or("")),
        external: Some(external),
        thread: head.thread,
        ts,
        dur,
    }))
}

fn set_text(text: &mut Text, value: Option<&str>) {
    text.buf.clear();
    if let Some(v) = value {
        text.buf.push_str(v);
    }
    text.set = value.is_some();
}

/// A kept event, and how many of its times were rounded.
struct KeptTimes {
    event: KeptEvent,
    rounded: u64,
}

/// The kept event `head` is, when it reads without trouble (`None`: the visitors must read
/// it, to keep it or to word its error).
fn kept_of(
    st: &State<'_>,
    head: &EventHead<'_>,
    index: usize,
    cat: &'static str,
    kind: Kept,
) -> Option<KeptTimes> {
    let args = match head.args {
        Some(raw) => serde_json::from_slice::<EventArgs>(raw).ok()?,
        None => EventArgs::default(),
    };
    let round = st.options.round_sub_ns;
    let mut rounded = 0;
    let mut ns = |time: Option<TimeText<'_>>| match time?.scaled(3) {
        Time::Exact(v) => Some(v),
        Time::Rounded(v) if round => {
            rounded += 1;
            Some(v)
        }
        Time::Rounded(_) | Time::Overflow | Time::NotANumber => None,
    };
    let ts = ns(head.ts)?;
    let dur = ns(head.dur).filter(|&d| d >= 0)?;
    let name = head.name.unwrap_or("");
    if name.len() > crate::trace::MAX_NAME_BYTES {
        return None;
    }
    Some(KeptTimes {
        event: KeptEvent {
            index,
            cat,
            kind,
            name: name.to_owned(),
            pid: head.pid,
            tid: head.tid,
            thread: head.thread,
            ts,
            dur,
            args,
        },
        rounded,
    })
}
