//! `form check`: every contradiction in a form, each with a stable code and the field it
//! concerns.
//!
//! The checks are about the *declaration*: could these boundaries, as declared, answer the
//! question? A form that says "host completion" but names no wait cannot (SPEC §4: a
//! timestamp alone is not a completion marker); a device interval whose events sit in two
//! streams with no declared dependency cannot (`cross-stream`); a clock without an
//! instance can be compared with nothing. Codes are part of the interface: added, never
//! renamed. The checks are pure: a [`Form`] in, findings out.

use std::collections::{BTreeSet, HashSet};
use std::fmt;

use serde::{Serialize, Serializer};

use super::fields::{self, FIELDS};
use super::model::{
    Form, QuestionKind, RawClock, RawDependency, RawForm, WaitScope, WAIT_STEP, WARMUP_STEP,
};

/// A contradiction (or gap) a form can contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Problem {
    /// A field the question needs has no answer yet.
    Unanswered,
    /// A completion question with no wait before the stop.
    CompletionWithoutWait,
    /// A wait whose scope cannot cover the declared work (an event wait on another stream).
    WaitScopeMissesWork,
    /// A device interval whose start and stop are in different streams with no declared
    /// dependency.
    DeviceIntervalCrossStream,
    /// A clock with a domain but no instance.
    ClockWithoutInstance,
    /// Start and stop on different clocks.
    StartStopDifferentClocks,
    /// The stop is placed before work the form declares included.
    StopBeforeIncludedWork,
    /// The start is placed after work the form declares included.
    StartAfterIncludedWork,
    /// Work declared excluded lies between start and stop.
    ExcludedWorkTimed,
    /// A step declared both included and excluded.
    IncludedAndExcluded,
    /// Warm-up declared included in (or placed inside) the measured samples.
    WarmupInSamples,
    /// A steady-state claim with fewer than two warm-up runs.
    SteadyStateSingleWarmup,
    /// A completion question whose wait is not between start and stop.
    WaitOutsideTimer,
    /// A submission timer whose region contains the wait: it is not submission alone.
    SubmissionIncludesWait,
    /// A device interval whose events are read with no wait for the stop event.
    EventReadWithoutWait,
    /// `order` lacks `start` or `stop`, or puts the stop first.
    BoundaryNotPlaced,
    /// Raw samples or failures are not kept.
    SamplesNotKept,
    /// The capture's binding answers another kind of question than the form asks.
    BindingKindMismatch,
    /// The capture reads a boundary on a clock of another domain than the form declares.
    CaptureClockMismatch,
    /// The capture's event is in another stream than the form declares.
    CaptureStreamMismatch,
    /// The capture's wait is not the one the form declares.
    CaptureWaitMismatch,
    /// The capture's timed work runs in other streams than the form's `work_streams`.
    CaptureWorkStreamsMismatch,
    /// A dependency the form declares has no stream wait in the capture.
    CaptureDependencyMissing,
    /// The form's wait is declared to cover the work, but in the capture it does not.
    CaptureWaitMissesWork,
}

impl Problem {
    /// Every problem, in the order findings are reported.
    pub const ALL: [Problem; 24] = [
        Problem::Unanswered,
        Problem::CompletionWithoutWait,
        Problem::WaitScopeMissesWork,
        Problem::DeviceIntervalCrossStream,
        Problem::ClockWithoutInstance,
        Problem::StartStopDifferentClocks,
        Problem::StopBeforeIncludedWork,
        Problem::StartAfterIncludedWork,
        Problem::ExcludedWorkTimed,
        Problem::IncludedAndExcluded,
        Problem::WarmupInSamples,
        Problem::SteadyStateSingleWarmup,
        Problem::WaitOutsideTimer,
        Problem::SubmissionIncludesWait,
        Problem::EventReadWithoutWait,
        Problem::BoundaryNotPlaced,
        Problem::SamplesNotKept,
        Problem::BindingKindMismatch,
        Problem::CaptureClockMismatch,
        Problem::CaptureStreamMismatch,
        Problem::CaptureWaitMismatch,
        Problem::CaptureWorkStreamsMismatch,
        Problem::CaptureDependencyMissing,
        Problem::CaptureWaitMissesWork,
    ];

