//! The form's data: the raw serde mirror of the file, and the validated [`Form`].
//!
//! Every field is optional in the mirror, because a form is filled in over time: `null`
//! (or an absent key) means *not answered yet*. Validation refuses what is malformed (an
//! unknown question, a step listed twice, a binding that names two targets) and leaves
//! what is merely contradictory to [`super::check`](mod@super::check).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::error::FormError;

/// The only `format` value a form file may carry.
pub const FORMAT_NAME: &str = "worksheet-form";

/// The form-format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Which stopwatch a form declares (SPEC §1, §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuestionKind {
    /// How long submitting took (host clock; no completion claim).
    Submission,
    /// How long the device took between two positions of a stream (event pair).
    DeviceInterval,
    /// How long the caller waited for the work (host clock, stop after a covering wait).
    HostCompletion,
    /// How long a whole request took, arrival to response (host clock, a completion claim).
    EndToEnd,
}

impl QuestionKind {
    /// Every kind, in the order the blank form offers them.
    pub const ALL: [QuestionKind; 4] = [
        QuestionKind::Submission,
        QuestionKind::DeviceInterval,
        QuestionKind::HostCompletion,
        QuestionKind::EndToEnd,
    ];

    /// The kebab-case name, as written in the file.
    pub const fn code(self) -> &'static str {
        match self {
            QuestionKind::Submission => "submission",
            QuestionKind::DeviceInterval => "device-interval",
            QuestionKind::HostCompletion => "host-completion",
            QuestionKind::EndToEnd => "end-to-end",
        }
    }

    /// What the question asks, in one line.
    pub const fn asks(self) -> &'static str {
        match self {
            QuestionKind::Submission => {
                "how long submitting the work took (host clock; makes no completion claim)"
            }
            QuestionKind::DeviceInterval => {
                "how long the device took between two events of one stream (device clock)"
            }
            QuestionKind::HostCompletion => {
                "how long the caller waited for the work (host clock, stopped after a covering wait)"
            }
            QuestionKind::EndToEnd => {
                "how long a whole request took, from arrival to response (host clock, a completion claim)"
            }
        }
    }

    /// Whether the answer claims that the work is complete at the stop.
    pub const fn claims_completion(self) -> bool {
        matches!(self, QuestionKind::HostCompletion | QuestionKind::EndToEnd)
    }

    /// The kind with this name.
    pub fn from_code(code: &str) -> Option<QuestionKind> {
        QuestionKind::ALL.into_iter().find(|q| q.code() == code)
    }
}

/// What a wait blocks on (SPEC §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitScope {
    /// No wait.
    None,
    /// One event: covers the work before it in its stream, plus declared dependencies.
    Event,
    /// One stream: covers the work submitted to it, plus declared dependencies.
    Stream,
    /// A whole device: covers the work of every stream.
    Device,
}

impl WaitScope {
    /// Every scope.
    pub const ALL: [WaitScope; 4] = [
        WaitScope::None,
        WaitScope::Event,
        WaitScope::Stream,
        WaitScope::Device,
    ];

    /// The kebab-case name.
    pub const fn code(self) -> &'static str {
        match self {
            WaitScope::None => "none",
            WaitScope::Event => "event",
            WaitScope::Stream => "stream",
            WaitScope::Device => "device",
        }
    }

    /// The scope with this name.
    pub fn from_code(code: &str) -> Option<WaitScope> {
        WaitScope::ALL.into_iter().find(|s| s.code() == code)
    }
}

/// A statistic to report over the measured samples (SPEC §9: nearest-rank quantiles).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Statistic {
    /// Number of measured samples.
    Count,
    /// Smallest sample.
    Min,
    /// Median.
    Median,
    /// 90th percentile.
    P90,
    /// Largest sample.
    Max,
}

