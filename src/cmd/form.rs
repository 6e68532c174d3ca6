//! `worksheet form`: its subcommands and arguments, the files walked by `form check`, and the
//! exit code. Forms themselves (model, fields, fill, check, capture) are `crate::form`'s.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use crate::cmd::exit::{Failure, EXIT_FAILED, EXIT_INPUT, EXIT_OK};
use crate::form::format::{blank, render, FileFormat};
use crate::form::{
    check_form, fill, fill_file, read_form, write_atomic, write_check_text, FillOptions, FormCheck,
    QuestionKind,
};

/// `worksheet form ...`
#[derive(Debug, Args)]
pub struct FormArgs {
    /// What to do with a form.
    #[command(subcommand)]
    pub command: FormCommand,
}

/// A form's file format, as the command line names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormFile {
    /// JSON with explanations as `"// field"` keys.
    Json,
    /// One row per field: `field,value,explanation`.
    Csv,
}

impl From<FormFile> for FileFormat {
    fn from(f: FormFile) -> Self {
        match f {
            FormFile::Json => FileFormat::Json,
            FormFile::Csv => FileFormat::Csv,
        }
    }
}

/// A question, as the command line names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum QuestionArg {
    /// How long submitting took (no completion claim).
    Submission,
    /// How long the device took between two events of one stream.
    DeviceInterval,
    /// How long the caller waited for the work.
    HostCompletion,
    /// How long a whole request took.
    EndToEnd,
}

impl From<QuestionArg> for QuestionKind {
    fn from(q: QuestionArg) -> Self {
        match q {
            QuestionArg::Submission => QuestionKind::Submission,
            QuestionArg::DeviceInterval => QuestionKind::DeviceInterval,
            QuestionArg::HostCompletion => QuestionKind::HostCompletion,
            QuestionArg::EndToEnd => QuestionKind::EndToEnd,
        }
    }
}

/// Output format of `form check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// Lines for people.
    Text,
    /// Findings and answers as JSON.
    Json,
}

/// The `form` subcommands.
#[derive(Debug, Subcommand)]
pub enum FormCommand {
    /// Print or write a blank form: only the fields the question needs, each explained.
    #[command(
        after_help = "Example:\n  worksheet form new --question host-completion -o my.json\n  worksheet form new --format csv -o my.csv\n\n\
Exit codes: 0 written, 2 the file exists (use --force) or cannot be written."
    )]
    New {
        /// The question the form declares (default: leave it to the person filling it).
        #[arg(long, value_enum)]
        question: Option<QuestionArg>,
        /// Write to FILE (atomically) instead of printing. Never overwrites without --force.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Overwrite an existing FILE.
        #[arg(long)]
        force: bool,
        /// File format (default: from the file's extension, `.csv` for CSV, else JSON).
        #[arg(long, value_enum)]
        format: Option<FormFile>,
        /// The form's name (default: the file name without extension).
        #[arg(long)]
        name: Option<String>,
    },
    /// Walk through the unanswered fields in the terminal, saving after every answer.
    #[command(
        after_help = "Answers are read line by line from standard input, so a pipe drives it too\n\
(`printf 'host-completion\\n' | worksheet form fill my.json` answers the first field);\n\
without a terminal, --set fills fields directly.\n\n\
Examples:\n  worksheet form fill my.json --set wait.scope=event --no-prompt\n  \
worksheet form fill my.json --no-prompt --set binding=timer=completion\n\n\
Without a terminal, the first refused answer ends the run (exit 2), never asked again.\n\n\
Exit codes: 0 saved and complete, 130 interrupted by Ctrl-C (every answer given so far is already saved), 2 the form is malformed, a --set value or an answer is refused, or the input ended first (what was answered is saved: run it again to go on)."
    )]
    Fill {
        /// The form (created blank when it does not exist).
        file: PathBuf,
        /// Set a field without a prompt: FIELD=VALUE (repeatable), like `start.clock.instance=boot-a`.
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
        /// Apply --set values and save, without prompting for the rest.
        #[arg(long)]
        no_prompt: bool,
        /// The question, when the file is created here.
        #[arg(long, value_enum)]
        question: Option<QuestionArg>,
    },
    /// List every contradiction in forms; with --capture, answer each form's question.
    #[command(after_help = "Examples:\n  worksheet form check my.json\n  \
