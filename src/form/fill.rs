//! `form fill`: walk a person through the unanswered fields, one prompt each.
//!
//! Each prompt explains the field, offers its choices and a default, and validates the
//! answer at once: a refused answer (a clock without an instance, a step not in `order`)
//! is explained and asked again. After every accepted answer the form is saved, so an
//! interrupted session (end of input, Ctrl-C, a closed terminal) loses nothing; the next
//! `form fill` resumes at the first unanswered field. Contradictions an answer creates
//! are shown right away, but kept: the person may fix another field instead.
//!
//! The walk reads any [`BufRead`] and writes any [`Write`], so tests drive it with bytes
//! and the binary with the terminal or a pipe.

use std::collections::HashSet;
use std::io::{self, BufRead, Write};

use super::check::{check, contradictions, Finding};
use super::fields::{self, Field, FIELDS};
use super::model::{validate, QuestionKind, RawForm};

/// How a fill session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillEnd {
    /// Every field the question needs is answered.
    Complete,
    /// The input ended first; what was answered is saved.
    Interrupted,
}

/// The result of a fill session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FillOutcome {
    /// The form as saved last.
    pub form: RawForm,
    /// How the session ended.
    pub end: FillEnd,
    /// Answers accepted in this session.
    pub accepted: usize,
}

/// The fields `form` needs, in asking order, and how many of them are answered.
pub fn progress(form: &RawForm) -> (usize, usize) {
    let needed: Vec<&Field> = FIELDS
        .iter()
        .filter(|f| f.applies.needed_by(form))
        .collect();
    let answered = needed
        .iter()
        .filter(|f| fields::is_answered(form, f.path))
        .count();
    (answered, needed.len())
}

/// The first field `form` needs and has no answer for.
pub fn next_field(form: &RawForm) -> Option<&'static Field> {
    FIELDS
        .iter()
        .find(|f| f.applies.needed_by(form) && !fields::is_answered(form, f.path))
}

/// The answer an empty line stands for, when there is one.
fn default_for(form: &RawForm, path: &str) -> Option<String> {
    let get = |p: &str| fields::get(form, p).filter(|v| !v.trim().is_empty());
    match path {
        "stop.clock.domain" => get("start.clock.domain"),
        "stop.clock.instance" => {
            if get("stop.clock.domain") == get("start.clock.domain") {
                get("start.clock.instance")
            } else {
                None
            }
        }
        "stop.stream" => get("start.stream"),
        "wait.stream" => {
            if form.question == Some(QuestionKind::DeviceInterval) {
                get("stop.stream")
            } else {
                form.work_streams.as_ref().and_then(|w| w.first().cloned())
            }
        }
        "statistics" => Some("median, p90, max".to_owned()),
        "steady_state" => Some("no".to_owned()),
        "keep_all_samples" | "keep_failures" => Some("yes".to_owned()),
        // The steps of `order` between `start` and `stop` (a wait is not work); never a
        // default that `order` would refuse.
        "included" => match &form.order {
            None => Some("measured-work".to_owned()),
            Some(order) => {
                let at = |s: &str| order.iter().position(|o| o == s);
                let (start, stop) = (at("start")?, at("stop")?);
                let inside: Vec<&str> = order
                    .get(start + 1..stop)?
                    .iter()
                    .map(String::as_str)
                    .filter(|s| *s != "wait")
                    .collect();
                (!inside.is_empty()).then(|| inside.join(", "))
            }
        },
        _ => None,
    }
}

fn prompt(out: &mut dyn Write, form: &RawForm, field: &Field) -> io::Result<()> {
    let (answered, total) = progress(form);
    writeln!(out)?;
    // The total grows when the question or the wait's scope is answered: say so.
    let scope_open = form.wait.as_ref().and_then(|w| w.scope).is_none();
    let may_grow =
        form.question.is_none() || (fields::Applies::Waiting.needed_by(form) && scope_open);
    let more = if may_grow { ", more may follow" } else { "" };
    writeln!(out, "[{}/{}{more}] {}", answered + 1, total, field.path)?;
    writeln!(out, "  {}", field.help)?;
    if !field.choices.is_empty() {
        let numbered: Vec<String> = field
            .choices
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}) {c}", i + 1))
            .collect();
        let tail = if field.open { " (or type another)" } else { "" };
        writeln!(out, "  choices: {}{tail}", numbered.join("  "))?;
    }
    if field.path == "order" || field.path == "included" || field.path == "excluded" {
        if let Some(order) = form.order.as_ref().filter(|_| field.path != "order") {
            writeln!(out, "  steps of order: {}", order.join(", "))?;
        } else if field.path == "order" {
            writeln!(out, "  e.g. initialization, allocation, input-copy, warm-up, start, measured-work, wait, stop, result-copy, validation, cleanup")?;
        }
        writeln!(out, "  separate entries with commas")?;
    }
    if let Some(d) = default_for(form, field.path) {
        writeln!(out, "  Enter for: {d}")?;
    } else if field.optional {
        writeln!(out, "  Enter or `-` leaves it empty")?;
    }
    write!(out, "> ")?;
    out.flush()
}

