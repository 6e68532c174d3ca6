//! `lesson class`: many students' folders of one lesson, summarized — per question how many
//! got it right and the most common wrong answer, and every student's numbers side by side
//! (the median and P90 of the lesson's `class_series`, from each student's own case).
//!
//! Pure: it takes graded folders and returns a summary, rendered as a table or CSV bytes.

use std::collections::BTreeMap;
use std::io::{self, Write};

use comfy_table::{presets::ASCII_MARKDOWN, Table};

use super::grade::{normalized, Graded, Mark};
use super::model::{predict_key, Lesson, Part};
use crate::units::Nanos;

/// One student's folder, graded.
#[derive(Clone, Debug)]
pub struct Student {
    /// The folder's name.
    pub name: String,
    /// Why the run was not graded (empty: graded).
    pub rerun: Vec<String>,
    /// The graded answers (empty when the run must be re-run).
    pub graded: Vec<Graded>,
    /// Median of the lesson's class series in this student's data.
    pub median: Option<Nanos>,
    /// P90 of it.
    pub p90: Option<Nanos>,
}

impl Student {
    /// Right answers.
    pub fn right(&self) -> usize {
        self.graded.iter().filter(|g| g.mark == Mark::Right).count()
    }

    /// Right answers in `part`.
    pub fn right_in(&self, part: Part) -> usize {
        self.graded
            .iter()
            .filter(|g| g.part == part && g.mark == Mark::Right)
            .count()
    }

    /// Graded answers in `part`.
    pub fn count_in(&self, part: Part) -> usize {
        self.graded.iter().filter(|g| g.part == part).count()
    }
}

/// One part of one question across the class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartSummary {
    /// Students who answered it right.
    pub right: usize,
    /// Students who answered it wrong.
    pub wrong: usize,
    /// Students who left it blank.
    pub missing: usize,
    /// The most common wrong answer (normalized) and how many gave it; ties go to the
    /// answer that sorts first.
    pub most_common_wrong: Option<(String, usize)>,
    /// Wrong answers that showed a named misconception: `(code, students)`, by code.
    pub misconceptions: Vec<(&'static str, usize)>,
}

/// One question across the class: its predict part (if it has one) and its measure part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuestionSummary {
    /// The question's id.
    pub id: String,
    /// The predictions, when the question has a predict part.
    pub predicted: Option<PartSummary>,
    /// The measured answers.
    pub measured: PartSummary,
}

fn part_summary(students: &[Student], key: &str) -> PartSummary {
    let marks: Vec<&Graded> = students
        .iter()
        .filter_map(|s| s.graded.iter().find(|g| g.id == key))
        .collect();
    let count = |m: Mark| marks.iter().filter(|g| g.mark == m).count();
    let mut wrong: BTreeMap<String, usize> = BTreeMap::new();
    let mut named: BTreeMap<&'static str, usize> = BTreeMap::new();
    for g in marks.iter().filter(|g| g.mark == Mark::Wrong) {
        *wrong.entry(normalized(&g.given)).or_default() += 1;
        if let Some(m) = g.misconception {
            *named.entry(m.code()).or_default() += 1;
        }
    }
    PartSummary {
        right: count(Mark::Right),
        wrong: count(Mark::Wrong),
        missing: count(Mark::Missing),
        most_common_wrong: wrong
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))),
        misconceptions: named.into_iter().collect(),
    }
}

/// The class summary.
#[derive(Clone, Debug)]
pub struct ClassSummary {
    /// The lesson's id.
    pub lesson: String,
    /// The series whose median and P90 are shown, if the lesson names one.
    pub series: Option<String>,
    /// Per question, in lesson order.
    pub questions: Vec<QuestionSummary>,
    /// Per student, in the order given.
    pub students: Vec<Student>,
}

/// Summarizes `students` of `lesson`.
pub fn summarize(lesson: &Lesson, students: Vec<Student>) -> ClassSummary {
    let questions = lesson
        .questions
        .iter()
        .map(|q| QuestionSummary {
            id: q.raw.id.clone(),
            predicted: q
                .raw
                .predict
                .as_ref()
                .map(|_| part_summary(&students, &predict_key(&q.raw.id))),
            measured: part_summary(&students, &q.raw.id),
        })
        .collect();
    ClassSummary {
        lesson: lesson.id().to_owned(),
        series: lesson.raw.class_series.clone(),
        questions,
        students,
    }
}

