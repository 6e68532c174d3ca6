//! `worksheet export INPUT --perfetto OUT.json`: the case as a Chrome trace-event JSON file
//! that ui.perfetto.dev and chrome://tracing open.
//!
//! One process per clock (a rank of a multi-rank import is its own process: its clock is its
//! own), and in it one thread per stream with the stream's work as complete (`X`) slices, a
//! `host ranges` thread (phases on no stream: annotation ranges), a `steps` thread (the
//! audit's `ProfilerStep#N` windows, one per device), and one `answer …` thread per interval
//! question the engine answered on that clock, whose slices are the pieces of the union (a
//! set that mixes clocks has no single union: its per-clock pieces are named with the reason).
//! A multi-rank import adds a `collectives` thread per rank: each matched collective instance
//! as the rank's kernel, with the rank's bounded arrival and the instance's skew.
//! Duration answers (submission, completion, …) have no position of their own in the
//! engine's report; they are listed, with their verdicts, in the file's `otherData`.
//! The audit's findings are on a `findings` thread at their exact times (`perfetto/findings.rs`), and
//! listed whole in `otherData.findings`.
//!
//! Times are exact: `ts` and `dur` are written as decimal µs with three decimals (ns), as
//! Kineto writes them, from integer ns, never through a float. Each process's times count from
//! its clock's first event (`origin_ns` in the process's metadata), so a viewer that reads
//! them as doubles still gets every nanosecond back (below 2⁵³ ns, 104 days). Two processes'
//! times are **not comparable** when they are different clocks (SPEC §10); clock ids of one
//! clock (an nsys export's processes) share one origin and compare.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::tables::{Input, Table, Values};
use crate::case::{validate, Case};
use crate::engine::{evaluate, Outcome, Report};
use crate::error::Refusal;
use crate::interval::SetAnalysis;

mod findings;

/// One trace event (the fields of the Trace Event Format that this file uses).
#[derive(Serialize)]
struct Event {
    name: String,
    ph: &'static str,
    pid: usize,
    tid: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<Box<RawValue>>,
    /// An instant event's scope (`t`: its thread).
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    args: Value,
}

/// `ns` as decimal microseconds with three decimals (`1234567` → `1234.567`), exactly.
pub fn micros(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    format!("{sign}{}.{:03}", abs / 1000, abs % 1000)
}

fn raw(ns: i128) -> Option<Box<RawValue>> {
    // A decimal number is always valid JSON.
    RawValue::from_string(micros(ns)).ok()
}

/// The threads of one process (a clock), by name, with their tids.
#[derive(Default)]
struct Process {
    /// The process id (1-based clock index).
    pid: usize,
    /// The clock's origin: its earliest time in the file (ns).
    origin: i64,
    /// Thread names → tids, in the order they were first used.
    threads: BTreeMap<String, usize>,
}

impl Process {
    fn tid(&mut self, thread: &str) -> usize {
        let next = self.threads.len() + 1;
        *self.threads.entry(thread.to_owned()).or_insert(next)
    }
}

fn column<'a>(t: &'a Table, name: &str) -> Option<&'a Values> {
    t.columns.iter().find(|c| c.name == name).map(|c| &c.values)
}

fn ints<'a>(t: &'a Table, name: &str) -> &'a [Option<i64>] {
    match column(t, name) {
        Some(Values::Int(v)) => v,
        _ => &[],
    }
}

fn texts<'a>(t: &'a Table, name: &str) -> &'a [Option<String>] {
    match column(t, name) {
        Some(Values::Text(v)) => v,
        _ => &[],
    }
}

/// The pieces of a set's union: its extent less its gaps.
fn union_pieces(a: &SetAnalysis) -> Vec<(i64, i64)> {
    let Some(extent) = a.extent else {
        return Vec::new();
    };
    let mut pieces = Vec::new();
    let mut at = extent.start().as_i64();
    for gap in &a.gaps {
        pieces.push((at, gap.start().as_i64()));
        at = gap.end().as_i64();
    }
    pieces.push((at, extent.end().as_i64()));
    pieces
}

