//! The fields of a form: path, one-line explanation, choices, and when a question needs it.
//!
//! This table drives everything that walks a form field by field: the blank form's
//! explanations, the prompts of `form fill`, `--set field=value`, the CSV variant and the
//! `unanswered` findings of `form check`. Values are read and written here as text, in the
//! same syntax everywhere: lists separated by `,` (or `;`), `-` for an empty answer,
//! `yes`/`no` for booleans, `A waits-on B` for a dependency, `key=value` pairs for the binding.

use super::model::{
    QuestionKind, RawBinding, RawBoundary, RawClock, RawDependency, RawForm, RawWait, Statistic,
    WaitScope,
};

/// Which forms a field applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// Every form.
    Always,
    /// Device-interval forms.
    DeviceInterval,
    /// Forms whose question claims completion (host completion, end to end).
    Completion,
    /// Forms that declare a wait (completion and device interval).
    Waiting,
    /// Forms with a wait of scope `event`.
    WaitEvent,
    /// Forms with a wait of scope `event` or `stream`.
    WaitStream,
    /// Forms with a wait of scope `device`.
    WaitDevice,
    /// Forms that declare streams (completion and device interval).
    Streams,
}

/// One field of the form.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// Dotted path, as in `--set` and in findings: `start.clock.instance`.
    pub path: &'static str,
    /// The one-line explanation the blank form carries and the prompt shows.
    pub help: &'static str,
    /// Choices offered (others are refused unless `open`).
    pub choices: &'static [&'static str],
    /// Whether values outside `choices` are accepted.
    pub open: bool,
    /// An optional field: an empty answer (`-`) is an answer.
    pub optional: bool,
    /// Which forms need it.
    pub applies: Applies,
}

const QUESTIONS: &[&str] = &[
    "submission",
    "device-interval",
    "host-completion",
    "end-to-end",
];
const DOMAINS: &[&str] = &["host", "device"];
const SCOPES: &[&str] = &["event", "stream", "device", "none"];
const YES_NO: &[&str] = &["yes", "no"];
const STATS: &[&str] = &["count", "min", "median", "p90", "max"];

const fn field(
    path: &'static str,
    help: &'static str,
    choices: &'static [&'static str],
    open: bool,
    optional: bool,
    applies: Applies,
) -> Field {
    Field {
        path,
        help,
        choices,
        open,
        optional,
        applies,
    }
}

