//! Lessons a teacher hands out: `worksheet lesson list | start | check | key | class`.
//!
//! A lesson ([`model`], versioned JSON; the built-in ones live in `lessons/` and are embedded
//! in the binary) names a measurement and asks questions whose expected answers are *engine
//! answers*, never numbers written in the lesson. `start` runs the measurement ([`mod@measure`],
//! behind the [`measure::Bench`] trait) and saves everything it measured into a folder with a
//! handout and a blank answer sheet ([`sheet`]). `check` recomputes every expected answer
//! from that folder's own case with the same engine `eval` uses ([`mod@grade`]), so every
//! student is graded against their own machine's numbers; a run that failed a digest or is
//! too noisy is sent back to be re-run, never graded. `key` prints the answers for the
//! teacher; `class` summarizes many folders ([`class`]).
//!
//! The commands return a [`LessonOutcome`] or a [`LessonError`]; the command line maps them
//! to exit codes (0 all right, 1 not all right or re-run, 2 malformed input, 3 no CUDA).

pub mod class;
pub mod fill;
pub mod grade;
pub mod measure;
pub mod model;
pub mod sheet;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::table::wrap_prose;
use comfy_table::{presets::ASCII_MARKDOWN, Table};

use crate::case::{load_case_file, Case};
use crate::error::InputError;
use crate::output::write_output;

use self::grade::{answer_key, grade, rerun_reasons, Graded, KeyItem, Mark};
use self::measure::{measure, Bench, MeasureError, Measured};
use self::model::{parse_lesson, Lesson, Measurement, Part, Statistic};

/// The built-in lessons: `(id, file text)`, embedded from `lessons/`.
pub const BUILT_IN: [(&str, &str); 6] = [
    (
        "three-boundaries",
        include_str!("../../lessons/three-boundaries.json"),
    ),
    (
        "overlap-arithmetic",
        include_str!("../../lessons/overlap-arithmetic.json"),
    ),
    (
        "clocks-and-boots",
        include_str!("../../lessons/clocks-and-boots.json"),
    ),
    (
        "executor-lab",
        include_str!("../../lessons/executor-lab.json"),
    ),
    (
        "warmup-statistics",
        include_str!("../../lessons/warmup-statistics.json"),
    ),
    (
        "cuda-streams",
        include_str!("../../lessons/cuda-streams.json"),
    ),
];

/// How a lesson command ended (errors aside); `cmd::lesson` gives it its exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LessonOutcome {
    /// Done; every answer right where answers were checked.
    Ok,
    /// An answer is wrong or missing, or the run must be re-run.
    NotAllRight,
}

