//! Kineto Chrome-trace JSON → the audit's [`Trace`] model.
//!
//! The lenient reader `worksheet audit` (and `report`) use on a Kineto trace; `worksheet
//! import` gathers the same model in its own streaming pass (`trace::kineto::neutral`, tested equal to
//! this reader on every trace that imports). It keeps what the audit needs and the case does not (host threads, `ProfilerStep#N` ranges, `record_function`
//! annotations, `aten::item` scalar reads, the profiler's window) and it counts integrity
//! problems (negative durations, zero timestamps) instead of refusing the file, since saying
//! what is wrong with a trace is the audit's job. Exact times come from the same digit-by-digit
//! reading as the importer's (`exact_number` in the parent module): µs text → integer ns, never `f64`.
//!
//! What it refuses is what makes the whole file unreadable: not JSON, no `traceEvents`, an
//! event that is not an object, a time with digits below 1 ns (unless `--round-sub-ns`).

use serde_json::value::RawValue;

use super::neutral::{copy_direction, is_op_category, op_external, LooseId};
use super::number::{parse_with_path, required_time};
use super::read::stream_of_tid;
use super::split::{Piece, Pieces};
use super::{exact_number, Result, WorkKind};
use crate::error::InputError as ImportError;
use crate::trace::model::{
    keep_named_ops, Activity, ActivityKind, ApiCall, CollectiveArgs, CpuOp, Device, HostRange,
    Problem, ProblemKind, RangeKind, Step, Trace,
};
use crate::trace::ReadOptions as ImportOptions;

/// The fields of one event the audit looks at, borrowed from the text.
#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    ph: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

/// The `args` fields the audit uses (GPU work, API calls, sync rows).
#[derive(Default, serde::Deserialize)]
struct EventArgs {
    #[serde(default)]
    correlation: Option<i64>,
    #[serde(default)]
    stream: Option<i64>,
    #[serde(default)]
    device: Option<i64>,
    #[serde(rename = "Collective name", default)]
    collective_name: Option<String>,
    #[serde(rename = "Process Group Name", default)]
    process_group: Option<String>,
    /// Copies and sets: `bytes` (any JSON value; only a non-negative integer is used).
    #[serde(default)]
    bytes: Option<serde_json::Value>,
    /// The External id (`"External id"`; 2021: `"external id"`).
    #[serde(rename = "External id", default)]
    external_upper: LooseId,
    #[serde(rename = "external id", default)]
    external_lower: LooseId,
}

impl EventArgs {
    /// The External id, as the streaming reader reads it.
    fn external(&self) -> Option<i64> {
        self.external_upper.0.or(self.external_lower.0)
    }
}

/// A JSON integer, or `None` for anything else.
fn int_of(raw: &RawValue) -> Option<i64> {
    raw.get().parse().ok()
}

/// The top level of a trace, as far as the audit needs it.
#[derive(serde::Deserialize)]
struct Top<'a> {
    #[serde(rename = "traceEvents", borrow, default)]
    trace_events: Option<Vec<&'a RawValue>>,
    #[serde(rename = "baseTimeNanoseconds", borrow, default)]
    base_time: Option<&'a RawValue>,
    #[serde(rename = "deviceProperties", borrow, default)]
    device_properties: Option<&'a RawValue>,
}

/// Reads a Kineto trace's JSON text into the audit model. Errors are not yet attributed to a
/// file.
///
/// # Errors
/// [`ImportError`]: `bad-syntax`, `missing-field` (no `traceEvents`), `wrong-type`,
/// `inexact-value`, `overflow`.
pub fn read_trace(text: &str, options: &ImportOptions) -> Result<Trace> {
    let (events, path, base, devices) = top_level(text, options)?;
    let mut lenient = Lenient::new(options, base);
    for (i, raw) in events.iter().enumerate() {
        let at = if path == "$" {
            format!("[{i}]")
        } else {
            format!("{path}[{i}]")
        };
        lenient.event(raw, at)?;
    }
    let mut trace = lenient.finish();
    trace.devices = devices;
    Ok(trace)
}

/// The events, the path they are under (`traceEvents`, or `$`), the base time and the devices.
type TopLevel<'a> = (Vec<&'a RawValue>, &'static str, Option<i64>, Vec<Device>);