/// Every field a person answers, in the order `form fill` asks them.
pub const FIELDS: &[Field] = &[
    field("question", "Which stopwatch this form declares: submission (submitting only), device-interval (between two events of one stream), host-completion (until the caller has waited for the work), end-to-end (a whole request).", QUESTIONS, false, false, Applies::Always),
    field("description", "Optional: what is measured, in your own words (kernel, input size, device).", &[], true, true, Applies::Always),
    field("start.marker", "What marks the start: the call or line just before which the host clock is read, or the event recorded (device interval).", &[], true, false, Applies::Always),
    field("start.clock.domain", "Which kind of clock the start is read on: `host` for a host clock read, `device` for a device event.", DOMAINS, true, false, Applies::Always),
    field("start.clock.instance", "What fixes that clock's epoch (a boot id, a CUDA context, a process): without it no two readings can be compared.", &[], true, false, Applies::Always),
    field("start.stream", "The stream the start event is recorded in.", &[], true, false, Applies::DeviceInterval),
    field("stop.marker", "What marks the stop: the call or line just after which the host clock is read, or the event recorded (device interval).", &[], true, false, Applies::Always),
    field("stop.clock.domain", "Which kind of clock the stop is read on: `host` or `device` (the same clock as the start, or the difference means nothing).", DOMAINS, true, false, Applies::Always),
    field("stop.clock.instance", "What fixes the stop clock's epoch (a boot id, a CUDA context, a process).", &[], true, false, Applies::Always),
    field("stop.stream", "The stream the stop event is recorded in.", &[], true, false, Applies::DeviceInterval),
    field("work_streams", "The streams the measured work runs in: the wait must cover every one of them.", &[], true, false, Applies::Completion),
    field("dependencies", "Optional: declared cross-stream waits, each `A waits-on B` (stream A waits on an event recorded in stream B).", &[], true, true, Applies::Streams),
    field("wait.scope", "What the host waits on before the stop (completion) or before reading the events (device interval): an event, a stream, the whole device, or none.", SCOPES, false, false, Applies::Waiting),
    field("wait.event", "The event waited on.", &[], true, false, Applies::WaitEvent),
    field("wait.stream", "The stream of the waited event, or the stream waited on.", &[], true, false, Applies::WaitStream),
    field("wait.device", "The device waited on (the wait covers every stream of it).", &[], true, false, Applies::WaitDevice),
    field("order", "The program's steps in order, with `start`, `stop` and `wait` where they happen; standard steps: initialization, allocation, input-copy, warm-up, measured-work, result-copy, validation, cleanup; add your own.", &[], true, false, Applies::Always),
    field("included", "Steps the measurement is meant to include (names from `order`).", &[], true, false, Applies::Always),
    field("excluded", "Optional: steps the measurement is meant to leave out (names from `order`).", &[], true, true, Applies::Always),
    field("warmup_runs", "Runs made before the measured samples: recorded, never in the statistics.", &[], true, false, Applies::Always),
    field("samples", "Measured samples to take (at least 1).", &[], true, false, Applies::Always),
    field("statistics", "Statistics to report over the measured samples: count, min, median, p90, max.", STATS, false, false, Applies::Always),
    field("steady_state", "Whether the statistics claim steady state (yes/no): that needs at least 2 warm-up runs and a stability check.", YES_NO, false, false, Applies::Always),
    field("keep_all_samples", "Keep every raw sample, not only the statistics (yes/no).", YES_NO, false, false, Applies::Always),
    field("keep_failures", "Keep and count failed runs instead of dropping them (yes/no).", YES_NO, false, false, Applies::Always),
    field("binding", "Optional, for `form check --capture`: the ids in a capture that answer this form: a `question` id, or a `timer` id (host boundaries), or `start_event` and `end_event` ids (device interval); `capture` names the capture file. Typed as `key=value` pairs.", &[], true, true, Applies::Always),
];

/// Explanations of the containers and of fields that `--set` and the CSV variant reach but
/// `form fill` asks as one (the binding).
pub const OTHER_HELP: &[(&str, &str)] = &[
    ("format", "Always \"worksheet-form\"."),
    ("version", "Form-format version: 1."),
    (
        "name",
        "The form's name (default: the file name without extension).",
    ),
    ("start", "Where the stopwatch starts."),
    (
        "start.clock",
        "The clock the start is read on: domain plus instance.",
    ),
    ("stop", "Where the stopwatch stops."),
    (
        "stop.clock",
        "The clock the stop is read on: domain plus instance.",
    ),
    (
        "wait",
        "The wait the stop follows (completion) or that lets the events be read (device interval).",
    ),
    (
        "binding.capture",
        "The capture this form is meant to be checked against (a path; informational).",
    ),
    (
        "binding.question",
        "A question id in the capture whose answer is this form's.",
    ),
    (
        "binding.timer",
        "A host timer id in the capture (submission, host completion, end to end).",
    ),
    (
        "binding.start_event",
        "The start event id in the capture (device interval).",
    ),
    (
        "binding.end_event",
        "The end event id in the capture (device interval).",
    ),
];

/// The explanation of any field path or container.
pub fn help(path: &str) -> Option<&'static str> {
    FIELDS
        .iter()
        .find(|f| f.path == path)
        .map(|f| f.help)
        .or_else(|| OTHER_HELP.iter().find(|(p, _)| *p == path).map(|(_, h)| *h))
}

/// The field with this path.
pub fn find(path: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.path == path)
}

impl Applies {
    /// Whether a form for `question` shows fields of this kind (wait sub-fields whenever a
    /// wait is shown). `None` (question not chosen) shows everything.
    pub fn shown_for(self, question: Option<QuestionKind>) -> bool {
        let Some(q) = question else { return true };
        match self {
            Applies::Always => true,
            Applies::DeviceInterval => q == QuestionKind::DeviceInterval,
            Applies::Completion => q.claims_completion(),
            Applies::Waiting
            | Applies::WaitEvent
            | Applies::WaitStream
            | Applies::WaitDevice
            | Applies::Streams => q.claims_completion() || q == QuestionKind::DeviceInterval,
        }
    }

