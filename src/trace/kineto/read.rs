//! Reading a Kineto trace: one streaming pass over the JSON, straight from the reader.
//!
//! `traceEvents` is deserialised element by element through a `SeqAccess` visitor; each
//! event's fields are visited in the order they come, into buffers reused from one event to
//! the next. `ph` and `cat` come first in every writer the project knows, so an event the
//! importer does not keep (CPU ops, flows, instants: about 70 % of a trace) is skipped with
//! `IgnoredAny` and counted by category, without allocating. Kept events hold their `ts`,
//! `dur` and `args` as raw JSON text until they are read exactly (no `f64`).
//!
//! No JSON path is tracked while all goes well: the path of an error (`traceEvents[12].dur`)
//! is built from the event's index and the field being read when it fails, and a bad `args`
//! object is parsed a second time, alone, with `serde_path_to_error`, to name its field.
//!
//! `baseTimeNanoseconds` may come after the events (Kineto writes it last): kept events are
//! then held as [`Pending`] and placed on the clock at the end, in their order. So when a
//! trace has more than one defect, the one reported may differ from the one the whole-text
//! reader reported first; a trace with one defect gets the same path, code and message.

mod fast;
mod pieces;
mod visit;

use std::collections::BTreeMap;
use std::io::BufRead;

use serde::de::{self, Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::neutral::{
    audit_only, audit_times, is_op_category, is_step_name, op_external, AuditEvent, AuditOnly,
    LooseId,
};
use super::number::{classify, parse_with_path, required_time};
use super::{Annotation, GpuWork, Read, SyncRow, WorkKind};
use crate::trace::model::{ApiCall, CollectiveArgs, Name, Names, Step};
use crate::trace::source::trouble_of;
use crate::units::Nanos;
use crate::{error::InputError as ImportError, trace::ReadOptions as ImportOptions};
pub(crate) use fast::{ahead, Ahead};
pub(crate) use pieces::read_pieces;
pub(crate) use visit::stream_of_tid;

type Result<T> = std::result::Result<T, ImportError>;

/// The top level of a Kineto trace, apart from the events: what the build step uses.
#[derive(Default)]
pub(crate) struct TopLevel {
    pub(crate) distributed_info: Option<serde_json::Value>,
    pub(crate) device_properties: Option<serde_json::Value>,
    pub(crate) trace_name: Option<serde_json::Value>,
    pub(crate) schema_version: Option<serde_json::Value>,
}

/// The `args` fields the importer uses (GPU work, API calls, sync rows).
#[derive(Default, Deserialize)]
pub(crate) struct EventArgs {
    #[serde(default)]
    correlation: Option<i64>,
    #[serde(default)]
    stream: Option<i64>,
    #[serde(default)]
    device: Option<i64>,
    #[serde(default)]
    wait_on_stream: Option<i64>,
    #[serde(default)]
    wait_on_cuda_event_record_corr_id: Option<i64>,
    #[serde(default)]
    cuda_sync_kind: Option<String>,
    #[serde(rename = "Collective name", default)]
    collective_name: Option<String>,
    #[serde(rename = "Process Group Name", default)]
    process_group: Option<String>,
    /// Copies and sets: `bytes` (any JSON value, so that an odd one never makes the whole
    /// `args` unreadable; only a non-negative integer is used).
    #[serde(default)]
    bytes: Option<serde_json::Value>,
    /// Calls and GPU work: the External id (`"External id"`; 2021: `"external id"`).
    #[serde(rename = "External id", default)]
    external_upper: LooseId,
    #[serde(rename = "external id", default)]
    external_lower: LooseId,
}

impl EventArgs {
    /// The External id, as [`super::neutral::ExternalId::get`] reads it.
    fn external(&self) -> Option<i64> {
        self.external_upper.0.or(self.external_lower.0)
    }
}

/// What the build step gets: the events read, the top level, the base time.
pub(crate) type Parsed = (Read, TopLevel, Option<i64>);

/// Reads a whole trace from `reader` (JSON text: a `{"traceEvents": [...]}` object or a bare
/// array of events).
///
/// # Errors
/// [`ImportError`] with the JSON path and code of the first problem met.
pub(crate) fn read_trace<R: BufRead>(mut reader: R, options: &ImportOptions) -> Result<Parsed> {
    let first = match peek_first(&mut reader) {
        Ok(first) => first,
        Err(e) => return Err(crate::trace::source::trouble_of_io(e)),
    };
    let events_path = match first {
        Some(b'{') => "traceEvents",
        Some(b'[') => "$",
        None => {
            return Err(ImportError::new(
                "$",
                "bad-syntax",
                "the file is empty; a PyTorch profiler (Kineto) trace is a JSON object",
            ))
        }
        Some(c) => return Err(not_a_trace(reader, c)),
    };
    let mut st = State::new(options, events_path);
    let mut de = serde_json::Deserializer::from_reader(reader);
    let parsed = if events_path == "$" {
        (&mut de).deserialize_seq(visit::Events(&mut st))
    } else {
        (&mut de).deserialize_map(visit::Top(&mut st))
    };
    if let Err(e) = parsed {
        return Err(st.error_of(e));
    }
    if let Err(e) = de.end() {
        return Err(match trouble_of(e) {
            Ok(trouble) => trouble,
            Err(e) => {
                ImportError::new("$", "bad-syntax", format!("text after the JSON value: {e}"))
            }
        });
    }
    st.finish()
}

/// A text that starts with `c`, neither `{` nor `[`: read whole (it is capped) to say what
/// it is, as the whole-text reader did: not UTF-8, not JSON, or JSON of the wrong kind.
fn not_a_trace<R: BufRead>(mut reader: R, c: u8) -> ImportError {
    let mut text = String::new();
    if let Err(e) = reader.read_to_string(&mut text) {
        return crate::trace::source::trouble_of_io(e);
    }
    match serde_json::from_str::<IgnoredAny>(&text).err() {
        Some(e) => ImportError::new("$", "bad-syntax", format!("not JSON: {e}")),
        None => ImportError::new(
            "$",
            "bad-syntax",
            format!(
                "a trace is a JSON object (`{{...}}`), but this file starts with `{}`",
                char::from(c)
            ),
        ),
    }
}

/// The first byte that is not JSON whitespace, without consuming it (`None`: the text is
/// empty or all whitespace).
fn peek_first<R: BufRead>(reader: &mut R) -> std::io::Result<Option<u8>> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        if let Some(&b) = buf.iter().find(|b| !b" \t\r\n".contains(b)) {
            return Ok(Some(b));
        }
        // A whole buffer of whitespace: drop it (positions in later messages then count
        // from the first byte that is not whitespace).
        let n = buf.len();
        reader.consume(n);
    }
}