/// The events, the path they are under (`traceEvents`, or `$` for a bare array) and the base.
fn top_level<'a>(text: &'a str, options: &ImportOptions) -> Result<TopLevel<'a>> {
    match text.trim_start().chars().next() {
        Some('[') => Ok((
            parse_with_path::<Vec<&RawValue>>(text, "")?,
            "$",
            None,
            Vec::new(),
        )),
        Some('{') => {
            let top: Top = parse_with_path(text, "")?;
            let Some(events) = top.trace_events else {
                return Err(no_trace_events());
            };
            let base = match top.base_time {
                None => None,
                Some(raw) => Some(base_time(raw, options)?),
            };
            let devices = devices_of(top.device_properties);
            Ok((events, "traceEvents", base, devices))
        }
        None => Err(ImportError::new(
            "$",
            "bad-syntax",
            "the file is empty; a PyTorch profiler (Kineto) trace is a JSON object or array",
        )),
        _ => Err(ImportError::new(
            "$",
            "bad-syntax",
            "a PyTorch profiler (Kineto) trace is a JSON object or array",
        )),
    }
}

/// The error of a trace object without `traceEvents`.
fn no_trace_events() -> ImportError {
    ImportError::new(
        "traceEvents",
        "missing-field",
        "no `traceEvents` array: this is not a PyTorch profiler (Kineto) Chrome trace",
    )
}

/// `baseTimeNanoseconds`: an exact integer number of nanoseconds.
fn base_time(raw: &RawValue, options: &ImportOptions) -> Result<i64> {
    exact_number(raw, 0, "baseTimeNanoseconds", options, &mut 0)?.ok_or_else(|| {
        ImportError::new(
            "baseTimeNanoseconds",
            "wrong-type",
            "expected an integer number of nanoseconds",
        )
    })
}

/// The devices `deviceProperties` describes (none when it is absent or not JSON the audit
/// reads).
fn devices_of(raw: Option<&RawValue>) -> Vec<Device> {
    raw.and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok())
        .map_or_else(Vec::new, |v| Device::from_kineto_properties(&v))
}

/// What one complete event is, for the audit.
struct What<'h> {
    cat: &'h str,
    name: &'h str,
    work: Option<WorkKind>,
    is_call: bool,
    is_step: bool,
    is_scalar: bool,
    /// A host op (`cpu_op`, `Operator`): its External id, where `args` give one.
    op_external: Option<i64>,
}

impl<'h> What<'h> {
    /// What `head` is, or `None` when the audit does not read it.
    fn of(head: &'h Head<'_>) -> Option<What<'h>> {
        if head.ph.as_deref() != Some("X") {
            return None;
        }
        let cat = head.cat.as_deref().unwrap_or("");
        let name = head.name.as_deref().unwrap_or("");
        let what = What {
            cat,
            name,
            work: WorkKind::of_category(cat),
            is_call: matches!(cat, "cuda_runtime" | "cuda_driver" | "Runtime" | "Driver"),
            is_step: name.starts_with("ProfilerStep#"),
            is_scalar: matches!(name, "aten::item" | "aten::_local_scalar_dense"),
            op_external: None,
        };
        let is_op = is_op_category(cat);
        let what = What {
            op_external: if is_op {
                head.args.and_then(|a| op_external(a.get().as_bytes()))
            } else {
                None
            },
            ..what
        };
        let wanted = what.work.is_some()
            || what.is_call
            || cat == "cuda_sync"
            || cat == "Trace"
            || cat == "user_annotation"
            || (cat == "gpu_user_annotation" && what.is_step)
            || (is_op && (what.is_step || what.is_scalar || what.op_external.is_some()));
        wanted.then_some(what)
    }

    /// Whether the importer reads this event too (then its errors are errors here too).
    fn imported_too(&self) -> bool {
        self.work.is_some() || self.is_call || self.cat == "cuda_sync"
    }
}

/// The lenient reader's state: the model so far, and what it counts.
struct Lenient<'o> {
    trace: Trace,
    base: Option<i64>,
    options: &'o ImportOptions,
    no_stream: u64,
    unreadable: u64,
    sync_rows_corr: Vec<i64>,
}

impl<'o> Lenient<'o> {
    /// An empty model for a trace whose base time is `base`.
    fn new(options: &'o ImportOptions, base: Option<i64>) -> Self {
        Lenient {
            trace: Trace {
                source: "kineto".to_owned(),
                ..Trace::default()
            },
            base,
            options,
            no_stream: 0,
            unreadable: 0,
            sync_rows_corr: Vec::new(),
        }
    }