/// Findings worth showing now: contradictions not about a field still to be asked.
fn live_contradictions(form: &RawForm) -> Vec<Finding> {
    let Ok(valid) = validate(form.clone(), "form") else {
        return Vec::new();
    };
    let pending: Vec<&str> = FIELDS
        .iter()
        .filter(|f| f.applies.needed_by(form) && !fields::is_answered(form, f.path))
        .map(|f| f.path)
        .collect();
    let findings = check(&valid);
    contradictions(&findings)
        .filter(|f| {
            !pending
                .iter()
                .any(|p| *p == f.field || p.starts_with(&format!("{}.", f.field)))
        })
        .cloned()
        .collect()
}

/// How a fill session talks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Session {
    /// Write each answer after its prompt: for input that is not a terminal (a pipe, a
    /// test), so the transcript reads like the terminal session it stands for.
    pub echo: bool,
}

/// Runs a fill session over `form`: prompts on `out`, answers from `input`, `save` after
/// every accepted answer. `file` names the form in messages.
///
/// # Errors
/// Errors of reading `input`, writing `out`, or `save`.
pub fn fill(
    mut form: RawForm,
    file: &str,
    session: Session,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    save: &mut dyn FnMut(&RawForm) -> io::Result<()>,
) -> io::Result<FillOutcome> {
    let (answered, total) = progress(&form);
    writeln!(
        out,
        "Filling {file}: {answered} of {total} fields answered. Enter takes the offered default; `-` leaves an optional field empty."
    )?;
    writeln!(
        out,
        "Progress is saved after every answer: end the input (Ctrl-D) to stop, and run `worksheet form fill {file}` again to go on."
    )?;
    let mut shown: HashSet<(String, &'static str)> = live_contradictions(&form)
        .into_iter()
        .map(|f| (f.field, f.problem.code()))
        .collect();
    let mut accepted = 0;
    while let Some(field) = next_field(&form) {
        prompt(out, &form, field)?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            let (answered, total) = progress(&form);
            writeln!(out)?;
            writeln!(
                out,
                "interrupted: {answered} of {total} fields answered, saved in {file}. Run `worksheet form fill {file}` to go on."
            )?;
            return Ok(FillOutcome {
                form,
                end: FillEnd::Interrupted,
                accepted,
            });
        }
        let mut answer = line.trim().to_owned();
        if session.echo {
            writeln!(out, "{answer}")?;
        }
        if answer.is_empty() {
            if let Some(d) = default_for(&form, field.path) {
                writeln!(out, "  = {d}")?;
                answer = d;
            }
        }
        let mut next = form.clone();
        if let Err(why) = fields::set(&mut next, field.path, &answer) {
            let why = why.strip_prefix("refused: ").unwrap_or(&why).to_owned();
            writeln!(out, "  refused: {why}")?;
            continue;
        }
        if let Err(e) = validate(next.clone(), "form") {
            writeln!(out, "  refused: {}: {}", e.path, e.message)?;
            continue;
        }
        form = next;
        save(&form)?;
        accepted += 1;
        for f in live_contradictions(&form) {
            if shown.insert((f.field.clone(), f.problem.code())) {
                writeln!(out, "  note: {f}")?;
            }
        }
    }
    writeln!(out)?;
    writeln!(out, "All fields answered; saved {file}.")?;
    let findings = validate(form.clone(), "form")
        .map(|v| check(&v))
        .unwrap_or_default();
    let list: Vec<&Finding> = contradictions(&findings).collect();
    if list.is_empty() {
        writeln!(out, "No contradictions. Next: worksheet form check {file}")?;
    } else {
        writeln!(out, "{} contradiction(s):", list.len())?;
        for f in list {
            writeln!(out, "  {f}")?;
        }
        writeln!(
            out,
            "Fix them with `worksheet form fill {file} --set FIELD=VALUE` or in an editor."
        )?;
    }
    Ok(FillOutcome {
        form,
        end: FillEnd::Complete,
        accepted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form_with_order(order: &str) -> RawForm {
        let text = format!(r#"{{"format": "worksheet-form", "version": 1, "order": {order}}}"#);
        crate::form::format::parse_json(&text).unwrap()
    }

    #[test]
    fn the_included_default_comes_from_order() {
        // review D13: `order` without `measured-work` offered a default it then refused
        let form = form_with_order(r#"["start", "kernel", "copy", "wait", "stop", "cleanup"]"#);
        assert_eq!(default_for(&form, "included"), Some("kernel, copy".into()));
        let form = form_with_order(r#"["start", "stop"]"#);
        assert_eq!(default_for(&form, "included"), None);
        let form = form_with_order(r#"["setup", "kernel"]"#);
        assert_eq!(default_for(&form, "included"), None);
    }
}
