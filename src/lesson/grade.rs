//! Grading: every expected answer recomputed from the student's own case by the engine
//! ([`crate::engine::evaluate`], what `worksheet eval` prints) and by [`crate::stats`]
//! (what the labs print), the student's answers read and compared, and feedback that quotes
//! the evidence.
//!
//! A tolerance applies only where the question states one. A run that failed a digest, whose
//! output was wrong, or that is noisier than the lesson allows is not graded at all: the
//! student is asked to re-run ([`rerun_reasons`]).

use std::fmt;

use crate::case::Case;
use crate::engine::{evaluate, Answer, Outcome, Report};
use crate::error::InputError;
use crate::stats::{SampleSet, Summary};
use crate::units::{parse_value, Nanos};
use crate::verdict::{Reason, Verdict};

use super::model::{
    predict_key, AnswerSource, IntervalField, Lesson, Misconception, Part, Question, Statistic,
};

/// An expected answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// A verdict: known, with its value.
    Known(Nanos),
    /// A verdict, or an interval result across clocks: unknown, with its reason.
    Unknown(Reason),
    /// A duration (an interval result or a statistic).
    Duration(Nanos),
    /// A count.
    Count(u64),
}

impl fmt::Display for Expected {
    /// `known 40 us`, `unknown (no-wait)`, `40 us`, `2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Known(v) => write!(f, "known {v}"),
            Expected::Unknown(r) => write!(f, "unknown ({r})"),
            Expected::Duration(v) => write!(f, "{v}"),
            Expected::Count(n) => write!(f, "{n}"),
        }
    }
}

/// A misconception a key item recognizes, with the answer it leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MisconceptionKey {
    /// Which misconception.
    pub misconception: Misconception,
    /// The answer the wrong reasoning gives in this data; `None`: any number (the right
    /// answer is an unknown).
    pub leads_to: Option<Expected>,
}

/// One line of the answer key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyItem {
    /// The sheet key: `predict.<question>` or `<question>`.
    pub id: String,
    /// The lesson question it belongs to.
    pub question: String,
    /// Predict or measure.
    pub part: Part,
    /// Misconceptions a wrong answer may show.
    pub misconceptions: Vec<MisconceptionKey>,
    /// The answer the data implies.
    pub expected: Expected,
    /// Accepted distance (zero: exact).
    pub tolerance: Nanos,
    /// Where the answer comes from, with the engine's own notes.
    pub evidence: String,
}

fn duration(ns: i128) -> Expected {
    match i64::try_from(ns) {
        Ok(v) => Expected::Duration(Nanos::new(v)),
        Err(_) => Expected::Unknown(Reason::Overflow),
    }
}

fn missing(path: String, what: String) -> InputError {
    InputError::new(path, "unknown-reference", what)
}

/// The expected answer of every sheet line, from `case` (the lesson folder's own data):
/// every prediction first (part 1), then every measurement (part 2), each in question order.
/// A prediction expects the same answer as its question: the setup determines it.
///
/// # Errors
/// An [`InputError`] at `questions[i].answer` (or `.misconceptions[j].answer`) when a
/// question names a case question or series that the case does not have, or one of the
/// wrong kind.
pub fn answer_key(lesson: &Lesson, case: &Case) -> Result<Vec<KeyItem>, InputError> {
    let report = evaluate(case);
    let measured: Vec<KeyItem> = lesson
        .questions
        .iter()
        .enumerate()
        .map(|(i, q)| key_item(i, q, case, &report))
        .collect::<Result<_, _>>()?;
    let predicted = lesson
        .questions
        .iter()
        .zip(&measured)
        .filter(|(q, _)| q.raw.predict.is_some())
        .map(|(q, k)| KeyItem {
            id: predict_key(&q.raw.id),
            part: Part::Predict,
            ..k.clone()
        });
    Ok(predicted.chain(measured.iter().cloned()).collect())
}

fn expected_of(
    at: &str,
    source: &AnswerSource,
    case: &Case,
    report: &Report,
) -> Result<(Expected, String), InputError> {
    match source {
        AnswerSource::Verdict { question } => verdict_key(at, report, question),
        AnswerSource::Intervals { question, field } => intervals_key(at, report, question, *field),
        AnswerSource::Statistic {
            series,
            statistic,
            with_warmup,
        } => statistic_key(at, case, series, *statistic, *with_warmup),
    }
}

