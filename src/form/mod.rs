//! Boundary-declaration forms (SPEC §8): write down where each stopwatch starts and stops
//! *before* measuring, then check the declaration, then answer it from a capture.
//!
//! A form declares one stopwatch: the **question** (submission, device interval, host
//! completion, end-to-end request); the **start** and **stop** boundaries (what marks
//! them, on which clock — domain *and* instance — and, for device events, in which
//! stream); the **wait** and its scope (event, stream, device) with the streams the work
//! runs in and the declared cross-stream dependencies; the program's steps in **order**
//! with `start`, `stop` and `wait` placed among them, and which steps are **included**
//! and **excluded**; the warm-up runs, samples and statistics; that every sample and every
//! failure is kept; and optionally a **binding** to ids in a capture.
//!
//! ```text
//!  order:  initialization  allocation  input-copy  warm-up │start│ measured-work  wait │stop│ result-copy  cleanup
//!                                                          └──────── timed ───────────┘
//! ```
//!
//! The commands: `worksheet form new` prints a blank form (only the fields its question
//! needs, each with a one-line explanation as a `"// field"` key), `form fill` walks a
//! person through it and saves after every answer, `form check` lists every contradiction
//! with a stable code and the field it concerns, and `form check --capture CASE` prints
//! the verdict the capture gives to the form's question beside it.
//!
//! Layout: [`model`] (the raw mirror and the validated [`Form`]), [`fields`] (the field
//! table every walker uses), [`format`](mod@format) (JSON and CSV, read and written), [`check`](mod@check)
//! (contradictions), [`capture`] (answers from a case), [`fill`](mod@fill) (the prompts). The core
//! is pure; the command (`cmd::form`) and this module's file functions do the file I/O.
//!
//! ```
//! use worksheet::form::{check::check, format::{load_form_str, FileFormat}};
//!
//! let text = std::fs::read_to_string("worksheets/seed-host-completion.json").unwrap();
//! let form = load_form_str(&text, FileFormat::Json, "seed-host-completion.json").unwrap();
//! assert!(check(&form).is_empty());
//! ```

pub mod capture;
pub mod check;
mod error;
pub mod fields;
pub mod fill;
pub mod format;
pub mod guard;
pub mod model;

use std::io::{self, Write};
use std::path::Path;

pub use error::{FormError, FORM_ERROR_CODES};
pub use model::{validate, Form, QuestionKind, RawForm};

use crate::error::{Refusal, Stopped};
use capture::{answer_from_case, CaptureAnswer};
use check::{check, Finding, Problem};
use fill::{fill, next_field, progress, FillEnd};
use format::{blank, load_form_str, render, FileFormat};

/// The largest form file read, in bytes (1 MiB).
pub const MAX_FORM_BYTES: u64 = 1024 * 1024;
// Standard input (`-`) is copied up to its own cap, so this cap must not exceed it.
const _: () = assert!(crate::input::MAX_STDIN_BYTES >= MAX_FORM_BYTES);

/// Options of [`fill_file`].
#[derive(Clone, Debug, Default)]
pub struct FillOptions {
    /// `FIELD=VALUE` assignments applied before any prompt.
    pub sets: Vec<String>,
    /// Apply `sets`, save and stop, without prompting.
    pub no_prompt: bool,
    /// The question, when the file is created.
    pub question: Option<QuestionKind>,
    /// How the prompts talk.
    pub session: fill::Session,
}

/// `form fill FILE`: applies `--set` values, then prompts on `out` for the rest, reading
/// answers from `input` and saving `file` after each one.
///
/// # Errors
/// [`Stopped`]: refused when the file is malformed, a `--set` value is refused, it
/// cannot be written, or standard input ends first; a write error of `out`.
pub fn fill_file(
    file: &Path,
    options: &FillOptions,
    input: &mut dyn io::BufRead,
    out: &mut dyn Write,
) -> Result<(), Stopped> {
    let label = file.display().to_string();
    if crate::input::is_stdin(file) {
        return Err(Refusal::new(
            "-: error[not-a-file]: `form fill` saves the form after every answer, so it needs a file; `-` (standard input) cannot be saved to",
        )
        .into());
    }
    let fmt = FileFormat::from_path(file);
    let name = format::default_name(&label);
    // Held until this function returns: one filler at a time.
    let _lock = guard::FormLock::acquire(file)?;
    let mut form = open_or_create(file, options, &name, fmt, out)?;
    let mut saver = guard::Saver::new(file, fmt, &form);
    if let (Some(q), None) = (options.question, form.question) {
        form.question = Some(q);
    }
    for assignment in &options.sets {
        apply_set(&mut form, assignment, &label)?;
    }
    let form = validate(form, &name).map_err(|e| e.in_file(&label))?;
    if !options.sets.is_empty() {
        saver.save(form.raw())?;
    }
    if options.no_prompt {
        let (answered, total) = progress(form.raw());
        writeln!(out, "saved {label}: {answered} of {total} fields answered")?;
        return Ok(());
    }
    // A save refused (too large, the file changed beyond reading) ends the session with
    // that refusal, as it is, not as an I/O error.
    let mut save_refusal: Option<Refusal> = None;
    let mut save = |f: &RawForm| {
        saver.save(f).map(|_| ()).map_err(|refusal| {
            let e = io::Error::other(refusal.message.clone());
            save_refusal = Some(refusal);
            e
        })
    };
    let outcome = fill(
        form.into_raw(),
        &label,
        options.session,
        input,
        out,
        &mut save,
    )
    .map_err(|e| {
        save_refusal
            .take()
            .unwrap_or_else(|| Refusal::new(format!("{label}: error[io]: {e}")))
    })?;
    fill_end(&outcome, &label)
}