impl Statistic {
    /// Every statistic.
    pub const ALL: [Statistic; 5] = [
        Statistic::Count,
        Statistic::Min,
        Statistic::Median,
        Statistic::P90,
        Statistic::Max,
    ];

    /// The name, as written in the file.
    pub const fn code(self) -> &'static str {
        match self {
            Statistic::Count => "count",
            Statistic::Min => "min",
            Statistic::Median => "median",
            Statistic::P90 => "p90",
            Statistic::Max => "max",
        }
    }

    /// The statistic with this name.
    pub fn from_code(code: &str) -> Option<Statistic> {
        Statistic::ALL.into_iter().find(|s| s.code() == code)
    }
}

/// Step names that mark boundaries in `order`, not work.
pub const BOUNDARY_STEPS: [&str; 2] = ["start", "stop"];

/// The step name for the form's wait in `order`.
pub const WAIT_STEP: &str = "wait";

/// The step name for warm-up runs.
pub const WARMUP_STEP: &str = "warm-up";

/// The standard steps a program is made of; `order` may add free-form ones.
pub const STANDARD_STEPS: [&str; 8] = [
    "initialization",
    "allocation",
    "input-copy",
    "warm-up",
    "measured-work",
    "result-copy",
    "validation",
    "cleanup",
];

/// A clock as the form names it: domain plus instance.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawClock {
    /// `host`, `device`, ...
    #[serde(default)]
    pub domain: Option<String>,
    /// What fixes its epoch.
    #[serde(default)]
    pub instance: Option<String>,
}

/// A start or stop boundary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBoundary {
    /// What marks it (the call, the line, the event).
    #[serde(default)]
    pub marker: Option<String>,
    /// The clock it is read on.
    #[serde(default)]
    pub clock: Option<RawClock>,
    /// The stream (device boundaries).
    #[serde(default)]
    pub stream: Option<String>,
}

/// The wait before the stop (completion questions) or before reading the events.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawWait {
    /// What it blocks on.
    #[serde(default)]
    pub scope: Option<WaitScope>,
    /// The event waited on (scope `event`).
    #[serde(default)]
    pub event: Option<String>,
    /// The stream of that event, or the stream waited on (scopes `event`, `stream`).
    #[serde(default)]
    pub stream: Option<String>,
    /// The device waited on (scope `device`).
    #[serde(default)]
    pub device: Option<String>,
}

/// A declared cross-stream dependency: `stream` waits on an event recorded in `waits_on`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawDependency {
    /// The stream that waits.
    pub stream: String,
    /// The stream whose event it waits on.
    pub waits_on: String,
}

/// How the form's boundaries map onto a case or capture file (for `--capture`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBinding {
    /// The capture this form is meant to be checked against (informational path).
    #[serde(default)]
    pub capture: Option<String>,
    /// A question id in the capture.
    #[serde(default)]
    pub question: Option<String>,
    /// A host timer id in the capture (submission, completion, end-to-end).
    #[serde(default)]
    pub timer: Option<String>,
    /// The start event id (device interval).
    #[serde(default)]
    pub start_event: Option<String>,
    /// The end event id (device interval).
    #[serde(default)]
    pub end_event: Option<String>,
}

impl RawBinding {
    /// Whether it names no target.
    pub fn is_empty(&self) -> bool {
        self.question.is_none()
            && self.timer.is_none()
            && self.start_event.is_none()
            && self.end_event.is_none()
    }
}