fn key_item(i: usize, q: &Question, case: &Case, report: &Report) -> Result<KeyItem, InputError> {
    let at = format!("questions[{i}].answer");
    let (expected, evidence) = expected_of(&at, &q.raw.answer, case, report)?;
    let misconceptions = q
        .raw
        .misconceptions
        .iter()
        .enumerate()
        .map(|(j, m)| {
            let leads_to = match &m.answer {
                None => None,
                Some(source) => {
                    let at = format!("questions[{i}].misconceptions[{j}].answer");
                    Some(expected_of(&at, source, case, report)?.0)
                }
            };
            Ok(MisconceptionKey {
                misconception: m.misconception,
                leads_to,
            })
        })
        .collect::<Result<_, InputError>>()?;
    Ok(KeyItem {
        id: q.raw.id.clone(),
        question: q.raw.id.clone(),
        part: Part::Measure,
        misconceptions,
        expected,
        tolerance: q.tolerance,
        evidence,
    })
}

/// The engine's answer to case question `id`, or an error at `{at}.question`.
fn find<'r>(at: &str, report: &'r Report, id: &str) -> Result<&'r Answer, InputError> {
    report.answer(id).ok_or_else(|| {
        missing(
            format!("{at}.question"),
            format!("the case has no question `{id}`"),
        )
    })
}

fn verdict_key(
    at: &str,
    report: &Report,
    question: &str,
) -> Result<(Expected, String), InputError> {
    let a = find(at, report, question)?;
    let v = a.outcome.verdict().ok_or_else(|| {
        InputError::new(
            format!("{at}.question"),
            "wrong-kind",
            format!("question `{question}` is an intervals question: use \"from\": \"intervals\""),
        )
    })?;
    let why = match v {
        Verdict::Known { notes, .. } | Verdict::Bounded { notes, .. } => notes.join("; "),
        Verdict::Unknown { reason, detail } if detail.is_empty() => reason.explanation().to_owned(),
        Verdict::Unknown { detail, .. } => detail.clone(),
    };
    let expected = match v {
        Verdict::Known { value, .. } => Expected::Known(*value),
        Verdict::Unknown { reason, .. } => Expected::Unknown(*reason),
        Verdict::Bounded { .. } => {
            return Err(InputError::new(
                format!("{at}.question"),
                "wrong-kind",
                format!("question `{question}` is answered {v} (across related clocks): a lesson key is a known value or an unknown"),
            ))
        }
    };
    let evidence = if why.is_empty() {
        format!("the engine answers `{question}` ({}): {v}", a.kind)
    } else {
        format!(
            "the engine answers `{question}` ({}): {v}, because {why}",
            a.kind
        )
    };
    Ok((expected, evidence))
}

fn intervals_key(
    at: &str,
    report: &Report,
    question: &str,
    field: IntervalField,
) -> Result<(Expected, String), InputError> {
    let a = find(at, report, question)?;
    let Outcome::Intervals(set) = &a.outcome else {
        return Err(InputError::new(
            format!("{at}.question"),
            "wrong-kind",
            format!(
                "question `{question}` is a {} question: use \"from\": \"verdict\"",
                a.kind
            ),
        ));
    };
    // A set across clocks has no single number: the answer is its reason.
    let expected = match (set.combined_unknown, set.single()) {
        (None, Some(s)) => match field {
            IntervalField::Count => Expected::Count(s.count as u64),
            IntervalField::Sum => duration(s.sum_ns),
            IntervalField::Union => duration(s.union_ns),
            IntervalField::Span => s
                .span_ns()
                .map_or(Expected::Unknown(Reason::EmptySet), duration),
            IntervalField::Overlap => duration(s.overlap_ns()),
            IntervalField::Gaps => Expected::Count(s.gaps.len() as u64),
            IntervalField::GapTotal => duration(s.gap_total_ns()),
            IntervalField::MaxDepth => Expected::Count(u64::from(s.max_depth)),
        },
        (reason, _) => Expected::Unknown(reason.unwrap_or(Reason::CrossDomain)),
    };
    let evidence = format!(
        "the engine's interval algebra of `{question}`: {}; {} = {expected}",
        a.headline(),
        field.code()
    );
    Ok((expected, evidence))
}