fn opt(v: Option<Nanos>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn wrong_text(p: &PartSummary) -> String {
    let mut parts = Vec::new();
    if let Some((a, n)) = &p.most_common_wrong {
        parts.push(format!("`{a}` ({n}×)"));
    }
    for (code, n) in &p.misconceptions {
        parts.push(format!("{code} ({n}×)"));
    }
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join("; ")
    }
}

/// The summary for people: per question how many predicted right and how many measured
/// right (with the most common wrong answers and the misconceptions they show), then the
/// students side by side.
///
/// # Errors
/// Write errors of `out`.
pub fn write_text(c: &ClassSummary, out: &mut dyn Write) -> io::Result<()> {
    let graded = c.students.iter().filter(|s| s.rerun.is_empty()).count();
    writeln!(
        out,
        "lesson {}: {} student folder(s), {graded} graded, {} to re-run",
        c.lesson,
        c.students.len(),
        c.students.len() - graded
    )?;
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(vec![
        "question",
        "predicted right",
        "measured right",
        "wrong predictions (misconceptions)",
        "wrong measurements",
    ]);
    for q in &c.questions {
        t.add_row(vec![
            q.id.clone(),
            q.predicted.as_ref().map_or_else(
                || "(not asked)".to_owned(),
                |p| format!("{}/{graded}", p.right),
            ),
            format!("{}/{graded}", q.measured.right),
            q.predicted
                .as_ref()
                .map_or_else(|| "-".to_owned(), wrong_text),
            wrong_text(&q.measured),
        ]);
    }
    writeln!(out, "{}", crate::table::fitted_records(&t))?;
    let mut header = vec![
        "student".to_owned(),
        "predicted".to_owned(),
        "measured".to_owned(),
    ];
    if let Some(series) = &c.series {
        header.push(format!("`{series}` median"));
        header.push(format!("`{series}` P90"));
    }
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(header);
    for s in &c.students {
        let mut row = vec![s.name.clone()];
        if s.rerun.is_empty() {
            row.push(format!(
                "{}/{} right",
                s.right_in(Part::Predict),
                s.count_in(Part::Predict)
            ));
            row.push(format!(
                "{}/{} right",
                s.right_in(Part::Measure),
                s.count_in(Part::Measure)
            ));
        } else {
            row.push("re-run (not graded)".to_owned());
            row.push("-".to_owned());
        }
        if c.series.is_some() {
            row.push(opt(s.median));
            row.push(opt(s.p90));
        }
        t.add_row(row);
    }
    writeln!(out, "{}", crate::table::fitted_records(&t))
}

/// One row per student: name, status, right, questions, median and P90 (text and ns), then
/// each question's answer and mark.
///
/// # Errors
/// CSV write errors (none for an in-memory buffer).
pub fn csv(c: &ClassSummary) -> io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec![
        "student".to_owned(),
        "status".to_owned(),
        "right".to_owned(),
        "questions".to_owned(),
        "median".to_owned(),
        "median_ns".to_owned(),
        "p90".to_owned(),
        "p90_ns".to_owned(),
    ];
    let keys: Vec<String> = c
        .questions
        .iter()
        .filter(|q| q.predicted.is_some())
        .map(|q| predict_key(&q.id))
        .chain(c.questions.iter().map(|q| q.id.clone()))
        .collect();
    for k in &keys {
        header.push(format!("{k}_answer"));
        header.push(format!("{k}_mark"));
    }
    w.write_record(&header)?;
    let ns = |v: Option<Nanos>| v.map(|v| v.as_i64().to_string()).unwrap_or_default();
    let text = |v: Option<Nanos>| v.map(|v| v.to_string()).unwrap_or_default();
    for s in &c.students {
        let mut row = vec![
            s.name.clone(),
            if s.rerun.is_empty() {
                "graded"
            } else {
                "re-run"
            }
            .to_owned(),
            s.right().to_string(),
            keys.len().to_string(),
            text(s.median),
            ns(s.median),
            text(s.p90),
            ns(s.p90),
        ];
        for k in &keys {
            match s.graded.iter().find(|g| &g.id == k) {
                Some(g) => {
                    row.push(g.given.clone());
                    row.push(g.mark.code().to_owned());
                }
                None => {
                    row.push(String::new());
                    row.push("re-run".to_owned());
                }
            }
        }
        w.write_record(&row)?;
    }
    w.into_inner().map_err(|e| e.into_error())
}