    /// One event at `at`.
    fn event(&mut self, raw: &RawValue, at: String) -> Result<()> {
        if !raw.get().starts_with('{') {
            return Err(ImportError::new(
                at,
                "wrong-type",
                "a trace event is a JSON object",
            ));
        }
        let head: Head = parse_with_path(raw.get(), &at)?;
        let Some(what) = What::of(&head) else {
            return Ok(());
        };
        let Some((ts, start, dur)) = self.times(&head, &at, &what)? else {
            return Ok(());
        };
        if dur < 0 {
            self.trace.problems.push(Problem {
                kind: ProblemKind::NegativeDuration,
                at,
                name: what.name.into(),
                start,
                duration: dur,
            });
            return Ok(());
        }
        let Some(end) = start.checked_add(dur) else {
            return Err(ImportError::new(
                format!("{at}.dur"),
                "overflow",
                "the time does not fit in 64-bit nanoseconds",
            ));
        };
        self.file(&head, &what, at, (ts, start, end));
        Ok(())
    }

    /// `(ts, start, dur)` of an event. Events the importer reads fail here as they fail there
    /// (a `ts` or `dur` missing, not a number, below 1 ns or overflowing: the importer's code,
    /// path and words); host ranges and the window, which the importer skips, are left out and
    /// counted instead (`None`), so that `import` never refuses a trace because of what only
    /// the audit reads, and no event is left out without a word.
    fn times(&mut self, head: &Head, at: &str, what: &What) -> Result<Option<(i64, i64, i64)>> {
        let mut rounded = 0;
        let (ts, dur) = match exact_times(head, at, what.cat, self.options, &mut rounded) {
            Ok(t) => t,
            Err(e) if what.imported_too() => return Err(e),
            Err(_) => {
                self.unreadable += 1;
                return Ok(None);
            }
        };
        let start = match self.base {
            Some(b) => b.checked_add(ts),
            None => Some(ts),
        };
        let Some(start) = start else {
            return Err(ImportError::new(
                format!("{at}.ts"),
                "overflow",
                "the time does not fit in 64-bit nanoseconds",
            ));
        };
        Ok(Some((ts, start, dur)))
    }

    /// Files a well-formed event: the window, an activity, a call, a sync row, a step or a
    /// host range.
    fn file(&mut self, head: &Head, what: &What, at: String, (ts, start, end): (i64, i64, i64)) {
        let (cat, name) = (what.cat, what.name);
        if let Some(external) = what.op_external {
            self.trace.ops.push(CpuOp {
                external,
                name: name.into(),
                start,
                end,
            });
            if !(what.is_step || what.is_scalar) {
                return;
            }
        }
        let args: EventArgs = match head.args {
            Some(a) => serde_json::from_str(a.get()).unwrap_or_default(),
            None => EventArgs::default(),
        };
        let thread = head.tid.and_then(int_of);
        let trace = &mut self.trace;
        if cat == "Trace" {
            trace.window = Some(match trace.window {
                Some((a, b)) => (a.min(start), b.max(end)),
                None => (start, end),
            });
        } else if let Some(kind) = what.work {
            self.activity(head, kind, &args, name, at, (ts, start, end));
        } else if what.is_call {
            trace.calls.push(ApiCall {
                name: name.into(),
                thread,
                start,
                end,
                correlation: args.correlation,
                external: args.external(),
                sync_recorded: false,
            });
        } else if cat == "cuda_sync" {
            trace.has_sync_rows = true;
            if let Some(c) = args.correlation {
                self.sync_rows_corr.push(c);
            }
        } else if what.is_step {
            let step = Step {
                name: name.into(),
                start,
                end,
                thread,
            };
            if cat == "gpu_user_annotation" {
                trace.gpu_steps.push(step);
            } else {
                trace.steps.push(step);
            }
        } else {
            trace.ranges.push(HostRange {
                kind: if what.is_scalar {
                    RangeKind::ScalarRead
                } else {
                    RangeKind::Annotation
                },
                name: name.into(),
                thread,
                start,
                end,
            });
        }
    }