/// A complete (`X`) slice `[start, end)` on thread `tid` of `p`, its times from the clock's
/// origin.
fn slice(
    p: &Process,
    tid: usize,
    name: String,
    cat: &'static str,
    span: (i64, i64),
    args: Value,
) -> Event {
    let (start, end) = span;
    Event {
        name,
        ph: "X",
        pid: p.pid,
        tid,
        cat: Some(cat),
        ts: raw(i128::from(start) - i128::from(p.origin)),
        dur: raw(i128::from(end) - i128::from(start)),
        s: None,
        args,
    }
}

/// A metadata (`M`) event: a process's or thread's name or sort index.
fn meta(name: &str, pid: usize, tid: usize, args: Value) -> Event {
    Event {
        name: name.to_owned(),
        ph: "M",
        pid,
        tid,
        cat: None,
        ts: None,
        dur: None,
        s: None,
        args,
    }
}

/// One process per clock id of `case`; its origin is its earliest phase or step start, or
/// finding mark (0 when it has none), shared by the ids of one clock.
fn processes(
    case: &Case,
    phases: &Table,
    steps: &Table,
    marks: &[(String, findings::Mark)],
) -> BTreeMap<String, Process> {
    let mut processes: BTreeMap<String, Process> = case
        .clocks
        .iter()
        .enumerate()
        .map(|(i, clock)| {
            let p = Process {
                pid: i + 1,
                origin: i64::MAX,
                threads: BTreeMap::new(),
            };
            (clock.id.clone(), p)
        })
        .collect();
    for t in [phases, steps] {
        for (clock, start) in texts(t, "clock").iter().zip(ints(t, "start_ns")) {
            if let (Some(p), Some(s)) = (clock.as_ref().and_then(|c| processes.get_mut(c)), start) {
                p.origin = p.origin.min(*s);
            }
        }
    }
    for (clock, mark) in marks {
        if let Some(p) = processes.get_mut(clock) {
            p.origin = p.origin.min(mark.earliest());
        }
    }
    // Clock ids of one clock (an nsys export's processes on its session clock) share the
    // earliest origin among them, so their times stay comparable in the viewer.
    for (i, clock) in case.clocks.iter().enumerate() {
        let shared = case
            .clocks
            .iter()
            .filter(|other| other.clock == clock.clock)
            .filter_map(|other| processes.get(&other.id).map(|p| p.origin))
            .min();
        if let (Some(o), Some(p)) = (shared, processes.get_mut(&case.clocks[i].id)) {
            p.origin = o;
        }
    }
    for p in processes.values_mut() {
        if p.origin == i64::MAX {
            p.origin = 0;
        }
    }
    processes
}

/// The work per stream and the host ranges (phases on no stream), one slice per phase.
fn phase_events(
    phases: &Table,
    processes: &mut BTreeMap<String, Process>,
    events: &mut Vec<Event>,
) {
    let (clock, stream, kind) = (
        texts(phases, "clock"),
        texts(phases, "stream"),
        texts(phases, "kind"),
    );
    let (id, name) = (texts(phases, "id"), texts(phases, "name"));
    let (start, end) = (ints(phases, "start_ns"), ints(phases, "end_ns"));
    for i in 0..clock.len() {
        let (Some(c), Some(s), Some(e)) = (&clock[i], start[i], end[i]) else {
            continue;
        };
        let Some(p) = processes.get_mut(c) else {
            continue;
        };
        let thread = stream[i]
            .as_ref()
            .map_or_else(|| "host ranges".to_owned(), |s| format!("stream {s}"));
        let tid = p.tid(&thread);
        let cat = if stream[i].is_some() { "work" } else { "range" };
        let args = json!({"id": id[i], "kind": kind[i], "start_ns": s, "end_ns": e});
        let label = name[i].clone().unwrap_or_default();
        events.push(slice(p, tid, label, cat, (s, e), args));
    }
}