fn statistic_key(
    at: &str,
    case: &Case,
    series: &str,
    statistic: Statistic,
    with_warmup: bool,
) -> Result<(Expected, String), InputError> {
    let s = case.series.iter().find(|s| s.id == series).ok_or_else(|| {
        missing(
            format!("{at}.series"),
            format!("the case has no series `{series}`"),
        )
    })?;
    // Only a misconception's answer counts the warm-ups as measured runs.
    let all: Vec<Nanos> = s.warmup.iter().chain(&s.measured).copied().collect();
    let set = if with_warmup {
        SampleSet::from_runs(&[], &all)
    } else {
        SampleSet::from_runs(&s.warmup, &s.measured)
    }
    .map_err(|e| InputError::new(format!("{at}.series"), "bad-value", e.to_string()))?;
    let summary = Summary::of(&set).ok();
    let value = |f: fn(&Summary) -> Nanos| match &summary {
        Some(sum) => Expected::Duration(f(sum)),
        None => Expected::Unknown(Reason::EmptySet),
    };
    let expected = match statistic {
        Statistic::Median => value(Summary::median),
        Statistic::P90 => value(Summary::p90),
        Statistic::Max => value(Summary::max),
        Statistic::Min => value(Summary::min),
        Statistic::Mad => value(Summary::mad),
        Statistic::Count => Expected::Count(s.measured.len() as u64),
        Statistic::Warmups => Expected::Count(s.warmup.len() as u64),
        Statistic::Failures => Expected::Count(s.failed.len() as u64),
    };
    let counts = format!(
        "series `{series}` in case.json has {} measured run(s), {} warm-up(s) and {} failed run(s)",
        s.measured.len(),
        s.warmup.len(),
        s.failed.len(),
    );
    let evidence = if statistic.is_duration() {
        format!(
            "{counts}; the {} (nearest rank, over the measured runs only) is {expected}",
            statistic.name()
        )
    } else {
        counts
    };
    Ok((expected, evidence))
}

/// Why the lesson folder's data must not be graded (empty: grade it).
///
/// A series with failed runs (a wrong digest, readings out of order), a lab output that
/// failed its verification (`provenance.verification.*.mismatches`), or a series noisier
/// than the lesson's `rerun` policy allows.
///
/// # Errors
/// An [`InputError`] at `rerun.series` when the policy names a series the case lacks.
pub fn rerun_reasons(lesson: &Lesson, case: &Case) -> Result<Vec<String>, InputError> {
    let mut reasons = Vec::new();
    let failed: Vec<String> = case
        .series
        .iter()
        .filter(|s| !s.failed.is_empty())
        .map(|s| {
            format!(
                "`{}` ({} of {})",
                s.id,
                s.failed.len(),
                s.failed.len() + s.warmup.len() + s.measured.len()
            )
        })
        .collect();
    if !failed.is_empty() {
        reasons.push(format!(
            "failed runs (a wrong digest or readings out of order) in series {}: the run is not good data",
            failed.join(", ")
        ));
    }
    if let Some(v) = case
        .provenance
        .as_ref()
        .and_then(|p| p.get("verification"))
        .and_then(|v| v.as_object())
    {
        for (pipeline, check) in v {
            let bad = check
                .get("mismatches")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0);
            if bad > 0 {
                reasons.push(format!(
                    "the {pipeline} pipeline's output failed its verification ({bad} wrong word(s)): the run is not good data"
                ));
            }
        }
    }
    if let Some(policy) = &lesson.raw.rerun {
        let s = case
            .series
            .iter()
            .find(|s| s.id == policy.series)
            .ok_or_else(|| {
                missing(
                    "rerun.series".into(),
                    format!("the case has no series `{}`", policy.series),
                )
            })?;
        let summary = SampleSet::from_runs(&s.warmup, &s.measured)
            .ok()
            .and_then(|set| Summary::of(&set).ok());
        match summary {
            None => reasons.push(format!("series `{}` has no measured run", s.id)),
            Some(sum) => {
                let mad = i128::from(sum.mad().as_i64()) * 100;
                let limit = i128::from(policy.max_mad_percent) * i128::from(sum.median().as_i64());
                if mad > limit {
                    reasons.push(format!(
                        "series `{}` is too noisy: its MAD {} is more than {} % of its median {} (close other programs, then re-run)",
                        s.id,
                        sum.mad(),
                        policy.max_mad_percent,
                        sum.median()
                    ));
                }
            }
        }
    }
    Ok(reasons)
}

/// A student's answer as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Given {
    /// Nothing written.
    Blank,
    /// `known 40 us`.
    Known(Nanos),
    /// `unknown (no-wait)`, `unknown no-wait`, or just `no-wait`; `None` for a bare
    /// `unknown`.
    Unknown(Option<Reason>),
    /// `40 us`, `40us`, `40 µs`.
    Duration(Nanos),
    /// `2`.
    Count(u64),
    /// None of the above.
    Unreadable,
}