/// Why a lesson command failed; `cmd::lesson` gives each its exit code.
#[derive(Debug, thiserror::Error)]
pub enum LessonError {
    /// Malformed or missing input: a lesson, a folder, an answer sheet (exit 2).
    #[error("{0}")]
    Input(#[from] InputError),
    /// A file could not be written, or exists without `--force` (exit 2).
    #[error("{0}")]
    Output(String),
    /// The lesson needs CUDA (exit 3).
    #[error("{0}")]
    NoCuda(String),
    /// The measurement failed (exit 2).
    #[error("{0}")]
    Measurement(String),
    /// Writing to the output stream failed.
    #[error("writing output: {0}")]
    Write(#[from] io::Error),
}

impl From<MeasureError> for LessonError {
    fn from(e: MeasureError) -> Self {
        match e {
            MeasureError::NoCuda(m) => LessonError::NoCuda(m),
            MeasureError::Failed(m) => LessonError::Measurement(format!("error: {m}")),
            MeasureError::Lesson(e) => LessonError::Input(e),
        }
    }
}

pub(crate) fn exists(p: &Path) -> LessonError {
    LessonError::Output(format!(
        "{}: error[exists]: the file exists; pass --force to overwrite it",
        p.display()
    ))
}

pub(crate) fn write_file(path: &Path, bytes: &[u8], force: bool) -> Result<(), LessonError> {
    write_output(path, bytes, force).map_err(|f| LessonError::Output(f.message))
}

/// A built-in lesson by id, or a lesson file by path: `(lesson, its text)`.
///
/// # Errors
/// An [`InputError`]: `unknown-lesson` (neither a built-in id nor a file), `io`, or the
/// lesson file's own errors.
pub fn resolve(name: &str) -> Result<(Lesson, String), InputError> {
    if let Some((id, text)) = BUILT_IN.iter().find(|(id, _)| *id == name) {
        return Ok((
            parse_lesson(text, &format!("lessons/{id}.json"))?,
            (*text).to_owned(),
        ));
    }
    let path = Path::new(name);
    if !path.is_file() {
        return Err(InputError::new(
            "$",
            "unknown-lesson",
            format!(
                "no built-in lesson `{name}` and no such file (built-in: {})",
                BUILT_IN.map(|(id, _)| id).join(", ")
            ),
        )
        .in_file(name));
    }
    let text = read_text(path)?;
    Ok((parse_lesson(&text, name)?, text))
}

/// The largest lesson file or answer sheet read, in bytes (1 MiB: the built-in lessons
/// hold a few KiB, a sheet a line per question); a larger file is `too-large`, unread.
pub const MAX_LESSON_FILE_BYTES: u64 = 1 << 20;

/// Reads a lesson file or an answer sheet through the one capped source
/// ([`crate::input::read_capped`]): a regular file of at most [`MAX_LESSON_FILE_BYTES`],
/// never a FIFO or a device, as UTF-8 text.
fn read_text(path: &Path) -> Result<String, InputError> {
    let file = path.display().to_string();
    let bytes =
        crate::input::read_capped(path, MAX_LESSON_FILE_BYTES, "a lesson file or answer sheet")
            .map_err(|e| e.in_file(&file))?;
    String::from_utf8(bytes).map_err(|e| {
        InputError::new(
            "$",
            "bad-syntax",
            format!("the file is not UTF-8 text ({e})"),
        )
        .in_file(&file)
    })
}

/// The files `start` writes for `lesson`, in writing order.
fn folder_files(lesson: &Lesson) -> Vec<&'static str> {
    let mut files = vec!["lesson.json", "case.json"];
    match lesson.raw.measurement {
        Measurement::Fixture { .. } => {}
        Measurement::LabExecutor { .. } => files.extend(["runs.csv", "lab.json", "report.md"]),
        Measurement::LabStreams { .. } => files.push("report.txt"),
    }
    files.extend(["handout.md", "answers.txt"]);
    files
}

/// `lesson start`: measures on `bench` and writes the lesson folder `dir`.
///
/// # Errors
/// [`LessonError`]: an unknown or malformed lesson, a file that exists without `force`
/// (refused before anything is measured), no CUDA, a failed measurement.
pub fn start(
    name: &str,
    dir: &Path,
    force: bool,
    bench: &mut dyn Bench,
    out: &mut dyn Write,
) -> Result<LessonOutcome, LessonError> {
    start_with(name, dir, force, None, bench, out)
}

/// `lesson start` with the work pinned to `passes` per job (an executor lesson; refused for
/// any other measurement).
///
/// # Errors
/// As [`start`], and an input error when `passes` is given for a lesson that does not run
/// the executor lab.
pub fn start_with(
    name: &str,
    dir: &Path,
    force: bool,
    passes: Option<u64>,
    bench: &mut dyn Bench,
    out: &mut dyn Write,
) -> Result<LessonOutcome, LessonError> {
    let (mut lesson, text) = resolve(name)?;
    if let Some(p) = passes {
        pin_passes(&mut lesson, p)?;
    }
    let files = folder_files(&lesson);
    if !force {
        if let Some(p) = files.iter().map(|f| dir.join(f)).find(|p| p.exists()) {
            return Err(exists(&p));
        }
    }
    let measured = measure(&lesson, bench)?;
    std::fs::create_dir_all(dir).map_err(|e| {
        LessonError::Output(format!(
            "{}: error[io]: cannot create the folder: {e}",
            dir.display()
        ))
    })?;
    write_folder(&lesson, &text, &measured, dir, force)?;
    say_started(&lesson, &measured, &dir.display().to_string(), out)?;
    Ok(LessonOutcome::Ok)
}

/// Pins an executor lesson's work to `p` passes per job; any other lesson refuses it.
fn pin_passes(lesson: &mut Lesson, p: u64) -> Result<(), LessonError> {
    match &mut lesson.raw.measurement {
        Measurement::LabExecutor { passes, .. } => {
            *passes = Some(p);
            Ok(())
        }
        _ => Err(LessonError::Input(InputError::new(
            "--passes",
            "bad-value",
            format!(
                "lesson `{}` does not run the executor lab: --passes applies only to an executor lesson",
                lesson.id()
            ),
        ))),
    }
}

/// Writes the lesson folder: the lesson, the measured case and files, the handout and a
/// blank answer sheet.
fn write_folder(
    lesson: &Lesson,
    text: &str,
    measured: &Measured,
    dir: &Path,
    force: bool,
) -> Result<(), LessonError> {
    let shown = dir.display().to_string();
    let handout = sheet::handout(
        lesson,
        &sheet::HandoutContext {
            dir: &shown,
            picture_json: &measured.picture_json,
            command: &measured.command,
            fixture: match &lesson.raw.measurement {
                Measurement::Fixture { case } => Some(case.as_str()),
                _ => None,
            },
            simulated: measured.simulated,
            files: measured.files.iter().map(|(n, _)| *n).collect(),
            cautions: &measured.cautions,
            rerun_advice: (!measured.cautions.is_empty())
                .then(|| rerun_advice(lesson.id(), &shown, measured.passes)),
        },
    );
    write_file(&dir.join("lesson.json"), text.as_bytes(), force)?;
    write_file(&dir.join("case.json"), measured.case_json.as_bytes(), force)?;
    for (name, bytes) in &measured.files {
        write_file(&dir.join(name), bytes, force)?;
    }
    write_file(&dir.join("handout.md"), handout.as_bytes(), force)?;
    write_file(
        &dir.join("answers.txt"),
        sheet::blank_sheet(lesson).as_bytes(),
        force,
    )
}

/// What `lesson start` says: what was measured, the files written, any caution with what
/// to do, and the next step.
fn say_started(
    lesson: &Lesson,
    measured: &Measured,
    shown: &str,
    out: &mut dyn Write,
) -> Result<(), LessonError> {
    // The lab's report holds the values the questions ask for: it stays in the folder for
    // part 2, and is not printed here (UX N10).
    if !measured.command.is_empty() {
        writeln!(
            out,
            "measured: {}{} (its report is in the folder, for part 2)",
            measured.command,
            if measured.simulated {
                " (SIMULATED)"
            } else {
                ""
            }
        )?;
    }
    writeln!(
        out,
        "lesson {} started in {shown}{}: wrote {}",
        lesson.id(),
        if measured.simulated {
            " (SIMULATED)"
        } else {
            ""
        },
        folder_files(lesson).join(", ")
    )?;
    if !measured.cautions.is_empty() {
        writeln!(
            out,
            "CAUTION: this run may not have measured what the lesson asked for:"
        )?;
        for c in &measured.cautions {
            writeln!(out, "  - {c}")?;
        }
        writeln!(
            out,
            "what to do: {}",
            rerun_advice(lesson.id(), shown, measured.passes)
        )?;
    }
    writeln!(
        out,
        "next: read {shown}/handout.md, answer in {shown}/answers.txt, then: worksheet lesson check {shown}"
    )?;
    Ok(())
}

/// What a student does about a cautioned run: start again when the machine is quieter, or
/// pin the work so that the run does the lesson's work whatever the load.
fn rerun_advice(id: &str, dir: &str, passes: Option<u64>) -> String {
    let again = format!("worksheet lesson start {id} -o {dir} --force");
    match passes {
        Some(p) => format!(
            "start it again when the machine is quieter (`{again}`), or pin the work \
             (`{again} --passes {p}`; your teacher may give another count) and answer from that run"
        ),
        None => format!("start it again when the machine is quieter (`{again}`)"),
    }
}

/// A lesson folder as read back: its own copy of the lesson and its case.
#[derive(Clone, Debug)]
pub struct Folder {
    /// The folder.
    pub dir: PathBuf,
    /// The lesson, from `DIR/lesson.json`.
    pub lesson: Lesson,
    /// The case, from `DIR/case.json`.
    pub case: Case,
}

impl Folder {
    /// Reads `dir/lesson.json` and `dir/case.json`.
    ///
    /// # Errors
    /// An [`InputError`] naming the file and field.
    pub fn load(dir: &Path) -> Result<Folder, InputError> {
        let lesson_path = dir.join("lesson.json");
        let lesson = parse_lesson(
            &read_text(&lesson_path)?,
            &lesson_path.display().to_string(),
        )?;
        let case = load_case_file(&dir.join("case.json"))?;
        Ok(Folder {
            dir: dir.to_path_buf(),
            lesson,
            case,
        })
    }

