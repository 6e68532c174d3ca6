//! `form check --capture`: the answer a case or capture gives to the form's question, and
//! whether the capture's boundaries are the ones the form declares.
//!
//! The form's `binding` names the ids in the capture: a question id, a host timer, or an
//! event pair. A bound question is answered by the engine as `worksheet eval` would; a
//! bound timer or event pair becomes a question of the form's kind. Then everything the
//! form declares is compared with the capture, each mismatch a `contradiction[...]`: the
//! boundaries' clock domains and streams, the streams of the timed work (`work_streams`), the
//! declared cross-stream dependencies (as stream waits), the wait (its scope, event, stream
//! or device) and what it covers (the engine's completion verdict).
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
use super::model::{Form, QuestionKind, RawBinding, WaitScope};
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
    let (bound_by, ask, answer) = match &binding.question {
        Some(id) => bound_question(case, q, id, &mut findings)?,
        None => bound_ids(form, case, q, &binding)?,
    };
    let boundaries = compare_boundaries(form, case, &ask, &mut findings);
    compare_work_streams(form, case, &ask, &mut findings);
    compare_dependencies(form, case, &mut findings);
    let waits = if q.claims_completion() || matches!(ask, Ask::DeviceInterval { .. }) {
        compare_wait(form, case, &ask, &mut findings)
    } else {
        Vec::new()
    };
    if q.claims_completion() {
        compare_coverage(form, answer.as_ref(), &mut findings);
    }
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

/// What the binding names, the question asked and the engine's answer.
type Bound = (String, Ask, Option<Verdict>);

/// A binding to a question of the capture: the engine answers it as `worksheet eval`
/// would; a question of another kind than the form's is a finding.
fn bound_question(
    case: &Case,
    q: QuestionKind,
    id: &str,
    findings: &mut Vec<Finding>,
) -> Result<Bound, FormError> {
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
    Ok((format!("question `{id}`"), question.ask.clone(), answer))
}