    /// Whether `form` needs an answer for fields of this kind, given its answers so far.
    /// Until the question is chosen, only the fields every question needs.
    pub fn needed_by(self, form: &RawForm) -> bool {
        if form.question.is_none() {
            return self == Applies::Always;
        }
        let scope = form.wait.as_ref().and_then(|w| w.scope);
        match self {
            Applies::WaitEvent => self.shown_for(form.question) && scope == Some(WaitScope::Event),
            Applies::WaitStream => {
                self.shown_for(form.question)
                    && matches!(scope, Some(WaitScope::Event | WaitScope::Stream))
            }
            Applies::WaitDevice => {
                self.shown_for(form.question) && scope == Some(WaitScope::Device)
            }
            _ => self.shown_for(form.question),
        }
    }
}

fn yes_no(v: bool) -> String {
    if v { "yes" } else { "no" }.to_owned()
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "-".to_owned()
    } else {
        items.join(", ")
    }
}

fn text(v: &Option<String>) -> Option<String> {
    v.clone()
}

/// A dependency as text: `A waits-on B`.
pub fn dependency_text(d: &RawDependency) -> String {
    format!("{} waits-on {}", d.stream, d.waits_on)
}

/// A binding as text: `question=host-completion, capture=...`, or `-` when empty.
pub fn binding_text(b: &RawBinding) -> String {
    let parts: Vec<String> = [
        ("question", &b.question),
        ("timer", &b.timer),
        ("start_event", &b.start_event),
        ("end_event", &b.end_event),
        ("capture", &b.capture),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}")))
    .collect();
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join(", ")
    }
}

/// The value of `path` as text, or `None` when it is not answered.
pub fn get(form: &RawForm, path: &str) -> Option<String> {
    let boundary = |b: &Option<RawBoundary>| b.clone().unwrap_or_default();
    let clock = |b: &Option<RawBoundary>| boundary(b).clock.unwrap_or_default();
    let wait = form.wait.clone().unwrap_or_default();
    let binding = form.binding.clone().unwrap_or_default();
    match path {
        "format" => Some(form.format.clone()),
        "version" => Some(form.version.to_string()),
        "name" => text(&form.name),
        "question" => form.question.map(|q| q.code().to_owned()),
        "description" => text(&form.description),
        "start.marker" => boundary(&form.start).marker,
        "start.clock.domain" => clock(&form.start).domain,
        "start.clock.instance" => clock(&form.start).instance,
        "start.stream" => boundary(&form.start).stream,
        "stop.marker" => boundary(&form.stop).marker,
        "stop.clock.domain" => clock(&form.stop).domain,
        "stop.clock.instance" => clock(&form.stop).instance,
        "stop.stream" => boundary(&form.stop).stream,
        "work_streams" => form.work_streams.as_deref().map(list),
        "dependencies" => form.dependencies.as_ref().map(|d| {
            if d.is_empty() {
                "-".to_owned()
            } else {
                d.iter().map(dependency_text).collect::<Vec<_>>().join(", ")
            }
        }),
        "wait.scope" => wait.scope.map(|s| s.code().to_owned()),
        "wait.event" => wait.event,
        "wait.stream" => wait.stream,
        "wait.device" => wait.device,
        "order" => form.order.as_deref().map(list),
        "included" => form.included.as_deref().map(list),
        "excluded" => form.excluded.as_deref().map(list),
        "warmup_runs" => form.warmup_runs.map(|n| n.to_string()),
        "samples" => form.samples.map(|n| n.to_string()),
        "statistics" => form.statistics.as_ref().map(|s| {
            if s.is_empty() {
                "-".to_owned()
            } else {
                s.iter().map(|s| s.code()).collect::<Vec<_>>().join(", ")
            }
        }),
        "steady_state" => form.steady_state.map(yes_no),
        "keep_all_samples" => form.keep_all_samples.map(yes_no),
        "keep_failures" => form.keep_failures.map(yes_no),
        "binding" => form.binding.as_ref().map(binding_text),
        "binding.capture" => binding.capture,
        "binding.question" => binding.question,
        "binding.timer" => binding.timer,
        "binding.start_event" => binding.start_event,
        "binding.end_event" => binding.end_event,
        _ => None,
    }
}