    fn in_lesson_file(&self, e: InputError) -> InputError {
        e.in_file(self.dir.join("lesson.json").display().to_string())
    }

    /// The answer key from this folder's data.
    ///
    /// # Errors
    /// An [`InputError`] when the lesson names a question or series the case lacks.
    pub fn key(&self) -> Result<Vec<KeyItem>, InputError> {
        answer_key(&self.lesson, &self.case).map_err(|e| self.in_lesson_file(e))
    }

    /// The lab's cautions recorded in the case (`[code] message`): the run may not have
    /// measured what the lesson asked for. Empty when there are none.
    pub fn cautions(&self) -> Vec<String> {
        let Some(list) = self
            .case
            .provenance
            .as_ref()
            .and_then(|p| p.get("caution"))
            .and_then(serde_json::Value::as_array)
        else {
            return Vec::new();
        };
        list.iter()
            .map(|c| {
                let field = |k: &str| c.get(k).and_then(serde_json::Value::as_str).unwrap_or("");
                format!("[{}] {}", field("code"), field("message"))
            })
            .collect()
    }

    /// Why the data must be re-run (empty: grade it).
    ///
    /// # Errors
    /// An [`InputError`] when the lesson's re-run policy names a series the case lacks.
    pub fn rerun(&self) -> Result<Vec<String>, InputError> {
        rerun_reasons(&self.lesson, &self.case).map_err(|e| self.in_lesson_file(e))
    }

