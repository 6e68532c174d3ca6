//! `lesson answer`: the answer sheet filled at prompts, like `form fill` fills a form.
//!
//! Each unanswered question is asked in turn; an answer that cannot be read (not a verdict,
//! a duration with its unit or a count) is explained and asked again, never graded here. An
//! empty line skips the question. The sheet is saved after every accepted answer, so an
//! interrupted session loses nothing and the next `lesson answer` resumes at the first
//! unanswered question. Reads any [`BufRead`], writes any [`Write`].

use std::io::{self, BufRead, Write};

use super::grade::{read_given, Given};
use super::model::Lesson;

/// One answer of a sheet: `(question id, answer text)`.
pub type Answer = (String, String);

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerEnd {
    /// Every question was offered.
    Complete,
    /// The input ended first; what was answered is saved.
    Interrupted,
}

/// Asks every unanswered question of `lesson`, updating `answers` and calling `save` after
/// each accepted answer.
///
/// # Errors
/// Read and write errors, and whatever `save` returns.
pub fn answer<E, S>(
    lesson: &Lesson,
    answers: &mut Vec<Answer>,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    mut save: S,
) -> Result<AnswerEnd, E>
where
    E: From<io::Error>,
    S: FnMut(&[Answer]) -> Result<(), E>,
{
    let open: Vec<_> = lesson
        .questions
        .iter()
        .filter(|q| {
            !answers
                .iter()
                .any(|(id, a)| id == &q.raw.id && !a.trim().is_empty())
        })
        .collect();
    writeln!(
        out,
        "{} of {} questions to answer (forms: `known 40 us`, `unknown (no-wait)`, `40 us`, `2`; \
         an empty line skips one)",
        open.len(),
        lesson.questions.len()
    )?;
    for q in open {
        loop {
            write!(out, "\n`{}`: {}\n> ", q.raw.id, q.raw.ask)?;
            out.flush()?;
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                writeln!(out)?;
                return Ok(AnswerEnd::Interrupted);
            }
            let text = line.trim();
            match read_given(text) {
                Given::Blank => break,
                Given::Unreadable => writeln!(
                    out,
                    "`{text}` cannot be read: write `known <duration>`, `unknown (<reason code>)`, \
                     a duration with its unit, or a count"
                )?,
                _ => {
                    answers.retain(|(id, _)| id != &q.raw.id);
                    answers.push((q.raw.id.clone(), text.to_owned()));
                    save(answers)?;
                    break;
                }
            }
        }
    }
    Ok(AnswerEnd::Complete)
}
