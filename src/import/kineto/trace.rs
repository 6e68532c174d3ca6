//! Kineto Chrome-trace JSON → the audit's [`Trace`] model.
//!
//! The lenient reader `worksheet audit` (and `report`) use on a Kineto trace; `worksheet
//! import` gathers the same model in its own streaming pass (`kineto/audit.rs`, tested equal to
//! this reader on every trace that imports). It keeps what the audit needs and the case does not (host threads, `ProfilerStep#N` ranges, `record_function`
//! annotations, `aten::item` scalar reads, the profiler's window) and it counts integrity
//! problems (negative durations, zero timestamps) instead of refusing the file, since saying
//! what is wrong with a trace is the audit's job. Exact times come from the same digit-by-digit
//! reading as the importer's (`exact_number` in the parent module): µs text → integer ns, never `f64`.
//!
//! What it refuses is what makes the whole file unreadable: not JSON, no `traceEvents`, an
//! event that is not an object, a time with digits below 1 ns (unless `--round-sub-ns`).

use std::collections::{HashMap, HashSet};

use serde_json::value::RawValue;

use super::number::parse_with_path;
use super::read::stream_of_tid;
use super::{exact_number, ImportOptions, Result, WorkKind};
use crate::audit::index::Index;
use crate::audit::model::{
    Activity, ActivityKind, ApiCall, CallRole, CopyDirection, HostRange, Problem, ProblemKind,
    RangeKind, Step, Trace,
};
use crate::audit::Audit;
use crate::case::raw::{RawCase, RawMark, RawQuestion, RawTime, RawUnrecordedJoin};
use crate::import::ImportError;
use crate::units::{parse_value, Nanos};

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
}