/// The `[i]` path of an event under `events_path` (`$` for a bare array).
fn event_path(events_path: &str, i: usize) -> String {
    if events_path == "$" {
        format!("[{i}]")
    } else {
        format!("{events_path}[{i}]")
    }
}

/// A string field of the event being read, in a buffer kept from one event to the next.
#[derive(Default)]
struct Text {
    buf: String,
    set: bool,
}

impl Text {
    fn get(&self) -> Option<&str> {
        self.set.then_some(self.buf.as_str())
    }
}

/// The fields of the event being read (`Head` of the whole-text reader, streamed).
#[derive(Default)]
struct Fields {
    /// Bit per field already seen (a repeated field is an error, as with `derive`).
    seen: u8,
    ph: Text,
    cat: Text,
    name: Text,
    pid: Option<i64>,
    /// The stream a `tid` names: an integer, or the 2021 string `"stream 7"`.
    tid: Option<i64>,
    /// The host thread a `tid` names: an integer only.
    thread: Option<i64>,
    ts: Option<Box<RawValue>>,
    dur: Option<Box<RawValue>>,
    args: Option<Box<RawValue>>,
}

impl Fields {
    fn reset(&mut self) {
        self.seen = 0;
        self.ph.set = false;
        self.cat.set = false;
        self.name.set = false;
        self.pid = None;
        self.tid = None;
        self.thread = None;
        self.ts = None;
        self.dur = None;
        self.args = None;
    }