/// Whether `path` holds an answer: a non-blank value, or for an optional field any value
/// (an empty answer, `-`, is an answer).
pub fn is_answered(form: &RawForm, path: &str) -> bool {
    let optional = find(path).is_some_and(|f| f.optional);
    get(form, path).is_some_and(|v| optional || !v.trim().is_empty())
}

/// Marks the object that holds `path` as present without answering it: an unanswered
/// `wait.scope` (a wait still to be described) differs from no `wait` at all. The binding
/// is optional as a whole and is not touched.
pub fn touch(form: &mut RawForm, path: &str) {
    let boundary = |b: &mut Option<RawBoundary>, rest: &str| {
        let b = b.get_or_insert_with(RawBoundary::default);
        if rest.starts_with("clock.") {
            b.clock.get_or_insert_with(RawClock::default);
        }
    };
    if let Some(rest) = path.strip_prefix("start.") {
        boundary(&mut form.start, rest);
    } else if let Some(rest) = path.strip_prefix("stop.") {
        boundary(&mut form.stop, rest);
    } else if path.starts_with("wait.") {
        form.wait.get_or_insert_with(RawWait::default);
    }
}

/// Every path `set` accepts, for error messages.
pub fn settable_paths() -> Vec<&'static str> {
    let mut paths: Vec<&'static str> = vec!["name"];
    paths.extend(FIELDS.iter().map(|f| f.path));
    paths.extend([
        "binding.capture",
        "binding.question",
        "binding.timer",
        "binding.start_event",
        "binding.end_event",
    ]);
    paths
}

fn split_list(value: &str) -> Vec<String> {
    if value.trim() == "-" {
        return Vec::new();
    }
    value
        .split([',', ';'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Resolves a choice given as its name or its 1-based number in `choices`.
fn choice<'a>(value: &'a str, choices: &'a [&'a str]) -> &'a str {
    match value.parse::<usize>() {
        Ok(n) if n >= 1 && n <= choices.len() => choices[n - 1],
        _ => value,
    }
}

fn parse_bool(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "yes" | "y" | "true" => Ok(true),
        "no" | "n" | "false" => Ok(false),
        other => Err(format!("`{other}` is not yes or no")),
    }
}

fn parse_count(value: &str) -> Result<u32, String> {
    value
        .parse::<u32>()
        .map_err(|_| format!("`{value}` is not a whole number of runs (0 or more)"))
}

fn parse_dependency(item: &str) -> Result<RawDependency, String> {
    let words: Vec<&str> = item.split_whitespace().collect();
    let (a, b) = match words.as_slice() {
        [a, "waits-on", b] => (*a, *b),
        _ => match item.split_once("<-") {
            Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => (a.trim(), b.trim()),
            _ => {
                return Err(format!(
                    "`{item}` is not a dependency: write `A waits-on B` (stream A waits on an event recorded in stream B)"
                ))
            }
        },
    };
    Ok(RawDependency {
        stream: a.to_owned(),
        waits_on: b.to_owned(),
    })
}

fn parse_binding(value: &str) -> Result<RawBinding, String> {
    let mut b = RawBinding::default();
    for item in split_list(value) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!(
                "`{item}` is not `key=value` (keys: question, timer, start_event, end_event, capture)"
            ));
        };
        // `question=` names nothing: an empty id is no id (the CSV form cannot tell it from
        // an unanswered one, so a form that kept it would read back differently; found by the
        // form_stdin fuzz target).
        let v = Some(v.trim()).filter(|v| !v.is_empty()).map(str::to_owned);
        match k.trim() {
            "question" => b.question = v,
            "timer" => b.timer = v,
            "start_event" => b.start_event = v,
            "end_event" => b.end_event = v,
            "capture" => b.capture = v,
            other => {
                return Err(format!(
                    "`{other}` is not a binding key (keys: question, timer, start_event, end_event, capture)"
                ))
            }
        }
    }
    Ok(b)
}

/// A value typed at a prompt or with `--set`, with a menu number (`1`) replaced by the
/// choice it stands for, for every field that offers choices. Files are not read through
/// this: in a file a number is not a domain (fuzz crash 11).
pub fn resolve_typed(path: &str, value: &str) -> String {
    match find(path) {
        Some(f) if !f.choices.is_empty() && path != "statistics" => {
            choice(value.trim(), f.choices).to_owned()
        }
        _ => value.to_owned(),
    }
}

