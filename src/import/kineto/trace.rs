//! Kineto Chrome-trace JSON → the audit's [`Trace`] model.
//!
//! A second, lenient reading of the same text the importer reads: it keeps what the audit
//! needs and the case does not (host threads, `ProfilerStep#N` ranges, `record_function`
//! annotations, `aten::item` scalar reads, the profiler's window) and it counts integrity
//! problems (negative durations, zero timestamps) instead of refusing the file, since saying
//! what is wrong with a trace is the audit's job. Exact times come from the same digit-by-digit
//! reading as the importer's ([`super::exact_number`]): µs text → integer ns, never `f64`.
//!
//! What it refuses is what makes the whole file unreadable: not JSON, no `traceEvents`, an
//! event that is not an object, a time with digits below 1 ns (unless `--round-sub-ns`).

use serde_json::value::RawValue;

use super::{
    exact_number, int_of, parse_with_path, stream_of_tid, EventArgs, Head, ImportOptions, Result,
    WorkKind,
};
use crate::audit::model::{
    Activity, ActivityKind, ApiCall, CopyDirection, HostRange, Problem, ProblemKind, RangeKind,
    Step, Trace,
};
use crate::import::ImportError;

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
        let (Some(ts), Some(dur)) = (
            exact_number(ts, 3, &format!("{at}.ts"), options, &mut rounded)?,
            exact_number(dur, 3, &format!("{at}.dur"), options, &mut rounded)?,
        ) else {
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