    /// Whether what was seen so far already says the event is not imported.
    fn known_ignored(&self) -> bool {
        (self.ph.set && self.ph.buf != "X") || (self.cat.set && kept(&self.cat.buf).is_none())
    }

    /// Whether what was seen so far already says neither the importer nor the audit reads
    /// the event's `args` (the audit reads a host op's, for its External id).
    fn args_unread(&self) -> bool {
        self.known_ignored()
            && !(self.ph.get().is_none_or(|p| p == "X")
                && self.cat.get().is_some_and(is_op_category))
    }

    /// Whether what was seen so far already says neither the importer nor the audit reads
    /// the event's times ([`super::audit`]: a few host events only the audit reads).
    fn times_unread(&self) -> bool {
        self.known_ignored()
            && !(self.ph.get() == Some("X")
                && self
                    .cat
                    .get()
                    .is_some_and(|c| audit_only(c, self.name.get()).is_some()))
    }
}

/// What an imported event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kept {
    Work(WorkKind),
    Annotation,
    Call,
    Sync,
}

/// The imported categories, as static text (for messages), with what each is.
fn kept(cat: &str) -> Option<(&'static str, Kept)> {
    const KEPT: [&str; 12] = [
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "cuda_runtime",
        "cuda_driver",
        "cuda_sync",
        "gpu_user_annotation",
        "Kernel",
        "Memcpy",
        "Memset",
        "Runtime",
        "Driver",
    ];
    let name = KEPT.into_iter().find(|k| *k == cat)?;
    let kind = match name {
        "cuda_runtime" | "cuda_driver" | "Runtime" | "Driver" => Kept::Call,
        "cuda_sync" => Kept::Sync,
        "gpu_user_annotation" => Kept::Annotation,
        work => Kept::Work(WorkKind::of_category(work)?),
    };
    Some((name, kind))
}

/// Events held for the base time per chunk of [`State::pending`].
const PENDING_CHUNK: usize = 4096;

/// An event whose times are read but not yet placed on the clock (the base may come later
/// in the file): one the importer keeps, or one only the audit reads. Held by value: boxing
/// the larger variant would allocate once per kept event on the hot path, and at most
/// [`PENDING_CHUNK`] of them wait at a time.
enum Pending {
    Kept(Held),
    Audit(usize, AuditEvent),
}

/// A kept event as it waits to be placed: its name interned, and of its `args` only what
/// [`place`] reads (what the device and stream fall back to is settled here; whether they
/// are missing is still an error of `place`, so errors keep their file order). About a
/// third of a [`KeptEvent`], and no text of its own: the careful reader holds every kept event
/// of a trace whose base time comes after its events this way until its end (the fast path
/// places them at once, `State::place_before_base`).
struct Held {
    index: usize,
    cat: &'static str,
    kind: Kept,
    name: Name,
    /// Work, annotations, sync rows: `args.device`, else `pid`. Calls: `pid`.
    device: Option<i64>,
    /// Work, annotations: `args.stream`, else `tid`. Sync rows: `args.stream`.
    stream: Option<i64>,
    thread: Option<i64>,
    ts: i64,
    dur: i64,
    correlation: Option<i64>,
    /// `args."External id"` (calls and GPU work).
    external: Option<i64>,
    /// Copies and sets: `args.bytes`, where it is a non-negative integer.
    bytes: Option<u64>,
    /// What sync rows and collective kernels add (boxed: most events are neither).
    rare: Option<Box<Rare>>,
}

/// The fields of a [`Held`] event that few events have.
struct Rare {
    sync_kind: Option<String>,
    wait_on_stream: Option<i64>,
    record_corr: Option<i64>,
    collective: Option<Box<CollectiveArgs>>,
}

