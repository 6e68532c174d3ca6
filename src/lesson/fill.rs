//! `lesson answer`: the answer sheet filled at prompts, like `form fill` fills a form.
//!
//! Each unanswered question is asked in turn; an answer that cannot be read (not a verdict,
//! a duration with its unit or a count) is explained and asked again, never graded here. An
//! empty line skips the question. The sheet is saved after every accepted answer, so an
//! interrupted session loses nothing and the next `lesson answer` resumes at the first
//! unanswered question. Reads any [`BufRead`], writes any [`Write`].

use std::io::{self, BufRead, Write};

use super::grade::{read_given, Given};
use super::model::{Lesson, Part};

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
                    answers.retain(|(id, _)| id != &q.key);
                    answers.push((q.key.clone(), text.to_owned()));
                    save(answers)?;
                    break;
                }
            }
        }
    }
    Ok(AnswerEnd::Complete)
}
