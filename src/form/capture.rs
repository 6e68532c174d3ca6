//! `form check --capture`: the answer a case or capture gives to the form's question, and
//! whether the capture's boundaries are the ones the form declares.
//!
//! The form's `binding` names the ids in the capture: a question id, a host timer, or an
//! event pair. A bound question is answered by the engine as `worksheet eval` would; a
//! bound timer or event pair becomes a question of the form's kind. Then the capture's
//! clocks, streams and waits are compared with the form's.
//!
//! Clocks: a different **domain** is a contradiction (`capture-clock-mismatch`). A
//! different **instance** is shown, not failed: a form written before measuring names the
//! instance by what fixes its epoch ("this process's monotonic clock", "the CUDA
//! context"), while a capture names a concrete one (a boot id, a pid, a GPU UUID), and
//! text cannot show that a description and an id are one epoch. Whether the capture's own
//! start and stop share an instance is the engine's question, answered in the verdict
//! (`cross-instance`).

use serde::Serialize;

use super::check::{Finding, Problem};
use super::error::FormError;
use super::model::{Form, QuestionKind, WaitScope};
use crate::case::{Ask, Case, Op, Question, WaitTarget};
use crate::clock::ClockId;
use crate::engine::evaluate;
use crate::verdict::Verdict;

/// One boundary as the form declares it and as the capture reads it.
#[derive(Clone, Debug, Serialize)]
pub struct BoundaryComparison {
    /// `start` or `stop`.
    pub boundary: &'static str,
    /// What in the capture reads it (`timer \`completion\` start`, `event \`end\``).
    pub source: String,
    /// The form's clock as `domain@instance`, if it names a complete one.
    pub form_clock: Option<String>,
    /// The capture's clock.
    pub capture_clock: String,
    /// The form's stream (device boundaries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form_stream: Option<String>,
    /// The capture's stream (device boundaries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_stream: Option<String>,
    /// Whether the form's instance reads the same as the capture's (`None`: the form names
    /// no complete clock). Shown, never failed: see the module documentation.
    pub same_instance: Option<bool>,
}

/// What a capture says about a form's question.
#[derive(Clone, Debug, Serialize)]
pub struct CaptureAnswer {
    /// The capture file, as named.
    pub capture: String,
    /// The case's name.
    pub case: String,
    /// How the form binds to it (`question \`host-completion\``).
    pub bound_by: String,
    /// The kind of the question answered in the capture.
    pub kind: &'static str,
    /// The answer: known with a value, or unknown with its reason. `None` when the bound
    /// question is not a duration (an interval set).
    pub answer: Option<Verdict>,
    /// The capture's waits in the timed region (completion questions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<String>,
    /// Boundaries, form versus capture.
    pub boundaries: Vec<BoundaryComparison>,
    /// Where the capture disagrees with the form.
    pub findings: Vec<Finding>,
}