/// The whole form, as written. `None` means "not answered yet".
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawForm {
    /// Must be `"worksheet-form"`.
    pub format: String,
    /// Format version; 1 is the only one so far.
    pub version: u32,
    /// Form name (defaults to the file stem).
    #[serde(default)]
    pub name: Option<String>,
    /// Which stopwatch.
    #[serde(default)]
    pub question: Option<QuestionKind>,
    /// What is measured, in the filler's words.
    #[serde(default)]
    pub description: Option<String>,
    /// Where the stopwatch starts.
    #[serde(default)]
    pub start: Option<RawBoundary>,
    /// Where it stops.
    #[serde(default)]
    pub stop: Option<RawBoundary>,
    /// The streams the measured work runs in.
    #[serde(default)]
    pub work_streams: Option<Vec<String>>,
    /// The wait and its scope.
    #[serde(default)]
    pub wait: Option<RawWait>,
    /// Declared cross-stream dependencies.
    #[serde(default)]
    pub dependencies: Option<Vec<RawDependency>>,
    /// The program's steps in order, with `start`, `stop` and `wait` placed among them.
    #[serde(default)]
    pub order: Option<Vec<String>>,
    /// Steps the measurement is meant to include.
    #[serde(default)]
    pub included: Option<Vec<String>>,
    /// Steps it is meant to leave out.
    #[serde(default)]
    pub excluded: Option<Vec<String>>,
    /// Warm-up runs before the samples.
    #[serde(default)]
    pub warmup_runs: Option<u32>,
    /// Measured samples.
    #[serde(default)]
    pub samples: Option<u32>,
    /// Statistics to report.
    #[serde(default)]
    pub statistics: Option<Vec<Statistic>>,
    /// The statistics claim steady state.
    #[serde(default)]
    pub steady_state: Option<bool>,
    /// Every raw sample is kept.
    #[serde(default)]
    pub keep_all_samples: Option<bool>,
    /// Failed runs are kept and counted.
    #[serde(default)]
    pub keep_failures: Option<bool>,
    /// Ids in a capture.
    #[serde(default)]
    pub binding: Option<RawBinding>,
}

impl RawForm {
    /// An empty form of the current format and version.
    pub fn empty() -> Self {
        RawForm {
            format: FORMAT_NAME.to_owned(),
            version: FORMAT_VERSION,
            ..RawForm::default()
        }
    }
}

/// A validated form: well-formed, though possibly incomplete or contradictory.
///
/// Invariants (enforced by [`validate`]): the format and version are this build's; steps of
/// `order` are non-empty and distinct; `included` and `excluded` name steps of `order`
/// (when it is answered), never `start` or `stop`; the binding names at most one target
/// that fits the question; `samples` is at least 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    raw: RawForm,
    name: String,
}

impl Form {
    /// The form as written.
    pub fn raw(&self) -> &RawForm {
        &self.raw
    }

    /// Its name (the file stem when it names none).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The question, when answered.
    pub fn question(&self) -> Option<QuestionKind> {
        self.raw.question
    }

    /// Back to the raw form (to edit it).
    pub fn into_raw(self) -> RawForm {
        self.raw
    }
}

type Result<T> = std::result::Result<T, FormError>;

fn bad(field: impl Into<String>, code: &'static str, message: impl Into<String>) -> FormError {
    FormError::new(field, code, message)
}

/// Checks that `name` is a usable step name.
pub(crate) fn check_step_name(step: &str, field: &str) -> Result<()> {
    if step.trim().is_empty() {
        return Err(bad(field, "empty-step", "a step needs a name"));
    }
    if step.contains([',', ';', '\n']) {
        return Err(bad(
            field,
            "bad-value",
            format!("`{step}`: a step name cannot contain `,` or `;` (they separate steps)"),
        ));
    }
    if step.trim() == NONE_MARK {
        return Err(bad(
            field,
            "bad-value",
            "`-` cannot name a step: it stands for an empty list",
        ));
    }
    Ok(())
}

/// What a text form (CSV, `--set`) writes for an empty list or no binding. It can
/// therefore name nothing: a list holding `-` would read back as an empty list.
const NONE_MARK: &str = "-";