/// Words that start a clock *instance* (what fixes an epoch), not a domain.
const INSTANCE_WORDS: &[&str] = &[
    "boot", "ctx", "context", "pid", "process", "rank", "run", "session", "node", "gpu", "cuda",
];

/// Checks a value a person typed (at a prompt, or with `--set`) as the field's kind, beyond
/// the syntax [`set`] accepts from a file: a clock domain typed outside the offered choices
/// must be the *kind* of clock (a word, like `ptp`), not the name of a clock instance
/// (`boot-a`, `ctx1`, or an instance this form already names).
///
/// # Errors
/// Why the value is refused.
pub fn check_typed(form: &RawForm, path: &str, value: &str) -> Result<(), String> {
    let value = value.trim();
    if !path.ends_with(".clock.domain") || value.is_empty() {
        return Ok(());
    }
    let value = choice(value, DOMAINS);
    if DOMAINS.contains(&value) {
        return Ok(());
    }
    let instances: Vec<String> = ["start.clock.instance", "stop.clock.instance"]
        .iter()
        .filter_map(|p| get(form, p))
        .collect();
    let lower = value.to_ascii_lowercase();
    let word = value
        .bytes()
        .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_');
    let instance_like = instances.iter().any(|i| i.trim() == value)
        || INSTANCE_WORDS.iter().any(|w| lower.starts_with(w));
    if !word || instance_like {
        return Err(format!(
            "`{value}` is not a clock domain: a domain is the kind of clock (`host`, `device`, or another kind named by a word, like `ptp`); what fixes its epoch (a boot id, a CUDA context, a process) is the clock's instance, asked next"
        ));
    }
    Ok(())
}

/// The reason a clock without an instance is refused.
pub const NO_INSTANCE: &str = "a clock without an instance cannot be compared with any other reading: name what fixes its epoch (a boot id, a CUDA context, a process)";

/// Sets `path` from its text form. Syntax only: cross-field rules are [`super::model::validate`]'s.
///
/// # Errors
/// A message saying why the value is refused (unknown path, not a choice, not a number, an
/// empty answer to a required field, a clock without an instance).
pub fn set(form: &mut RawForm, path: &str, value: &str) -> Result<(), String> {
    let value = value.trim();
    check_answer(path, value)?;
    let owned = |v: &str| {
        if v.is_empty() {
            None
        } else {
            Some(v.to_owned())
        }
    };
    if path.ends_with(".clock.domain") {
        super::model::check_domain(value, path).map_err(|e| e.message)?;
    }
    match path {
        "name" => form.name = owned(value),
        "question" => form.question = QuestionKind::from_code(choice(value, QUESTIONS)),
        "description" => form.description = Some(if value == "-" { "" } else { value }.to_owned()),
        "start.marker" => boundary(&mut form.start).marker = owned(value),
        "start.clock.domain" => clock(&mut form.start).domain = owned(choice(value, DOMAINS)),
        "start.clock.instance" => clock(&mut form.start).instance = owned(value),
        "start.stream" => boundary(&mut form.start).stream = owned(value),
        "stop.marker" => boundary(&mut form.stop).marker = owned(value),
        "stop.clock.domain" => clock(&mut form.stop).domain = owned(choice(value, DOMAINS)),
        "stop.clock.instance" => clock(&mut form.stop).instance = owned(value),
        "stop.stream" => boundary(&mut form.stop).stream = owned(value),
        "work_streams" => {
            let streams = split_list(value);
            if streams.is_empty() {
                return Err("name at least one stream the work runs in".to_owned());
            }
            form.work_streams = Some(streams);
        }
        "dependencies" => form.dependencies = Some(parse_dependencies(value)?),
        "wait.scope" => set_wait_scope(form, value),
        "wait.event" => wait(form).event = owned(value),
        "wait.stream" => wait(form).stream = owned(value),
        "wait.device" => wait(form).device = owned(value),
        "order" => {
            let steps = split_list(value);
            if steps.is_empty() {
                return Err("list the steps in order, with `start` and `stop` among them".into());
            }
            form.order = Some(steps);
        }
        "included" => form.included = Some(split_list(value)),
        "excluded" => form.excluded = Some(split_list(value)),
        "warmup_runs" => form.warmup_runs = Some(parse_count(value)?),
        "samples" => {
            let n = parse_count(value)?;
            if n == 0 {
                return Err("at least one measured sample is needed".to_owned());
            }
            form.samples = Some(n);
        }
        "statistics" => form.statistics = Some(parse_statistics(value)?),
        "steady_state" => form.steady_state = Some(parse_bool(choice(value, YES_NO))?),
        "keep_all_samples" => form.keep_all_samples = Some(parse_bool(choice(value, YES_NO))?),
        "keep_failures" => form.keep_failures = Some(parse_bool(choice(value, YES_NO))?),
        "binding" => form.binding = Some(parse_binding(value)?),
        "binding.capture" => binding(form).capture = owned(value),
        "binding.question" => binding(form).question = owned(value),
        "binding.timer" => binding(form).timer = owned(value),
        "binding.start_event" => binding(form).start_event = owned(value),
        "binding.end_event" => binding(form).end_event = owned(value),
        other => {
            return Err(format!(
                "`{other}` is not a form field (fields: {})",
                settable_paths().join(", ")
            ))
        }
    }
    Ok(())
}