    /// The answer sheet: `answers` if given, else `answers.csv` if present, else
    /// `answers.txt`; `None` when there is none.
    fn sheet_path(&self, answers: Option<&Path>) -> Option<PathBuf> {
        if let Some(p) = answers {
            return Some(p.to_path_buf());
        }
        ["answers.csv", "answers.txt"]
            .iter()
            .map(|f| self.dir.join(f))
            .find(|p| p.is_file())
    }

    /// Reads the answers of `path`.
    ///
    /// # Errors
    /// An [`InputError`] for an unreadable or malformed sheet.
    pub fn read_answers(&self, path: &Path) -> Result<Vec<(String, String)>, InputError> {
        let text = read_text(path)?;
        let csv_form = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        sheet::read_sheet(&text, csv_form, &self.lesson, &path.display().to_string())
    }
}

/// `lesson answer`: asks the folder's unanswered questions on `input`, saving the sheet
/// after every answer. With `retry` (a person at a terminal) an unreadable answer is asked
/// again; without it, it ends the session as an input error naming the sheet and the
/// question (what was answered before is saved).
///
/// # Errors
/// [`LessonError`] for a malformed folder or sheet, a refused answer without `retry`, a
/// sheet that would grow past [`MAX_LESSON_FILE_BYTES`] (so that it can always be read
/// back), or a sheet that cannot be written.
pub fn answer_folder(
    dir: &Path,
    answers: Option<&Path>,
    input: &mut dyn io::BufRead,
    out: &mut dyn Write,
    retry: bool,
) -> Result<fill::AnswerEnd, LessonError> {
    let folder = Folder::load(dir)?;
    let path = folder
        .sheet_path(answers)
        .unwrap_or_else(|| dir.join("answers.txt"));
    let mut given = if path.is_file() {
        folder.read_answers(&path)?
    } else {
        Vec::new()
    };
    let csv_form = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let end = fill::answer(
        &folder.lesson,
        &mut given,
        input,
        out,
        retry,
        |a: &[fill::Answer]| {
            let text = sheet::filled_sheet(&folder.lesson, a, csv_form);
            if text.len() as u64 > MAX_LESSON_FILE_BYTES {
                return Err(LessonError::Input(
                    InputError::new(
                        "$",
                        "too-large",
                        format!(
                            "with this answer the sheet would hold {} bytes, more than the {MAX_LESSON_FILE_BYTES} bytes a sheet is read back with; not saved",
                            text.len()
                        ),
                    )
                    .in_file(path.display().to_string()),
                ));
            }
            write_file(&path, text.as_bytes(), true)
        },
    )?;
    if let fill::AnswerEnd::Refused {
        question,
        code,
        reason,
    } = end
    {
        return Err(LessonError::Input(
            InputError::new(
                question,
                code,
                format!("{reason}; standard input is not a terminal, so the question is not asked again (answers before it are saved)"),
            )
            .in_file(path.display().to_string()),
        ));
    }
    writeln!(
        out,
        "saved {}; grade it with: worksheet lesson check {}",
        path.display(),
        dir.display()
    )?;
    Ok(end)
}

/// The result of `lesson check`.
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// The lesson's id.
    pub lesson: String,
    /// The answer sheet read.
    pub sheet: PathBuf,
    /// Why nothing was graded (empty: graded).
    pub rerun: Vec<String>,
    /// The graded answers.
    pub graded: Vec<Graded>,
    /// The lab's cautions about the run (graded anyway: the answers are checked against
    /// the run's own data, but that run may not be the work the lesson asked for).
    pub cautions: Vec<String>,
    /// What to do about them.
    pub advice: Option<String>,
}