/// The form as every reader reads it: text values without surrounding whitespace, and an
/// empty answer as no answer (`description` excepted: empty, or `-`, answers it as empty).
/// The CSV and `--set` readers trim what they read; a JSON form gets the same here, so the
/// readers agree.
fn normalized(raw: RawForm) -> RawForm {
    fn walk(value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    if let Value::String(s) = child {
                        let trimmed = s.trim();
                        let trimmed = if key == "description" && trimmed == "-" {
                            ""
                        } else {
                            trimmed
                        };
                        *child = if trimmed.is_empty() && key != "description" {
                            Value::Null
                        } else {
                            Value::String(trimmed.to_owned())
                        };
                    } else {
                        walk(child);
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    if let Value::String(s) = item {
                        *s = s.trim().to_owned();
                    } else {
                        walk(item);
                    }
                }
            }
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::to_value(&raw) else {
        return raw;
    };
    walk(&mut value);
    serde_json::from_value(value).unwrap_or(raw)
}

/// Refuses list items holding a separator: every reader must read a list alike, and the
/// CSV and `--set` readers split at `,`/`;`.
fn check_list_items(list: &[String], list_name: &str) -> Result<()> {
    for (i, item) in list.iter().enumerate() {
        if item.contains([',', ';']) {
            return Err(bad(
                format!("{list_name}[{i}]"),
                "bad-value",
                format!(
                    "`{item}`: a name in a list cannot contain `,` or `;` (they separate entries)"
                ),
            ));
        }
        if item.trim() == NONE_MARK {
            return Err(bad(
                format!("{list_name}[{i}]"),
                "bad-value",
                "`-` cannot name an entry: it stands for an empty list",
            ));
        }
    }
    Ok(())
}

/// A clock domain is one word (`host`, `device`), whichever reader it came through.
pub(crate) fn check_domain(domain: &str, field: &str) -> Result<()> {
    if domain.contains(char::is_whitespace) {
        return Err(bad(
            field,
            "bad-value",
            format!("`{domain}` is not a clock domain: one word, like `host` or `device`"),
        ));
    }
    // The text readers take a number as a menu choice (`2` is `device`), so a number
    // cannot be a domain's name in any reader (fuzz crash 11).
    if !domain.is_empty() && domain.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(
            field,
            "bad-value",
            format!("`{domain}` is not a clock domain: a name, like `host` or `device`"),
        ));
    }
    Ok(())
}

fn check_steps(list: &[String], list_name: &str, order: Option<&[String]>) -> Result<()> {
    let mut seen = HashSet::new();
    for (i, step) in list.iter().enumerate() {
        let field = format!("{list_name}[{i}]");
        check_step_name(step, &field)?;
        let step = step.trim();
        if list_name != "order" && BOUNDARY_STEPS.contains(&step) {
            return Err(bad(
                field,
                "reserved-step",
                format!("`{step}` is a boundary, not work: it belongs in `order` only"),
            ));
        }
        if !seen.insert(step) {
            return Err(bad(
                field,
                "duplicate-step",
                format!("`{step}` is listed twice in `{list_name}`"),
            ));
        }
        if let Some(order) = order {
            if !order.iter().any(|s| s.trim() == step) {
                return Err(bad(
                    field,
                    "unknown-step",
                    format!(
                        "`{step}` is not a step of `order` ({}): add it there, in its place",
                        order.join(", ")
                    ),
                ));
            }
        }
    }
    check_list_items(list, list_name)
}

