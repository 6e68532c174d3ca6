//! What the student reads and writes: the handout (`handout.md`) and the answer sheet
//! (`answers.txt`, or the same as CSV), as pure functions of the lesson and its measurement.
//!
//! The answer sheet's text form is one `question-id: answer` per line, `#` starting a
//! comment; the CSV form has the header `question,answer`. A blank answer is allowed (it is
//! marked missing); a line that is neither, an unknown question id or an id given twice is a
//! malformed sheet (exit 2, naming the line).

use std::fmt::Write as _;

use super::model::{Lesson, FORMAT, VERSION};
use crate::case::load_case_str;
use crate::error::InputError;
use crate::render::{layout, text};

/// The blank answer sheet (text form).
pub fn blank_sheet(lesson: &Lesson) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {FORMAT} `{}` (version {VERSION}): {}",
        lesson.id(),
        lesson.raw.title
    );
    s.push_str(
        "# Write each answer after its question id. Forms: `known 40 us`, `unknown (no-wait)`,\n\
         # a duration with its unit (`40 us`), or a count (`2`). Then: worksheet lesson check <folder>\n",
    );
    for q in &lesson.questions {
        let _ = writeln!(s, "{}: ", q.raw.id);
    }
    s
}

/// The answers in a sheet, in file order: `(question id, answer text)`.
///
/// # Errors
/// An [`InputError`] naming `file`, the line and the problem: `bad-syntax` (a line with no
/// `:`, a CSV that does not parse), `bad-header`, `unknown-question`, `duplicate-id`.
pub fn read_sheet(
    text: &str,
    csv_form: bool,
    lesson: &Lesson,
    file: &str,
) -> Result<Vec<(String, String)>, InputError> {
    let mut rows: Vec<(usize, String, String)> = Vec::new();
    if csv_form {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(false)
            .from_reader(text.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| InputError::new("header", "bad-syntax", e.to_string()).in_file(file))?
            .iter()
            .map(|h| h.trim().to_owned())
            .collect();
        if header != ["question", "answer"] {
            return Err(InputError::new(
                "header",
                "bad-header",
                format!(
                    "expected the header `question,answer`, found `{}`",
                    header.join(",")
                ),
            )
            .in_file(file)
            .at_line(1));
        }
        for (i, record) in reader.records().enumerate() {
            let record = record.map_err(|e| {
                InputError::new(format!("row {}", i + 1), "bad-syntax", e.to_string())
                    .in_file(file)
                    .at_line(i + 2)
            })?;
            rows.push((
                i + 2,
                record.get(0).unwrap_or("").trim().to_owned(),
                record.get(1).unwrap_or("").trim().to_owned(),
            ));
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((id, answer)) = line.split_once(':') else {
                return Err(InputError::new(
                    format!("line {}", i + 1),
                    "bad-syntax",
                    format!("expected `question-id: answer`, found `{line}`"),
                )
                .in_file(file)
                .at_line(i + 1));
            };
            rows.push((i + 1, id.trim().to_owned(), answer.trim().to_owned()));
        }
    }
    let mut answers: Vec<(String, String)> = Vec::new();
    for (line, id, answer) in rows {
        if !lesson.questions.iter().any(|q| q.raw.id == id) {
            return Err(InputError::new(
                id.clone(),
                "unknown-question",
                format!(
                    "lesson `{}` has no question `{id}` (it has: {})",
                    lesson.id(),
                    lesson
                        .questions
                        .iter()
                        .map(|q| q.raw.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .in_file(file)
            .at_line(line));
        }
        if answers.iter().any(|(seen, _)| seen == &id) {
            return Err(InputError::new(
                id.clone(),
                "duplicate-id",
                format!("question `{id}` is answered twice"),
            )
            .in_file(file)
            .at_line(line));
        }
        answers.push((id, answer));
    }
    Ok(answers)
}

/// What the handout says about the measurement, beside the lesson itself.
#[derive(Clone, Debug)]
pub struct HandoutContext<'a> {
    /// The lesson folder as the student typed it.
    pub dir: &'a str,
    /// The case file text to draw the timeline from.
    pub picture_json: &'a str,
    /// The measurement's command line (empty: a built-in fixture, nothing measured).
    pub command: &'a str,
    /// The fixture's name when nothing was measured.
    pub fixture: Option<&'a str>,
    /// Whether the numbers are simulated.
    pub simulated: bool,
    /// The data files written beside the case.
    pub files: Vec<&'a str>,
}

/// A small text timeline of the case (zoomed where the lesson says), or why there is none.
pub fn timeline(case_json: &str, focus: Option<&str>) -> String {
    let case = match load_case_str(case_json, "case.json") {
        Ok(case) => case,
        Err(e) => return format!("(no timeline: {e})\n"),
    };
    let options = layout::LayoutOptions {
        focus: focus.map(str::to_owned),
        ..Default::default()
    };
    match layout::layout(&case, &options) {
        Ok(t) => text::render(&t, &text::TextOptions { width: 78 }),
        Err(e) => format!("(no timeline: {e})\n"),
    }
}

/// The handout: goals, what was measured, what to run, a small drawn timeline, the
/// questions and how to answer.
pub fn handout(lesson: &Lesson, ctx: &HandoutContext<'_>) -> String {
    let r = &lesson.raw;
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", r.title);
    let _ = writeln!(
        s,
        "Lesson `{}` (lesson format {VERSION}){}.\n",
        r.id,
        r.minutes
            .map(|m| format!(", about {m} minutes"))
            .unwrap_or_default()
    );
    if ctx.simulated {
        s.push_str(
            "> **SIMULATED.** This build or machine has no CUDA GPU, so the numbers in this folder \
             come from worksheet's built-in simulator, not from a device. The lesson's reasoning is \
             the same; the durations are invented. Run it again with the `cuda` feature on a GPU \
             for real numbers.\n\n",
        );
    }
    s.push_str("## Goals\n\n");
    for g in &r.goals {
        let _ = writeln!(s, "- {g}");
    }
    s.push_str("\n## What was measured\n\n");
    match ctx.fixture {
        Some(name) => {
            let _ = writeln!(
                s,
                "Nothing: this lesson reads the built-in case `fixtures/cases/{name}.json`, \
                 copied with the lesson's questions to `case.json` in this folder.\n"
            );
        }
        None => {
            let _ = writeln!(
                s,
                "`{}`{}. Everything it recorded is in this folder: `case.json` (the case: \
                 clocks, streams, events, phases, timers, series and questions){}.\n",
                ctx.command,
                if ctx.simulated { " (simulated)" } else { "" },
                ctx.files
                    .iter()
                    .map(|f| format!(", `{f}`"))
                    .collect::<String>()
            );
        }
    }
    s.push_str("## What to run\n\n```text\n");
    let mut commands: Vec<String> = r.run.iter().map(|c| c.replace("{dir}", ctx.dir)).collect();
    if commands.is_empty() {
        commands.push(format!("worksheet eval {}/case.json", ctx.dir));
    }
    for c in &commands {
        let _ = writeln!(s, "{c}");
    }
    s.push_str("```\n\n## Timeline\n\n```text\n");
    s.push_str(&timeline(ctx.picture_json, r.timeline_focus.as_deref()));
    s.push_str("```\n\n## Questions\n\n");
    for (i, q) in lesson.questions.iter().enumerate() {
        let _ = write!(s, "{}. `{}`: {}", i + 1, q.raw.id, q.raw.ask);
        if q.tolerance > crate::units::Nanos::ZERO {
            let _ = write!(s, " (within ±{} counts as right)", q.tolerance);
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "\n## How to answer\n\n\
         Write each answer after its question id in `{0}/answers.txt`. Forms: `known 40 us`, \
         `unknown (no-wait)` (an unknown always names its reason code), a duration with its unit \
         (`40 us`), or a count (`2`). A CSV file `{0}/answers.csv` with the header \
         `question,answer` works too, and `worksheet lesson answer {0}` asks each question at a \
         prompt and saves after every answer. Then check your answers against your own data:\n\n\
         ```text\nworksheet lesson check {0}\n```",
        ctx.dir
    );
    s
}

/// An answer sheet with `answers` written in: the text form (the blank sheet's comments, then
/// `id: answer` per question in lesson order) or CSV (`question,answer`).
pub fn filled_sheet(lesson: &Lesson, answers: &[(String, String)], csv_form: bool) -> String {
    let answer_of = |id: &str| {
        answers
            .iter()
            .find(|(q, _)| q == id)
            .map_or("", |(_, a)| a.as_str())
    };
    if csv_form {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(["question", "answer"]);
        for q in &lesson.questions {
            let _ = w.write_record([q.raw.id.as_str(), answer_of(&q.raw.id)]);
        }
        return String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default();
    }
    let blank = blank_sheet(lesson);
    let mut s: String = blank
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    for q in &lesson.questions {
        let _ = writeln!(s, "{}: {}", q.raw.id, answer_of(&q.raw.id));
    }
    s
}
