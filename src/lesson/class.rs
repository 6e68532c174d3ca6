//! `lesson class`: many students' folders of one lesson, summarized — per question how many
//! got it right and the most common wrong answer, and every student's numbers side by side
//! (the median and P90 of the lesson's `class_series`, from each student's own case).
//!
//! Pure: it takes graded folders and returns a summary, rendered as a table or CSV bytes.

use std::collections::BTreeMap;
use std::io::{self, Write};

use comfy_table::{presets::ASCII_MARKDOWN, Table};

use super::grade::{normalized, Graded, Mark};
use super::model::Lesson;
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
}

/// One question across the class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuestionSummary {
    /// The question's id.
    pub id: String,
    /// Students who answered it right.
    pub right: usize,
    /// Students who answered it wrong.
    pub wrong: usize,
    /// Students who left it blank.
    pub missing: usize,
    /// The most common wrong answer (normalized) and how many gave it; ties go to the
    /// answer that sorts first.
    pub most_common_wrong: Option<(String, usize)>,
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
        .map(|q| {
            let id = &q.raw.id;
            let marks: Vec<&Graded> = students
                .iter()
                .filter_map(|s| s.graded.iter().find(|g| &g.id == id))
                .collect();
            let count = |m: Mark| marks.iter().filter(|g| g.mark == m).count();
            let mut wrong: BTreeMap<String, usize> = BTreeMap::new();
            for g in marks.iter().filter(|g| g.mark == Mark::Wrong) {
                *wrong.entry(normalized(&g.given)).or_default() += 1;
            }
            let most_common_wrong = wrong
                .into_iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
            QuestionSummary {
                id: id.clone(),
                right: count(Mark::Right),
                wrong: count(Mark::Wrong),
                missing: count(Mark::Missing),
                most_common_wrong,
            }
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

/// The summary for people: the per-question table, then the students side by side.
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
        "right",
        "wrong",
        "missing",
        "most common wrong answer",
    ]);
    for q in &c.questions {
        t.add_row(vec![
            q.id.clone(),
            format!("{}/{graded}", q.right),
            q.wrong.to_string(),
            q.missing.to_string(),
            q.most_common_wrong
                .as_ref()
                .map_or_else(|| "-".to_owned(), |(a, n)| format!("`{a}` ({n}×)")),
        ]);
    }
    writeln!(out, "{}", crate::table::fitted_records(&t))?;
    let series = c.series.as_deref().unwrap_or("-");
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(vec![
        "student".to_owned(),
        "result".to_owned(),
        format!("{series} median"),
        format!("{series} P90"),
    ]);
    for s in &c.students {
        let result = if s.rerun.is_empty() {
            format!("{}/{} right", s.right(), s.graded.len())
        } else {
            "re-run (not graded)".to_owned()
        };
        t.add_row(vec![s.name.clone(), result, opt(s.median), opt(s.p90)]);
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
    for q in &c.questions {
        header.push(format!("{}_answer", q.id));
        header.push(format!("{}_mark", q.id));
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
            c.questions.len().to_string(),
            text(s.median),
            ns(s.median),
            text(s.p90),
            ns(s.p90),
        ];
        for q in &c.questions {
            match s.graded.iter().find(|g| g.id == q.id) {
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