impl CheckResult {
    /// `Ok` only when graded and every answer is right.
    pub fn outcome(&self) -> LessonOutcome {
        if self.rerun.is_empty() && self.graded.iter().all(|g| g.mark == Mark::Right) {
            LessonOutcome::Ok
        } else {
            LessonOutcome::NotAllRight
        }
    }
}

/// `lesson check`: grades the folder's answers against its own data.
///
/// # Errors
/// An [`InputError`] for a malformed folder, lesson or answer sheet, or a missing sheet.
pub fn check(dir: &Path, answers: Option<&Path>) -> Result<CheckResult, InputError> {
    let folder = Folder::load(dir)?;
    let key = folder.key()?;
    let sheet = folder.sheet_path(answers).ok_or_else(|| {
        InputError::new(
            "$",
            "io",
            "no answer sheet: write answers.txt or answers.csv",
        )
        .in_file(dir.display().to_string())
    })?;
    let given = folder.read_answers(&sheet)?;
    let rerun = folder.rerun()?;
    let graded = if rerun.is_empty() {
        grade(&folder.lesson, &key, &given)
    } else {
        Vec::new()
    };
    let cautions = folder.cautions();
    let advice = (!cautions.is_empty()).then(|| {
        let passes = folder
            .case
            .provenance
            .as_ref()
            .and_then(|p| p.get("passes"))
            .and_then(serde_json::Value::as_u64);
        rerun_advice(folder.lesson.id(), &dir.display().to_string(), passes)
    });
    Ok(CheckResult {
        lesson: folder.lesson.id().to_owned(),
        sheet,
        rerun,
        graded,
        cautions,
        advice,
    })
}