impl Held {
    /// `e`, held: its name through `names`.
    fn of(e: KeptEvent, names: &mut Names) -> Held {
        let args = e.args;
        let external = args.external();
        let (device, stream) = match e.kind {
            Kept::Call => (e.pid, args.stream.or(e.tid)),
            Kept::Sync => (args.device.or(e.pid), args.stream),
            Kept::Work(_) | Kept::Annotation => (args.device.or(e.pid), args.stream.or(e.tid)),
        };
        let rare = match e.kind {
            Kept::Sync => Some(Box::new(Rare {
                sync_kind: args.cuda_sync_kind,
                wait_on_stream: args.wait_on_stream,
                record_corr: args.wait_on_cuda_event_record_corr_id,
                collective: None,
            })),
            Kept::Work(WorkKind::Kernel) => {
                CollectiveArgs::of(args.process_group, args.collective_name).map(|c| {
                    Box::new(Rare {
                        sync_kind: None,
                        wait_on_stream: None,
                        record_corr: None,
                        collective: Some(c),
                    })
                })
            }
            _ => None,
        };
        Held {
            index: e.index,
            cat: e.cat,
            kind: e.kind,
            name: names.get(&e.name),
            device,
            stream,
            thread: e.thread,
            ts: e.ts,
            dur: e.dur,
            correlation: args.correlation,
            external,
            bytes: match e.kind {
                Kept::Work(WorkKind::Memcpy | WorkKind::Memset) => {
                    args.bytes.as_ref().and_then(serde_json::Value::as_u64)
                }
                _ => None,
            },
            rare,
        }
    }
}

/// An event the importer keeps, with its times as read.
struct KeptEvent {
    index: usize,
    cat: &'static str,
    kind: Kept,
    name: String,
    pid: Option<i64>,
    tid: Option<i64>,
    thread: Option<i64>,
    ts: i64,
    dur: i64,
    args: EventArgs,
}

/// Everything the streaming pass keeps.
struct State<'o> {
    options: &'o ImportOptions,
    events_path: &'static str,
    read: Read,
    top: TopLevel,
    fields: Fields,
    /// Kept events waiting for the base time.
    /// In chunks of [`PENDING_CHUNK`]: no doubling slack, no copying as it grows, and each
    /// chunk is freed as soon as its events are placed.
    pending: Vec<Vec<Pending>>,
    /// `baseTimeNanoseconds`: `None` until seen.
    base: Option<Option<i64>>,
    /// The fast path's way with events that come before the base: each is placed at once,
    /// its times relative, and the base is added to every time at the end ([`rebase`]);
    /// anything that would read differently once the base is known (an overflow) makes the
    /// pass give up, and the careful reader, which holds such events instead, reads the
    /// trace again. At ×10 of `df_index_resolver` the held events were 166 MB at the end of
    /// the pass, most of its peak.
    place_before_base: bool,
    /// The base as known when `traceEvents` began (`None`: not known yet, so events wait).
    base_before_events: Option<Option<i64>>,
    saw_events: bool,
    /// The top-level key being read (for the path of a syntax error in its value).
    top_key: Option<String>,
    /// The event being read, and the field in it.
    index: Option<usize>,
    field: Option<&'static str>,
    in_event: bool,
    /// An error of the importer's own, found inside a visitor.
    error: Option<ImportError>,
    /// Scratch for the key of an ignored category.
    key: String,
}

impl<'o> State<'o> {
    /// The state before the first byte of a document whose events are at `events_path`
    /// (`traceEvents`, or `$` for a bare array).
    fn new(options: &'o ImportOptions, events_path: &'static str) -> Self {
        let bare = events_path == "$";
        State {
            options,
            events_path,
            read: Read::default(),
            top: TopLevel::default(),
            fields: Fields::default(),
            pending: Vec::new(),
            base: None,
            place_before_base: false,
            // A bare array has no base: its events are placed as they come.
            base_before_events: bare.then_some(None),
            saw_events: bare,
            top_key: None,
            index: None,
            field: None,
            in_event: false,
            error: None,
            key: String::new(),
        }
    }