    /// A GPU activity, in the device and stream it names (else left out and counted); a
    /// zero relative timestamp is a problem.
    fn activity(
        &mut self,
        head: &Head,
        kind: WorkKind,
        args: &EventArgs,
        name: &str,
        at: String,
        (ts, start, end): (i64, i64, i64),
    ) {
        let device = args.device.or_else(|| head.pid.and_then(int_of));
        let stream = args.stream.or_else(|| head.tid.and_then(stream_of_tid));
        let (Some(device), Some(stream)) = (device, stream) else {
            self.no_stream += 1;
            return;
        };
        if self.base.is_some() && ts == 0 {
            self.trace.problems.push(Problem {
                kind: ProblemKind::ZeroTimestamp,
                at,
                name: name.into(),
                start,
                duration: end - start,
            });
        }
        self.trace.activities.push(Activity {
            kind: match kind {
                WorkKind::Kernel => ActivityKind::Kernel,
                WorkKind::Memcpy => ActivityKind::Memcpy,
                WorkKind::Memset => ActivityKind::Memset,
            },
            copy: (kind == WorkKind::Memcpy).then(|| copy_direction(name)),
            name: name.into(),
            device,
            stream,
            start,
            end,
            correlation: args.correlation,
            external: args.external(),
            collective: (kind == WorkKind::Kernel)
                .then(|| {
                    CollectiveArgs::of(args.process_group.clone(), args.collective_name.clone())
                })
                .flatten(),
            bytes: match kind {
                WorkKind::Kernel => None,
                WorkKind::Memcpy | WorkKind::Memset => {
                    args.bytes.as_ref().and_then(serde_json::Value::as_u64)
                }
            },
        });
    }

    /// The model, with each call's sync flag, the steps in time order and the notes.
    fn finish(self) -> Trace {
        let Lenient {
            mut trace,
            mut sync_rows_corr,
            no_stream,
            unreadable,
            ..
        } = self;
        sync_rows_corr.sort_unstable();
        for call in &mut trace.calls {
            call.sync_recorded = call
                .correlation
                .is_some_and(|c| sync_rows_corr.binary_search(&c).is_ok());
        }
        trace.steps.sort_by_key(|s| (s.start, s.end));
        trace.gpu_steps.sort_by_key(|s| (s.start, s.end));
        trace.ops = keep_named_ops(std::mem::take(&mut trace.ops), &trace.calls);
        if unreadable > 0 {
            trace.notes.push(format!(
                "{unreadable} host range(s) without an exact ns time (missing, not a number, below 1 ns or overflowing) are left out"
            ));
        }
        if no_stream > 0 {
            trace.notes.push(format!(
                "{no_stream} GPU event(s) name no device or stream and are left out"
            ));
        }
        trace
    }
}

/// `ts` and `dur` of a complete event, in ns as read (before the base is added), with the
/// importer's errors ([`required_time`], as `read.rs`'s `kept_times` reads them).
fn exact_times(
    head: &Head,
    at: &str,
    cat: &str,
    options: &ImportOptions,
    rounded: &mut u64,
) -> Result<(i64, i64)> {
    let ts = required_time(head.ts, &|| format!("{at}.ts"), options, rounded, || {
        format!("a `{cat}` event needs `ts`")
    })?;
    let dur = required_time(head.dur, &|| format!("{at}.dur"), options, rounded, || {
        format!("a complete (`ph: X`) `{cat}` event needs `dur`")
    })?;
    Ok((ts, dur))
}

/// What one streamed pass of the lenient reader ([`read_trace_pieces`]) found.
#[derive(Debug)]
pub(crate) enum PiecesRead {
    /// The model, or the error [`read_trace`] gives for the same text.
    Done(Box<Result<Trace>>),
    /// Well-formed, but `baseTimeNanoseconds` follows the events, whose times depend on it:
    /// read the pieces again with this base.
    Again(i64),
    /// The pieces do not follow the text (the splitter was unsure, a value is not JSON, a
    /// key is repeated, `traceEvents` is not an array): only [`read_trace`] on the whole
    /// text words what is wrong.
    Whole,
}

/// [`read_trace`] over the splitter's pieces (`split.rs`), holding one batch of events at a
/// time instead of the whole text (reliability review D4: `audit` of a 951 MB trace that the
/// importer refuses held 2.0 GB). It gives what [`read_trace`] gives for the same text: every
/// value is checked to be JSON before an event's error is returned (the whole-text reader
/// parses the document first), the base time's error comes before any event's, and anything
/// it cannot follow is [`PiecesRead::Whole`]. `base` is the base time learned in a first
/// pass ([`PiecesRead::Again`]).
pub(crate) fn read_trace_pieces(
    pieces: &Pieces,
    options: &ImportOptions,
    base: Option<i64>,
) -> PiecesRead {
    read_pieces_inner(pieces, options, base).unwrap_or(PiecesRead::Whole)
}

