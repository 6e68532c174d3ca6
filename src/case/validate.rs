//! Raw mirror → validated [`Case`]: every reference resolved, every value exact, every
//! error located by its JSON path.

use std::collections::HashMap;

use super::implicit::{implicit_wait, stream_kind};
use super::raw::{
    RawCase, RawEventState, RawExpectDuration, RawExpectIntervals, RawOp, RawQuestion,
    RawSpanExpect, RawTime,
};
use super::{
    Ask, Case, CaseError, ClockDef, EventDef, EventState, Expect, ExpectIntervals, ExpectVerdict,
    MarkDef, Op, PhaseDef, Question, SeriesDef, StreamDef, TimerDef, WaitTarget, FORMAT_NAME,
    FORMAT_VERSION,
};
use crate::clock::ClockId;
use crate::interval::{Interval, OverlapRegion};
use crate::units::{parse_value, Nanos};
use crate::verdict::Reason;

type Result<T> = std::result::Result<T, CaseError>;

/// Ids of one kind, checked for emptiness and uniqueness as they are added.
pub(super) struct IdTable<'a> {
    kind: &'static str,
    list: &'static str,
    index: HashMap<&'a str, usize>,
}

impl<'a> IdTable<'a> {
    fn new(kind: &'static str, list: &'static str) -> Self {
        IdTable {
            kind,
            list,
            index: HashMap::new(),
        }
    }

    fn add(&mut self, id: &'a str, position: usize, path: String) -> Result<()> {
        if id.trim().is_empty() {
            return Err(CaseError::new(
                path,
                "empty-id",
                format!("a {} needs a non-empty id", self.kind),
            ));
        }
        if let Some(first) = self.index.insert(id, position) {
            return Err(CaseError::new(
                path,
                "duplicate-id",
                format!(
                    "{} id `{id}` is already used by {}[{first}]",
                    self.kind, self.list
                ),
            ));
        }
        Ok(())
    }

    /// The position of `id`; `path` (made only on failure: a case has many references)
    /// names the referring field in the error.
    pub(super) fn resolve(&self, id: &str, path: impl FnOnce() -> String) -> Result<usize> {
        self.index.get(id).copied().ok_or_else(|| {
            let path = path();
            let mut known: Vec<&&str> = self.index.keys().collect();
            known.sort();
            let known: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            CaseError::new(
                path,
                "unknown-reference",
                format!(
                    "no {} has id `{id}` (declared in `{}`: {})",
                    self.kind,
                    self.list,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            )
        })
    }
}

/// Parses a raw time value; `path` (made only on failure) names it in the error.
pub(super) fn time(value: &RawTime, path: impl FnOnce() -> String) -> Result<Nanos> {
    match value {
        RawTime::Text(text) => {
            parse_value(text).map_err(|e| CaseError::new(path(), e.code(), e.to_string()))
        }
        RawTime::Number(n) => {
            let n = number_text(n);
            Err(CaseError::new(
                path(),
                "missing-unit",
                format!(
                    "`{n}` has no unit: write it as a string with its unit, such as \"{n} us\""
                ),
            ))
        }
    }
}

/// A JSON number as the person wrote it, as near as serde_json keeps it: a whole number
/// past `u64` is held as a float, whose `Display` (`1.8446744073709552e19`) is not what was
/// written, so a whole float is written out in digits (`18446744073709551616`).
fn number_text(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() && f.is_finite() && f.fract() == 0.0 && f.abs() >= 1e15 => {
            format!("{f:.0}")
        }
        _ => n.to_string(),
    }
}

fn reason(code: &str, path: impl Into<String>) -> Result<Reason> {
    Reason::from_code(code).ok_or_else(|| {
        let known: Vec<&str> = Reason::ALL.iter().map(|r| r.code()).collect();
        CaseError::new(
            path,
            "unknown-variant",
            format!(
                "`{code}` is not a reason code (known: {})",
                known.join(", ")
            ),
        )
    })
}

