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
//!
//! Input is bounded: an answer line is read through [`read_answer`], which keeps at most
//! [`MAX_ANSWER_BYTES`] (an answer the form could not hold is refused, never read whole),
//! and a refused answer is asked again only when a person is there to answer
//! ([`Session::retry`], a terminal). From a pipe the session ends at the first refused
//! answer ([`FillEnd::Refused`]), so endless input (`yes |`) cannot loop.

use std::collections::HashSet;
use std::io::{self, BufRead, Write};

use super::check::{check, contradictions, Finding};
use super::fields::{self, Field, FIELDS};
use super::model::{validate, QuestionKind, RawForm};

/// How a fill session ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FillEnd {
    /// Every field the question needs is answered.
    Complete,
    /// The input ended first; what was answered is saved.
    Interrupted,
    /// An answer was refused and nobody is there to answer again (not a terminal); what
    /// was answered before is saved.
    Refused {
        /// The field whose answer was refused.
        field: &'static str,
        /// The error code: `too-large`, `bad-syntax` (not UTF-8) or `bad-value`.
        code: &'static str,
        /// Why.
        reason: String,
    },
}

/// The longest answer line read, in bytes (16 KiB). Every field of a form answered at this
/// length, JSON-escaped, still fits in [`super::MAX_FORM_BYTES`]; the saved form is checked
/// against that cap as well, so `form check` and `form fill` can always read it back.
pub const MAX_ANSWER_BYTES: usize = 16 * 1024;

/// One answer line, as [`read_answer`] read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerLine {
    /// The input ended before any byte of a line.
    End,
    /// A line (without its line end).
    Text(String),
    /// The line is longer than the cap; it was not read past the cap plus one byte.
    TooLong,
    /// The line is not UTF-8 text.
    NotUtf8,
}

/// Reads one line of at most `cap` bytes from `input`, never holding more than `cap + 1`
/// bytes of it: a longer line is [`AnswerLine::TooLong`], and what follows the cap is left
/// unread (an endless line, `/dev/zero`, ends here).
///
/// # Errors
/// Errors of reading `input`.
pub fn read_answer(input: &mut dyn BufRead, cap: usize) -> io::Result<AnswerLine> {
    let mut kept: Vec<u8> = Vec::new();
    let mut any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        any = true;
        let newline = buf.iter().position(|&b| b == b'\n');
        let take = newline.unwrap_or(buf.len());
        if kept.len() + take > cap {
            let room = cap + 1 - kept.len().min(cap + 1);
            input.consume(room.min(take));
            return Ok(AnswerLine::TooLong);
        }
        kept.extend_from_slice(&buf[..take]);
        input.consume(take + usize::from(newline.is_some()));
        if newline.is_some() {
            break;
        }
    }
    if !any {
        return Ok(AnswerLine::End);
    }
    if kept.last() == Some(&b'\r') {
        kept.pop();
    }
    Ok(String::from_utf8(kept).map_or(AnswerLine::NotUtf8, AnswerLine::Text))
}

/// Why an answer over [`MAX_ANSWER_BYTES`] is refused.
pub fn too_long() -> String {
    format!(
        "the answer is longer than {MAX_ANSWER_BYTES} bytes, the most one answer may hold (a form is read back only up to {} bytes)",
        super::MAX_FORM_BYTES
    )
}

/// Skips the rest of a line [`read_answer`] refused as too long: on a terminal, where a
/// person typed it and a line end will come.
fn skip_line(input: &mut dyn BufRead) -> io::Result<()> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        if let Some(at) = buf.iter().position(|&b| b == b'\n') {
            input.consume(at + 1);
            return Ok(());
        }
        let n = buf.len();
        input.consume(n);
    }
}

