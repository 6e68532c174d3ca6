//! What the student reads and writes: the handout (`handout.md`) and the answer sheet
//! (`answers.txt`, or the same as CSV), as pure functions of the lesson and its measurement.
//!
//! The answer sheet's text form is one `question-id: answer` per line, `#` starting a
//! comment; the CSV form has the header `question,answer`. A blank answer is allowed (it is
//! marked missing); a line that is neither, an unknown question id or an id given twice is a
//! malformed sheet (exit 2, naming the line).

use std::fmt::Write as _;

use super::model::{Lesson, Part, FORMAT, VERSION};
use crate::case::load_case_str;
use crate::error::InputError;
use crate::render::{layout, text};

/// The comment that opens a part of the text sheet.
fn part_heading(part: Part) -> &'static str {
    match part {
        Part::Predict => {
            "# Part 1, predict: from the setup in handout.md alone, before you run any command."
        }
        Part::Measure => {
            "# Part 2, measure: run the handout's commands, answer from what they show, compare with your predictions."
        }
    }
}

/// The blank answer sheet (text form).
pub fn blank_sheet(lesson: &Lesson) -> String {
    filled_sheet(lesson, &[], false)
}

fn sheet_header(lesson: &Lesson) -> String {
    let mut s = String::new();
    // The id and the title on one comment line: a line break in either would start a line
    // the sheet's reader takes for an answer (both found by the lesson fuzz target).
    let one_line = |text: &str| {
        crate::escape::printable(&text.lines().collect::<Vec<_>>().join(" ")).into_owned()
    };
    let _ = writeln!(
        s,
        "# {FORMAT} `{}` (version {VERSION}): {}",
        one_line(lesson.id()),
        one_line(&lesson.raw.title)
    );
    s.push_str(
        "# Write each answer after its id. Forms: `known 12.5 us`, `unknown (<reason code>)`,\n\
         # a duration with its unit (`12.5 us`), or a count (`3`). Then: worksheet lesson check <folder>\n",
    );
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
    for (line, written, answer) in rows {
        let Some(id) = lesson.sheet_key(&written) else {
            return Err(InputError::new(
                written.clone(),
                "unknown-question",
                format!(
                    "lesson `{}` has no question `{written}` (it has: {})",
                    lesson.id(),
                    lesson
                        .sheet_items()
                        .iter()
                        .map(|i| i.key.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .in_file(file)
            .at_line(line));
        };
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
    /// Why the run may not have measured what the lesson asked for (empty: no caution).
    pub cautions: &'a [String],
    /// What to do about the cautions (a rerun command, a pinned rerun command).
    pub rerun_advice: Option<String>,
}

/// The case without what it answers: no questions, no series, no description (a fixture's
/// description states its answers). What the handout may show before the student predicts.
///
/// # Errors
/// A message when the text is not a JSON object.
fn setup_only(case_json: &str) -> Result<serde_json::Value, String> {
    let mut v: serde_json::Value = serde_json::from_str(case_json).map_err(|e| e.to_string())?;
    let obj = v
        .as_object_mut()
        .ok_or_else(|| "the case is not a JSON object".to_owned())?;
    for key in ["questions", "series", "description"] {
        obj.remove(key);
    }
    Ok(v)
}

/// A small text timeline of the case's setup (zoomed where the lesson says), drawn without
/// its questions and series, so that it shows where things happen and no answer; or why
/// there is none.
pub fn timeline(case_json: &str, focus: Option<&str>) -> String {
    let text = match setup_only(case_json) {
        Ok(v) => v.to_string(),
        Err(e) => return format!("(no timeline: {e})\n"),
    };
    let case = match load_case_str(&text, "case.json") {
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

/// The facts of a fixture case, one item per line as compact JSON, grouped by kind: its
/// clocks, streams, phases, events, marks, ranges and host program, in file order. No
/// question, series or description: those state answers.
pub fn setup_facts(case_json: &str) -> String {
    let Ok(v) = setup_only(case_json) else {
        return String::new();
    };
    let mut s = String::new();
    for (key, title) in [
        ("clocks", "clocks"),
        ("streams", "streams"),
        ("phases", "phases (work on a stream, or host work)"),
        ("events", "events"),
        ("marks", "marks (timestamps)"),
        ("ranges", "ranges (annotations, not work)"),
        ("program", "the host program, in the order it ran"),
    ] {
        let Some(items) = v.get(key).and_then(serde_json::Value::as_array) else {
            continue;
        };
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(s, "{title}:");
        for item in items {
            let _ = writeln!(s, "  {item}");
        }
    }
    s
}

/// The handout: goals, the setup (what was measured, its facts, a sketch without answers),
/// part 1 (predict from the setup alone), part 2 (run the tool, answer, compare), and how to
/// answer. It never prints a value it asks for: the commands that do come after the
/// predictions.
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
    if !ctx.cautions.is_empty() {
        s.push_str("> **CAUTION: this run may not have measured what the lesson asked for.**\n");
        for c in ctx.cautions {
            let _ = writeln!(s, "> - {c}");
        }
        if let Some(advice) = &ctx.rerun_advice {
            let _ = writeln!(s, ">\n> What to do: {advice}");
        }
        s.push('\n');
    }
    s.push_str("## Goals\n\n");
    for g in &r.goals {
        let _ = writeln!(s, "- {g}");
    }
    write_setup(&mut s, lesson, ctx);
    write_parts(&mut s, lesson, ctx);
    let _ = writeln!(
        s,
        "\n## How to answer\n\n\
         Write each answer after its id in `{0}/answers.txt`: the `predict.` lines first, \
         before you run anything, then the others. Forms: `known 12.5 us`, \
         `unknown (<reason code>)` (an unknown always names its reason code, from the README's table of reason codes), a duration with its unit \
         (`12.5 us`), or a count (`3`). A CSV file `{0}/answers.csv` with the header \
         `question,answer` works too, and `worksheet lesson answer {0}` asks each line at a \
         prompt and saves after every answer. Then check both parts against your own data:\n\n\
         ```text\nworksheet lesson check {0}\n```",
        ctx.dir
    );
    s
}

fn write_setup(s: &mut String, lesson: &Lesson, ctx: &HandoutContext<'_>) {
    s.push_str("\n## The setup\n\n");
    match ctx.fixture {
        Some(name) => {
            let _ = writeln!(
                s,
                "Nothing was measured: this lesson reads the built-in case \
                 `fixtures/cases/{name}.json`. These are its facts (the case format is described \
                 in `fixtures/README.md`; times are on the clock each item names):\n"
            );
            let _ = writeln!(s, "```text\n{}```\n", setup_facts(ctx.picture_json));
        }
        None => {
            let description = setup_only_description(ctx.picture_json);
            let _ = writeln!(
                s,
                "`{}`{} ran on this machine{}. Everything it recorded is in this folder: \
                 `case.json`{}; open them in part 2, not before.\n",
                ctx.command,
                if ctx.simulated { " (simulated)" } else { "" },
                description.map(|d| format!(": {d}")).unwrap_or_default(),
                ctx.files
                    .iter()
                    .map(|f| format!(", `{f}`"))
                    .collect::<String>()
            );
        }
    }
    let _ = writeln!(
        s,
        "A sketch of the setup (where things happen, drawn without any answer):\n\n```text"
    );
    s.push_str(&timeline(
        ctx.picture_json,
        lesson.raw.timeline_focus.as_deref(),
    ));
    s.push_str("```\n");
}

/// The description of a measured (lab) case: its configuration, which states no answer.
fn setup_only_description(case_json: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(case_json).ok()?;
    v.get("description")?.as_str().map(str::to_owned)
}

fn write_parts(s: &mut String, lesson: &Lesson, ctx: &HandoutContext<'_>) {
    let items = lesson.sheet_items();
    let predictions: Vec<_> = items.iter().filter(|i| i.part == Part::Predict).collect();
    if !predictions.is_empty() {
        s.push_str(
            "\n## Part 1: predict\n\nFrom the setup above alone, before you run any command or \
             open another file of this folder, write in the sheet:\n\n",
        );
        for (n, i) in predictions.iter().enumerate() {
            let _ = writeln!(s, "{}. `{}`: {}", n + 1, i.key, i.ask);
        }
    }
    s.push_str("\n## Part 2: measure\n\nNow run:\n\n```text\n");
    let mut commands: Vec<String> = lesson
        .raw
        .run
        .iter()
        .map(|c| c.replace("{dir}", ctx.dir))
        .collect();
    if commands.is_empty() {
        commands.push(format!("worksheet eval {}/case.json", ctx.dir));
    }
    for c in &commands {
        let _ = writeln!(s, "{c}");
    }
    s.push_str(
        "```\n\nand answer from what they show; where you made a prediction, compare the two \
         (`lesson check` grades both):\n\n",
    );
    for (n, q) in lesson.questions.iter().enumerate() {
        let _ = write!(s, "{}. `{}`: {}", n + 1, q.raw.id, q.raw.ask);
        if q.tolerance > crate::units::Nanos::ZERO {
            let _ = write!(s, " (within ±{} counts as right)", q.tolerance);
        }
        s.push('\n');
    }
}

/// An answer sheet with `answers` written in: the text form (the header comments, then the
/// predict part and the measure part, `key: answer` per line) or CSV (`question,answer`,
/// predictions first).
pub fn filled_sheet(lesson: &Lesson, answers: &[(String, String)], csv_form: bool) -> String {
    let answer_of = |id: &str| {
        answers
            .iter()
            .find(|(q, _)| q == id)
            .map_or("", |(_, a)| a.as_str())
    };
    let items = lesson.sheet_items();
    if csv_form {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(["question", "answer"]);
        for i in &items {
            let _ = w.write_record([i.key.as_str(), answer_of(&i.key)]);
        }
        return String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default();
    }
    let mut s = sheet_header(lesson);
    let mut part = None;
    for i in &items {
        if part != Some(i.part) {
            part = Some(i.part);
            let _ = writeln!(s, "{}", part_heading(i.part));
        }
        let _ = writeln!(s, "{}: {}", i.key, answer_of(&i.key));
    }
    s
}