fn expect_verdict(raw: &RawExpectDuration, path: &str) -> Result<ExpectVerdict> {
    match raw.verdict.as_str() {
        "known" => {
            let value = raw.value.as_ref().ok_or_else(|| {
                CaseError::new(
                    format!("{path}.value"),
                    "missing-field",
                    "a known expectation needs a `value`",
                )
            })?;
            Ok(ExpectVerdict::Known(time(value, || {
                format!("{path}.value")
            })?))
        }
        "bounded" => {
            let end = |v: &Option<RawTime>, name: &str| {
                let v = v.as_ref().ok_or_else(|| {
                    CaseError::new(
                        format!("{path}.{name}"),
                        "missing-field",
                        format!("a bounded expectation needs `lo` and `hi` (`{name}` is missing)"),
                    )
                })?;
                time(v, || format!("{path}.{name}"))
            };
            let (lo, hi) = (end(&raw.lo, "lo")?, end(&raw.hi, "hi")?);
            if lo > hi {
                return Err(CaseError::new(
                    format!("{path}.hi"),
                    "bad-value",
                    format!("a bounded expectation needs lo ≤ hi (lo {lo}, hi {hi})"),
                ));
            }
            Ok(ExpectVerdict::Bounded(lo, hi))
        }
        "unknown" => {
            let code = raw.reason.as_deref().ok_or_else(|| {
                CaseError::new(
                    format!("{path}.reason"),
                    "missing-field",
                    "an unknown expectation needs a `reason`",
                )
            })?;
            Ok(ExpectVerdict::Unknown(reason(
                code,
                format!("{path}.reason"),
            )?))
        }
        other => Err(CaseError::new(
            format!("{path}.verdict"),
            "unknown-variant",
            format!("`{other}` is not a verdict: expected `known`, `bounded` or `unknown`"),
        )),
    }
}

fn expect_duration(raw: &Option<RawExpectDuration>, path: &str) -> Result<Option<Expect>> {
    let Some(raw) = raw else { return Ok(None) };
    let verdict = expect_verdict(raw, path)?;
    let attribution = match &raw.attribution {
        Some(code) => Some(reason(code, format!("{path}.attribution"))?),
        None => None,
    };
    Ok(Some(Expect::Duration {
        verdict,
        attribution,
    }))
}

fn expect_intervals(raw: &Option<RawExpectIntervals>, path: &str) -> Result<Option<Expect>> {
    let Some(raw) = raw else { return Ok(None) };
    let mut out = ExpectIntervals::default();
    match (raw.verdict.as_deref(), raw.reason.as_deref()) {
        (None, None) | (Some("known"), None) => {}
        (Some("unknown"), Some(code)) => {
            out.unknown = Some(reason(code, format!("{path}.reason"))?)
        }
        (Some("unknown"), None) => {
            return Err(CaseError::new(
                format!("{path}.reason"),
                "missing-field",
                "an unknown expectation needs a `reason`",
            ))
        }
        (Some(other), _) if other != "known" && other != "unknown" => {
            return Err(CaseError::new(
                format!("{path}.verdict"),
                "unknown-variant",
                format!("`{other}` is not a verdict: expected `known`, `bounded` or `unknown`"),
            ))
        }
        _ => {
            return Err(CaseError::new(
                format!("{path}.reason"),
                "bad-value",
                "a `reason` goes with `\"verdict\": \"unknown\"`",
            ))
        }
    }
    out.count = raw.count;
    out.max_depth = raw.max_depth;
    out.sum = raw
        .sum
        .as_ref()
        .map(|v| time(v, || format!("{path}.sum")))
        .transpose()?;
    out.union = raw
        .union
        .as_ref()
        .map(|v| time(v, || format!("{path}.union")))
        .transpose()?;
    out.overlap = raw
        .overlap
        .as_ref()
        .map(|v| time(v, || format!("{path}.overlap")))
        .transpose()?;
    out.span = match &raw.span {
        None => None,
        Some(RawSpanExpect::Value(v)) => {
            Some(ExpectVerdict::Known(time(v, || format!("{path}.span"))?))
        }
        Some(RawSpanExpect::Unknown(u)) => Some(expect_verdict(u, &format!("{path}.span"))?),
    };
    if let Some(gaps) = &raw.gaps {
        let mut list = Vec::with_capacity(gaps.len());
        for (i, [s, e]) in gaps.iter().enumerate() {
            let p = format!("{path}.gaps[{i}]");
            list.push(interval(
                time(s, || format!("{p}[0]"))?,
                time(e, || format!("{p}[1]"))?,
                &format!("{p}[1]"),
            )?);
        }
        out.gaps = Some(list);
    }
    if let Some(regions) = &raw.overlap_regions {
        let mut list = Vec::with_capacity(regions.len());
        for (i, r) in regions.iter().enumerate() {
            let p = format!("{path}.overlap_regions[{i}]");
            let span = interval(
                time(&r.start, || format!("{p}.start"))?,
                time(&r.end, || format!("{p}.end"))?,
                &format!("{p}.end"),
            )?;
            list.push(OverlapRegion {
                span,
                max_depth: r.max_depth,
            });
        }
        out.overlap_regions = Some(list);
    }
    Ok(Some(Expect::Intervals(Box::new(out))))
}