/// The audit's steps, one slice per step and device.
fn step_events(steps: &Table, processes: &mut BTreeMap<String, Process>, events: &mut Vec<Event>) {
    let (clock, device, name) = (
        texts(steps, "clock"),
        texts(steps, "device"),
        texts(steps, "name"),
    );
    let (start, end) = (ints(steps, "start_ns"), ints(steps, "end_ns"));
    let (busy, idle) = (ints(steps, "busy_ns"), ints(steps, "idle_ns"));
    for i in 0..clock.len() {
        let (Some(c), Some(s), Some(e)) = (&clock[i], start[i], end[i]) else {
            continue;
        };
        let Some(p) = processes.get_mut(c) else {
            continue;
        };
        let device = device[i].clone().unwrap_or_default();
        let tid = p.tid(&format!("steps {device}"));
        let args = json!({"device": device, "busy_ns": busy[i], "idle_ns": idle[i],
                          "start_ns": s, "end_ns": e});
        let label = name[i].clone().unwrap_or_default();
        events.push(slice(p, tid, label, "step", (s, e), args));
    }
}

/// The collectives of a multi-rank import: on each rank's process a `collectives` thread,
/// one slice per matched instance (the rank's kernel, on its own clock), with the rank's
/// bounded arrival and the instance's skew in `args` (null where unknown).
fn collective_events(
    collectives: &Table,
    phases: &Table,
    processes: &mut BTreeMap<String, Process>,
    events: &mut Vec<Event>,
) {
    // Each rank's clock, from the phases.
    let clock_of: BTreeMap<i64, &str> = ints(phases, "rank")
        .iter()
        .zip(texts(phases, "clock"))
        .filter_map(|(r, c)| Some(((*r)?, c.as_deref()?)))
        .collect();
    let (instance, rank) = (texts(collectives, "instance"), ints(collectives, "rank"));
    let (start, end) = (ints(collectives, "start_ns"), ints(collectives, "end_ns"));
    let column = |name| ints(collectives, name);
    for i in 0..instance.len() {
        let (Some(r), Some(s), Some(e)) = (rank[i], start[i], end[i]) else {
            continue;
        };
        let Some(p) = clock_of.get(&r).and_then(|c| processes.get_mut(*c)) else {
            continue;
        };
        let tid = p.tid("collectives");
        let args = json!({
            "instance": instance[i], "rank": r, "start_ns": s, "end_ns": e,
            "arrival_lo_ns": column("arrival_lo_ns")[i], "arrival_hi_ns": column("arrival_hi_ns")[i],
            "skew_lo_ns": column("skew_lo_ns")[i], "skew_hi_ns": column("skew_hi_ns")[i],
            "last_rank": column("last_rank")[i],
        });
        let label = instance[i].clone().unwrap_or_default();
        events.push(slice(p, tid, label, "collective", (s, e), args));
    }
}

/// Interval answers as the pieces of their union, per clock; returns the duration answers
/// (no position of their own) as `{question, kind, answer}`.
fn answer_events(
    report: &Report,
    processes: &mut BTreeMap<String, Process>,
    events: &mut Vec<Event>,
) -> Vec<Value> {
    let mut durations = Vec::new();
    for answer in &report.answers {
        let set = match &answer.outcome {
            Outcome::Intervals(set) => set,
            other => {
                durations.push(json!({"question": answer.id, "kind": answer.kind,
                                      "answer": other.headline()}));
                continue;
            }
        };
        for group in &set.per_clock {
            let Some(p) = processes.get_mut(&group.clock_id) else {
                continue;
            };
            let tid = p.tid(&format!("answer {}", answer.id));
            let union = crate::engine::wide(group.analysis.union_ns);
            let title = match set.combined_unknown {
                None => format!("{}: union {union}", answer.id),
                Some(reason) => format!(
                    "{}: unknown ({reason}) across clocks; this clock's union {union}",
                    answer.id
                ),
            };
            let args = json!({"question": answer.id, "union_ns": group.analysis.union_ns as i64,
                              "count": group.analysis.count, "max_depth": group.analysis.max_depth});
            for piece in union_pieces(&group.analysis) {
                events.push(slice(p, tid, title.clone(), "answer", piece, args.clone()));
            }
        }
    }
    durations
}

