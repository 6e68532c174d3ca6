//! Reading a Kineto trace the way HTA 0.5.0's JSON parser sees it: every event with `dur`
//! and `cat` (not `Trace`), `args.stream` / `args.correlation` with HTA's defaults (−1), and
//! whether the `ts` column comes out floating point (which decides HTA's rounding). Times
//! are read exactly from the number's text ([`exact_number`]), never through `f64`.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{HtaTrace, Result, Row};
use crate::error::InputError as ImportError;
use crate::trace::kineto::number::exact_number_at;
use crate::trace::ReadOptions as ImportOptions;

/// The fields of one event HTA's breakdown looks at.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    cat: Option<&'a RawValue>,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Args<'a> {
    #[serde(borrow, default)]
    stream: Option<&'a RawValue>,
    #[serde(borrow, default)]
    correlation: Option<&'a RawValue>,
    #[serde(borrow, default)]
    device: Option<&'a RawValue>,
}

/// A JSON integer (or a string holding one), as Python's `int()` reads it; `None` otherwise.
fn int_like(raw: &RawValue) -> Option<i64> {
    let text = raw.get();
    if let Ok(v) = text.parse::<i64>() {
        return Some(v);
    }
    let s: String = serde_json::from_str(text).ok()?;
    s.trim().parse().ok()
}

/// A JSON string's value; `None` for anything else.
fn string_of(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str(raw?.get()).ok()
}

/// HTA's `is_compute_kernel`: not `^nccl.*Kernel`, `.*Memcpy`, `Memset…`, `.*Sync`
/// (`re.match`, so anchored at the start; `.` does not cross a newline).
pub fn is_hta_compute(name: &str) -> bool {
    let first_line = name.split('\n').next().unwrap_or("");
    let nccl = name
        .strip_prefix("nccl")
        .is_some_and(|rest| rest.split('\n').next().unwrap_or("").contains("Kernel"));
    !(nccl
        || first_line.contains("Memcpy")
        || name.starts_with("Memset")
        || first_line.contains("Sync"))
}

impl HtaTrace {
    /// Reads HTA's view of a Kineto trace from its JSON text.
    ///
    /// # Errors
    /// [`ImportError`] for text that is not a Kineto trace, or a pooled row whose `ts` /
    /// `dur` is not an exact number (`wrong-type`, `inexact-value`, `overflow`).
    pub fn from_text(text: &str, options: &ImportOptions) -> Result<HtaTrace> {
        #[derive(Deserialize)]
        struct Top<'a> {
            #[serde(rename = "traceEvents", borrow, default)]
            trace_events: Option<Vec<&'a RawValue>>,
            #[serde(rename = "distributedInfo", default)]
            distributed_info: Option<serde_json::Value>,
        }
        let bad = |e: serde_json::Error| {
            ImportError::new("$", "bad-syntax", format!("not a Kineto trace: {e}"))
        };
        let (events, rank, prefix) = if text.trim_start().starts_with('[') {
            let events: Vec<&RawValue> = serde_json::from_str(text).map_err(bad)?;
            (events, None, "")
        } else {
            let top: Top = serde_json::from_str(text).map_err(bad)?;
            let rank = top
                .distributed_info
                .as_ref()
                .and_then(|d| d.get("rank"))
                .and_then(serde_json::Value::as_i64);
            let events = top.trace_events.ok_or_else(|| {
                ImportError::new("traceEvents", "missing-field", "no `traceEvents` array")
            })?;
            (events, rank, "traceEvents")
        };
        let mut trace = HtaTrace {
            rank,
            ..HtaTrace::default()
        };
        let mut symbols = BTreeSet::new();
        for (index, raw) in events.iter().enumerate() {
            trace.read_event(index, prefix, raw.get().as_bytes(), options, &mut symbols)?;
        }
        trace.step_symbols = symbols.len();
        Ok(trace)
    }

    /// Reads one event's JSON text: notes its `ts` kind, keeps it as a row when it can
    /// matter. `prefix[index]` names it in errors (`traceEvents[12].ts`).
    pub(super) fn read_event(
        &mut self,
        index: usize,
        prefix: &str,
        text: &[u8],
        options: &ImportOptions,
        symbols: &mut BTreeSet<String>,
    ) -> Result<()> {
        let Ok(head) = serde_json::from_slice::<Head>(text) else {
            return Ok(()); // not an object: HTA's frame has no row for it
        };
        match head.ts.map(RawValue::get) {
            None | Some("null") => self.float_ts = true,
            Some(t) if t.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
                if t.contains(['.', 'e', 'E']) {
                    self.float_ts = true;
                }
            }
            Some(_) => self.non_numeric_ts = true,
        }
        let present = |v: Option<&RawValue>| v.is_some_and(|v| v.get() != "null");
        if !present(head.dur) || !present(head.cat) {
            return Ok(());
        }
        let cat = string_of(head.cat);
        if cat.as_deref() == Some("Trace") {
            return Ok(());
        }
        let name = string_of(head.name).unwrap_or_default();
        let args: Option<Args> = head
            .args
            .and_then(|a| serde_json::from_str::<Args>(a.get()).ok());
        let stream = args
            .as_ref()
            .and_then(|a| a.stream)
            .and_then(int_like)
            .unwrap_or(-1);
        let correlation = args
            .as_ref()
            .and_then(|a| a.correlation)
            .and_then(|c| c.get().parse().ok())
            .unwrap_or(-1);
        let device = args.as_ref().and_then(|a| a.device).and_then(int_like);
        let step = name.contains("ProfilerStep");
        if step {
            symbols.insert(name.clone());
        }
        if let Some(c) = cat.as_deref().filter(|c| c.contains("ProfilerStep")) {
            symbols.insert(c.to_owned());
        }
        let gpu =
            (stream >= 0 && correlation >= 0) || name == "Event Sync" || name == "Context Sync";
        // Rows that can matter: pooled (a stream), a step, or a host row's correlation.
        if stream == -1 && !step && (gpu || correlation < 0) {
            return Ok(());
        }
        // The path is written only for an error.
        let number = |raw: Option<&RawValue>, field: &str, rounded: &mut u64| {
            let path = || format!("{prefix}[{index}].{field}");
            let raw = raw.ok_or_else(|| {
                ImportError::new(path(), "missing-field", format!("needs `{field}`"))
            })?;
            exact_number_at(raw, 3, &path, options, rounded)?.ok_or_else(|| {
                ImportError::new(path(), "wrong-type", "expected a number of microseconds")
            })
        };
        let mut rounded = 0;
        let ts = number(head.ts, "ts", &mut rounded)?;
        let dur = number(head.dur, "dur", &mut rounded)?;
        self.rows.push(Row {
            index,
            ts,
            dur,
            stream,
            correlation,
            device,
            gpu,
            step,
            sync: cat.as_deref() == Some("cuda_sync"),
            compute: is_hta_compute(&name),
        });
        Ok(())
    }
}