fn check_binding(b: &RawBinding, question: Option<QuestionKind>) -> Result<()> {
    let set = |v: &Option<String>| v.is_some();
    if set(&b.question) && (set(&b.timer) || set(&b.start_event) || set(&b.end_event)) {
        return Err(bad(
            "binding.question",
            "bad-binding",
            "a binding names a question id, or a timer, or an event pair: not several",
        ));
    }
    if set(&b.timer) && (set(&b.start_event) || set(&b.end_event)) {
        return Err(bad(
            "binding.timer",
            "bad-binding",
            "a binding names a timer (host boundaries) or an event pair (device interval), not both",
        ));
    }
    if set(&b.start_event) != set(&b.end_event) {
        let missing = if set(&b.start_event) {
            "binding.end_event"
        } else {
            "binding.start_event"
        };
        return Err(bad(
            missing,
            "missing-field",
            "an event binding needs both `start_event` and `end_event`",
        ));
    }
    for (field, value) in [
        ("binding.capture", &b.capture),
        ("binding.question", &b.question),
        ("binding.timer", &b.timer),
        ("binding.start_event", &b.start_event),
        ("binding.end_event", &b.end_event),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(bad(field, "bad-value", "an id cannot be empty"));
        }
    }
    match question {
        Some(QuestionKind::DeviceInterval) if set(&b.timer) => Err(bad(
            "binding.timer",
            "bad-binding",
            "a device interval is read from two events: bind `start_event` and `end_event`, not a host timer",
        )),
        Some(q) if q != QuestionKind::DeviceInterval && set(&b.start_event) => Err(bad(
            "binding.start_event",
            "bad-binding",
            format!("a {} question is read from a host timer: bind `timer`, not events", q.code()),
        )),
        _ => Ok(()),
    }
}

/// Raw mirror → [`Form`]: refuses what is malformed; `default_name` is used when the form
/// names none.
///
/// # Errors
/// [`FormError`] naming the field: `unsupported-format`, `unsupported-version`,
/// `empty-step`, `duplicate-step`, `reserved-step`, `unknown-step`, `bad-value`,
/// `bad-binding`, `missing-field`.
pub fn validate(raw: RawForm, default_name: &str) -> Result<Form> {
    let raw = normalized(raw);
    check_format_and_version(&raw)?;
    check_step_lists(&raw)?;
    if let Some(list) = &raw.work_streams {
        check_work_streams(list)?;
    }
    if let Some(deps) = &raw.dependencies {
        check_dependencies(deps)?;
    }
    if let Some(stats) = &raw.statistics {
        check_statistics(stats)?;
    }
    if raw.samples == Some(0) {
        return Err(bad(
            "samples",
            "bad-value",
            "at least one measured sample is needed",
        ));
    }
    if let Some(w) = &raw.wait {
        check_wait_fields(w)?;
    }
    if let Some(b) = &raw.binding {
        check_binding(b, raw.question)?;
    }
    let name = raw
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| default_name.to_owned());
    Ok(Form { raw, name })
}

/// `unsupported-format` or `unsupported-version` unless the form is this build's.
fn check_format_and_version(raw: &RawForm) -> Result<()> {
    if raw.format != FORMAT_NAME {
        return Err(bad(
            "format",
            "unsupported-format",
            format!("`{}` is not a form: expected \"{FORMAT_NAME}\"", raw.format),
        ));
    }
    if raw.version != FORMAT_VERSION {
        return Err(bad(
            "version",
            "unsupported-version",
            format!(
                "version {} is not supported: this build reads version {FORMAT_VERSION}",
                raw.version
            ),
        ));
    }
    Ok(())
}

/// The step lists (`order`, `included`, `excluded`) and the boundaries' clock domains.
fn check_step_lists(raw: &RawForm) -> Result<()> {
    if let Some(order) = &raw.order {
        // The same rule as the CSV reader and `--set`: an order lists steps (the fuzz target
        // found `"order": []` accepted in JSON while its CSV `order,-` was refused).
        if order.is_empty() {
            return Err(bad(
                "order",
                "bad-value",
                "list the steps in order, with `start` and `stop` among them",
            ));
        }
        check_steps(order, "order", None)?;
    }
    let order = raw.order.as_deref();
    if let Some(list) = &raw.included {
        check_steps(list, "included", order)?;
    }
    if let Some(list) = &raw.excluded {
        check_steps(list, "excluded", order)?;
    }
    for (boundary, name) in [(&raw.start, "start"), (&raw.stop, "stop")] {
        if let Some(domain) = boundary
            .as_ref()
            .and_then(|b| b.clock.as_ref())
            .and_then(|c| c.domain.as_deref())
        {
            check_domain(domain, &format!("{name}.clock.domain"))?;
        }
    }
    Ok(())
}