/// Reads a Kineto trace's JSON text into the audit model. Errors are not yet attributed to a
/// file.
///
/// # Errors
/// [`ImportError`]: `bad-syntax`, `missing-field` (no `traceEvents`), `wrong-type`,
/// `inexact-value`, `overflow`.
pub fn read_trace(text: &str, options: &ImportOptions) -> Result<Trace> {
    let (events, path, base) = match text.trim_start().chars().next() {
        Some('[') => (parse_with_path::<Vec<&RawValue>>(text, "")?, "$", None),
        Some('{') => {
            let top: Top = parse_with_path(text, "")?;
            let Some(events) = top.trace_events else {
                return Err(ImportError::new(
                    "traceEvents",
                    "missing-field",
                    "no `traceEvents` array: this is not a PyTorch profiler (Kineto) Chrome trace",
                ));
            };
            let base = match top.base_time {
                None => None,
                Some(raw) => Some(
                    exact_number(raw, 0, "baseTimeNanoseconds", options, &mut 0)?.ok_or_else(
                        || {
                            ImportError::new(
                                "baseTimeNanoseconds",
                                "wrong-type",
                                "expected an integer number of nanoseconds",
                            )
                        },
                    )?,
                ),
            };
            (events, "traceEvents", base)
        }
        _ => {
            return Err(ImportError::new(
                "$",
                "bad-syntax",
                "a PyTorch profiler (Kineto) trace is a JSON object or array",
            ))
        }
    };
    let mut trace = Trace {
        source: "kineto".to_owned(),
        ..Trace::default()
    };
    let mut no_stream = 0u64;
    let mut unreadable = 0u64;
    let mut sync_rows_corr: Vec<i64> = Vec::new();
    for (i, raw) in events.iter().enumerate() {
        let at = if path == "$" {
            format!("[{i}]")
        } else {
            format!("{path}[{i}]")
        };
        if !raw.get().starts_with('{') {
            return Err(ImportError::new(
                at,
                "wrong-type",
                "a trace event is a JSON object",
            ));
        }
        let head: Head = parse_with_path(raw.get(), &at)?;
        if head.ph.as_deref() != Some("X") {
            continue;
        }
        let cat = head.cat.as_deref().unwrap_or("");
        let name = head.name.as_deref().unwrap_or("");
        let work = WorkKind::of_category(cat);
        let is_call = matches!(cat, "cuda_runtime" | "cuda_driver" | "Runtime" | "Driver");
        let is_step = name.starts_with("ProfilerStep#");
        let is_scalar = matches!(name, "aten::item" | "aten::_local_scalar_dense");
        let wanted = work.is_some()
            || is_call
            || cat == "cuda_sync"
            || cat == "Trace"
            || cat == "user_annotation"
            || (cat == "gpu_user_annotation" && is_step)
            || (matches!(cat, "cpu_op" | "Operator") && (is_step || is_scalar));
        if !wanted {
            continue;
        }
        let (Some(ts), Some(dur)) = (head.ts, head.dur) else {
            continue;
        };
        let mut rounded = 0;
        let times =
            exact_number(ts, 3, &format!("{at}.ts"), options, &mut rounded).and_then(|ts| {
                Ok((
                    ts,
                    exact_number(dur, 3, &format!("{at}.dur"), options, &mut rounded)?,
                ))
            });
        // Events the importer reads fail here as they fail there; host ranges and the window,
        // which the importer skips, are left out and counted instead, so that `import` never
        // refuses a trace because of what only the audit reads.
        let imported_too = work.is_some() || is_call || cat == "cuda_sync";
        let (Some(ts), Some(dur)) = (match times {
            Ok(t) => t,
            Err(e) if imported_too => return Err(e),
            Err(_) => {
                unreadable += 1;
                continue;
            }
        }) else {
            continue;
        };
        let start = match base {
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
        if dur < 0 {
            trace.problems.push(Problem {
                kind: ProblemKind::NegativeDuration,
                at,
                name: name.to_owned(),
                start,
                duration: dur,
            });
            continue;
        }
        let Some(end) = start.checked_add(dur) else {
            return Err(ImportError::new(
                format!("{at}.dur"),
                "overflow",
                "the time does not fit in 64-bit nanoseconds",
            ));
        };
        let args: EventArgs = match head.args {
            Some(a) => serde_json::from_str(a.get()).unwrap_or_default(),
            None => EventArgs::default(),
        };
        let thread = head.tid.and_then(int_of);
        if cat == "Trace" {
            trace.window = Some(match trace.window {
                Some((a, b)) => (a.min(start), b.max(end)),
                None => (start, end),
            });
        } else if let Some(kind) = work {
            let device = args.device.or_else(|| head.pid.and_then(int_of));
            let stream = args.stream.or_else(|| head.tid.and_then(stream_of_tid));
            let (Some(device), Some(stream)) = (device, stream) else {
                no_stream += 1;
                continue;
            };
            if base.is_some() && ts == 0 {
                trace.problems.push(Problem {
                    kind: ProblemKind::ZeroTimestamp,
                    at: at.clone(),
                    name: name.to_owned(),
                    start,
                    duration: dur,
                });
            }
            trace.activities.push(Activity {
                kind: match kind {
                    WorkKind::Kernel => ActivityKind::Kernel,
                    WorkKind::Memcpy => ActivityKind::Memcpy,
                    WorkKind::Memset => ActivityKind::Memset,
                },
                copy: (kind == WorkKind::Memcpy).then(|| copy_direction(name)),
                name: name.to_owned(),
                device,
                stream,
                start,
                end,
                correlation: args.correlation,
            });
        } else if is_call {
            trace.calls.push(ApiCall {
                name: name.to_owned(),
                thread,
                start,
                end,
                correlation: args.correlation,
                sync_recorded: false,
            });
        } else if cat == "cuda_sync" {
            trace.has_sync_rows = true;
            if let Some(c) = args.correlation {
                sync_rows_corr.push(c);
            }
        } else if is_step {
            let step = Step {
                name: name.to_owned(),
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
                kind: if is_scalar {
                    RangeKind::ScalarRead
                } else {
                    RangeKind::Annotation
                },
                name: name.to_owned(),
                thread,
                start,
                end,
            });
        }
    }
    sync_rows_corr.sort_unstable();
    for call in &mut trace.calls {
        call.sync_recorded = call
            .correlation
            .is_some_and(|c| sync_rows_corr.binary_search(&c).is_ok());
    }
    trace.steps.sort_by_key(|s| (s.start, s.end));
    trace.gpu_steps.sort_by_key(|s| (s.start, s.end));
    if unreadable > 0 {
        trace.notes.push(format!(
            "{unreadable} host range(s) with a time that is not an exact ns (or overflows) are left out"
        ));
    }
    if no_stream > 0 {
        trace.notes.push(format!(
            "{no_stream} GPU event(s) name no device or stream and are left out"
        ));
    }
    Ok(trace)
}