/// The form at `file`: read when anything is at the path (a link loop, a dangling link or a
/// folder is read too, and its reader says what is wrong); created blank, and said so on
/// `out`, only when nothing is there.
fn open_or_create(
    file: &Path,
    options: &FillOptions,
    name: &str,
    fmt: FileFormat,
    out: &mut dyn Write,
) -> Result<RawForm, Stopped> {
    if file.symlink_metadata().is_ok() {
        return Ok(read_form(file)?.into_raw());
    }
    let mut f = blank(options.question, None);
    f.name = Some(name.to_owned());
    write_atomic(file, render(&f, fmt).as_bytes(), false)?;
    writeln!(out, "created {} (blank)", file.display())?;
    Ok(f)
}

/// Applies one `--set FIELD=VALUE` to `form`, refusing what a prompt would refuse.
fn apply_set(form: &mut RawForm, assignment: &str, label: &str) -> Result<(), FormError> {
    let Some((field, value)) = assignment.split_once('=') else {
        return Err(FormError::new(
            assignment,
            "bad-value",
            "--set takes FIELD=VALUE, like `wait.scope=event`",
        )
        .in_file(label));
    };
    let field = field.trim();
    let refused = |message: String| FormError::new(field, "bad-value", message).in_file(label);
    if value.len() > fill::MAX_ANSWER_BYTES {
        return Err(FormError::new(field, "too-large", fill::too_long()).in_file(label));
    }
    if let Some(why) = fill::control_refusal(value) {
        return Err(refused(why));
    }
    let value = fields::resolve_typed(field, value);
    fields::check_typed(form, field, &value).map_err(refused)?;
    fields::set(form, field, &value).map_err(|message| {
        let code = if fields::settable_paths().contains(&field) {
            "bad-value"
        } else {
            "unknown-field"
        };
        FormError::new(field, code, message).in_file(label)
    })
}

/// How a prompting session ended: complete, or an error naming the field standard input
/// left unanswered or gave a refused answer for.
fn fill_end(outcome: &fill::FillOutcome, label: &str) -> Result<(), Stopped> {
    let (answered, total) = progress(&outcome.form);
    let kept = format!("{answered} of {total} fields answered are saved");
    match &outcome.end {
        FillEnd::Complete => Ok(()),
        FillEnd::Interrupted => {
            let field = next_field(&outcome.form).map_or("$", |f| f.path);
            Err(FormError::new(
                field,
                "end-of-input",
                format!("standard input ended before this field was answered; {kept}: run `worksheet form fill {label}` again to go on"),
            )
            .in_file(label)
            .into())
        }
        FillEnd::Refused {
            field,
            code,
            reason,
        } => Err(FormError::new(
            *field,
            code,
            format!("the answer on standard input is refused: {reason}; standard input is not a terminal, so it is not asked again ({kept})"),
        )
        .in_file(label)
        .into()),
    }
}

/// Reads and validates a form file (JSON, or CSV by extension).
///
/// # Errors
/// [`FormError`]: `io`, `too-large`, and those of [`load_form_str`].
pub fn read_form(path: &Path) -> Result<Form, FormError> {
    let label = path.display().to_string();
    let bytes =
        crate::input::read_capped(path, MAX_FORM_BYTES, "a form").map_err(|e| e.in_file(&label))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        FormError::new(
            "$",
            "bad-syntax",
            format!("the file is not UTF-8 text ({e})"),
        )
        .in_file(&label)
    })?;
    load_form_str(&text, FileFormat::from_path(path), &label)
}

/// Writes `bytes` to `path` atomically; an existing file is replaced only with `overwrite`
/// (see [`crate::output::write_output`]).
///
/// # Errors
/// [`Refusal`] (exit 2 at the command line): the file exists, or it cannot be written.
pub fn write_atomic(path: &Path, bytes: &[u8], overwrite: bool) -> Result<(), Refusal> {
    crate::output::write_output(path, bytes, overwrite)
}

