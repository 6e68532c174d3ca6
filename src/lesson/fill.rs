//! `lesson answer`: the answer sheet filled at prompts, like `form fill` fills a form.
//!
//! Each unanswered question is asked in turn; an answer that cannot be read (not a verdict,
//! a duration with its unit or a count) is explained and asked again, never graded here. An
//! empty line skips the question. The sheet is saved after every accepted answer, so an
//! interrupted session loses nothing and the next `lesson answer` resumes at the first
//! unanswered question. Reads any [`BufRead`], writes any [`Write`].
//!
//! Input is bounded as `form fill`'s is: an answer line is read through
//! [`crate::form::fill::read_answer`], which keeps at most [`MAX_ANSWER_BYTES`] (a longer
//! line is refused, never read whole: `lesson answer < /dev/zero` ends at once), and an
//! unreadable answer is asked again only when a person is there to answer (`retry`, a
//! terminal). From a pipe the session ends at the first refused answer
//! ([`AnswerEnd::Refused`]), so endless input (`yes |`) cannot loop.

use std::io::{self, BufRead, Write};

use crate::form::fill::{read_answer, AnswerLine};

use super::grade::{read_given, Given};
use super::model::{Lesson, Part};

/// The longest answer line read, in bytes (1 KiB): an answer is a verdict, a duration with
/// its unit or a count (`unknown (<reason code>)` is the longest form, tens of bytes).
pub const MAX_ANSWER_BYTES: usize = 1024;

/// One answer of a sheet: `(question id, answer text)`.
pub type Answer = (String, String);

/// How a session ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerEnd {
    /// Every question was offered.
    Complete,
    /// The input ended first; what was answered is saved.
    Interrupted,
    /// An answer was refused and nobody is there to answer again (not a terminal); what
    /// was answered before is saved.
    Refused {
        /// The question whose answer was refused.
        question: String,
        /// The error code: `too-large`, `bad-syntax` (not UTF-8) or `bad-value`.
        code: &'static str,
        /// Why.
        reason: String,
    },
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

/// Reads one answer line: `None` at the end of the input, else the trimmed text or why it
/// is refused (`(code, reason)`). A line past the cap is skipped to its end on a terminal.
fn next_answer(
    input: &mut dyn BufRead,
    retry: bool,
) -> io::Result<Option<Result<String, (&'static str, String)>>> {
    Ok(match read_answer(input, MAX_ANSWER_BYTES)? {
        AnswerLine::End => None,
        AnswerLine::Text(line) => Some(Ok(line.trim().to_owned())),
        AnswerLine::TooLong => {
            if retry {
                skip_line(input)?;
            }
            Some(Err((
                "too-large",
                format!("the answer is longer than {MAX_ANSWER_BYTES} bytes, the most one answer may hold"),
            )))
        }
        AnswerLine::NotUtf8 => Some(Err((
            "bad-syntax",
            "the answer is not UTF-8 text (standard input must be UTF-8)".to_owned(),
        ))),
    })
}

/// Asks every unanswered question of `lesson`, updating `answers` and calling `save` after
/// each accepted answer. With `retry` (a person at a terminal) an unreadable answer is asked
/// again; without it the session ends there, [`AnswerEnd::Refused`].
///
/// # Errors
/// Read and write errors, and whatever `save` returns.
pub fn answer<E, S>(
    lesson: &Lesson,
    answers: &mut Vec<Answer>,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    retry: bool,
    mut save: S,
) -> Result<AnswerEnd, E>
where
    E: From<io::Error>,
    S: FnMut(&[Answer]) -> Result<(), E>,
{
    let items = lesson.sheet_items();
    let open: Vec<_> = items
        .iter()
        .filter(|i| {
            !answers
                .iter()
                .any(|(id, a)| id == &i.key && !a.trim().is_empty())
        })
        .collect();
    writeln!(
        out,
        "{} of {} questions to answer (forms: `known 12.5 us`, `unknown (<reason code>)`, `12.5 us`, `3`; \
         an empty line skips one)",
        open.len(),
        items.len()
    )?;
    let mut part = None;
    for q in open {
        if part != Some(q.part) {
            part = Some(q.part);
            writeln!(
                out,
                "\n{}",
                match q.part {
                    Part::Predict =>
                        "Part 1, predict: from the handout's setup alone, before running anything.",
                    Part::Measure =>
                        "Part 2, measure: run the handout's commands and answer from what they show.",
                }
            )?;
        }
        loop {
            write!(out, "\n`{}`: {}\n> ", q.key, q.ask)?;
            out.flush()?;
            let Some(line) = next_answer(input, retry)? else {
                writeln!(out)?;
                return Ok(AnswerEnd::Interrupted);
            };
            let refusal = match line {
                Err(why) => why,
                Ok(text) => match read_given(&text) {
                    Given::Blank => break,
                    Given::Unreadable => (
                        "bad-value",
                        format!(
                            "`{}` cannot be read: write `known <duration>`, `unknown (<reason code>)`, \
                             a duration with its unit, or a count",
                            crate::escape::printable(&text)
                        ),
                    ),
                    _ => {
                        answers.retain(|(id, _)| id != &q.key);
                        answers.push((q.key.clone(), text));
                        save(answers)?;
                        break;
                    }
                },
            };
            writeln!(out, "{}", refusal.1)?;
            if !retry {
                return Ok(AnswerEnd::Refused {
                    question: q.key.clone(),
                    code: refusal.0,
                    reason: refusal.1,
                });
            }
        }
    }
    Ok(AnswerEnd::Complete)
}