/// Renders a check for the student.
///
/// # Errors
/// Write errors of `out`.
pub fn write_check(r: &CheckResult, out: &mut dyn Write) -> io::Result<()> {
    if !r.rerun.is_empty() {
        writeln!(
            out,
            "RE-RUN lesson {}: nothing was graded, because",
            r.lesson
        )?;
        for why in &r.rerun {
            writeln!(out, "{}", wrap_prose(&format!("  - {why}"), "    "))?;
        }
        return writeln!(
            out,
            "{}",
            wrap_prose(&format!(
                "Start the lesson again in a new folder (worksheet lesson start {} -o NEW-FOLDER) and answer from the new data.",
                r.lesson
            ), "")
        );
    }
    if !r.cautions.is_empty() {
        writeln!(
            out,
            "{}",
            wrap_prose(
                "CAUTION: graded against your run's own data, but that run may not be the work the lesson asked for:",
                "  "
            )
        )?;
        for c in &r.cautions {
            writeln!(out, "{}", wrap_prose(&format!("  - {c}"), "    "))?;
        }
        if let Some(a) = &r.advice {
            writeln!(out, "{}", wrap_prose(&format!("what to do: {a}"), "  "))?;
        }
    }
    let mut part = None;
    for g in &r.graded {
        if part != Some(g.part) {
            part = Some(g.part);
            writeln!(
                out,
                "{}",
                match g.part {
                    Part::Predict => "part 1, predict (from the setup alone):",
                    Part::Measure => "part 2, measure (from the tool's output):",
                }
            )?;
        }
        // Feedback wraps at the terminal's width, under the answer (never inside a word).
        let line = match g.mark {
            Mark::Right => format!("right    {}: {}", g.id, g.given),
            Mark::Wrong => format!("WRONG    {}: {}", g.id, g.feedback),
            Mark::Missing => format!("MISSING  {}: {}", g.id, g.feedback),
        };
        writeln!(out, "{}", wrap_prose(&line, "         "))?;
    }
    let count = |p: Part| r.graded.iter().filter(|g| g.part == p).count();
    let right = |p: Part| {
        r.graded
            .iter()
            .filter(|g| g.part == p && g.mark == Mark::Right)
            .count()
    };
    let total = format!(
        "predicted {} of {} right, measured {} of {} right (lesson {}, answers from {})",
        right(Part::Predict),
        count(Part::Predict),
        right(Part::Measure),
        count(Part::Measure),
        r.lesson,
        r.sheet.display()
    );
    writeln!(out, "{}", wrap_prose(&total, "  "))
}

/// Renders the answer key for the teacher.
///
/// # Errors
/// Write errors of `out`.
pub fn write_key(folder: &Folder, key: &[KeyItem], out: &mut dyn Write) -> Result<(), LessonError> {
    writeln!(
        out,
        "answer key of lesson {} from {}/case.json",
        folder.lesson.id(),
        folder.dir.display()
    )?;
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(vec![
        "sheet line",
        "part",
        "answer",
        "tolerance",
        "misconceptions caught",
        "evidence",
    ]);
    for k in key {
        let caught: Vec<String> = k
            .misconceptions
            .iter()
            .map(|m| match &m.leads_to {
                Some(v) => format!("{} (answers {v})", m.misconception.code()),
                None => format!("{} (answers a number)", m.misconception.code()),
            })
            .collect();
        t.add_row(vec![
            k.id.clone(),
            k.part.code().to_owned(),
            k.expected.to_string(),
            if k.tolerance > crate::units::Nanos::ZERO {
                format!("±{}", k.tolerance)
            } else {
                "exact".to_owned()
            },
            if caught.is_empty() {
                "-".to_owned()
            } else {
                caught.join("; ")
            },
            k.evidence.clone(),
        ]);
    }
    writeln!(out, "{}", crate::table::fitted_records(&t))?;
    writeln!(
        out,
        "{}",
        wrap_prose(
            "For the teacher: the handout shows the setup and no answer; predictions are written \
             from it alone. Measured answers are read off the tool's output in part 2 (so they can \
             be copied from it, or from the folder's files: case.json and the lab reports hold \
             every measured value); grade understanding by the predictions.",
            ""
        )
    )?;
    let rerun = folder.rerun()?;
    if !rerun.is_empty() {
        writeln!(
            out,
            "this folder's run must be re-run; check will not grade it:"
        )?;
        for why in rerun {
            writeln!(out, "{}", wrap_prose(&format!("  - {why}"), "    "))?;
        }
    }
    Ok(())
}