/// Reads one answer.
pub fn read_given(text: &str) -> Given {
    let lower = text.trim().to_lowercase();
    let strip = |s: &str| {
        s.trim()
            .trim_start_matches(['(', ':', ','])
            .trim_end_matches(')')
            .trim()
            .to_owned()
    };
    if lower.is_empty() {
        return Given::Blank;
    }
    if let Some(rest) = lower.strip_prefix("unknown") {
        let rest = strip(rest);
        return if rest.is_empty() {
            Given::Unknown(None)
        } else {
            Reason::from_code(&rest).map_or(Given::Unreadable, |r| Given::Unknown(Some(r)))
        };
    }
    if let Some(rest) = lower.strip_prefix("known") {
        return parse_value(&strip(rest)).map_or(Given::Unreadable, Given::Known);
    }
    if let Some(r) = Reason::from_code(&strip(&lower)) {
        return Given::Unknown(Some(r));
    }
    if let Ok(n) = lower.parse::<u64>() {
        return Given::Count(n);
    }
    parse_value(&lower).map_or(Given::Unreadable, Given::Duration)
}

/// Whether an answer is right, and if not, a hint about its form.
fn judge(given: &Given, key: &KeyItem) -> Result<(), Option<&'static str>> {
    let near = |v: Nanos, want: Nanos| {
        (i128::from(v.as_i64()) - i128::from(want.as_i64())).abs()
            <= i128::from(key.tolerance.as_i64())
    };
    match (&key.expected, given) {
        (Expected::Known(want) | Expected::Duration(want), Given::Known(v) | Given::Duration(v)) => {
            if near(*v, *want) {
                Ok(())
            } else {
                Err(None)
            }
        }
        (Expected::Unknown(want), Given::Unknown(Some(r))) if r == want => Ok(()),
        (Expected::Unknown(_), Given::Unknown(None)) => {
            Err(Some("an unknown answer names its reason code, e.g. `unknown (no-wait)`"))
        }
        (Expected::Count(want), Given::Count(n)) if n == want => Ok(()),
        (Expected::Known(_) | Expected::Duration(_), Given::Count(_)) => {
            Err(Some("a duration needs its unit, e.g. `40 us`"))
        }
        (_, Given::Unreadable) => Err(Some(
            "the answer is read as `known <duration>`, `unknown (<reason code>)`, a duration with its unit, or a count",
        )),
        _ => Err(None),
    }
}

/// How one answer was marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Agrees with the data.
    Right,
    /// Disagrees.
    Wrong,
    /// Left blank.
    Missing,
}

impl Mark {
    /// `right`, `wrong`, `missing`.
    pub fn code(self) -> &'static str {
        match self {
            Mark::Right => "right",
            Mark::Wrong => "wrong",
            Mark::Missing => "missing",
        }
    }
}

/// One graded answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graded {
    /// The sheet key (`predict.<question>` or `<question>`).
    pub id: String,
    /// The lesson question.
    pub question: String,
    /// Predict or measure.
    pub part: Part,
    /// The answer as written (empty when blank).
    pub given: String,
    /// The expected answer.
    pub expected: Expected,
    /// The mark.
    pub mark: Mark,
    /// The misconception a wrong answer shows, when it equals what that reasoning gives.
    pub misconception: Option<Misconception>,
    /// Feedback for the student (empty when right).
    pub feedback: String,
}

/// The misconception a wrong `given` shows: the first whose answer it equals (within the
/// item's tolerance), or, for one without an answer, any number where an unknown is right.
fn misconception_of(given: &Given, k: &KeyItem) -> Option<Misconception> {
    k.misconceptions
        .iter()
        .find(|m| match &m.leads_to {
            Some(value) => {
                let as_key = KeyItem {
                    expected: value.clone(),
                    ..k.clone()
                };
                judge(given, &as_key).is_ok()
            }
            None => {
                matches!(k.expected, Expected::Unknown(_))
                    && matches!(given, Given::Known(_) | Given::Duration(_))
            }
        })
        .map(|m| m.misconception)
}

/// Grades `answers` (sheet key → text) against `key`, one result per key item.
pub fn grade(lesson: &Lesson, key: &[KeyItem], answers: &[(String, String)]) -> Vec<Graded> {
    key.iter()
        .filter_map(|k| {
            let q = lesson.questions.iter().find(|q| q.raw.id == k.question)?;
            Some(grade_one(q, k, answers))
        })
        .collect()
}