/// Why a typed answer is refused before it reaches the field: a control character (an
/// arrow or End key's escape sequence, a stray NUL).
pub fn control_refusal(answer: &str) -> Option<String> {
    let (at, c) = answer.char_indices().find(|(_, c)| c.is_control())?;
    let name = match c {
        '\u{1b}' => {
            "ESC, the start of a key's escape sequence (an arrow, Home or End key?)".to_owned()
        }
        '\t' => "a tab".to_owned(),
        '\0' => "NUL".to_owned(),
        other => format!("U+{:04X}", u32::from(other)),
    };
    Some(format!(
        "the answer holds a control character at byte {at}: {name}; type the answer as plain text"
    ))
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

/// The form with `answer` given to `field`, or why the answer is refused: a control
/// character, a value [`fields::check_typed`] refuses, a value the field's syntax refuses, or
/// a form that no longer validates.
fn answer_field(form: &RawForm, field: &Field, answer: &str) -> Result<RawForm, String> {
    if let Some(why) = control_refusal(answer) {
        return Err(why);
    }
    let answer = fields::resolve_typed(field.path, answer);
    fields::check_typed(form, field.path, &answer)?;
    let mut next = form.clone();
    if let Err(why) = fields::set(&mut next, field.path, &answer) {
        return Err(why.strip_prefix("refused: ").unwrap_or(&why).to_owned());
    }
    if let Err(e) = validate(next.clone(), "form") {
        return Err(format!("{}: {}", e.path, e.message));
    }
    Ok(next)
}

/// How a fill session talks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Session {
    /// Write each answer after its prompt: for input that is not a terminal (a pipe, a
    /// test), so the transcript reads like the terminal session it stands for.
    pub echo: bool,
    /// Ask again after a refused answer: only when a person answers at a terminal. Without
    /// it the session ends at the first refused answer ([`FillEnd::Refused`]).
    pub retry: bool,
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
        let Some(line) = read_line(input, session)? else {
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
        };
        let refusal = match line {
            Err(why) => Err(why),
            Ok(line) => take_answer(&form, field, &line, session, out)?,
        };
        let next = match refusal {
            Ok(next) => next,
            Err((code, why)) => {
                writeln!(out, "  refused: {}", crate::escape::printable(&why))?;
                if session.retry {
                    continue;
                }
                return Ok(FillOutcome {
                    form,
                    end: FillEnd::Refused {
                        field: field.path,
                        code,
                        reason: why,
                    },
                    accepted,
                });
            }
        };
        form = next;
        save(&form)?;
        accepted += 1;
        for f in live_contradictions(&form) {
            if shown.insert((f.field.clone(), f.problem.code())) {
                writeln!(out, "  note: {f}")?;
            }
        }
    }
    all_answered(&form, file, out)?;
    Ok(FillOutcome {
        form,
        end: FillEnd::Complete,
        accepted,
    })
}

/// A refused answer: its stable code and why.
type Refused = (&'static str, String);

/// The next answer line: `None` at the end of the input, a refusal for a line too long
/// (its rest skipped when the session asks again) or not UTF-8.
fn read_line(
    input: &mut dyn BufRead,
    session: Session,
) -> io::Result<Option<Result<String, Refused>>> {
    Ok(match read_answer(input, MAX_ANSWER_BYTES)? {
        AnswerLine::End => None,
        AnswerLine::Text(line) => Some(Ok(line)),
        AnswerLine::TooLong => {
            if session.retry {
                skip_line(input)?;
            }
            Some(Err(("too-large", too_long())))
        }
        AnswerLine::NotUtf8 => Some(Err((
            "bad-syntax",
            "the answer is not UTF-8 text (standard input must be UTF-8)".to_owned(),
        ))),
    })
}

/// The form with `line` as the answer to `field` (echoed when the session echoes; an empty
/// line takes the offered default), or why it is refused.
fn take_answer(
    form: &RawForm,
    field: &Field,
    line: &str,
    session: Session,
    out: &mut dyn Write,
) -> io::Result<Result<RawForm, Refused>> {
    let mut answer = line.trim().to_owned();
    if session.echo {
        writeln!(out, "{}", crate::escape::printable(&answer))?;
    }
    if answer.is_empty() {
        if let Some(d) = default_for(form, field.path) {
            writeln!(out, "  = {d}")?;
            answer = d;
        }
    }
    Ok(answer_field(form, field, &answer).map_err(|why| ("bad-value", why)))
}

/// The end of a complete session: the form's contradictions, or the next command.
fn all_answered(form: &RawForm, file: &str, out: &mut dyn Write) -> io::Result<()> {
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
    Ok(())
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

    fn read(bytes: &[u8], cap: usize) -> (AnswerLine, usize) {
        let mut input = std::io::Cursor::new(bytes.to_vec());
        let line = read_answer(&mut input, cap).unwrap();
        (line, input.position() as usize)
    }

    #[test]
    fn an_answer_line_is_read_up_to_its_cap_and_no_further() {
        assert_eq!(read(b"abc\nnext\n", 8), (AnswerLine::Text("abc".into()), 4));
        assert_eq!(read(b"abc\r\n", 8), (AnswerLine::Text("abc".into()), 5));
        assert_eq!(read(b"abc", 8), (AnswerLine::Text("abc".into()), 3));
        assert_eq!(read(b"", 8), (AnswerLine::End, 0));
        assert_eq!(read(b"\n", 8), (AnswerLine::Text(String::new()), 1));
        // exactly the cap is an answer; one byte more is refused, read no further
        assert_eq!(
            read(b"12345678\n", 8),
            (AnswerLine::Text("12345678".into()), 9)
        );
        let zeros = vec![0u8; 1 << 20];
        assert_eq!(read(&zeros, 8), (AnswerLine::TooLong, 9));
        assert_eq!(read(b"\xff\xfe\n", 8), (AnswerLine::NotUtf8, 3));
    }

    #[test]
    fn control_characters_in_an_answer_are_named() {
        assert_eq!(control_refusal("plain answer"), None);
        let why = control_refusal("\u{1b}[4~").unwrap();
        assert!(
            why.contains("byte 0: ESC") && why.contains("End key"),
            "{why}"
        );
        let why = control_refusal("ab\u{7}").unwrap();
        assert!(why.contains("byte 2: U+0007"), "{why}");
    }
}