    /// The `traceEvents` array begins.
    fn events_begin(&mut self) {
        self.saw_events = true;
        if self.base_before_events.is_none() {
            // The base, if it was seen before the events; if not, events wait for the end.
            self.base_before_events = self.base;
        }
    }

    /// The `traceEvents` array ended after `count` events.
    fn events_end(&mut self, count: usize) {
        self.index = None;
        self.read.events = count;
    }

    /// What the document said, once it is read whole: the events waiting for the base are
    /// placed on the clock.
    ///
    /// # Errors
    /// `missing-field` without `traceEvents`; `overflow` for a waiting event.
    fn finish(mut self) -> Result<Parsed> {
        if !self.saw_events {
            return Err(ImportError::new(
                "traceEvents",
                "missing-field",
                "no `traceEvents` array: this is not a PyTorch profiler (Kineto) Chrome trace",
            ));
        }
        let base = self.base.flatten();
        for chunk in std::mem::take(&mut self.pending) {
            for pending in chunk {
                place(&mut self.read, pending, self.events_path, Base::Known(base))?;
            }
        }
        // The events were placed before the base (if there were any: `rebase` of none changes
        // nothing) when it was not known as they began.
        if self.place_before_base && self.base_before_events.is_none() {
            rebase(&mut self.read, base).ok_or_else(|| {
                ImportError::new(
                    self.events_path,
                    "overflow",
                    "a time against the base does not fit in 64-bit nanoseconds",
                )
            })?;
        }
        Ok((self.read, self.top, base))
    }

    /// The importer's error for a failed parse.
    fn error_of(&mut self, e: serde_json::Error) -> ImportError {
        if let Some(err) = self.error.take() {
            return err;
        }
        let e = match trouble_of(e) {
            Ok(trouble) => return trouble,
            Err(e) => e,
        };
        let code = classify(&e);
        let data = e.classify() == serde_json::error::Category::Data;
        let Some(i) = self.index else {
            let path = self.top_key.clone().unwrap_or_else(|| "$".to_owned());
            return ImportError::new(path, code, e.to_string());
        };
        let at = event_path(self.events_path, i);
        if !data {
            return ImportError::new(at, code, e.to_string());
        }
        if !self.in_event {
            return ImportError::new(at, "wrong-type", "a trace event is a JSON object");
        }
        let path = match self.field {
            Some(field) => format!("{at}.{field}"),
            None => at,
        };
        ImportError::new(path, code, crate::error::without_position(&e.to_string()))
    }

    /// Records `err` and hands the parser an error that stops it.
    fn fail<E: de::Error>(&mut self, err: ImportError) -> E {
        self.error = Some(err);
        E::custom("stopped by the importer")
    }

    /// The event just read (`fields`), at `index`: counted, or read and kept.
    fn take_event(&mut self, index: usize) -> Result<()> {
        if index >= super::handoff::MAX_EVENTS {
            return Err(super::handoff::too_many_events(self.events_path));
        }
        let f = &mut self.fields;
        let cat = f.cat.get().unwrap_or("");
        let kind = kept(cat).filter(|_| f.ph.get() == Some("X"));
        let Some((cat, kind)) = kind else {
            self.count_ignored();
            self.take_audit_only(index);
            return Ok(());
        };
        if matches!(cat, "Kernel" | "Memcpy" | "Memset" | "Runtime") {
            self.read.legacy_categories = true;
        }
        let args = match f.args.take() {
            Some(raw) => match serde_json::from_str::<EventArgs>(raw.get()) {
                Ok(args) => args,
                Err(_) => parse_with_path(
                    raw.get(),
                    &format!("{}.args", event_path(self.events_path, index)),
                )?,
            },
            None => EventArgs::default(),
        };
        let (ts, dur) = self.kept_times(cat, index)?;
        let f = &self.fields;
        let name_len = f.name.get().map_or(0, str::len);
        if name_len > crate::trace::MAX_NAME_BYTES {
            return Err(ImportError::new(
                format!("{}.name", event_path(self.events_path, index)),
                "too-large",
                format!(
                    "the name holds {name_len} bytes, more than the {} bytes a name may hold; no kernel or call name is that long",
                    crate::trace::MAX_NAME_BYTES
                ),
            ));
        }
        let event = KeptEvent {
            index,
            cat,
            kind,
            name: f.name.get().unwrap_or("").to_owned(),
            pid: f.pid,
            tid: f.tid,
            thread: f.thread,
            ts,
            dur,
            args,
        };
        let held = Held::of(event, &mut self.read.names);
        self.file(Pending::Kept(held))
    }