/// The findings' marks on each clock's `findings` thread.
fn finding_events(
    marks: Vec<(String, findings::Mark)>,
    processes: &mut BTreeMap<String, Process>,
    events: &mut Vec<Event>,
) {
    for (clock, mark) in marks {
        let Some(p) = processes.get_mut(&clock) else {
            continue;
        };
        let tid = p.tid("findings");
        events.push(match mark {
            findings::Mark::Piece { name, span, args } => {
                slice(p, tid, name, "finding", span, args)
            }
            findings::Mark::Instant { name, at, args } => Event {
                name,
                ph: "i",
                pid: p.pid,
                tid,
                cat: Some("finding"),
                ts: raw(i128::from(at) - i128::from(p.origin)),
                dur: None,
                s: Some("t"),
                args,
            },
        });
    }
}

/// The names and order of the processes and their threads.
fn name_events(processes: &BTreeMap<String, Process>, events: &mut Vec<Event>) {
    for (clock_id, p) in processes {
        let name = format!("{clock_id} (own clock; t = 0 at {} ns)", p.origin);
        events.push(meta("process_name", p.pid, 0, json!({"name": name})));
        events.push(meta(
            "process_sort_index",
            p.pid,
            0,
            json!({"sort_index": p.pid}),
        ));
        for (thread, tid) in &p.threads {
            events.push(meta("thread_name", p.pid, *tid, json!({"name": thread})));
            events.push(meta(
                "thread_sort_index",
                p.pid,
                *tid,
                json!({"sort_index": tid}),
            ));
        }
    }
}

/// The Chrome trace-event JSON of `input` (`tables` are the export's own, from
/// [`super::build`]).
///
/// # Errors
/// `internal` when the case does not validate.
pub fn trace_json(input: &Input, tables: &[Table]) -> Result<String, Refusal> {
    let case = validate(input.imported.case.clone(), "export").map_err(|e| Refusal {
        message: format!("error[internal]: the case to export does not validate ({e})"),
    })?;
    let report = evaluate(&case);
    let empty = Table {
        name: "",
        columns: Vec::new(),
    };
    let table = |name: &str| tables.iter().find(|t| t.name == name).unwrap_or(&empty);
    let (phases, steps) = (table("phases"), table("steps"));
    let (marks, listed_findings) = findings::marks(&case, input);
    let mut processes = processes(&case, phases, steps, &marks);
    let mut events = Vec::new();
    phase_events(phases, &mut processes, &mut events);
    step_events(steps, &mut processes, &mut events);
    collective_events(table("collectives"), phases, &mut processes, &mut events);
    let durations = answer_events(&report, &mut processes, &mut events);
    finding_events(marks, &mut processes, &mut events);
    name_events(&processes, &mut events);
    let origins: BTreeMap<&str, i64> = processes
        .iter()
        .map(|(c, p)| (c.as_str(), p.origin))
        .collect();
    // Serialized as a struct, so the raw µs text of `ts` / `dur` is written as it is (a
    // `serde_json::Value` would turn it into a float).
    let document = Document {
        trace_events: &events,
        display_time_unit: "ns",
        other_data: json!({
            "format": "worksheet-perfetto",
            "version": 1,
            "case": case.name,
            "clock_origins_ns": origins,
            "note": "each process is one clock id, its times counted from its origin; ids of one clock (the processes of one nsys session) share their origin and compare; times of two different clocks are not comparable",
            "duration_answers": durations,
            "findings": listed_findings,
        }),
    };
    serde_json::to_string(&document).map_err(|e| Refusal {
        message: format!("error[internal]: cannot write the trace JSON: {e}"),
    })
}

/// The file: the JSON object form of the Trace Event Format.
#[derive(Serialize)]
struct Document<'a> {
    #[serde(rename = "traceEvents")]
    trace_events: &'a [Event],
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'static str,
    #[serde(rename = "otherData")]
    other_data: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_are_exact_decimal_text() {
        assert_eq!(micros(0), "0.000");
        assert_eq!(micros(1), "0.001");
        assert_eq!(micros(1_234_567), "1234.567");
        assert_eq!(micros(-5), "-0.005");
        assert_eq!(micros(1_796_054_921_907_522_199), "1796054921907522.199");
    }
}