    /// The stable kebab-case code.
    pub const fn code(self) -> &'static str {
        match self {
            Problem::Unanswered => "unanswered",
            Problem::CompletionWithoutWait => "completion-without-wait",
            Problem::WaitScopeMissesWork => "wait-scope-misses-work",
            Problem::DeviceIntervalCrossStream => "device-interval-cross-stream",
            Problem::ClockWithoutInstance => "clock-without-instance",
            Problem::StartStopDifferentClocks => "start-stop-different-clocks",
            Problem::StopBeforeIncludedWork => "stop-before-included-work",
            Problem::StartAfterIncludedWork => "start-after-included-work",
            Problem::ExcludedWorkTimed => "excluded-work-timed",
            Problem::IncludedAndExcluded => "included-and-excluded",
            Problem::WarmupInSamples => "warmup-in-samples",
            Problem::SteadyStateSingleWarmup => "steady-state-single-warmup",
            Problem::WaitOutsideTimer => "wait-outside-timer",
            Problem::SubmissionIncludesWait => "submission-includes-wait",
            Problem::EventReadWithoutWait => "event-read-without-wait",
            Problem::BoundaryNotPlaced => "boundary-not-placed",
            Problem::SamplesNotKept => "samples-not-kept",
            Problem::BindingKindMismatch => "binding-kind-mismatch",
            Problem::CaptureClockMismatch => "capture-clock-mismatch",
            Problem::CaptureStreamMismatch => "capture-stream-mismatch",
            Problem::CaptureWaitMismatch => "capture-wait-mismatch",
            Problem::CaptureWorkStreamsMismatch => "capture-work-streams-mismatch",
            Problem::CaptureDependencyMissing => "capture-dependency-missing",
            Problem::CaptureWaitMissesWork => "capture-wait-misses-work",
        }
    }

    /// What the code means, in one line.
    pub const fn explanation(self) -> &'static str {
        match self {
            Problem::Unanswered => "the question needs this field and it has no answer yet",
            Problem::CompletionWithoutWait => "a completion question needs a wait before the stop: a timestamp alone is not a completion marker",
            Problem::WaitScopeMissesWork => "the wait's scope cannot cover all of the declared work",
            Problem::DeviceIntervalCrossStream => "start and stop events are in different streams with no declared dependency between them",
            Problem::ClockWithoutInstance => "a clock without an instance cannot be compared with any other reading",
            Problem::StartStopDifferentClocks => "start and stop are read on different clocks, so their difference means nothing",
            Problem::StopBeforeIncludedWork => "the stop is placed before work the form declares included",
            Problem::StartAfterIncludedWork => "the start is placed after work the form declares included",
            Problem::ExcludedWorkTimed => "work the form declares excluded lies between start and stop",
            Problem::IncludedAndExcluded => "a step is declared both included and excluded",
            Problem::WarmupInSamples => "warm-up runs are recorded but never part of the measured samples",
            Problem::SteadyStateSingleWarmup => "a steady-state claim needs at least two warm-up runs",
            Problem::WaitOutsideTimer => "the stop of a completion question must follow the wait, between start and stop",
            Problem::SubmissionIncludesWait => "a submission timer that contains the wait measures more than submission",
            Problem::EventReadWithoutWait => "device events can be read only after the stop event completed: a wait must cover it",
            Problem::BoundaryNotPlaced => "`order` must place `start` before `stop`",
            Problem::SamplesNotKept => "raw samples and failures are always kept (SPEC §9)",
            Problem::BindingKindMismatch => "the capture's bound question is of another kind than the form's",
            Problem::CaptureClockMismatch => "the capture reads this boundary on a clock of another domain than the form declares",
            Problem::CaptureStreamMismatch => "the capture's event is in another stream than the form declares",
            Problem::CaptureWaitMismatch => "the capture's wait is not the wait the form declares",
            Problem::CaptureWorkStreamsMismatch => "the capture's timed work runs in other streams than the form declares",
            Problem::CaptureDependencyMissing => "a cross-stream dependency the form declares is not a stream wait in the capture",
            Problem::CaptureWaitMissesWork => "the form's wait is declared to cover the work, but the capture's wait does not cover it",
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for Problem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

/// One problem found in a form: the code, the field it concerns, and the specifics.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The problem.
    #[serde(rename = "code")]
    pub problem: Problem,
    /// The field, like `wait.scope` or `included[3]`.
    pub field: String,
    /// What exactly is contradictory, naming the values.
    pub detail: String,
}