worksheet form check my.json --capture fixtures/cases/three-boundaries.json\n\n\
Exit codes: 0 every form is complete, without contradictions (and, with\n\
--capture, the capture agrees and answers known), 1 a form has unanswered\n\
fields or contradictions (or the capture disagrees or answers unknown),\n\
2 a form or the capture is malformed or missing.")]
    Check {
        /// Form files (.json or .csv) or folders of them.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// A case or capture file to answer the forms' questions from (through their `binding`).
        #[arg(long, value_name = "CASE")]
        capture: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
        format: CheckFormat,
    },
}

/// Runs a `form` subcommand, writing its normal output to `out`.
///
/// # Errors
/// A [`Failure`] (exit 2) for malformed forms or captures, refused values and I/O errors.
pub fn run(args: &FormArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    match &args.command {
        FormCommand::New {
            question,
            output,
            force,
            format,
            name,
        } => {
            let fmt = format.map(FileFormat::from).unwrap_or_else(|| {
                output
                    .as_deref()
                    .map(FileFormat::from_path)
                    .unwrap_or(FileFormat::Json)
            });
            let form = blank(question.map(Into::into), name.as_deref());
            let text = render(&form, fmt);
            match output {
                None => out.write_all(text.as_bytes())?,
                Some(path) => {
                    write_atomic(path, text.as_bytes(), *force)?;
                    writeln!(out, "wrote a blank form to {}", path.display())?;
                    writeln!(out, "next: worksheet form fill {}", path.display())?;
                }
            }
            Ok(EXIT_OK)
        }
        FormCommand::Fill {
            file,
            set,
            no_prompt,
            question,
        } => {
            use std::io::IsTerminal;
            let stdin = io::stdin();
            let terminal = stdin.is_terminal();
            let mut input = stdin.lock();
            let options = FillOptions {
                sets: set.clone(),
                no_prompt: *no_prompt,
                question: question.map(Into::into),
                session: fill::Session {
                    echo: !terminal,
                    retry: terminal,
                },
            };
            fill_file(file, &options, &mut input, out)?;
            Ok(EXIT_OK)
        }
        FormCommand::Check {
            files,
            capture,
            format,
        } => check_files(files, capture.as_deref(), *format, out),
    }
}

/// Form files under `paths`: files as given, folders searched (recursively, through
/// [`crate::input::walk`]: no folder entered twice) for `.json` and `.csv`, in path order;
/// with the folders that could not be walked.
fn form_files(paths: &[PathBuf]) -> crate::input::Walk {
    crate::input::walk(paths, &|p: &Path| {
        matches!(p.extension().and_then(|e| e.to_str()), Some("json" | "csv"))
    })
}

fn check_files(
    paths: &[PathBuf],
    capture: Option<&Path>,
    format: CheckFormat,
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    let case = match capture {
        Some(p) => Some((crate::case::load_case_file(p)?, p.display().to_string())),
        None => None,
    };
    let mut results = Vec::new();
    let walk = form_files(paths);
    let mut errors: Vec<String> = walk.errors.iter().map(ToString::to_string).collect();
    let files = walk.files;
    if files.is_empty() && errors.is_empty() {
        // reliability review: `form check EMPTYDIR` said `error: no form files (.json, .csv)
        // found`, naming no folder and with no code
        let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(crate::error::InputError::new(
            "$",
            "bad-value",
            "no form file here: a form (`*.json` or `*.csv`, as `worksheet form new` writes it), or a folder holding forms, is expected",
        )
        .in_file(named.join(", "))
        .into());
    }
    for path in files {
        let label = path.display().to_string();
        let result = read_form(&path).and_then(|form| {
            check_form(&form, &label, case.as_ref().map(|(c, f)| (c, f.as_str())))
        });
        match result {
            Ok(r) => results.push(r),
            Err(e) => errors.push(e.to_string()),
        }
    }
    match format {
        CheckFormat::Json => {
            let report = serde_json::json!({
                "format": "worksheet-form-check",
                "version": 1,
                "results": results,
            });
            serde_json::to_writer_pretty(&mut *out, &report).map_err(io::Error::from)?;
            writeln!(out)?;
        }
        CheckFormat::Text => {
            for r in &results {
                write_check_text(r, out)?;
            }
        }
    }
    if !errors.is_empty() {
        return Err(Failure {
            message: errors.join("\n"),
            code: EXIT_INPUT,
        });
    }
    Ok(if results.iter().all(FormCheck::passed) {
        EXIT_OK
    } else {
        EXIT_FAILED
    })
}