/// What [`set`] refuses from the field's spec alone: an empty answer to a required field, a
/// value that is not one of a closed field's choices.
fn check_answer(path: &str, value: &str) -> Result<(), String> {
    if let Some(f) = find(path) {
        if value.is_empty() && !f.optional {
            return Err(if path.ends_with(".instance") {
                format!("refused: {NO_INSTANCE}")
            } else {
                "an answer is needed".to_owned()
            });
        }
        if !f.choices.is_empty() && !f.open && !path.ends_with("statistics") {
            let v = choice(value, f.choices);
            if !f.choices.contains(&v) {
                return Err(format!("`{value}` is not one of: {}", f.choices.join(", ")));
            }
        }
    }
    Ok(())
}

/// The boundary, made empty if absent.
fn boundary(b: &mut Option<RawBoundary>) -> &mut RawBoundary {
    b.get_or_insert_with(RawBoundary::default)
}

/// The boundary's clock, made empty if absent.
fn clock(b: &mut Option<RawBoundary>) -> &mut RawClock {
    boundary(b).clock.get_or_insert_with(RawClock::default)
}

/// The form's wait, made empty if absent.
fn wait(form: &mut RawForm) -> &mut RawWait {
    form.wait.get_or_insert_with(RawWait::default)
}

/// The form's binding, made empty if absent.
fn binding(form: &mut RawForm) -> &mut RawBinding {
    form.binding.get_or_insert_with(RawBinding::default)
}

/// `dependencies` from its text form, `A waits-on B, ...`.
fn parse_dependencies(value: &str) -> Result<Vec<RawDependency>, String> {
    split_list(value)
        .iter()
        .map(|d| parse_dependency(d))
        .collect::<Result<_, _>>()
}

/// Sets `wait.scope` and clears what the new scope does not use, so the form stays
/// well-formed.
fn set_wait_scope(form: &mut RawForm, value: &str) {
    let scope = WaitScope::from_code(choice(value, SCOPES));
    let w = wait(form);
    w.scope = scope;
    if scope != Some(WaitScope::Event) {
        w.event = None;
    }
    if !matches!(scope, Some(WaitScope::Event | WaitScope::Stream)) {
        w.stream = None;
    }
    if scope != Some(WaitScope::Device) {
        w.device = None;
    }
}