/// A binding to a timer or an event pair: a question of the form's kind over them, asked
/// of the capture as the form's own.
fn bound_ids(
    form: &Form,
    case: &Case,
    q: QuestionKind,
    binding: &RawBinding,
) -> Result<Bound, FormError> {
    let ask = match &binding.timer {
        Some(id) => timer_ask(case, q, id)?,
        None => event_ask(case, binding)?,
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
    Ok((bound_by, ask, answer))
}

/// The question a bound timer asks: its submission, or the completion of the work it times.
fn timer_ask(case: &Case, q: QuestionKind, id: &str) -> Result<Ask, FormError> {
    let timer = case.timers.iter().position(|t| t.id == id).ok_or_else(|| {
        unknown_ref(
            "binding.timer",
            "timer",
            id,
            case.timers.iter().map(|t| t.id.as_str()).collect(),
        )
    })?;
    if q == QuestionKind::Submission {
        return Ok(Ask::Submission { timer });
    }
    let t = &case.timers[timer];
    let work = case.program[t.start_op..t.stop_op]
        .iter()
        .filter_map(|op| match op {
            Op::Launch(p) => Some(*p),
            _ => None,
        })
        .collect();
    Ok(Ask::HostCompletion { timer, work })
}

/// The device interval between a bound event pair.
fn event_ask(case: &Case, binding: &RawBinding) -> Result<Ask, FormError> {
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
    Ok(Ask::DeviceInterval { start, end })
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

/// The program ops a question's boundaries enclose, and the region named for people: a
/// timer's start to stop, or (a device interval) the record of the start event to the end of
/// the program (the events are read after a wait that follows their record).
fn region(case: &Case, ask: &Ask) -> Option<(std::ops::Range<usize>, String)> {
    match ask {
        Ask::Submission { timer } | Ask::HostCompletion { timer, .. } => {
            let t = &case.timers[*timer];
            Some((
                t.start_op..t.stop_op,
                format!("between the capture's timer `{}` start and stop", t.id),
            ))
        }
        Ask::DeviceInterval { start, .. } => {
            let from = case
                .program
                .iter()
                .position(|op| matches!(op, Op::Record(e) if e == start))
                .unwrap_or(0);
            Some((
                from..case.program.len(),
                format!(
                    "after the capture records event `{}`",
                    case.events[*start].id
                ),
            ))
        }
        _ => None,
    }
}

/// The streams of the capture's measured work: a completion question's work, else the
/// phases launched in the question's region; sorted, without repeats.
fn capture_work_streams(case: &Case, ask: &Ask) -> Vec<String> {
    let phases: Vec<usize> = match ask {
        Ask::HostCompletion { work, .. } if !work.is_empty() => work.clone(),
        _ => match region(case, ask) {
            Some((ops, _)) => case.program[ops]
                .iter()
                .filter_map(|op| match op {
                    Op::Launch(p) => Some(*p),
                    _ => None,
                })
                .collect(),
            None => Vec::new(),
        },
    };
    let mut streams: Vec<String> = phases
        .into_iter()
        .filter_map(|p| case.phases[p].stream)
        .map(|s| case.streams[s].id.clone())
        .collect();
    streams.sort();
    streams.dedup();
    streams
}

fn quoted(ids: &[String]) -> String {
    ids.iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The form's `work_streams` against the streams the capture's timed work runs in.
fn compare_work_streams(form: &Form, case: &Case, ask: &Ask, findings: &mut Vec<Finding>) {
    let Some(declared) = form.raw().work_streams.as_ref().filter(|w| !w.is_empty()) else {
        return;
    };
    let mut declared: Vec<String> = declared.clone();
    declared.sort();
    declared.dedup();
    let captured = capture_work_streams(case, ask);
    if captured.is_empty() || captured == declared {
        return;
    }
    findings.push(Finding::new(
        Problem::CaptureWorkStreamsMismatch,
        "work_streams",
        format!(
            "the form declares the work in stream(s) {}; the capture's work is in stream(s) {}",
            quoted(&declared),
            quoted(&captured)
        ),
    ));
}

/// Each dependency the form declares (`stream` waits on an event of `waits_on`) against the
/// capture's stream waits.
fn compare_dependencies(form: &Form, case: &Case, findings: &mut Vec<Finding>) {
    let Some(deps) = &form.raw().dependencies else {
        return;
    };
    for (i, d) in deps.iter().enumerate() {
        let found = case.program.iter().any(|op| match op {
            Op::StreamWait { stream, event } => {
                case.streams[*stream].id == d.stream
                    && case.streams[case.events[*event].stream].id == d.waits_on
            }
            _ => false,
        });
        if !found {
            let waits: Vec<String> = case
                .program
                .iter()
                .filter_map(|op| match op {
                    Op::StreamWait { stream, event } => Some(format!(
                        "`{}` waits on `{}` (stream `{}`)",
                        case.streams[*stream].id,
                        case.events[*event].id,
                        case.streams[case.events[*event].stream].id
                    )),
                    _ => None,
                })
                .collect();
            findings.push(Finding::new(
                Problem::CaptureDependencyMissing,
                format!("dependencies[{i}]"),
                format!(
                    "the form declares that stream `{}` waits on an event of stream `{}`; the capture has {}",
                    d.stream,
                    d.waits_on,
                    if waits.is_empty() {
                        "no stream wait".to_owned()
                    } else {
                        format!("only: {}", waits.join(", "))
                    }
                ),
            ));
        }
    }
}

/// A completion form that declares a wait, against the engine's verdict on the capture:
/// when the engine finds that the capture's wait misses work (or that there is none), the
/// wait the form declares to cover the work is not the one that ran.
fn compare_coverage(form: &Form, answer: Option<&Verdict>, findings: &mut Vec<Finding>) {
    let declared = form
        .raw()
        .wait
        .as_ref()
        .and_then(|w| w.scope)
        .is_some_and(|s| s != WaitScope::None);
    if !declared {
        return;
    }
    if let Some(Verdict::Unknown { reason, detail }) = answer {
        if matches!(
            reason,
            crate::verdict::Reason::WaitMissesWork | crate::verdict::Reason::NoWait
        ) {
            findings.push(Finding::new(
                Problem::CaptureWaitMissesWork,
                "wait",
                format!(
                    "the form's wait is declared to cover the work; in the capture it does not: {reason}{}",
                    if detail.is_empty() {
                        String::new()
                    } else {
                        format!(" ({detail})")
                    }
                ),
            ));
        }
    }
}

fn compare_wait(form: &Form, case: &Case, ask: &Ask, findings: &mut Vec<Finding>) -> Vec<String> {
    let Some((ops, where_)) = region(case, ask) else {
        return Vec::new();
    };
    let waits: Vec<(&str, &WaitTarget)> = case.program[ops]
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
    let event_stream = |e: usize| case.streams[case.events[e].stream].id.as_str();
    let matches = |target: &WaitTarget| match (w.scope, target) {
        (Some(WaitScope::Event), WaitTarget::Event(e)) => {
            w.event.as_deref().is_none_or(|id| case.events[*e].id == id)
                && w.stream.as_deref().is_none_or(|s| event_stream(*e) == s)
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
    if waits.iter().any(|(_, target)| matches(target)) {
        return listed;
    }
    // The declared event is waited on, but it lives in another stream than declared.
    let same_event_other_stream = waits.iter().find_map(|(_, target)| match target {
        WaitTarget::Event(e)
            if w.scope == Some(WaitScope::Event)
                && w.event.as_deref() == Some(case.events[*e].id.as_str()) =>
        {
            Some(event_stream(*e))
        }
        _ => None,
    });
    match same_event_other_stream {
        Some(actual) => findings.push(Finding::new(
            Problem::CaptureStreamMismatch,
            "wait.stream",
            format!(
                "the form waits on event `{}` in stream `{}`; in the capture event `{}` is in stream `{actual}`",
                w.event.as_deref().unwrap_or("?"),
                w.stream.as_deref().unwrap_or("?"),
                w.event.as_deref().unwrap_or("?"),
            ),
        )),
        None => findings.push(Finding::new(
            Problem::CaptureWaitMismatch,
            "wait",
            format!(
                "the form declares {declared}; {where_} there is {}",
                if listed.is_empty() {
                    "no host wait".to_owned()
                } else {
                    listed.join(", ")
                }
            ),
        )),
    }
    listed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::load_case_file;
    use crate::form::model::{validate, RawForm};

    fn seed(form: &str) -> RawForm {
        let text = std::fs::read_to_string(format!("worksheets/{form}.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn codes(raw: RawForm, capture: &str) -> Vec<(&'static str, String)> {
        let form = validate(raw, "f").unwrap();
        let case = load_case_file(std::path::Path::new(capture)).unwrap();
        let a = answer_from_case(&form, &case, capture).unwrap();
        a.findings
            .iter()
            .map(|f| (f.problem.code(), f.field.clone()))
            .collect()
    }

    const SEED: &str = "fixtures/cases/three-boundaries.json";

    #[test]
    fn the_seed_forms_agree_with_the_seed_capture_in_everything_they_declare() {
        for form in [
            "seed-host-completion",
            "seed-device-interval",
            "seed-submission",
        ] {
            assert_eq!(codes(seed(form), SEED), vec![], "{form}");
        }
    }

    #[test]
    fn streams_the_form_declares_are_compared_with_the_capture_n13() {
        // UX N13: the form says the work and the wait are in stream `main`; the capture's
        // work is in A and B and its wait is on event `end` in stream A.
        let mut raw = seed("seed-host-completion");
        raw.work_streams = Some(vec!["main".into()]);
        raw.wait.as_mut().unwrap().stream = Some("main".into());
        raw.dependencies = Some(vec![crate::form::model::RawDependency {
            stream: "main".into(),
            waits_on: "B".into(),
        }]);
        let found = codes(raw, SEED);
        assert_eq!(
            found,
            vec![
                ("capture-work-streams-mismatch", "work_streams".to_owned()),
                ("capture-dependency-missing", "dependencies[0]".to_owned()),
                ("capture-stream-mismatch", "wait.stream".to_owned()),
            ]
        );
        let form = {
            let mut raw = seed("seed-host-completion");
            raw.work_streams = Some(vec!["main".into()]);
            validate(raw, "f").unwrap()
        };
        let case = load_case_file(std::path::Path::new(SEED)).unwrap();
        let a = answer_from_case(&form, &case, SEED).unwrap();
        assert_eq!(
            a.findings[0].detail,
            "the form declares the work in stream(s) `main`; the capture's work is in stream(s) `A`, `B`"
        );
    }

    #[test]
    fn an_event_wait_in_the_declared_stream_but_on_another_event_is_a_wait_mismatch() {
        let mut raw = seed("seed-host-completion");
        raw.wait.as_mut().unwrap().event = Some("phase-2-done".into());
        raw.wait.as_mut().unwrap().stream = Some("B".into());
        assert_eq!(
            codes(raw, SEED),
            vec![("capture-wait-mismatch", "wait".to_owned())]
        );
    }

    #[test]
    fn a_device_interval_form_compares_its_wait() {
        let mut raw = seed("seed-device-interval");
        raw.wait.as_mut().unwrap().event = Some("start".into());
        assert_eq!(
            codes(raw, SEED),
            vec![("capture-wait-mismatch", "wait".to_owned())]
        );
    }

    #[test]
    fn a_declared_wait_that_misses_work_in_the_capture_is_a_contradiction() {
        // The seed completion form declares the wait on `end`, which covers both phases; in
        // this capture the wait targets an earlier event and misses phase 2's work.
        let found = codes(
            seed("seed-host-completion"),
            "fixtures/cases/wait-on-other-event.json",
        );
        assert!(
            found.contains(&("capture-wait-misses-work", "wait".to_owned())),
            "{found:?}"
        );
    }
}
