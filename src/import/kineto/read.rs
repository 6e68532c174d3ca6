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

use std::collections::BTreeMap;
use std::fmt;
use std::io::BufRead;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::audit::{audit_only, audit_times, is_step_name, AuditEvent};
use super::{Annotation, GpuWork, HostCall, Read, SyncRow, WorkKind};
use crate::audit::model::{ApiCall, Step};
use crate::import::text::trouble_of;
use crate::import::{ImportError, ImportOptions};
use crate::units::Nanos;

type Result<T> = std::result::Result<T, ImportError>;

/// The top level of a Kineto trace, apart from the events: what the build step uses.
#[derive(Default)]
pub(super) struct TopLevel {
    pub(super) distributed_info: Option<serde_json::Value>,
    pub(super) device_properties: Option<serde_json::Value>,
    pub(super) trace_name: Option<serde_json::Value>,
    pub(super) schema_version: Option<serde_json::Value>,
}

/// The `args` fields the importer uses (GPU work, API calls, sync rows).
#[derive(Default, Deserialize)]
pub(super) struct EventArgs {
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
}

/// What the build step gets: the events read, the top level, the base time.
pub(super) type Parsed = (Read, TopLevel, Option<i64>);

/// Reads a whole trace from `reader` (JSON text: a `{"traceEvents": [...]}` object or a bare
/// array of events).
///
/// # Errors
/// [`ImportError`] with the JSON path and code of the first problem met.
pub(super) fn read_trace<R: BufRead>(mut reader: R, options: &ImportOptions) -> Result<Parsed> {
    let first = match peek_first(&mut reader) {
        Ok(first) => first,
        Err(e) => return Err(crate::import::text::trouble_of_io(e)),
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
        Some(c) => {
            // Not a trace: read it whole (it is capped) to say what it is, as the
            // whole-text reader did: not UTF-8, not JSON, or JSON of the wrong kind.
            let mut text = String::new();
            if let Err(e) = reader.read_to_string(&mut text) {
                return Err(crate::import::text::trouble_of_io(e));
            }
            let e = serde_json::from_str::<IgnoredAny>(&text).err();
            return Err(match e {
                Some(e) => ImportError::new("$", "bad-syntax", format!("not JSON: {e}")),
                None => ImportError::new(
                    "$",
                    "bad-syntax",
                    format!(
                        "a trace is a JSON object (`{{...}}`), but this file starts with `{}`",
                        char::from(c)
                    ),
                ),
            });
        }
    };
    let mut st = State {
        options,
        events_path,
        read: Read::default(),
        top: TopLevel::default(),
        fields: Fields::default(),
        pending: Vec::new(),
        base: None,
        base_before_events: None,
        saw_events: false,
        top_key: None,
        index: None,
        field: None,
        in_event: false,
        error: None,
        key: String::new(),
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let parsed = if events_path == "$" {
        st.saw_events = true;
        st.base_before_events = Some(None);
        (&mut de).deserialize_seq(Events(&mut st))
    } else {
        (&mut de).deserialize_map(Top(&mut st))
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
    if !st.saw_events {
        return Err(ImportError::new(
            "traceEvents",
            "missing-field",
            "no `traceEvents` array: this is not a PyTorch profiler (Kineto) Chrome trace",
        ));
    }
    let base = st.base.flatten();
    for pending in std::mem::take(&mut st.pending) {
        place(&mut st.read, pending, events_path, base)?;
    }
    Ok((st.read, st.top, base))
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

/// An event whose times are read but not yet placed on the clock (the base may come later
/// in the file): one the importer keeps, or one only the audit reads.
enum Pending {
    Kept(KeptEvent),
    Audit(usize, AuditEvent),
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
    pending: Vec<Pending>,
    /// `baseTimeNanoseconds`: `None` until seen.
    base: Option<Option<i64>>,
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

impl State<'_> {
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
        let f = &mut self.fields;
        let cat = f.cat.get().unwrap_or("");
        let kind = kept(cat).filter(|_| f.ph.get() == Some("X"));
        let Some((cat, kind)) = kind else {
            let key = match (f.ph.get(), cat) {
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
            self.take_audit_only(index);
            return Ok(());
        };
        let at = || event_path(self.events_path, index);
        if matches!(cat, "Kernel" | "Memcpy" | "Memset" | "Runtime") {
            self.read.legacy_categories = true;
        }
        let args = match f.args.take() {
            Some(raw) => match serde_json::from_str::<EventArgs>(raw.get()) {
                Ok(args) => args,
                Err(_) => parse_with_path(raw.get(), &format!("{}.args", at()))?,
            },
            None => EventArgs::default(),
        };
        let ts_raw = f.ts.take().ok_or_else(|| {
            ImportError::new(
                format!("{}.ts", at()),
                "missing-field",
                format!("a `{cat}` event needs `ts`"),
            )
        })?;
        if ts_raw.get().contains(['.', 'e', 'E']) {
            self.read.fractional_ts = true;
        }
        let options = self.options;
        let rounded = &mut self.read.rounded;
        let ts = exact_number_at(&ts_raw, 3, &|| format!("{}.ts", at()), options, rounded)?
            .ok_or_else(|| {
                ImportError::new(
                    format!("{}.ts", at()),
                    "wrong-type",
                    "expected a number of microseconds",
                )
            })?;
        let dur = match f.dur.take() {
            Some(raw) => exact_number_at(&raw, 3, &|| format!("{}.dur", at()), options, rounded)?
                .ok_or_else(|| {
                ImportError::new(
                    format!("{}.dur", at()),
                    "wrong-type",
                    "expected a number of microseconds",
                )
            })?,
            None => {
                return Err(ImportError::new(
                    format!("{}.dur", at()),
                    "missing-field",
                    format!("a complete (`ph: X`) `{cat}` event needs `dur`"),
                ))
            }
        };
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
        let pending = Pending::Kept(KeptEvent {
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
        });
        self.file(pending)
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
        match audit_times(f.ts.as_deref(), f.dur.as_deref(), self.options) {
            Err(()) => self.read.audit.unreadable += 1,
            Ok(None) => {}
            Ok(Some((ts, dur))) => {
                let event = AuditEvent {
                    what,
                    name: name.to_owned(),
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
            Some(base) => place(&mut self.read, pending, self.events_path, base),
            None => {
                self.pending.push(pending);
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

/// Places an event on the clock (`base` + `ts`) and files it as work, annotation, call
/// or sync row, or (an event only the audit reads) with the audit.
fn place(read: &mut Read, p: Pending, events_path: &str, base: Option<i64>) -> Result<()> {
    let p = match p {
        Pending::Kept(p) => p,
        Pending::Audit(index, event) => {
            read.audit
                .place(event, &|| event_path(events_path, index), base);
            return Ok(());
        }
    };
    let at = || event_path(events_path, p.index);
    let overflow = |field: &str| {
        ImportError::new(
            format!("{}.{field}", at()),
            "overflow",
            "the time does not fit in 64-bit nanoseconds",
        )
    };
    let start = match base {
        Some(b) => {
            if p.ts == 0 {
                read.zero_ts_with_base += u64::from(matches!(p.kind, Kept::Work(_)));
            }
            b.checked_add(p.ts).ok_or_else(|| overflow("ts"))?
        }
        None => p.ts,
    };
    let end = start.checked_add(p.dur).ok_or_else(|| overflow("dur"))?;
    let (name, args) = (p.name, p.args);
    match p.kind {
        Kept::Work(kind) => {
            let device = args.device.or(p.pid).ok_or_else(|| {
                ImportError::new(
                    format!("{}.args.device", at()),
                    "missing-field",
                    "a GPU event needs its device (`args.device`, or an integer `pid`)",
                )
            })?;
            let stream = args.stream.or(p.tid).ok_or_else(|| {
                ImportError::new(
                    format!("{}.args.stream", at()),
                    "missing-field",
                    "a GPU event needs its stream (`args.stream`, or `tid`)",
                )
            })?;
            let work = GpuWork {
                kind,
                name,
                device,
                stream,
                start,
                end,
                correlation: args.correlation,
            };
            read.audit
                .zero_timestamp(at(), &work, base.is_some() && p.ts == 0);
            read.work.push(work);
        }
        Kept::Annotation => {
            if is_step_name(&name) {
                read.audit.gpu_steps.push(Step {
                    name: name.clone(),
                    start,
                    end,
                    thread: p.thread,
                });
            }
            let device = args.device.or(p.pid);
            let stream = args.stream.or(p.tid);
            if let (Some(device), Some(stream)) = (device, stream) {
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
        Kept::Call => {
            if let Some(pid) = p.pid {
                *read.pids.entry(pid).or_default() += 1;
            }
            read.audit.calls.push(ApiCall {
                name: name.clone(),
                thread: p.thread,
                start,
                end,
                correlation: args.correlation,
                sync_recorded: false,
            });
            match args.correlation {
                Some(c) => match read.calls.entry(c) {
                    std::collections::hash_map::Entry::Occupied(_) => {
                        read.duplicate_calls += 1;
                    }
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert(HostCall { name, start, end });
                    }
                },
                None => count(&mut read.ignored, &format!("{} (no correlation)", p.cat)),
            }
        }
        Kept::Sync => {
            read.syncs.push(SyncRow {
                event: p.index,
                kind: args.cuda_sync_kind.clone().unwrap_or(name),
                device: args.device.or(p.pid),
                stream: args.stream,
                wait_on_stream: args.wait_on_stream,
                record_corr: args.wait_on_cuda_event_record_corr_id,
                correlation: args.correlation,
            });
        }
    }
    Ok(())
}

/// The exact value of a JSON number scaled by 10^`scale` (3: µs → ns), as an integer.
/// `Ok(None)` when the value is not a number (a string, `null`, an object).
///
/// # Errors
/// `inexact-value` when digits remain below 1 (unless rounding is on; then `rounded` counts
/// it), `overflow` past `i64`; `path` names the field.
pub(super) fn exact_number_at(
    raw: &RawValue,
    scale: i32,
    path: &dyn Fn() -> String,
    options: &ImportOptions,
    rounded: &mut u64,
) -> Result<Option<i64>> {
    let text = raw.get();
    if !text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return Ok(None);
    }
    match scaled_decimal(text, scale) {
        Some(Scaled::Exact(v)) => Ok(Some(v)),
        Some(Scaled::Rounded(v)) if options.round_sub_ns => {
            *rounded += 1;
            Ok(Some(v))
        }
        Some(Scaled::Rounded(_)) => Err(ImportError::new(
            path(),
            "inexact-value",
            format!(
                "`{text}` has digits below one nanosecond; pass --round-sub-ns to round such values to the nearest ns"
            ),
        )),
        None => Err(ImportError::new(
            path(),
            "overflow",
            format!("`{text}` does not fit in 64-bit nanoseconds"),
        )),
    }
}

/// A bit per event field, to refuse a repeated one.
fn first_time<E: de::Error>(
    seen: &mut u8,
    bit: u8,
    name: &'static str,
) -> std::result::Result<(), E> {
    if *seen & bit != 0 {
        return Err(E::duplicate_field(name));
    }
    *seen |= bit;
    Ok(())
}

/// The keys of a trace event the importer reads.
enum Field {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Field, E> {
                Ok(match v {
                    "ph" => Field::Ph,
                    "cat" => Field::Cat,
                    "name" => Field::Name,
                    "pid" => Field::Pid,
                    "tid" => Field::Tid,
                    "ts" => Field::Ts,
                    "dur" => Field::Dur,
                    "args" => Field::Args,
                    _ => Field::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// `null` or a string, into a reused buffer.
struct OptText<'b>(&'b mut Text);

impl<'de> DeserializeSeed<'de> for OptText<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for OptText<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("option")
    }
    fn visit_none<E: de::Error>(self) -> std::result::Result<(), E> {
        self.0.set = false;
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        self.visit_none()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_str(StrInto(self.0))
    }
}

/// A string, into a reused buffer.
struct StrInto<'b>(&'b mut Text);

impl Visitor<'_> for StrInto<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<(), E> {
        self.0.buf.clear();
        self.0.buf.push_str(v);
        self.0.set = true;
        Ok(())
    }
}

/// A `pid` or `tid`: any JSON value; an integer, or (for `tid`) `"stream N"`, is kept.
enum Id {
    Int(i64),
    Stream(i64),
    Other,
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Id, E> {
                Ok(Id::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Id, E> {
                Ok(i64::try_from(v).map_or(Id::Other, Id::Int))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<Id, E> {
                Ok(Id::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<Id, E> {
                Ok(Id::Other)
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<Id, E> {
                Ok(Id::Other)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Id, E> {
                let stream = v
                    .trim()
                    .strip_prefix("stream")
                    .and_then(|s| s.trim().parse().ok());
                Ok(stream.map_or(Id::Other, Id::Stream))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Id, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Id::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Id, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Id::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// `baseTimeNanoseconds`: an integer number of ns (read exactly), or absent / `null`.
fn base_of(raw: Option<&RawValue>, options: &ImportOptions) -> Result<Option<i64>> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let path = || "baseTimeNanoseconds".to_owned();
    let value = exact_number_at(raw, 0, &path, options, &mut 0)?;
    value.map(Some).ok_or_else(|| {
        ImportError::new(
            "baseTimeNanoseconds",
            "wrong-type",
            "expected an integer number of nanoseconds",
        )
    })
}

/// The stream a `tid` names, read as the streaming pass reads it: an integer, or the 2021
/// string `"stream 7"`.
pub(super) fn stream_of_tid(raw: &RawValue) -> Option<i64> {
    match serde_json::from_str::<Id>(raw.get()).ok()? {
        Id::Int(v) | Id::Stream(v) => Some(v),
        Id::Other => None,
    }
}

/// One trace event.
struct Event<'s, 'o>(&'s mut State<'o>);

impl<'de> DeserializeSeed<'de> for Event<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Event<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace event (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let st = self.0;
        st.in_event = true;
        st.fields.reset();
        while let Some(key) = map.next_key::<Field>()? {
            let f = &mut st.fields;
            match key {
                Field::Ph => {
                    first_time::<A::Error>(&mut f.seen, 1, "ph")?;
                    st.field = Some("ph");
                    map.next_value_seed(OptText(&mut f.ph))?;
                }
                Field::Cat => {
                    first_time::<A::Error>(&mut f.seen, 2, "cat")?;
                    st.field = Some("cat");
                    map.next_value_seed(OptText(&mut f.cat))?;
                }
                Field::Name => {
                    first_time::<A::Error>(&mut f.seen, 4, "name")?;
                    st.field = Some("name");
                    map.next_value_seed(OptText(&mut f.name))?;
                }
                Field::Pid => {
                    first_time::<A::Error>(&mut f.seen, 8, "pid")?;
                    st.field = Some("pid");
                    f.pid = match map.next_value::<Option<Id>>()? {
                        Some(Id::Int(v)) => Some(v),
                        _ => None,
                    };
                }
                Field::Tid => {
                    first_time::<A::Error>(&mut f.seen, 16, "tid")?;
                    st.field = Some("tid");
                    (f.tid, f.thread) = match map.next_value::<Option<Id>>()? {
                        Some(Id::Int(v)) => (Some(v), Some(v)),
                        Some(Id::Stream(v)) => (Some(v), None),
                        _ => (None, None),
                    };
                }
                Field::Ts | Field::Dur | Field::Args => {
                    let (bit, name) = match key {
                        Field::Ts => (32, "ts"),
                        Field::Dur => (64, "dur"),
                        _ => (128, "args"),
                    };
                    first_time::<A::Error>(&mut f.seen, bit, name)?;
                    st.field = Some(name);
                    let unread = match key {
                        Field::Args => f.known_ignored(),
                        _ => f.times_unread(),
                    };
                    if unread {
                        map.next_value::<IgnoredAny>()?;
                    } else {
                        let raw = map.next_value::<Option<Box<RawValue>>>()?;
                        match key {
                            Field::Ts => f.ts = raw,
                            Field::Dur => f.dur = raw,
                            _ => f.args = raw,
                        }
                    }
                }
                Field::Other => {
                    st.field = None;
                    map.next_value::<IgnoredAny>()?;
                }
            }
            st.field = None;
        }
        let index = st.index.unwrap_or(0);
        if let Err(err) = st.take_event(index) {
            return Err(st.fail(err));
        }
        st.in_event = false;
        Ok(())
    }
}

/// The `traceEvents` array (or a bare array of events).
struct Events<'s, 'o>(&'s mut State<'o>);

impl<'de> DeserializeSeed<'de> for Events<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for Events<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_none<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let st = self.0;
        st.saw_events = true;
        if st.base_before_events.is_none() {
            // The base, if it was seen before the events; if not, events wait for the end.
            st.base_before_events = st.base;
        }
        let mut i = 0;
        loop {
            st.index = Some(i);
            if seq.next_element_seed(Event(st))?.is_none() {
                break;
            }
            i += 1;
        }
        st.index = None;
        st.read.events = i;
        Ok(())
    }
}

/// The top-level object.
struct Top<'s, 'o>(&'s mut State<'o>);

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct TopLevel")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let st = self.0;
        let mut seen = 0u8;
        while let Some(key) = map.next_key::<String>()? {
            let known = [
                "traceEvents",
                "baseTimeNanoseconds",
                "distributedInfo",
                "deviceProperties",
                "traceName",
                "schemaVersion",
            ]
            .iter()
            .position(|k| *k == key);
            st.top_key = Some(key);
            if let Some(k) = known {
                let name = [
                    "traceEvents",
                    "baseTimeNanoseconds",
                    "distributedInfo",
                    "deviceProperties",
                    "traceName",
                    "schemaVersion",
                ][k];
                first_time::<A::Error>(&mut seen, 1 << k, name)?;
            }
            match known {
                Some(0) => map.next_value_seed(Events(st))?,
                Some(1) => {
                    let raw = map.next_value::<Option<Box<RawValue>>>()?;
                    match base_of(raw.as_deref(), st.options) {
                        Ok(base) => st.base = Some(base),
                        Err(err) => return Err(st.fail(err)),
                    }
                }
                Some(2) => st.top.distributed_info = map.next_value()?,
                Some(3) => st.top.device_properties = map.next_value()?,
                Some(4) => st.top.trace_name = map.next_value()?,
                Some(5) => st.top.schema_version = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            st.top_key = None;
        }
        Ok(())
    }
}

/// Deserializes `text` as `T`, with the JSON path of any error under `prefix`.
pub(super) fn parse_with_path<'a, T: Deserialize<'a>>(text: &'a str, prefix: &str) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let inner = err.path().to_string();
        let path = join_path(prefix, &inner);
        let e = err.inner();
        let code = classify(e);
        // Positions help in a whole file; inside one event they would mislead.
        let message = if prefix.is_empty() && e.line() > 0 {
            e.to_string()
        } else {
            crate::error::without_position(&e.to_string())
        };
        ImportError::new(path, code, message)
    })?;
    de.end().map_err(|e| {
        ImportError::new(
            if prefix.is_empty() { "$" } else { prefix },
            "bad-syntax",
            format!("text after the JSON value: {e}"),
        )
    })?;
    Ok(value)
}

fn join_path(prefix: &str, inner: &str) -> String {
    match (prefix.is_empty(), inner == "." || inner.is_empty()) {
        (true, true) => "$".to_owned(),
        (true, false) => inner.to_owned(),
        (false, true) => prefix.to_owned(),
        (false, false) if inner.starts_with('[') => format!("{prefix}{inner}"),
        (false, false) => format!("{prefix}.{inner}"),
    }
}

pub(super) fn classify(err: &serde_json::Error) -> &'static str {
    use serde_json::error::Category;
    match err.classify() {
        Category::Io => "io",
        Category::Syntax | Category::Eof => "bad-syntax",
        Category::Data => crate::error::serde_data_code(&err.to_string()),
    }
}

/// A decimal scaled to an integer: exact, or rounded to the nearest (halves away from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scaled {
    Exact(i64),
    Rounded(i64),
}

/// `text` (a JSON number: sign, digits, optional fraction and exponent) × 10^`scale`, read
/// digit by digit. `None` when it is not such a number or the result overflows `i64`.
pub(super) fn scaled_decimal(text: &str, scale: i32) -> Option<Scaled> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => {
            let e = rest[i + 1..].strip_prefix('+').unwrap_or(&rest[i + 1..]);
            if e.is_empty() || e.len() > 6 {
                return None;
            }
            (&rest[..i], e.parse::<i32>().ok()?)
        }
        None => (rest, 0),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((a, b)) => (a, b),
        None => (mantissa, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty() || !all_digits(int_part) || !all_digits(frac_part) {
        return None;
    }
    if mantissa.contains('.') && frac_part.is_empty() {
        return None;
    }
    // digits × 10^shift, with digits = int_part ++ frac_part.
    let shift = i64::from(exponent) + i64::from(scale) - frac_part.len() as i64;
    let digits: Vec<u8> = int_part
        .bytes()
        .chain(frac_part.bytes())
        .skip_while(|&b| b == b'0')
        .map(|b| b - b'0')
        .collect();
    let keep = if shift >= 0 {
        digits.len()
    } else {
        digits.len().saturating_sub(shift.unsigned_abs() as usize)
    };
    let mut value: i128 = 0;
    for &d in &digits[..keep] {
        value = value.checked_mul(10)?.checked_add(i128::from(d))?;
        if value > i128::from(i64::MAX) + 1 {
            return None;
        }
    }
    let dropped = &digits[keep..];
    let mut exact = true;
    if shift > 0 {
        for _ in 0..shift {
            value = value.checked_mul(10)?;
            if value > i128::from(i64::MAX) + 1 {
                return None;
            }
        }
    } else if dropped.iter().any(|&d| d != 0) {
        exact = false;
        // Below-the-point digits: when fewer digits are kept than dropped positions, the
        // first dropped position may lie before the first digit (a value below 0.1).
        let positions = shift.unsigned_abs() as usize;
        let first_dropped = if positions > digits.len() {
            0
        } else {
            dropped[0]
        };
        if first_dropped >= 5 {
            value += 1;
        }
    }
    let value = if negative { -value } else { value };
    let value = i64::try_from(value).ok()?;
    Some(if exact {
        Scaled::Exact(value)
    } else {
        Scaled::Rounded(value)
    })
}