    /// Counts an event the importer does not keep under its category (or its `ph`).
    fn count_ignored(&mut self) {
        let f = &self.fields;
        let key = match (f.ph.get(), f.cat.get().unwrap_or("")) {
            (Some(ph), "") => {
                self.key.clear();
                self.key.push_str("(no category, ph ");
                self.key.push_str(ph);
                self.key.push(')');
                self.key.as_str()
            }
            (_, c) => c,
        };
        count(&mut self.read.ignored, key);
    }

    /// The `ts` and `dur` of a kept event of category `cat`, in ns as read (before the base
    /// is added).
    fn kept_times(&mut self, cat: &str, index: usize) -> Result<(i64, i64)> {
        let at = || event_path(self.events_path, index);
        let f = &mut self.fields;
        let ts_raw = f.ts.take();
        if ts_raw
            .as_deref()
            .is_some_and(|r| r.get().contains(['.', 'e', 'E']))
        {
            self.read.fractional_ts = true;
        }
        let options = self.options;
        let rounded = &mut self.read.rounded;
        let ts = required_time(
            ts_raw.as_deref(),
            &|| format!("{}.ts", at()),
            options,
            rounded,
            || format!("a `{cat}` event needs `ts`"),
        )?;
        let dur = required_time(
            f.dur.take().as_deref(),
            &|| format!("{}.dur", at()),
            options,
            rounded,
            || format!("a complete (`ph: X`) `{cat}` event needs `dur`"),
        )?;
        if dur < 0 {
            return Err(ImportError::new(
                format!("{}.dur", at()),
                "reversed-interval",
                format!(
                    "`dur` is negative ({}): the event would end before it starts",
                    Nanos::new(dur)
                ),
            ));
        }
        Ok((ts, dur))
    }

    /// An event the importer does not keep (`fields`, at `index`): read leniently when the
    /// audit wants it ([`super::audit`]).
    fn take_audit_only(&mut self, index: usize) {
        let f = &self.fields;
        if f.ph.get() != Some("X") {
            return;
        }
        let name = f.name.get().unwrap_or("");
        let Some(what) = audit_only(f.cat.get().unwrap_or(""), Some(name)) else {
            return;
        };
        let external = match &f.args {
            Some(args) if is_op_category(f.cat.get().unwrap_or("")) => {
                op_external(args.get().as_bytes())
            }
            _ => None,
        };
        if what == AuditOnly::Op && external.is_none() {
            return;
        }
        match audit_times(f.ts.as_deref(), f.dur.as_deref(), self.options) {
            Err(()) => self.read.audit.unreadable += 1,
            Ok((ts, dur)) => {
                let event = AuditEvent {
                    what,
                    name: self.read.names.get(name),
                    external,
                    thread: f.thread,
                    ts,
                    dur,
                };
                // The importer never fails on it, so neither can its filing.
                let _ = self.file(Pending::Audit(index, event));
            }
        }
    }