/// `statistics` from its text form: each a known statistic, repeats dropped, at least one.
fn parse_statistics(value: &str) -> Result<Vec<Statistic>, String> {
    let mut stats = Vec::new();
    for item in split_list(value) {
        let item = choice(&item, STATS).to_owned();
        let s = Statistic::from_code(&item).ok_or_else(|| {
            format!(
                "`{item}` is not a statistic (choose from: {})",
                STATS.join(", ")
            )
        })?;
        if !stats.contains(&s) {
            stats.push(s);
        }
    }
    if stats.is_empty() {
        return Err("choose at least one statistic".to_owned());
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_a_one_line_explanation() {
        for f in FIELDS {
            assert!(!f.help.is_empty() && !f.help.contains('\n'), "{}", f.path);
        }
        for (p, h) in OTHER_HELP {
            assert!(!h.is_empty() && !h.contains('\n'), "{p}");
        }
    }

    #[test]
    fn an_empty_binding_value_names_nothing() {
        // `question=` typed in `form fill`: no id, so the JSON and the CSV form agree (the
        // form_stdin fuzz target found `{"question": ""}` reading back through CSV as null).
        let mut form = RawForm::empty();
        set(&mut form, "binding", "question=").unwrap();
        assert_eq!(form.binding.as_ref().and_then(|b| b.question.clone()), None);
        set(&mut form, "binding", "question=q, timer=").unwrap();
        let b = form.binding.clone().unwrap();
        assert_eq!((b.question.as_deref(), b.timer), (Some("q"), None));
    }

    #[test]
    fn set_then_get_round_trips() {
        let mut form = RawForm::empty();
        for (path, value) in [
            ("question", "host-completion"),
            ("start.clock.domain", "host"),
            ("start.clock.instance", "boot-a"),
            ("work_streams", "A, B"),
            ("dependencies", "A waits-on B"),
            ("wait.scope", "event"),
            ("order", "start, measured-work, wait, stop"),
            ("statistics", "median; p90; max"),
            ("steady_state", "no"),
            ("binding", "question=host-completion"),
        ] {
            set(&mut form, path, value).unwrap();
        }
        assert_eq!(get(&form, "work_streams").unwrap(), "A, B");
        assert_eq!(get(&form, "dependencies").unwrap(), "A waits-on B");
        assert_eq!(get(&form, "statistics").unwrap(), "median, p90, max");
        assert_eq!(get(&form, "binding").unwrap(), "question=host-completion");
        assert_eq!(get(&form, "steady_state").unwrap(), "no");
    }

    #[test]
    fn a_clock_without_an_instance_is_refused_with_a_reason() {
        let mut form = RawForm::empty();
        let err = set(&mut form, "start.clock.instance", "  ").unwrap_err();
        assert!(err.contains("cannot be compared"), "{err}");
    }

    #[test]
    fn choices_accept_their_number() {
        let mut form = RawForm::empty();
        set(&mut form, "question", "3").unwrap();
        assert_eq!(form.question, Some(QuestionKind::HostCompletion));
        assert!(set(&mut form, "question", "7").is_err());
        assert!(set(&mut form, "wait.scope", "sometimes").is_err());
        // review ux N7: the numbers offered for a clock domain were refused
        set(
            &mut form,
            "start.clock.domain",
            &resolve_typed("start.clock.domain", "1"),
        )
        .unwrap();
        set(
            &mut form,
            "stop.clock.domain",
            &resolve_typed("stop.clock.domain", " 2"),
        )
        .unwrap();
        assert_eq!(resolve_typed("start.marker", "1"), "1");
        assert_eq!(get(&form, "start.clock.domain").as_deref(), Some("host"));
        assert_eq!(get(&form, "stop.clock.domain").as_deref(), Some("device"));
        assert!(set(
            &mut form,
            "stop.clock.domain",
            &resolve_typed("stop.clock.domain", "3")
        )
        .is_err());
        // in a file, a number is not a domain
        assert!(set(&mut form, "stop.clock.domain", "2").is_err());
    }

    #[test]
    fn a_typed_domain_must_be_a_kind_of_clock_not_an_instance() {
        let mut form = RawForm::empty();
        set(&mut form, "start.clock.instance", "lab-machine").unwrap();
        for ok in ["host", "device", "1", "2", "ptp", "tsc"] {
            assert_eq!(check_typed(&form, "stop.clock.domain", ok), Ok(()), "{ok}");
        }
        for refused in [
            "boot-a",
            "ctx1",
            "gpu0",
            "lab-machine",
            "cuda-context",
            "a b",
        ] {
            let why = check_typed(&form, "start.clock.domain", refused).unwrap_err();
            assert!(why.contains("is not a clock domain"), "{refused}: {why}");
        }
        // other fields are not touched
        assert_eq!(check_typed(&form, "start.marker", "boot-a"), Ok(()));
    }
}