/// `work_streams`: at least one, each a non-empty id, none twice.
fn check_work_streams(list: &[String]) -> Result<()> {
    // The same rule as the CSV reader and `--set` (fuzz crash 9: `"work_streams": []`
    // was accepted in JSON, and its CSV `work_streams,-` refused).
    if list.is_empty() {
        return Err(bad(
            "work_streams",
            "bad-value",
            "name at least one stream the work runs in",
        ));
    }
    check_list_items(list, "work_streams")?;
    let mut seen = HashSet::new();
    for (i, s) in list.iter().enumerate() {
        if s.trim().is_empty() {
            return Err(bad(
                format!("work_streams[{i}]"),
                "bad-value",
                "a stream id cannot be empty",
            ));
        }
        if !seen.insert(s.as_str()) {
            return Err(bad(
                format!("work_streams[{i}]"),
                "bad-value",
                format!("stream `{s}` is listed twice"),
            ));
        }
    }
    Ok(())
}

/// `dependencies`: each names two different streams, one word each.
fn check_dependencies(deps: &[RawDependency]) -> Result<()> {
    for (i, d) in deps.iter().enumerate() {
        if d.stream.trim().is_empty() || d.waits_on.trim().is_empty() {
            return Err(bad(
                format!("dependencies[{i}]"),
                "bad-value",
                "a dependency names two streams",
            ));
        }
        // As the text form `A waits-on B, ...` reads them: one word each.
        for name in [&d.stream, &d.waits_on] {
            if name.contains(char::is_whitespace)
                || name.contains([',', ';'])
                || name.contains("<-")
            {
                return Err(bad(
                    format!("dependencies[{i}]"),
                    "bad-value",
                    format!("`{name}` cannot name a stream in a dependency: one word, without `,`, `;` or `<-`"),
                ));
            }
        }
        if d.stream == d.waits_on {
            return Err(bad(
                format!("dependencies[{i}]"),
                "bad-value",
                format!(
                    "stream `{}` waiting on itself is stream order, not a dependency",
                    d.stream
                ),
            ));
        }
    }
    Ok(())
}

/// `statistics`: at least one, none twice.
fn check_statistics(stats: &[Statistic]) -> Result<()> {
    // As the CSV reader and `--set` (fuzz crash 10: `"statistics": []` was accepted in
    // JSON, and its CSV `statistics,-` refused).
    if stats.is_empty() {
        return Err(bad(
            "statistics",
            "bad-value",
            "choose at least one statistic",
        ));
    }
    let mut seen = HashSet::new();
    for (i, s) in stats.iter().enumerate() {
        if !seen.insert(*s) {
            return Err(bad(
                format!("statistics[{i}]"),
                "bad-value",
                format!("`{}` is listed twice", s.code()),
            ));
        }
    }
    Ok(())
}

/// `wait`: no event, stream or device field that its scope does not use.
fn check_wait_fields(w: &RawWait) -> Result<()> {
    let misplaced = match w.scope {
        Some(WaitScope::None) => [
            ("wait.event", w.event.is_some()),
            ("wait.stream", w.stream.is_some()),
            ("wait.device", w.device.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given),
        Some(WaitScope::Stream) => [("wait.event", w.event.is_some())]
            .into_iter()
            .find(|(_, given)| *given),
        Some(WaitScope::Device) => [
            ("wait.event", w.event.is_some()),
            ("wait.stream", w.stream.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given),
        _ => None,
    };
    if let Some((field, _)) = misplaced {
        return Err(bad(
            field,
            "bad-value",
            format!(
                "`{field}` does not go with wait scope `{}`",
                w.scope.map(WaitScope::code).unwrap_or("none")
            ),
        ));
    }
    Ok(())
}