fn interval(start: Nanos, end: Nanos, end_path: &str) -> Result<Interval> {
    Interval::new(start, end).map_err(|e| {
        CaseError::new(
            end_path,
            "reversed-interval",
            format!("{e}; an interval is [start, end) with end ≥ start"),
        )
    })
}

/// Validates a raw case into a [`Case`]. `default_name` is used when the file names none.
///
/// # Errors
/// The first [`CaseError`] found, with its JSON path and code (not yet attributed to a file).
pub fn validate(mut raw: RawCase, default_name: &str) -> Result<Case> {
    if raw.format != FORMAT_NAME {
        return Err(CaseError::new(
            "format",
            "unsupported-format",
            format!(
                "`{}` is not a case file format: expected \"{FORMAT_NAME}\"",
                raw.format
            ),
        ));
    }
    if raw.version != FORMAT_VERSION {
        return Err(CaseError::new(
            "version",
            "unsupported-version",
            format!("case format version {} is not supported: this build reads version {FORMAT_VERSION}", raw.version),
        ));
    }

    // Clocks.
    let mut clock_ids = IdTable::new("clock", "clocks");
    let mut clocks = Vec::with_capacity(raw.clocks.len());
    for (i, c) in raw.clocks.iter().enumerate() {
        clock_ids.add(&c.id, i, format!("clocks[{i}].id"))?;
        if c.domain.trim().is_empty() {
            return Err(CaseError::new(
                format!("clocks[{i}].domain"),
                "bad-value",
                "a clock needs a domain such as `host` or `device`",
            ));
        }
        let instance = match c.instance.as_deref() {
            Some(s) if !s.trim().is_empty() => s,
            _ => {
                return Err(CaseError::new(
                    format!("clocks[{i}].instance"),
                    "missing-instance",
                    format!(
                        "clock `{}` has no instance: name what fixes its epoch (a boot id, a GPU context, a process); \
                         without it no two timestamps can be shown comparable",
                        c.id
                    ),
                ))
            }
        };
        clocks.push(ClockDef {
            id: c.id.clone(),
            clock: ClockId::new(c.domain.clone(), instance),
        });
    }

    let relations = super::relations::relations(&raw.clock_relations, &clock_ids)?;

    // Streams.
    let mut stream_ids = IdTable::new("stream", "streams");
    let mut streams = Vec::with_capacity(raw.streams.len());
    for (i, s) in raw.streams.iter().enumerate() {
        stream_ids.add(&s.id, i, format!("streams[{i}].id"))?;
        let clock = clock_ids.resolve(&s.clock, || format!("streams[{i}].clock"))?;
        if s.device.trim().is_empty() {
            return Err(CaseError::new(
                format!("streams[{i}].device"),
                "bad-value",
                "a stream needs the device it belongs to",
            ));
        }
        streams.push(StreamDef {
            id: s.id.clone(),
            clock,
            device: s.device.clone(),
            kind: s.kind.map(stream_kind),
        });
    }

    // Events.
    let mut event_ids = IdTable::new("event", "events");
    let mut events = Vec::with_capacity(raw.events.len());
    for (i, e) in raw.events.iter().enumerate() {
        event_ids.add(&e.id, i, format!("events[{i}].id"))?;
        let stream = stream_ids.resolve(&e.stream, || format!("events[{i}].stream"))?;
        let state = match (e.state, &e.at, e.timing) {
            (RawEventState::Completed, Some(at), _) => {
                EventState::Completed(time(at, || format!("events[{i}].at"))?)
            }
            (RawEventState::Completed, None, false) => EventState::CompletedUntimed,
            (RawEventState::Completed, None, true) => {
                return Err(CaseError::new(
                    format!("events[{i}].at"),
                    "missing-field",
                    format!(
                    "event `{}` is completed and timing-enabled, so it needs its timestamp `at`",
                    e.id
                ),
                ))
            }
            (RawEventState::Pending | RawEventState::NotRecorded, Some(_), _) => {
                return Err(CaseError::new(
                    format!("events[{i}].at"),
                    "inconsistent-event",
                    format!(
                        "event `{}` has not completed, so it cannot have a timestamp",
                        e.id
                    ),
                ))
            }
            (RawEventState::Pending, None, _) => EventState::Pending,
            (RawEventState::NotRecorded, None, _) => EventState::NotRecorded,
        };
        events.push(EventDef {
            id: e.id.clone(),
            stream,
            timing: e.timing,
            state,
        });
    }

    // Phases. Their labels are moved, not copied, and the references to them taken out as
    // indices first (`preresolve`): a large case holds each name and label once.
    let mut labels: Vec<Option<String>> = raw.phases.iter_mut().map(|p| p.label.take()).collect();
    let mut pre = preresolve::preresolve(&raw.phases, &mut raw.program, &mut raw.questions);
    let mut phase_ids = IdTable::new("phase", "phases");
    let mut phases = Vec::with_capacity(raw.phases.len());
    for (i, p) in raw.phases.iter().enumerate() {
        phase_ids.add(&p.id, i, format!("phases[{i}].id"))?;
        let stream = p
            .stream
            .as_ref()
            .map(|s| stream_ids.resolve(s, || format!("phases[{i}].stream")))
            .transpose()?;
        let declared_clock = p
            .clock
            .as_ref()
            .map(|c| clock_ids.resolve(c, || format!("phases[{i}].clock")))
            .transpose()?;
        let clock = match (stream, declared_clock) {
            (Some(s), None) => streams[s].clock,
            (None, Some(c)) => c,
            (Some(s), Some(c)) if streams[s].clock == c => c,
            (Some(s), Some(_)) => {
                return Err(CaseError::new(
                    format!("phases[{i}].clock"),
                    "bad-value",
                    format!(
                        "phase `{}` names clock `{}`, but its stream `{}` runs on clock `{}`",
                        p.id,
                        clocks[declared_clock.unwrap_or(0)].id,
                        streams[s].id,
                        clocks[streams[s].clock].id
                    ),
                ))
            }
            (None, None) => {
                return Err(CaseError::new(
                    format!("phases[{i}].clock"),
                    "missing-field",
                    format!("phase `{}` needs a `stream` or a `clock`", p.id),
                ))
            }
        };
        let start = time(&p.start, || format!("phases[{i}].start"))?;
        let end = time(&p.end, || format!("phases[{i}].end"))?;
        let interval = interval(start, end, &format!("phases[{i}].end"))?;
        phases.push(PhaseDef {
            id: p.id.clone(),
            label: labels[i].take().unwrap_or_else(|| p.id.clone()),
            stream,
            clock,
            interval,
        });
    }

    // Marks.
    let mut mark_ids = IdTable::new("mark", "marks");
    let mut marks = Vec::with_capacity(raw.marks.len());
    for (i, m) in raw.marks.iter().enumerate() {
        mark_ids.add(&m.id, i, format!("marks[{i}].id"))?;
        let clock = clock_ids.resolve(&m.clock, || format!("marks[{i}].clock"))?;
        marks.push(MarkDef {
            id: m.id.clone(),
            clock,
            at: time(&m.at, || format!("marks[{i}].at"))?,
        });
    }

    // Program.
    let devices: Vec<&str> = streams.iter().map(|s| s.device.as_str()).collect();
    let mut program = Vec::with_capacity(raw.program.len());
    let mut recorded: Vec<Option<usize>> = vec![None; events.len()];
    let mut launched: Vec<Option<usize>> = vec![None; phases.len()];
    let mut wait_ids = IdTable::new("host wait", "program");
    let mut timer_ids: HashMap<&str, usize> = HashMap::new();
    // (id, start op, start reading, stop op, stop reading)
    type TimerDraft<'t> = (
        &'t str,
        Option<(usize, (usize, Nanos))>,
        Option<(usize, (usize, Nanos))>,
    );
    let mut timer_drafts: Vec<TimerDraft> = Vec::new();
    for (k, op) in raw.program.iter().enumerate() {
        let at = |field: &str| format!("program[{k}].{field}");
        let bad = |msg: String| CaseError::new(format!("program[{k}]"), "bad-program", msg);
        let validated = match op {
            RawOp::Record { event } => {
                let e = event_ids.resolve(event, || at("event"))?;
                if events[e].state == EventState::NotRecorded {
                    return Err(CaseError::new(
                        at("event"),
                        "inconsistent-event",
                        format!(
                            "event `{event}` is declared `not-recorded` but the program records it"
                        ),
                    ));
                }
                if let Some(first) = recorded[e] {
                    return Err(bad(format!("event `{event}` is already recorded at program[{first}]; record each event once")));
                }
                recorded[e] = Some(k);
                Op::Record(e)
            }
            RawOp::Launch { phase } => {
                let p = match pre.launches[k] {
                    Some(p) => p,
                    None => phase_ids.resolve(phase, || at("phase"))?,
                };
                let phase = &phases[p].id;
                if phases[p].stream.is_none() {
                    return Err(bad(format!("phase `{phase}` has no stream, so it cannot be launched; give it a `stream`")));
                }
                if let Some(first) = launched[p] {
                    return Err(bad(format!(
                        "phase `{phase}` is already launched at program[{first}]"
                    )));
                }
                launched[p] = Some(k);
                Op::Launch(p)
            }
            RawOp::StreamWait { stream, event } => {
                let s = stream_ids.resolve(stream, || at("stream"))?;
                let e = event_ids.resolve(event, || at("event"))?;
                Op::StreamWait {
                    stream: s,
                    event: e,
                }
            }
            RawOp::HostWait {
                id,
                event,
                stream,
                device,
                clock,
                at: returned,
                implicit,
                copy,
            } => {
                wait_ids.add(id, k, at("id"))?;
                let target = match (event, stream, device) {
                    (Some(e), None, None) => {
                        WaitTarget::Event(event_ids.resolve(e, || at("event"))?)
                    }
                    (None, Some(s), None) => {
                        WaitTarget::Stream(stream_ids.resolve(s, || at("stream"))?)
                    }
                    (None, None, Some(d)) => {
                        if !devices.contains(&d.as_str()) {
                            return Err(CaseError::new(
                                at("device"),
                                "unknown-reference",
                                format!("no stream belongs to device `{d}`"),
                            ));
                        }
                        WaitTarget::Device(d.clone())
                    }
                    _ => {
                        return Err(bad(format!(
                        "host wait `{id}` needs exactly one target: `event`, `stream` or `device`"
                    )))
                    }
                };
                let returned = match (clock, returned) {
                    (None, None) => None,
                    (Some(c), Some(t)) => {
                        Some((clock_ids.resolve(c, || at("clock"))?, time(t, || at("at"))?))
                    }
                    (None, Some(_)) => {
                        return Err(CaseError::new(
                            at("clock"),
                            "missing-field",
                            "a wait's `at` needs the `clock` it was read on",
                        ))
                    }
                    (Some(_), None) => {
                        return Err(CaseError::new(
                            at("at"),
                            "missing-field",
                            "a wait's `clock` goes with the `at` it was read at",
                        ))
                    }
                };
                let implicit = match (implicit, copy) {
                    (None, None) => None,
                    (Some(kind), Some(copy)) => {
                        let p = phase_ids.resolve(copy, || at("copy"))?;
                        Some(
                            implicit_wait(id, *kind, p, &target, &phases, &streams, &launched)
                                .map_err(&bad)?,
                        )
                    }
                    (Some(_), None) => {
                        return Err(CaseError::new(
                            at("copy"),
                            "missing-field",
                            "an implicit wait names the `copy` (a phase) that makes it a wait",
                        ))
                    }
                    (None, Some(_)) => return Err(CaseError::new(
                        at("implicit"),
                        "missing-field",
                        "a wait's `copy` goes with `implicit`, which says why the copy is a wait",
                    )),
                };
                Op::HostWait {
                    id: id.clone(),
                    target,
                    returned,
                    implicit,
                }
            }
            RawOp::TimerStart {
                timer,
                clock,
                at: reading,
            }
            | RawOp::TimerStop {
                timer,
                clock,
                at: reading,
            } => {
                let is_start = matches!(op, RawOp::TimerStart { .. });
                if timer.trim().is_empty() {
                    return Err(CaseError::new(
                        at("timer"),
                        "empty-id",
                        "a timer needs a non-empty id",
                    ));
                }
                let c = clock_ids.resolve(clock, || at("clock"))?;
                let reading = (c, time(reading, || at("at"))?);
                let t = *timer_ids.entry(timer.as_str()).or_insert_with(|| {
                    timer_drafts.push((timer.as_str(), None, None));
                    timer_drafts.len() - 1
                });
                let draft = &mut timer_drafts[t];
                if is_start {
                    if draft.1.is_some() {
                        return Err(bad(format!("timer `{timer}` is started twice")));
                    }
                    if draft.2.is_some() {
                        return Err(bad(format!(
                            "timer `{timer}` is started after it was stopped"
                        )));
                    }
                    draft.1 = Some((k, reading));
                    Op::TimerStart(t)
                } else {
                    if draft.1.is_none() {
                        return Err(bad(format!(
                            "timer `{timer}` is stopped before it is started"
                        )));
                    }
                    if draft.2.is_some() {
                        return Err(bad(format!("timer `{timer}` is stopped twice")));
                    }
                    draft.2 = Some((k, reading));
                    Op::TimerStop(t)
                }
            }
        };
        program.push(validated);
    }
    for (e, ev) in events.iter().enumerate() {
        if ev.state != EventState::NotRecorded && recorded[e].is_none() && !raw.program.is_empty() {
            return Err(CaseError::new(
                format!("events[{e}].state"),
                "inconsistent-event",
                format!(
                    "event `{}` is {} but the program never records it",
                    ev.id,
                    if ev.state == EventState::Pending {
                        "pending"
                    } else {
                        "completed"
                    }
                ),
            ));
        }
    }
    // A stream runs in order, so its completed events' timestamps cannot go backwards
    // along their record order (equal readings are allowed: events come in quanta).
    let mut last_in_stream: Vec<Option<(usize, Nanos)>> = vec![None; streams.len()];
    for op in &program {
        if let Op::Record(e) = op {
            if let EventState::Completed(at) = events[*e].state {
                let s = events[*e].stream;
                if let Some((before, before_at)) = last_in_stream[s] {
                    if at < before_at {
                        return Err(CaseError::new(
                            format!("events[{e}].at"),
                            "inconsistent-event",
                            format!(
                                "event `{}` is recorded after event `{}` in stream `{}`, but its timestamp {at} is earlier than {before_at}",
                                events[*e].id, events[before].id, streams[s].id
                            ),
                        ));
                    }
                }
                last_in_stream[s] = Some((*e, at));
            }
        }
    }
    let mut timers = Vec::with_capacity(timer_drafts.len());
    for (id, start, stop) in timer_drafts {
        let (Some((start_op, start)), Some((stop_op, stop))) = (start, stop) else {
            return Err(CaseError::new(
                "program",
                "bad-program",
                format!("timer `{id}` is started but never stopped"),
            ));
        };
        timers.push(TimerDef {
            id: id.to_owned(),
            start_op,
            stop_op,
            start,
            stop,
        });
    }
    let timer_index: HashMap<&str, usize> = timers
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let resolve_timer = |id: &str, path: String| -> Result<usize> {
        timer_index.get(id).copied().ok_or_else(|| {
            CaseError::new(
                path,
                "unknown-reference",
                format!("no timer `{id}` is started and stopped in `program`"),
            )
        })
    };

    // Series.
    let mut series_ids = IdTable::new("series", "series");
    let mut series = Vec::with_capacity(raw.series.len());
    for (i, s) in raw.series.iter().enumerate() {
        series_ids.add(&s.id, i, format!("series[{i}].id"))?;
        let list = |values: &[RawTime], field: &str| -> Result<Vec<Nanos>> {
            values
                .iter()
                .enumerate()
                .map(|(j, v)| time(v, || format!("series[{i}].{field}[{j}]")))
                .collect()
        };
        series.push(SeriesDef {
            id: s.id.clone(),
            label: s.label.clone(),
            warmup: list(&s.warmup, "warmup")?,
            measured: list(&s.measured, "measured")?,
            failed: list(&s.failed, "failed")?,
        });
    }

    // Questions.
    let mut question_ids = IdTable::new("question", "questions");
    let mut questions: Vec<Question> = Vec::with_capacity(raw.questions.len());
    for (i, q) in raw.questions.iter().enumerate() {
        let path = format!("questions[{i}]");
        let field = |f: &str| format!("{path}.{f}");
        let expect_path = field("expect");
        let (id, ask, expect) = match q {
            RawQuestion::Submission { id, timer, expect } => (
                id,
                Ask::Submission {
                    timer: resolve_timer(timer, field("timer"))?,
                },
                expect_duration(expect, &expect_path)?,
            ),
            RawQuestion::HostCompletion {
                id,
                timer,
                work,
                expect,
            } => {
                let t = resolve_timer(timer, field("timer"))?;
                let work = match (pre.lists[i].take(), work) {
                    (Some(resolved), _) => resolved,
                    (None, Some(list)) => list
                        .iter()
                        .enumerate()
                        .map(|(j, p)| phase_ids.resolve(p, || format!("{path}.work[{j}]")))
                        .collect::<Result<Vec<_>>>()?,
                    (None, None) => {
                        let (a, b) = (timers[t].start_op, timers[t].stop_op);
                        program[a..b]
                            .iter()
                            .filter_map(|op| {
                                if let Op::Launch(p) = op {
                                    Some(*p)
                                } else {
                                    None
                                }
                            })
                            .collect()
                    }
                };
                (
                    id,
                    Ask::HostCompletion { timer: t, work },
                    expect_duration(expect, &expect_path)?,
                )
            }
            RawQuestion::DeviceInterval {
                id,
                start,
                end,
                expect,
            } => (
                id,
                {
                    let (a, b) = (
                        event_ids.resolve(start, || field("start"))?,
                        event_ids.resolve(end, || field("end"))?,
                    );
                    if let (Some(ra), Some(rb)) = (recorded[a], recorded[b]) {
                        if events[a].stream == events[b].stream && rb < ra {
                            return Err(CaseError::new(
                                field("end"),
                                "reversed-interval",
                                format!(
                                    "the end event `{end}` is recorded before the start event `{start}` in stream `{}`: a device interval runs from an earlier position of a stream to a later one",
                                    streams[events[a].stream].id
                                ),
                            ));
                        }
                    }
                    Ask::DeviceInterval { start: a, end: b }
                },
                expect_duration(expect, &expect_path)?,
            ),
            RawQuestion::Elapsed {
                id,
                from,
                to,
                expect,
            } => (
                id,
                Ask::Elapsed {
                    from: mark_ids.resolve(from, || field("from"))?,
                    to: mark_ids.resolve(to, || field("to"))?,
                },
                expect_duration(expect, &expect_path)?,
            ),
            RawQuestion::ClockOffset { id, a, b, expect } => (
                id,
                Ask::ClockOffset {
                    a: clock_ids.resolve(a, || field("a"))?,
                    b: clock_ids.resolve(b, || field("b"))?,
                },
                expect_duration(expect, &expect_path)?,
            ),
            RawQuestion::Difference {
                id,
                minuend,
                subtrahend,
                expect,
            } => {
                let earlier = |name: &str, f: &str| -> Result<usize> {
                    let found = question_ids.resolve(name, || field(f)).map_err(|mut e| {
                        e.message =
                            format!("{} (a difference names an earlier question)", e.message);
                        e
                    })?;
                    if !questions[found].ask.is_duration() {
                        return Err(CaseError::new(
                            field(f),
                            "bad-value",
                            format!(
                                "question `{name}` is not a duration, so it cannot be subtracted"
                            ),
                        ));
                    }
                    Ok(found)
                };
                (
                    id,
                    Ask::Difference {
                        minuend: earlier(minuend, "minuend")?,
                        subtrahend: earlier(subtrahend, "subtrahend")?,
                    },
                    expect_duration(expect, &expect_path)?,
                )
            }
            RawQuestion::Intervals {
                id,
                phases: selection,
                expect,
            } => {
                let list = match (pre.lists[i].take(), selection) {
                    (Some(resolved), _) => resolved,
                    (None, Some(list)) => list
                        .iter()
                        .enumerate()
                        .map(|(j, p)| phase_ids.resolve(p, || format!("{path}.phases[{j}]")))
                        .collect::<Result<Vec<_>>>()?,
                    (None, None) => (0..phases.len()).collect(),
                };
                (
                    id,
                    Ask::Intervals { phases: list },
                    expect_intervals(expect, &expect_path)?,
                )
            }
            RawQuestion::SteadyState {
                id,
                series: s,
                min_warmup,
                tolerance_percent,
                expect,
            } => (
                id,
                Ask::SteadyState {
                    series: series_ids.resolve(s, || field("series"))?,
                    min_warmup: min_warmup.unwrap_or(2),
                    tolerance_percent: tolerance_percent.unwrap_or(5),
                },
                expect_duration(expect, &expect_path)?,
            ),
        };
        if matches!(ask, Ask::Intervals { .. }) && matches!(expect, Some(Expect::Duration { .. })) {
            return Err(CaseError::new(
                expect_path,
                "bad-value",
                "an intervals question expects interval results",
            ));
        }
        question_ids.add(id, i, field("id"))?;
        questions.push(Question {
            id: id.clone(),
            ask,
            expect,
        });
    }

    let mut unrecorded_joins = Vec::with_capacity(raw.unrecorded_joins.len());
    for (i, j) in raw.unrecorded_joins.iter().enumerate() {
        let [a, b] = j.streams.as_slice() else {
            return Err(CaseError::new(
                format!("unrecorded_joins[{i}].streams"),
                "bad-value",
                format!(
                    "an unrecorded join names exactly two streams, not {}",
                    j.streams.len()
                ),
            ));
        };
        let a = stream_ids.resolve(a, || format!("unrecorded_joins[{i}].streams[0]"))?;
        let b = stream_ids.resolve(b, || format!("unrecorded_joins[{i}].streams[1]"))?;
        unrecorded_joins.push(((a, b), j.why.clone()));
    }

    Ok(Case {
        name: raw.name.clone().unwrap_or_else(|| default_name.to_owned()),
        description: raw.description.clone(),
        provenance: raw.provenance.clone(),
        clocks,
        relations,
        relation_graph: std::sync::OnceLock::new(),
        streams,
        events,
        phases,
        marks,
        program,
        timers,
        series,
        questions,
        unrecorded_joins,
    })
}

mod preresolve;
#[cfg(test)]
mod tests;