fn unknown_ref(field: &str, what: &str, id: &str, known: Vec<&str>) -> FormError {
    FormError::new(
        field,
        "unknown-reference",
        format!(
            "the capture has no {what} `{id}` (it has: {})",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
    )
}

fn fits(q: QuestionKind, ask: &Ask) -> bool {
    matches!(
        (q, ask),
        (QuestionKind::Submission, Ask::Submission { .. })
            | (
                QuestionKind::HostCompletion | QuestionKind::EndToEnd,
                Ask::HostCompletion { .. }
            )
            | (QuestionKind::DeviceInterval, Ask::DeviceInterval { .. })
    )
}

/// Answers the form's question from `case` (read from `capture_file`).
///
/// # Errors
/// [`FormError`]: `missing-field` when the form has no question, `missing-binding` when it
/// binds to nothing, `unknown-reference` when a bound id is not in the capture.
pub fn answer_from_case(
    form: &Form,
    case: &Case,
    capture_file: &str,
) -> Result<CaptureAnswer, FormError> {
    let raw = form.raw();
    let q = form.question().ok_or_else(|| {
        FormError::new(
            "question",
            "missing-field",
            "the form names no question, so there is nothing to answer from the capture",
        )
    })?;
    let binding = raw.binding.clone().filter(|b| !b.is_empty()).ok_or_else(|| {
        FormError::new(
            "binding",
            "missing-binding",
            "the form does not say which ids in the capture answer it: set `binding` to a question id, a timer (host boundaries) or `start_event` + `end_event` (device interval)",
        )
    })?;
    let mut findings = Vec::new();
    let (bound_by, ask, answer) = if let Some(id) = &binding.question {
        let question = case.question(id).ok_or_else(|| {
            unknown_ref(
                "binding.question",
                "question",
                id,
                case.questions.iter().map(|q| q.id.as_str()).collect(),
            )
        })?;
        if !fits(q, &question.ask) {
            findings.push(Finding::new(
                Problem::BindingKindMismatch,
                "binding.question",
                format!(
                    "the form asks {} but question `{id}` in the capture is a {} question",
                    q.code(),
                    question.ask.kind()
                ),
            ));
        }
        let report = evaluate(case);
        let answer = report.answer(id).and_then(|a| a.outcome.verdict().cloned());
        (format!("question `{id}`"), question.ask.clone(), answer)
    } else {
        let ask = if let Some(id) = &binding.timer {
            let timer = case
                .timers
                .iter()
                .position(|t| &t.id == id)
                .ok_or_else(|| {
                    unknown_ref(
                        "binding.timer",
                        "timer",
                        id,
                        case.timers.iter().map(|t| t.id.as_str()).collect(),
                    )
                })?;
            if q == QuestionKind::Submission {
                Ask::Submission { timer }
            } else {
                let t = &case.timers[timer];
                let work = case.program[t.start_op..t.stop_op]
                    .iter()
                    .filter_map(|op| match op {
                        Op::Launch(p) => Some(*p),
                        _ => None,
                    })
                    .collect();
                Ask::HostCompletion { timer, work }
            }
        } else {
            let event = |field: &str, id: &str| {
                case.events.iter().position(|e| e.id == id).ok_or_else(|| {
                    unknown_ref(
                        field,
                        "event",
                        id,
                        case.events.iter().map(|e| e.id.as_str()).collect(),
                    )
                })
            };
            let start = event(
                "binding.start_event",
                binding.start_event.as_deref().unwrap_or_default(),
            )?;
            let end = event(
                "binding.end_event",
                binding.end_event.as_deref().unwrap_or_default(),
            )?;
            Ask::DeviceInterval { start, end }
        };
        let mut synthetic = case.clone();
        synthetic.questions = vec![Question {
            id: form.name().to_owned(),
            ask: ask.clone(),
            expect: None,
        }];
        let report = evaluate(&synthetic);
        let answer = report.answers[0].outcome.verdict().cloned();
        let bound_by = match &binding.timer {
            Some(t) => format!("timer `{t}`"),
            None => format!(
                "events `{}` → `{}`",
                binding.start_event.as_deref().unwrap_or_default(),
                binding.end_event.as_deref().unwrap_or_default()
            ),
        };
        (bound_by, ask, answer)
    };
    let boundaries = compare_boundaries(form, case, &ask, &mut findings);
    let waits = if q.claims_completion() {
        compare_wait(form, case, &ask, &mut findings)
    } else {
        Vec::new()
    };
    Ok(CaptureAnswer {
        capture: capture_file.to_owned(),
        case: case.name.clone(),
        bound_by,
        kind: ask.kind(),
        answer,
        waits,
        boundaries,
        findings,
    })
}

fn form_clock(form: &Form, which: &str) -> Option<ClockId> {
    let b = match which {
        "start" => form.raw().start.as_ref(),
        _ => form.raw().stop.as_ref(),
    }?;
    let c = b.clock.as_ref()?;
    let domain = c.domain.clone().filter(|d| !d.trim().is_empty())?;
    let instance = c.instance.clone().filter(|i| !i.trim().is_empty())?;
    Some(ClockId::new(domain, instance))
}

fn compare_boundaries(
    form: &Form,
    case: &Case,
    ask: &Ask,
    findings: &mut Vec<Finding>,
) -> Vec<BoundaryComparison> {
    let read: Vec<(&'static str, String, ClockId, Option<String>)> = match ask {
        Ask::Submission { timer } | Ask::HostCompletion { timer, .. } => {
            let t = &case.timers[*timer];
            vec![
                (
                    "start",
                    format!("timer `{}` start", t.id),
                    case.clock(t.start.0).clone(),
                    None,
                ),
                (
                    "stop",
                    format!("timer `{}` stop", t.id),
                    case.clock(t.stop.0).clone(),
                    None,
                ),
            ]
        }
        Ask::DeviceInterval { start, end } => [("start", *start), ("stop", *end)]
            .into_iter()
            .map(|(which, e)| {
                let ev = &case.events[e];
                let stream = &case.streams[ev.stream];
                (
                    which,
                    format!("event `{}`", ev.id),
                    case.clock(stream.clock).clone(),
                    Some(stream.id.clone()),
                )
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for (which, source, clock, stream) in read {
        let declared = form_clock(form, which);
        if let Some(d) = &declared {
            if d.domain != clock.domain {
                findings.push(Finding::new(
                    Problem::CaptureClockMismatch,
                    format!("{which}.clock.domain"),
                    format!(
                        "the form reads the {which} on a `{}` clock; the capture's {source} is on a `{}` clock ({clock})",
                        d.domain, clock.domain
                    ),
                ));
            }
        }
        let same_instance = declared.as_ref().map(|d| d.instance == clock.instance);
        let b = match which {
            "start" => form.raw().start.as_ref(),
            _ => form.raw().stop.as_ref(),
        };
        let form_stream = if stream.is_some() {
            b.and_then(|b| b.stream.clone())
        } else {
            None
        };
        if let (Some(f), Some(c)) = (&form_stream, &stream) {
            if f != c {
                findings.push(Finding::new(
                    Problem::CaptureStreamMismatch,
                    format!("{which}.stream"),
                    format!("the form records the {which} event in stream `{f}`; the capture's {source} is in stream `{c}`"),
                ));
            }
        }
        out.push(BoundaryComparison {
            boundary: which,
            source,
            form_clock: declared.map(|c| c.to_string()),
            capture_clock: clock.to_string(),
            form_stream,
            capture_stream: stream,
            same_instance,
        });
    }
    out
}

fn compare_wait(form: &Form, case: &Case, ask: &Ask, findings: &mut Vec<Finding>) -> Vec<String> {
    let Ask::HostCompletion { timer, .. } = ask else {
        return Vec::new();
    };
    let t = &case.timers[*timer];
    let waits: Vec<(&str, &WaitTarget)> = case.program[t.start_op..t.stop_op]
        .iter()
        .filter_map(|op| match op {
            Op::HostWait { id, target, .. } => Some((id.as_str(), target)),
            _ => None,
        })
        .collect();
    let describe = |target: &WaitTarget| match target {
        WaitTarget::Event(e) => format!(
            "event `{}` (stream `{}`)",
            case.events[*e].id, case.streams[case.events[*e].stream].id
        ),
        WaitTarget::Stream(s) => format!("stream `{}`", case.streams[*s].id),
        WaitTarget::Device(d) => format!("device `{d}`"),
    };
    let listed: Vec<String> = waits
        .iter()
        .map(|(id, target)| format!("`{id}` on {}", describe(target)))
        .collect();
    let Some(w) = &form.raw().wait else {
        return listed;
    };
    let matches = |target: &WaitTarget| match (w.scope, target) {
        (Some(WaitScope::Event), WaitTarget::Event(e)) => {
            w.event.as_deref().is_none_or(|id| case.events[*e].id == id)
        }
        (Some(WaitScope::Stream), WaitTarget::Stream(s)) => w
            .stream
            .as_deref()
            .is_none_or(|id| case.streams[*s].id == id),
        (Some(WaitScope::Device), WaitTarget::Device(d)) => {
            w.device.as_deref().is_none_or(|id| d == id)
        }
        _ => false,
    };
    let declared = match w.scope {
        Some(WaitScope::Event) => {
            format!("a wait on event `{}`", w.event.as_deref().unwrap_or("?"))
        }
        Some(WaitScope::Stream) => {
            format!("a wait on stream `{}`", w.stream.as_deref().unwrap_or("?"))
        }
        Some(WaitScope::Device) => {
            format!("a wait on device `{}`", w.device.as_deref().unwrap_or("?"))
        }
        _ => return listed,
    };
    if !waits.iter().any(|(_, target)| matches(target)) {
        findings.push(Finding::new(
            Problem::CaptureWaitMismatch,
            "wait",
            format!(
                "the form declares {declared}; between the capture's timer `{}` start and stop there is {}",
                t.id,
                if listed.is_empty() {
                    "no host wait".to_owned()
                } else {
                    listed.join(", ")
                }
            ),
        ));
    }
    listed
}