/// [`read_trace_pieces`]; `None` for [`PiecesRead::Whole`].
fn read_pieces_inner(
    pieces: &Pieces,
    options: &ImportOptions,
    known_base: Option<i64>,
) -> Option<PiecesRead> {
    let events_path = match pieces.recv()? {
        Piece::Object => "traceEvents",
        Piece::Array => "$",
        _ => return None,
    };
    let mut pass = Pass {
        lenient: Lenient::new(options, known_base),
        failed: None,
        events_seen: false,
        events_path,
    };
    if events_path == "$" {
        pass.events(pieces)?;
        return matches!(pieces.recv()?, Piece::End).then(|| pass.done(Vec::new()));
    }
    let mut base_text: Option<Vec<u8>> = None;
    let mut devices_text: Option<Vec<u8>> = None;
    let mut base_after_events = false;
    loop {
        let key = match pieces.recv()? {
            Piece::Key(raw) => serde_json::from_slice::<String>(&raw).ok()?,
            Piece::End => break,
            _ => return None,
        };
        match (key.as_str(), pieces.recv()?) {
            ("traceEvents", Piece::EventsBegin) if !pass.events_seen => pass.events(pieces)?,
            ("traceEvents", _) => return None,
            (_, Piece::Value(raw)) => {
                serde_json::from_slice::<serde::de::IgnoredAny>(&raw).ok()?;
                let slot = match key.as_str() {
                    // `null` is no base, as in the whole-text reader.
                    "baseTimeNanoseconds" if raw.as_slice() == b"null" => &mut base_text,
                    "baseTimeNanoseconds" => {
                        base_after_events = pass.events_seen;
                        if !base_after_events && known_base.is_none() {
                            // The events that follow are timed from it.
                            let raw = serde_json::from_slice::<&RawValue>(&raw).ok()?;
                            match base_time(raw, options) {
                                Ok(b) => pass.lenient.base = Some(b),
                                Err(e) => pass.base_failed(e),
                            }
                        }
                        &mut base_text
                    }
                    "deviceProperties" => &mut devices_text,
                    _ => continue,
                };
                if slot.replace(raw).is_some() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    if !pass.events_seen {
        return Some(PiecesRead::Done(Box::new(Err(no_trace_events()))));
    }
    if base_after_events && known_base.is_none() {
        let raw = serde_json::from_slice::<&RawValue>(base_text.as_deref()?).ok()?;
        // A base after the events: times were read without it, so read them again with it.
        return Some(match base_time(raw, options) {
            Ok(b) => PiecesRead::Again(b),
            Err(e) => PiecesRead::Done(Box::new(Err(e))),
        });
    }
    let devices = match &devices_text {
        Some(text) => devices_of(serde_json::from_slice::<&RawValue>(text).ok()),
        None => Vec::new(),
    };
    Some(pass.done(devices))
}

/// One streamed pass: the model so far and the first error met.
struct Pass<'o> {
    lenient: Lenient<'o>,
    /// The first error; later events are still checked to be JSON, not read.
    failed: Option<ImportError>,
    events_seen: bool,
    events_path: &'static str,
}

impl Pass<'_> {
    /// The base time's error, which comes before any event's.
    fn base_failed(&mut self, e: ImportError) {
        self.failed = Some(e);
    }

    /// The events, through [`Piece::EventsEnd`], each read from its slice.
    fn events(&mut self, pieces: &Pieces) -> Option<()> {
        self.events_seen = true;
        let mut i = 0usize;
        loop {
            match pieces.recv()? {
                Piece::Events(batch) => {
                    for &(start, end) in &batch.spans {
                        let raw =
                            serde_json::from_slice::<&RawValue>(&batch.text[start..end]).ok()?;
                        if self.failed.is_none() {
                            let at = if self.events_path == "$" {
                                format!("[{i}]")
                            } else {
                                format!("{}[{i}]", self.events_path)
                            };
                            if let Err(e) = self.lenient.event(raw, at) {
                                self.failed = Some(e);
                            }
                        }
                        i += 1;
                    }
                    pieces.give_back(batch.text);
                }
                Piece::EventsEnd => return Some(()),
                _ => return None,
            }
        }
    }

    /// The model with `devices`, or the first error.
    fn done(self, devices: Vec<Device>) -> PiecesRead {
        if let Some(e) = self.failed {
            return PiecesRead::Done(Box::new(Err(e)));
        }
        let mut trace = self.lenient.finish();
        trace.devices = devices;
        PiecesRead::Done(Box::new(Ok(trace)))
    }
}