    /// Places an event on the clock now, or once the base is known.
    fn file(&mut self, pending: Pending) -> Result<()> {
        match self.base_before_events {
            Some(base) => place(&mut self.read, pending, self.events_path, Base::Known(base)),
            None if self.place_before_base => {
                place(&mut self.read, pending, self.events_path, Base::Later)
            }
            None => {
                match self.pending.last_mut() {
                    Some(chunk) if chunk.len() < PENDING_CHUNK => chunk.push(pending),
                    _ => {
                        let mut chunk = Vec::with_capacity(PENDING_CHUNK);
                        chunk.push(pending);
                        self.pending.push(chunk);
                    }
                }
                Ok(())
            }
        }
    }
}

/// Counts one more event under `key`, allocating the key only the first time it is seen.
fn count(map: &mut BTreeMap<String, u64>, key: &str) {
    match map.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            map.insert(key.to_owned(), 1);
        }
    }
}

/// The base an event is placed against.
#[derive(Clone, Copy)]
enum Base {
    /// Known: `baseTimeNanoseconds`, or none.
    Known(Option<i64>),
    /// Not known yet: the event is placed at its relative time, and [`rebase`] adds the base
    /// at the end (the fast path's way, `State::place_before_base`).
    Later,
}

/// Places an event on the clock (`base` + `ts`) and files it as work, annotation, call
/// or sync row, or (an event only the audit reads) with the audit.
fn place(read: &mut Read, p: Pending, events_path: &str, base: Base) -> Result<()> {
    let p = match p {
        Pending::Kept(p) => p,
        Pending::Audit(index, event) => {
            let at = || event_path(events_path, index);
            let base = match base {
                Base::Known(base) => base,
                Base::Later => None,
            };
            read.audit.place(event, &at, base);
            return Ok(());
        }
    };
    let index = p.index;
    let at = || event_path(events_path, index);
    let overflow = |field: &str| {
        ImportError::new(
            format!("{}.{field}", at()),
            "overflow",
            "the time does not fit in 64-bit nanoseconds",
        )
    };
    // A zero `ts` against a base (provisional when the base comes later: `rebase` takes
    // it back if there is none).
    let zero_ts = p.ts == 0 && !matches!(base, Base::Known(None));
    if zero_ts {
        read.zero_ts_with_base += u64::from(matches!(p.kind, Kept::Work(_)));
    }
    let start = match base {
        Base::Known(Some(b)) => b.checked_add(p.ts).ok_or_else(|| overflow("ts"))?,
        Base::Known(None) | Base::Later => p.ts,
    };
    let end = start.checked_add(p.dur).ok_or_else(|| overflow("dur"))?;
    match p.kind {
        Kept::Work(kind) => {
            let place = u32::try_from(read.work.len()).map_err(|_| {
                ImportError::new(
                    at(),
                    "too-large",
                    "more GPU events than one trace may hold (4,294,967,295)",
                )
            })?;
            let work = work_of(p, (kind, place), (start, end), &at)?;
            read.audit.zero_timestamp(at(), &work, zero_ts);
            read.work.push(work);
        }
        Kept::Annotation => place_annotation(read, p, (start, end)),
        Kept::Call => place_call(read, p, (start, end)),
        Kept::Sync => {
            let rare = p.rare.map(|r| *r);
            let (sync_kind, wait_on_stream, record_corr) = match rare {
                Some(r) => (r.sync_kind, r.wait_on_stream, r.record_corr),
                None => (None, None, None),
            };
            read.syncs.push(SyncRow {
                event: p.index,
                kind: sync_kind.unwrap_or_else(|| p.name.to_string()),
                device: p.device,
                stream: p.stream,
                wait_on_stream,
                record_corr,
                correlation: p.correlation,
            });
        }
    }
    Ok(())
}