/// The direction of a copy from its Kineto name, `Memcpy DtoH (Device -> Pageable)`.
fn copy_direction(name: &str) -> CopyDirection {
    if name.contains("DtoH") {
        if name.contains("Pageable") {
            CopyDirection::DeviceToPageable
        } else {
            CopyDirection::DeviceToHost
        }
    } else {
        CopyDirection::Other
    }
}

/// Adds what the audit learned to the case `import` writes from the same trace: the stream
/// pairs whose joins the trace did not record (`unrecorded_joins`, so cross-stream questions
/// answer `dependency-unrecorded`), and each step as questions: `step:<name>:host` (elapsed
/// time between the marks `step:<name>:start` and `step:<name>:end`) and
/// `step:<name>:launched` (the interval algebra of the work launched in the step).
pub fn annotate_case(case: &mut RawCase, trace: &Trace, audit: &Audit) {
    let declared: HashSet<&str> = case.streams.iter().map(|s| s.id.as_str()).collect();
    let waits = trace
        .calls
        .iter()
        .filter(|c| CallRole::of(&c.name) == CallRole::StreamWait && !c.sync_recorded)
        .count();
    let mut joins = Vec::new();
    for (a, b) in &audit.unrecorded_pairs {
        let (a, b) = (super::stream_id(*a), super::stream_id(*b));
        if declared.contains(a.as_str()) && declared.contains(b.as_str()) {
            joins.push(RawUnrecordedJoin {
                streams: vec![a, b],
                why: Some(format!(
                    "{waits} cudaStreamWaitEvent call(s) without cuda_sync rows: the trace does not say which streams they join"
                )),
            });
        }
    }
    case.unrecorded_joins = joins;

    // Phase ids by (stream, start, end), to name the work launched in each step.
    let mut phase_of: HashMap<(String, i64, i64), Vec<String>> = HashMap::new();
    for p in &case.phases {
        let (Some(stream), RawTime::Text(s), RawTime::Text(e)) = (&p.stream, &p.start, &p.end)
        else {
            continue;
        };
        if let (Ok(s), Ok(e)) = (parse_value(s), parse_value(e)) {
            phase_of
                .entry((stream.clone(), s.as_i64(), e.as_i64()))
                .or_default()
                .push(p.id.clone());
        }
    }
    let index = Index::new(trace);
    let mut seen = HashSet::new();
    for step in &trace.steps {
        if !seen.insert(step.name.clone()) {
            continue;
        }
        let mark = |end: &str, at: i64| RawMark {
            id: format!("step:{}:{end}", step.name),
            clock: super::CLOCK_ID.into(),
            at: RawTime::from(Nanos::new(at)),
        };
        case.marks.push(mark("start", step.start));
        case.marks.push(mark("end", step.end));
        case.questions.push(RawQuestion::Elapsed {
            id: format!("step:{}:host", step.name),
            from: format!("step:{}:start", step.name),
            to: format!("step:{}:end", step.name),
            expect: None,
        });
        let mut phases: Vec<String> = Vec::new();
        for (a, call) in index.launch.iter().enumerate() {
            let Some(call) = call else { continue };
            let t = trace.calls[*call].start;
            if t < step.start || t >= step.end {
                continue;
            }
            let act = &trace.activities[a];
            let key = (
                super::stream_id((act.device, act.stream)),
                act.start,
                act.end,
            );
            if let Some(ids) = phase_of.get(&key) {
                phases.extend(ids.iter().cloned());
            }
        }
        phases.sort();
        phases.dedup();
        if !phases.is_empty() {
            case.questions.push(RawQuestion::Intervals {
                id: format!("step:{}:launched", step.name),
                phases: Some(phases),
                expect: None,
            });
        }
    }
}