fn grade_one(q: &Question, k: &KeyItem, answers: &[(String, String)]) -> Graded {
    let text = answers
        .iter()
        .find(|(id, _)| id == &k.id)
        .map(|(_, a)| a.trim().to_owned())
        .unwrap_or_default();
    let given = read_given(&text);
    let tol = if k.tolerance > Nanos::ZERO {
        format!(" (within ±{} counts as right)", k.tolerance)
    } else {
        String::new()
    };
    let see = q
        .raw
        .see
        .as_ref()
        .map(|s| format!(" See {s}."))
        .unwrap_or_default();
    let (ask, verb) = match k.part {
        Part::Predict => (q.raw.predict.as_deref().unwrap_or(&q.raw.ask), "predicted"),
        Part::Measure => (q.raw.ask.as_str(), "answered"),
    };
    let mut misconception = None;
    let (mark, feedback) = match (&given, judge(&given, k)) {
        (Given::Blank, _) => (
            Mark::Missing,
            format!("no answer; the question asks: {ask}"),
        ),
        (_, Ok(())) => (Mark::Right, String::new()),
        (_, Err(hint)) => {
            misconception = misconception_of(&given, k);
            let named = misconception
                .map(|m| {
                    format!(
                        " That is the misconception *{}* (`{}`): {}.",
                        m.name(),
                        m.code(),
                        m.explanation()
                    )
                })
                .unwrap_or_default();
            (
                Mark::Wrong,
                format!(
                    "you {verb} `{text}`, but {}, so the answer is {}{tol}{}.{named} Evidence: {}.{see}",
                    q.raw.why.trim_end_matches('.'),
                    k.expected,
                    hint.map(|h| format!(" ({h})")).unwrap_or_default(),
                    k.evidence
                ),
            )
        }
    };
    Graded {
        id: k.id.clone(),
        question: k.question.clone(),
        part: k.part,
        given: text,
        expected: k.expected.clone(),
        mark,
        misconception,
        feedback,
    }
}

/// A normalized answer for counting wrong answers across a class: lower case, single spaces.
pub fn normalized(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The exact text of a statistic of a case series (for the class table), `-` when absent.
pub fn series_statistic(case: &Case, series: &str, statistic: Statistic) -> Option<Nanos> {
    let s = case.series.iter().find(|s| s.id == series)?;
    let set = SampleSet::from_runs(&s.warmup, &s.measured).ok()?;
    let sum = Summary::of(&set).ok()?;
    Some(match statistic {
        Statistic::P90 => sum.p90(),
        Statistic::Max => sum.max(),
        Statistic::Min => sum.min(),
        Statistic::Mad => sum.mad(),
        _ => sum.median(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_in_the_forms_people_write() {
        assert_eq!(read_given(""), Given::Blank);
        assert_eq!(
            read_given("  known 140 us "),
            Given::Known(Nanos::new(140_000))
        );
        assert_eq!(read_given("140µs"), Given::Duration(Nanos::new(140_000)));
        assert_eq!(
            read_given("Unknown (no-wait)"),
            Given::Unknown(Some(Reason::NoWait))
        );
        assert_eq!(
            read_given("unknown no-wait"),
            Given::Unknown(Some(Reason::NoWait))
        );
        assert_eq!(
            read_given("single-warmup"),
            Given::Unknown(Some(Reason::SingleWarmup))
        );
        assert_eq!(read_given("unknown"), Given::Unknown(None));
        assert_eq!(read_given("2"), Given::Count(2));
        assert_eq!(read_given("about 140"), Given::Unreadable);
        assert_eq!(read_given("unknown (because)"), Given::Unreadable);
    }

    #[test]
    fn a_tolerance_is_inclusive_and_only_where_stated() {
        let key = |tol: i64| KeyItem {
            id: "q".into(),
            question: "q".into(),
            part: Part::Measure,
            misconceptions: Vec::new(),
            expected: Expected::Duration(Nanos::new(50_060_400)),
            tolerance: Nanos::new(tol),
            evidence: String::new(),
        };
        let given = Given::Duration(Nanos::new(50_061_000));
        assert_eq!(judge(&given, &key(0)), Err(None));
        assert_eq!(judge(&given, &key(600)), Ok(()));
        assert_eq!(judge(&given, &key(599)), Err(None));
        assert!(judge(&Given::Count(50), &key(1_000_000))
            .unwrap_err()
            .is_some());
    }
}