/// Adds the base to every time of the events placed before it was known (`Base::Later`),
/// or, with no base, takes back what assumed one (zero timestamps). `None` when a time then
/// overflows, or the audit met an overflow at a relative time: the fast path gives up, and
/// the careful reader words it.
fn rebase(read: &mut Read, base: Option<i64>) -> Option<()> {
    let Some(b) = base else {
        read.zero_ts_with_base = 0;
        read.audit
            .problems
            .retain(|p| p.kind != crate::trace::model::ProblemKind::ZeroTimestamp);
        return Some(());
    };
    if read.audit.error.is_some() {
        return None;
    }
    let audit = &mut read.audit;
    let spans = (read.work.iter_mut().map(|w| (&mut w.start, &mut w.end)))
        .chain(
            read.annotations
                .iter_mut()
                .map(|a| (&mut a.start, &mut a.end)),
        )
        .chain(audit.calls.iter_mut().map(|c| (&mut c.start, &mut c.end)))
        .chain(audit.steps.iter_mut().map(|s| (&mut s.start, &mut s.end)))
        .chain(
            audit
                .gpu_steps
                .iter_mut()
                .map(|s| (&mut s.start, &mut s.end)),
        )
        .chain(audit.ranges.iter_mut().map(|r| (&mut r.start, &mut r.end)))
        .chain(audit.ops.iter_mut().map(|o| (&mut o.start, &mut o.end)))
        .chain(audit.window.as_mut().map(|(start, end)| (start, end)));
    for (start, end) in spans {
        *start = b.checked_add(*start)?;
        *end = b.checked_add(*end)?;
    }
    for p in &mut audit.problems {
        p.start = b.checked_add(p.start)?;
    }
    Some(())
}

/// A kernel, copy or set over `[start, end)`, in the device and stream it names (`at`: its
/// path).
fn work_of(
    p: Held,
    (kind, place): (WorkKind, u32),
    (start, end): (i64, i64),
    at: &dyn Fn() -> String,
) -> Result<GpuWork> {
    let device = p.device.ok_or_else(|| {
        ImportError::new(
            format!("{}.args.device", at()),
            "missing-field",
            "a GPU event needs its device (`args.device`, or an integer `pid`)",
        )
    })?;
    let stream = p.stream.ok_or_else(|| {
        ImportError::new(
            format!("{}.args.stream", at()),
            "missing-field",
            "a GPU event needs its stream (`args.stream`, or `tid`)",
        )
    })?;
    Ok(GpuWork {
        kind,
        name: p.name,
        device,
        stream,
        start,
        end,
        correlation: p.correlation,
        external: p.external,
        collective: p.rare.and_then(|r| r.collective),
        bytes: p.bytes,
        place,
    })
}

/// A `gpu_user_annotation` range over `[start, end)`: kept when it names its device and
/// stream, and a GPU step for the audit when it is a `ProfilerStep#N`.
fn place_annotation(read: &mut Read, p: Held, (start, end): (i64, i64)) {
    let name = p.name;
    if is_step_name(&name) {
        read.audit.gpu_steps.push(Step {
            name: Name::clone(&name),
            start,
            end,
            thread: p.thread,
        });
    }
    if let (Some(device), Some(stream)) = (p.device, p.stream) {
        read.annotations.push(Annotation {
            name,
            device,
            stream,
            start,
            end,
        });
    } else {
        count(
            &mut read.ignored,
            "gpu_user_annotation (no device or stream)",
        );
    }
}

/// An API call over `[start, end)`: kept for the audit in every case, and found by its
/// correlation (the first of a correlation) for the importer.
fn place_call(read: &mut Read, p: Held, (start, end): (i64, i64)) {
    if let Some(pid) = p.device {
        *read.pids.entry(pid).or_default() += 1;
    }
    let correlation = p.correlation;
    let place = read.audit.calls.len();
    read.audit.calls.push(ApiCall {
        name: p.name,
        thread: p.thread,
        start,
        end,
        correlation,
        external: p.external,
        sync_recorded: false,
    });
    match correlation {
        Some(c) => match read.calls.entry(c) {
            std::collections::hash_map::Entry::Occupied(_) => {
                read.duplicate_calls += 1;
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(place);
            }
        },
        None => count(&mut read.ignored, &format!("{} (no correlation)", p.cat)),
    }
}