impl Finding {
    /// A finding of `problem` at `field`.
    pub fn new(problem: Problem, field: impl Into<String>, detail: impl Into<String>) -> Self {
        Finding {
            problem,
            field: field.into(),
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Finding {
    /// `wait.scope: contradiction[completion-without-wait]: ...`, or
    /// `samples: unanswered: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.problem == Problem::Unanswered {
            write!(f, "{}: unanswered: {}", self.field, self.detail)
        } else {
            write!(
                f,
                "{}: contradiction[{}]: {}",
                self.field, self.problem, self.detail
            )
        }
    }
}

/// The streams a wait on `stream` covers: itself and, transitively, every stream it is
/// declared to wait on.
pub fn covered_streams(stream: &str, deps: &[RawDependency]) -> BTreeSet<String> {
    let mut covered = BTreeSet::from([stream.to_owned()]);
    let mut frontier = vec![stream.to_owned()];
    while let Some(s) = frontier.pop() {
        for d in deps.iter().filter(|d| d.stream == s) {
            if covered.insert(d.waits_on.clone()) {
                frontier.push(d.waits_on.clone());
            }
        }
    }
    covered
}

fn complete_clock(c: &Option<RawClock>) -> Option<(&str, &str)> {
    let c = c.as_ref()?;
    let domain = c.domain.as_deref().filter(|d| !d.trim().is_empty())?;
    let instance = c.instance.as_deref().filter(|i| !i.trim().is_empty())?;
    Some((domain, instance))
}

/// Every problem in `form`, in a stable order: contradictions first (in the order of the
/// form's parts), then unanswered fields (in form order).
pub fn check(form: &Form) -> Vec<Finding> {
    let raw = form.raw();
    let mut out = Vec::new();
    clocks(raw, &mut out);
    if let Some(q) = raw.question {
        waits(raw, q, &mut out);
        if q == QuestionKind::DeviceInterval {
            streams(raw, &mut out);
        }
    }
    placement(raw, raw.question, &mut out);
    samples(raw, &mut out);
    unanswered(raw, &mut out);
    out
}

/// Findings minus `unanswered` ones: what a form contradicts, whatever is still blank.
pub fn contradictions(findings: &[Finding]) -> impl Iterator<Item = &Finding> {
    findings.iter().filter(|f| f.problem != Problem::Unanswered)
}

fn unanswered(raw: &RawForm, out: &mut Vec<Finding>) {
    for f in FIELDS {
        if f.optional || !f.applies.needed_by(raw) || fields::is_answered(raw, f.path) {
            continue;
        }
        // A clock with a domain and no instance is a contradiction, reported by `clocks`.
        if let Some(which) = f.path.strip_suffix(".clock.instance") {
            if fields::is_answered(raw, &format!("{which}.clock.domain")) {
                continue;
            }
        }
        out.push(Finding::new(Problem::Unanswered, f.path, f.help));
    }
}

fn clocks(raw: &RawForm, out: &mut Vec<Finding>) {
    for (which, b) in [("start", &raw.start), ("stop", &raw.stop)] {
        let clock = b.as_ref().and_then(|b| b.clock.as_ref());
        let Some(c) = clock else { continue };
        let domain = c.domain.as_deref().filter(|d| !d.trim().is_empty());
        let instance = c.instance.as_deref().filter(|i| !i.trim().is_empty());
        if let (Some(domain), None) = (domain, instance) {
            out.push(Finding::new(
                Problem::ClockWithoutInstance,
                format!("{which}.clock.instance"),
                format!(
                    "the {which} is read on a `{domain}` clock with no instance: name what fixes its epoch (a boot id, a CUDA context, a process)"
                ),
            ));
        }
    }
    let start = raw.start.as_ref().and_then(|b| complete_clock(&b.clock));
    let stop = raw.stop.as_ref().and_then(|b| complete_clock(&b.clock));
    if let (Some(a), Some(b)) = (start, stop) {
        if a != b {
            let why = if a.0 != b.0 {
                "cross-domain"
            } else {
                "cross-instance"
            };
            out.push(Finding::new(
                Problem::StartStopDifferentClocks,
                "stop.clock",
                format!(
                    "start is read on {}@{}, stop on {}@{}: the difference is unknown ({why})",
                    a.0, a.1, b.0, b.1
                ),
            ));
        }
    }
}

fn deps(raw: &RawForm) -> &[RawDependency] {
    raw.dependencies.as_deref().unwrap_or(&[])
}

fn waits(raw: &RawForm, q: QuestionKind, out: &mut Vec<Finding>) {
    let scope = raw.wait.as_ref().and_then(|w| w.scope);
    let missing_wait = raw.wait.is_none() || scope == Some(WaitScope::None);
    let field = if raw.wait.is_none() {
        "wait"
    } else {
        "wait.scope"
    };
    if q.claims_completion() && missing_wait {
        out.push(Finding::new(
            Problem::CompletionWithoutWait,
            field,
            format!(
                "a {} question declares no wait before the stop: the stop would prove nothing about completion (the verdict would be unknown, no-wait)",
                q.code()
            ),
        ));
        return;
    }
    if q == QuestionKind::DeviceInterval && missing_wait {
        out.push(Finding::new(
            Problem::EventReadWithoutWait,
            field,
            "the events are read with no wait for the stop event: an event not yet complete has no time (the verdict would be unknown, event-incomplete)",
        ));
        return;
    }
    if !(q.claims_completion() || q == QuestionKind::DeviceInterval) {
        return;
    }
    let Some(w) = &raw.wait else { return };
    let covered: Option<BTreeSet<String>> = match scope {
        Some(WaitScope::Event | WaitScope::Stream) => {
            w.stream.as_deref().map(|s| covered_streams(s, deps(raw)))
        }
        _ => None, // a device wait covers every stream; unanswered scopes cover nothing yet
    };
    let Some(covered) = covered else { return };
    let wanted: Vec<String> = if q == QuestionKind::DeviceInterval {
        raw.stop
            .as_ref()
            .and_then(|b| b.stream.clone())
            .into_iter()
            .collect()
    } else {
        raw.work_streams.clone().unwrap_or_default()
    };
    let missed: Vec<&String> = wanted.iter().filter(|s| !covered.contains(*s)).collect();
    if !missed.is_empty() {
        let what = match (scope, &w.event) {
            (Some(WaitScope::Event), Some(e)) => format!(
                "a wait on event `{e}` (stream `{}`)",
                w.stream.as_deref().unwrap_or("?")
            ),
            _ => format!("a wait on stream `{}`", w.stream.as_deref().unwrap_or("?")),
        };
        let whose = if q == QuestionKind::DeviceInterval {
            "the stop event's stream"
        } else {
            "the work"
        };
        out.push(Finding::new(
            Problem::WaitScopeMissesWork,
            "wait.stream",
            format!(
                "{what} covers {}; {whose} also runs in {}, with no declared dependency that the wait covers (add `{} waits-on {}` to `dependencies` if there is one, or wait on the device)",
                covered.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "),
                missed.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "),
                w.stream.as_deref().unwrap_or("?"),
                missed[0],
            ),
        ));
    }
}

fn streams(raw: &RawForm, out: &mut Vec<Finding>) {
    let a = raw.start.as_ref().and_then(|b| b.stream.as_deref());
    let b = raw.stop.as_ref().and_then(|b| b.stream.as_deref());
    if let (Some(a), Some(b)) = (a, b) {
        if a != b && !covered_streams(b, deps(raw)).contains(a) {
            out.push(Finding::new(
                Problem::DeviceIntervalCrossStream,
                "stop.stream",
                format!(
                    "the start event is in stream `{a}` and the stop event in stream `{b}`, with no declared dependency (`{b} waits-on {a}`): the verdict would be unknown (cross-stream)"
                ),
            ));
        }
    }
}

fn placement(raw: &RawForm, q: Option<QuestionKind>, out: &mut Vec<Finding>) {
    let included = raw.included.as_deref().unwrap_or(&[]);
    let excluded = raw.excluded.as_deref().unwrap_or(&[]);
    declared_steps(included, excluded, q, out);
    let Some(order) = raw.order.as_deref() else {
        return;
    };
    let Some(bounds) = boundaries_in_order(order, out) else {
        return;
    };
    steps_against_boundaries(order, bounds, included, excluded, out);
    wait_against_boundaries(raw, q, order, bounds, included, out);
}

/// What the `included` and `excluded` lists say on their own, before any `order`.
fn declared_steps(
    included: &[String],
    excluded: &[String],
    q: Option<QuestionKind>,
    out: &mut Vec<Finding>,
) {
    for (i, step) in excluded.iter().enumerate() {
        if included.contains(step) {
            out.push(Finding::new(
                Problem::IncludedAndExcluded,
                format!("excluded[{i}]"),
                format!("`{step}` is declared both included and excluded"),
            ));
        }
    }
    for (i, step) in included.iter().enumerate() {
        if step == WARMUP_STEP {
            out.push(Finding::new(
                Problem::WarmupInSamples,
                format!("included[{i}]"),
                "warm-up is declared included in the measurement: warm-up runs are recorded but excluded from the samples and statistics",
            ));
        }
    }
    if q == Some(QuestionKind::Submission) {
        if let Some(i) = included.iter().position(|s| s == WAIT_STEP) {
            out.push(Finding::new(
                Problem::SubmissionIncludesWait,
                format!("included[{i}]"),
                "a submission question declares the wait included: then it measures waiting too, not submission",
            ));
        }
    }
}

/// The positions of `start` and `stop` in `order`, or a `boundary-not-placed` finding (and
/// `None`) when one is missing or `stop` comes first.
fn boundaries_in_order(order: &[String], out: &mut Vec<Finding>) -> Option<(usize, usize)> {
    let pos = |step: &str| order.iter().position(|s| s == step);
    let (Some(start), Some(stop)) = (pos("start"), pos("stop")) else {
        let missing: Vec<&str> = ["start", "stop"]
            .into_iter()
            .filter(|s| pos(s).is_none())
            .collect();
        out.push(Finding::new(
            Problem::BoundaryNotPlaced,
            "order",
            format!(
                "`order` has no {}: place the boundaries among the steps",
                missing
                    .iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ));
        return None;
    };
    if stop < start {
        out.push(Finding::new(
            Problem::BoundaryNotPlaced,
            "order",
            "`order` places `stop` before `start`",
        ));
        return None;
    }
    Some((start, stop))
}

/// Included steps `order` places outside the timer, excluded ones inside it, and warm-up
/// inside it.
fn steps_against_boundaries(
    order: &[String],
    (start, stop): (usize, usize),
    included: &[String],
    excluded: &[String],
    out: &mut Vec<Finding>,
) {
    let pos = |step: &str| order.iter().position(|s| s == step);
    let inside = |p: usize| p > start && p < stop;
    for (i, step) in included.iter().enumerate() {
        let Some(p) = pos(step) else { continue };
        if step == WARMUP_STEP {
            continue; // reported as warmup-in-samples
        }
        if p > stop {
            out.push(Finding::new(
                Problem::StopBeforeIncludedWork,
                format!("included[{i}]"),
                format!("`{step}` is declared included, but `order` places it after `stop`"),
            ));
        } else if p < start {
            out.push(Finding::new(
                Problem::StartAfterIncludedWork,
                format!("included[{i}]"),
                format!("`{step}` is declared included, but `order` places it before `start`"),
            ));
        }
    }
    for (i, step) in excluded.iter().enumerate() {
        if included.contains(step) {
            continue;
        }
        if pos(step).is_some_and(inside) {
            out.push(Finding::new(
                Problem::ExcludedWorkTimed,
                format!("excluded[{i}]"),
                format!("`{step}` is declared excluded, but `order` places it between `start` and `stop`"),
            ));
        }
    }
    if pos(WARMUP_STEP).is_some_and(inside) && !included.iter().any(|s| s == WARMUP_STEP) {
        out.push(Finding::new(
            Problem::WarmupInSamples,
            "order",
            "`order` places `warm-up` between `start` and `stop`: warm-up runs would be timed as samples",
        ));
    }
}

/// The `wait` step against the timer: a completion question's wait must be inside it, a
/// submission question's outside it.
fn wait_against_boundaries(
    raw: &RawForm,
    q: Option<QuestionKind>,
    order: &[String],
    (start, stop): (usize, usize),
    included: &[String],
    out: &mut Vec<Finding>,
) {
    let inside = |p: usize| p > start && p < stop;
    let wait = order.iter().position(|s| s == WAIT_STEP);
    if q.is_some_and(QuestionKind::claims_completion) {
        let scope = raw.wait.as_ref().and_then(|w| w.scope);
        if matches!(
            scope,
            Some(WaitScope::Event | WaitScope::Stream | WaitScope::Device)
        ) && !wait.is_some_and(inside)
        {
            let where_ = match wait {
                None => "`order` has no `wait` step".to_owned(),
                Some(p) if p > stop => "`order` places `wait` after `stop`".to_owned(),
                Some(_) => "`order` places `wait` before `start`".to_owned(),
            };
            out.push(Finding::new(
                Problem::WaitOutsideTimer,
                "order",
                format!("{where_}: the stop must follow the wait that covers the work (else the verdict is unknown, no-wait)"),
            ));
        }
    } else if q == Some(QuestionKind::Submission)
        && wait.is_some_and(inside)
        && !included.iter().any(|s| s == WAIT_STEP)
    {
        out.push(Finding::new(
            Problem::SubmissionIncludesWait,
            "order",
            "`order` places `wait` between `start` and `stop`: the timer measures waiting too, not submission",
        ));
    }
}

fn samples(raw: &RawForm, out: &mut Vec<Finding>) {
    if raw.steady_state == Some(true) {
        let runs = raw.warmup_runs.unwrap_or(0);
        if runs < 2 {
            out.push(Finding::new(
                Problem::SteadyStateSingleWarmup,
                "warmup_runs",
                format!(
                    "the statistics claim steady state with {runs} warm-up run{}: at least 2 are needed, and a stability check (the verdict would be unknown, single-warmup)",
                    if runs == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    for (field, value, what) in [
        ("keep_all_samples", raw.keep_all_samples, "raw samples"),
        ("keep_failures", raw.keep_failures, "failed runs"),
    ] {
        if value == Some(false) {
            out.push(Finding::new(
                Problem::SamplesNotKept,
                field,
                format!(
                    "the form drops {what}: every sample and every failure is kept and reported"
                ),
            ));
        }
    }
}

/// Codes of `findings`, deduplicated, for tests and summaries.
pub fn codes(findings: &[Finding]) -> Vec<&'static str> {
    let mut seen = HashSet::new();
    findings
        .iter()
        .map(|f| f.problem.code())
        .filter(|c| seen.insert(*c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::form::format::{load_form_str, FileFormat};

    /// The contradiction codes of a minimal form given as JSON fields (format and version
    /// are added); `unanswered` findings are left out.
    fn codes_of(fields: &str) -> Vec<&'static str> {
        let text = format!(r#"{{"format": "worksheet-form", "version": 1, {fields}}}"#);
        let form = load_form_str(&text, FileFormat::Json, "t.json").unwrap();
        let findings = check(&form);
        codes(&contradictions(&findings).cloned().collect::<Vec<_>>())
    }

    fn clean_seed() -> Form {
        let text = std::fs::read_to_string("worksheets/seed-host-completion.json").unwrap();
        load_form_str(&text, FileFormat::Json, "seed.json").unwrap()
    }

    #[test]
    fn the_seed_host_completion_form_is_clean() {
        assert_eq!(check(&clean_seed()), Vec::new());
    }

    #[test]
    fn completion_question_with_no_wait() {
        assert_eq!(
            codes_of(r#""question": "host-completion", "wait": {"scope": "none"}"#),
            ["completion-without-wait"]
        );
        assert_eq!(
            codes_of(r#""question": "end-to-end""#),
            ["completion-without-wait"]
        );
    }

    #[test]
    fn event_wait_on_another_stream_misses_the_work() {
        //  stream A  [== phase 1 ==)  record(end)   <- the wait is on `end`
        //  stream B      [== phase 2 ==)            <- nothing joins B into A
        let fields = r#""question": "host-completion", "work_streams": ["A", "B"],
            "wait": {"scope": "event", "event": "end", "stream": "A"}"#;
        assert_eq!(codes_of(fields), ["wait-scope-misses-work"]);
        let joined = format!(r#"{fields}, "dependencies": [{{"stream": "A", "waits_on": "B"}}]"#);
        assert_eq!(codes_of(&joined), Vec::<&str>::new());
    }

    #[test]
    fn a_device_wide_wait_covers_every_stream() {
        let fields = r#""question": "host-completion", "work_streams": ["A", "B"],
            "wait": {"scope": "device", "device": "gpu0"}"#;
        assert_eq!(codes_of(fields), Vec::<&str>::new());
    }

    #[test]
    fn device_interval_across_streams_without_a_dependency() {
        let fields = r#""question": "device-interval",
            "start": {"stream": "A"}, "stop": {"stream": "B"},
            "wait": {"scope": "event", "event": "end", "stream": "B"}"#;
        assert_eq!(codes_of(fields), ["device-interval-cross-stream"]);
        let joined = format!(r#"{fields}, "dependencies": [{{"stream": "B", "waits_on": "A"}}]"#);
        assert_eq!(codes_of(&joined), Vec::<&str>::new());
    }

    #[test]
    fn device_interval_read_without_a_wait() {
        assert_eq!(
            codes_of(r#""question": "device-interval", "wait": {"scope": "none"}"#),
            ["event-read-without-wait"]
        );
    }

    #[test]
    fn clock_without_instance() {
        assert_eq!(
            codes_of(r#""start": {"clock": {"domain": "host"}}"#),
            ["clock-without-instance"]
        );
        assert_eq!(
            codes_of(r#""stop": {"clock": {"domain": "host", "instance": " "}}"#),
            ["clock-without-instance"]
        );
    }

    #[test]
    fn start_and_stop_on_different_clocks() {
        let fields = r#""start": {"clock": {"domain": "host", "instance": "boot-a"}},
            "stop": {"clock": {"domain": "host", "instance": "boot-b"}}"#;
        assert_eq!(codes_of(fields), ["start-stop-different-clocks"]);
        let fields = r#""start": {"clock": {"domain": "host", "instance": "boot-a"}},
            "stop": {"clock": {"domain": "device", "instance": "boot-a"}}"#;
        assert_eq!(codes_of(fields), ["start-stop-different-clocks"]);
    }

    #[test]
    fn stop_placed_before_included_work() {
        //  start  measured-work  stop  result-copy     <- result-copy declared included
        let fields = r#""order": ["start", "measured-work", "stop", "result-copy"],
            "included": ["measured-work", "result-copy"]"#;
        assert_eq!(codes_of(fields), ["stop-before-included-work"]);
    }

    #[test]
    fn start_placed_after_included_work() {
        let fields = r#""order": ["input-copy", "start", "measured-work", "stop"],
            "included": ["input-copy", "measured-work"]"#;
        assert_eq!(codes_of(fields), ["start-after-included-work"]);
    }

    #[test]
    fn excluded_work_between_start_and_stop() {
        let fields = r#""order": ["start", "allocation", "measured-work", "stop"],
            "included": ["measured-work"], "excluded": ["allocation"]"#;
        assert_eq!(codes_of(fields), ["excluded-work-timed"]);
    }

    #[test]
    fn a_step_both_included_and_excluded() {
        let fields = r#""order": ["start", "measured-work", "stop"],
            "included": ["measured-work"], "excluded": ["measured-work"]"#;
        assert_eq!(codes_of(fields), ["included-and-excluded"]);
    }

    #[test]
    fn warmup_declared_in_the_samples() {
        let fields = r#""order": ["start", "warm-up", "measured-work", "stop"],
            "included": ["warm-up", "measured-work"]"#;
        assert_eq!(codes_of(fields), ["warmup-in-samples"]);
        let placed = r#""order": ["start", "warm-up", "measured-work", "stop"],
            "included": ["measured-work"]"#;
        assert_eq!(codes_of(placed), ["warmup-in-samples"]);
    }

    #[test]
    fn steady_state_with_a_single_warmup() {
        assert_eq!(
            codes_of(r#""steady_state": true, "warmup_runs": 1"#),
            ["steady-state-single-warmup"]
        );
        assert_eq!(
            codes_of(r#""steady_state": true, "warmup_runs": 2"#),
            Vec::<&str>::new()
        );
        assert_eq!(
            codes_of(r#""steady_state": false, "warmup_runs": 0"#),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn completion_wait_outside_the_timer() {
        let fields = r#""question": "host-completion", "wait": {"scope": "device"},
            "order": ["start", "measured-work", "stop", "wait"]"#;
        assert_eq!(codes_of(fields), ["wait-outside-timer"]);
    }

    #[test]
    fn submission_timer_containing_the_wait() {
        let fields = r#""question": "submission",
            "order": ["start", "measured-work", "wait", "stop"], "included": ["measured-work"]"#;
        assert_eq!(codes_of(fields), ["submission-includes-wait"]);
    }

    #[test]
    fn order_without_boundaries() {
        assert_eq!(
            codes_of(r#""order": ["measured-work"]"#),
            ["boundary-not-placed"]
        );
        assert_eq!(
            codes_of(r#""order": ["stop", "measured-work", "start"]"#),
            ["boundary-not-placed"]
        );
    }

    #[test]
    fn samples_or_failures_not_kept() {
        assert_eq!(
            codes_of(r#""keep_all_samples": false, "keep_failures": false"#),
            ["samples-not-kept"]
        );
    }

    #[test]
    fn a_blank_form_has_only_unanswered_fields() {
        let form = load_form_str(
            r#"{"format": "worksheet-form", "version": 1}"#,
            FileFormat::Json,
            "b.json",
        )
        .unwrap();
        let findings = check(&form);
        assert!(!findings.is_empty());
        assert!(findings.iter().all(|f| f.problem == Problem::Unanswered));
    }

    #[test]
    fn codes_are_unique_kebab_case() {
        let mut seen = HashSet::new();
        for p in Problem::ALL {
            assert!(seen.insert(p.code()), "{p:?}");
            assert!(p.code().chars().all(|c| c.is_ascii_lowercase() || c == '-'));
        }
    }

    #[test]
    fn covered_streams_follow_dependencies_transitively() {
        //  A waits on B, B waits on C: a wait on A covers A, B, C; a wait on C covers C.
        let deps = [
            RawDependency {
                stream: "A".into(),
                waits_on: "B".into(),
            },
            RawDependency {
                stream: "B".into(),
                waits_on: "C".into(),
            },
        ];
        assert_eq!(
            covered_streams("A", &deps).into_iter().collect::<Vec<_>>(),
            ["A", "B", "C"]
        );
        assert_eq!(
            covered_streams("C", &deps).into_iter().collect::<Vec<_>>(),
            ["C"]
        );
    }
}