/// The summary of many folders of one lesson. A folder without an answer sheet counts as
/// all missing.
///
/// # Errors
/// An [`InputError`] for a malformed folder or sheet, or folders of different lessons.
pub fn class_summary(dirs: &[PathBuf]) -> Result<class::ClassSummary, InputError> {
    let mut first: Option<Lesson> = None;
    let mut students = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let folder = Folder::load(dir)?;
        if let Some(l) = &first {
            if l.id() != folder.lesson.id() {
                return Err(InputError::new(
                    "id",
                    "mixed-lessons",
                    format!(
                        "this folder holds lesson `{}`, the first one `{}`: summarize one lesson at a time",
                        folder.lesson.id(),
                        l.id()
                    ),
                )
                .in_file(dir.join("lesson.json").display().to_string()));
            }
        }
        let key = folder.key()?;
        let given = match folder.sheet_path(None) {
            Some(p) => folder.read_answers(&p)?,
            None => Vec::new(),
        };
        let rerun = folder.rerun()?;
        let graded = if rerun.is_empty() {
            grade(&folder.lesson, &key, &given)
        } else {
            Vec::new()
        };
        let stat = |s: Statistic| {
            folder
                .lesson
                .raw
                .class_series
                .as_deref()
                .and_then(|series| grade::series_statistic(&folder.case, series, s))
        };
        students.push(class::Student {
            name: dir.file_name().map_or_else(
                || dir.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            rerun,
            graded,
            median: stat(Statistic::Median),
            p90: stat(Statistic::P90),
        });
        if first.is_none() {
            first = Some(folder.lesson);
        }
    }
    let lesson = first.ok_or_else(|| InputError::new("$", "empty", "no folders given"))?;
    Ok(class::summarize(&lesson, students))
}

pub(crate) fn write_list(out: &mut dyn Write) -> io::Result<()> {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN)
        .set_header(vec!["lesson", "minutes", "measures", "title"]);
    for (id, text) in BUILT_IN {
        let (measures, minutes, title) = match parse_lesson(text, id) {
            Ok(l) => (
                match &l.raw.measurement {
                    Measurement::Fixture { case } => format!("fixture {case}"),
                    Measurement::LabExecutor { .. } => "lab executor (real run)".to_owned(),
                    Measurement::LabStreams { .. } => {
                        "lab streams (CUDA, or --simulate)".to_owned()
                    }
                },
                l.raw
                    .minutes
                    .map_or_else(|| "-".to_owned(), |m| m.to_string()),
                l.raw.title.clone(),
            ),
            Err(e) => ("-".into(), "-".into(), format!("(malformed: {e})")),
        };
        t.add_row(vec![id.to_owned(), minutes, measures, title]);
    }
    writeln!(out, "{}", crate::table::fitted_records(&t))?;
    writeln!(
        out,
        "start one: worksheet lesson start <lesson> -o <folder>   (a lesson file's path works too)"
    )
}

#[cfg(test)]
mod tests;