/// The result of checking one form.
#[derive(Debug, serde::Serialize)]
pub struct FormCheck {
    /// The file.
    pub file: String,
    /// The form's name.
    pub name: String,
    /// Its question, if answered.
    pub question: Option<&'static str>,
    /// Fields answered, of those the question needs.
    pub answered: usize,
    /// Fields the question needs.
    pub needed: usize,
    /// Every finding (unanswered fields and contradictions).
    pub findings: Vec<Finding>,
    /// The capture's answer, with `--capture`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureAnswer>,
}

impl FormCheck {
    /// Whether the form (and the capture, if any) passes: complete, no contradictions, and
    /// a known answer.
    pub fn passed(&self) -> bool {
        self.findings.is_empty()
            && self.capture.as_ref().is_none_or(|c| {
                c.findings.is_empty()
                    && matches!(c.answer, Some(crate::verdict::Verdict::Known { .. }))
            })
    }
}

/// Checks one form, and answers it from `case` when given.
///
/// # Errors
/// [`FormError`] when `--capture` is given and the form cannot bind to it.
pub fn check_form(
    form: &Form,
    file: &str,
    case: Option<(&crate::case::Case, &str)>,
) -> Result<FormCheck, FormError> {
    let (answered, needed) = progress(form.raw());
    let capture = match case {
        Some((case, capture_file)) => {
            Some(answer_from_case(form, case, capture_file).map_err(|e| e.in_file(file))?)
        }
        None => None,
    };
    Ok(FormCheck {
        file: file.to_owned(),
        name: form.name().to_owned(),
        question: form.question().map(QuestionKind::code),
        answered,
        needed,
        findings: check(form),
        capture,
    })
}

/// Renders one form's check for people.
///
/// # Errors
/// Write errors of `out`.
pub fn write_check_text(r: &FormCheck, out: &mut dyn Write) -> io::Result<()> {
    // Answers, names and file names come from the form: escape terminal controls.
    let mut text = Vec::new();
    write_check_text_raw(r, &mut text)?;
    out.write_all(crate::escape::printable(&String::from_utf8_lossy(&text)).as_bytes())
}

fn write_check_text_raw(r: &FormCheck, out: &mut dyn Write) -> io::Result<()> {
    let question = r.question.unwrap_or("(no question yet)");
    let unanswered = r
        .findings
        .iter()
        .filter(|f| f.problem == Problem::Unanswered)
        .count();
    let contradictions = r.findings.len() - unanswered;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    if r.findings.is_empty() {
        writeln!(
            out,
            "{}: {question}: clean ({} of {} fields answered, no contradictions)",
            r.file, r.answered, r.needed
        )?;
    } else {
        writeln!(
            out,
            "{}: {question}: {}, {} unanswered",
            r.file,
            plural(contradictions, "contradiction"),
            unanswered
        )?;
        for f in &r.findings {
            writeln!(out, "  {f}")?;
        }
    }
    if let Some(c) = &r.capture {
        let asks = r
            .question
            .and_then(QuestionKind::from_code)
            .map(QuestionKind::asks)
            .unwrap_or("");
        writeln!(out, "  question: {question}: {asks}")?;
        writeln!(
            out,
            "  capture:  {} (case `{}`), bound by {}",
            c.capture, c.case, c.bound_by
        )?;
        match &c.answer {
            Some(v) => {
                writeln!(out, "  answer:   {v}")?;
                match v {
                    crate::verdict::Verdict::Known { notes, .. }
                    | crate::verdict::Verdict::Bounded { notes, .. } => {
                        for n in notes {
                            writeln!(out, "            note: {n}")?;
                        }
                    }
                    crate::verdict::Verdict::Unknown { reason, detail } => {
                        writeln!(out, "            why: {detail}")?;
                        writeln!(out, "            ({reason}: {})", reason.explanation())?;
                    }
                }
            }
            None => writeln!(
                out,
                "  answer:   none: the bound question is a {} question, not a duration",
                c.kind
            )?,
        }
        for b in &c.boundaries {
            let same = match b.same_instance {
                Some(true) => "same clock",
                Some(false) => {
                    "same domain, instance reads differently: make sure they name one epoch"
                }
                None => "the form names no complete clock",
            };
            let mut line = format!(
                "  {:<9} form {}, capture {} ({}): {same}",
                format!("{}:", b.boundary),
                b.form_clock.as_deref().unwrap_or("-"),
                b.capture_clock,
                b.source
            );
            if let Some(s) = &b.capture_stream {
                line.push_str(&format!(
                    ", stream: form `{}`, capture `{s}`",
                    b.form_stream.as_deref().unwrap_or("?")
                ));
            }
            writeln!(out, "{line}")?;
        }
        if !c.waits.is_empty() {
            writeln!(out, "  waits:    {}", c.waits.join(", "))?;
        }
        if c.findings.is_empty() {
            writeln!(
                out,
                "  the capture's boundaries are the ones the form declares"
            )?;
        } else {
            for f in &c.findings {
                writeln!(out, "  {f}")?;
            }
        }
    }
    Ok(())
}
