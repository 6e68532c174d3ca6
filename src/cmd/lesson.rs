//! `worksheet lesson`: its subcommands and arguments. Lessons themselves (the format,
//! measurement, grading, sheets, the class summary) are `crate::lesson`'s.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::cmd::exit::{Failure, EXIT_FAILED, EXIT_INPUT, EXIT_NO_CUDA, EXIT_OK};
use crate::lesson::{LessonError, LessonOutcome};

/// `worksheet lesson …`.
#[derive(Debug, Args)]
pub struct LessonArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: LessonCommand,
}

/// The lesson commands.
#[derive(Debug, Subcommand)]
pub enum LessonCommand {
    /// List the built-in lessons.
    List,
    /// Run a lesson's measurement and write its folder: the data, handout.md, answers.txt.
    #[command(
        after_help = "Examples:\n  worksheet lesson start three-boundaries -o alice\n  \
worksheet lesson start three-boundaries -o class/bob\n  \
worksheet lesson start cuda-streams -o alice-streams --simulate\n\n\
Exit codes: 0 written, 2 a file exists (use --force) or the lesson is malformed, 3 CUDA not available (use --simulate)."
    )]
    Start {
        /// A built-in lesson id (see `lesson list`) or a lesson file.
        lesson: String,
        /// The lesson folder to write (created if missing).
        #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
        out: PathBuf,
        /// Run CUDA lessons on the built-in simulator (labelled simulated in the handout).
        #[arg(long)]
        simulate: bool,
        /// Overwrite files in the folder that exist.
        #[arg(long)]
        force: bool,
        /// Pin an executor lesson's work to this many passes per job (its calibration
        /// line, or a caution, names the count): the run does the same work on any machine.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=(1u64 << 40)))]
        passes: Option<u64>,
    },
    /// Check a folder's answers against the folder's own data, with feedback.
    #[command(after_help = "Example:\n  worksheet lesson check alice\n\n\
Exit codes: 0 every answer is right, 1 an answer is wrong or missing, or the run must be re-run,\n\
2 the folder, lesson or answer sheet is malformed.")]
    Check {
        /// The lesson folder.
        dir: PathBuf,
        /// The answer sheet (default: DIR/answers.csv if present, else DIR/answers.txt).
        #[arg(long, value_name = "FILE")]
        answers: Option<PathBuf>,
    },
    /// Answer the folder's questions at prompts (saved after every answer; resumable).
    #[command(after_help = "Example:\n  worksheet lesson answer alice\n\n\
Answers are read, not graded: `worksheet lesson check` grades them.\n\
Exit codes: 0 every question offered, 1 the input ended first (answers so far are saved), 2 a malformed folder or sheet.")]
    Answer {
        /// The lesson folder.
        dir: PathBuf,
        /// The answer sheet (default: DIR/answers.csv if present, else DIR/answers.txt).
        #[arg(long, value_name = "FILE")]
        answers: Option<PathBuf>,
    },
    /// Print the answers a folder's data implies, with the evidence (for the teacher).
    #[command(after_help = "Example:\n  worksheet lesson key alice\n\n\
Prints every sheet line (predictions and measurements), its answer from the folder's own\n\
data, the tolerance, the misconceptions it catches and the evidence.\n\
Exit codes: 0 printed, 2 the folder or lesson is malformed.")]
    Key {
        /// The lesson folder.
        dir: PathBuf,
    },
    /// Summarize many students' folders of one lesson.
    #[command(
        after_help = "Example:\n  worksheet lesson class class/*/ --export-csv class.csv\n\n\
Exit codes: 0 summarized, 2 a folder is malformed or the folders hold different lessons."
    )]
    Class {
        /// The students' lesson folders.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Also write one row per student as CSV.
        #[arg(long, value_name = "FILE")]
        export_csv: Option<PathBuf>,
        /// Overwrite the CSV file if it exists.
        #[arg(long)]
        force: bool,
    },
}

/// Runs a lesson command on this machine.
///
/// # Errors
/// [`LessonError`] for malformed input, files that exist, no CUDA, a failed measurement.
pub fn run(args: &LessonArgs, out: &mut dyn Write) -> Result<LessonOutcome, LessonError> {
    match &args.command {
        LessonCommand::List => {
            crate::lesson::write_list(out)?;
            Ok(LessonOutcome::Ok)
        }
        LessonCommand::Start {
            lesson,
            out: dir,
            simulate,
            force,
            passes,
        } => {
            let mut bench = crate::lesson::measure::HostBench {
                simulate: *simulate,
            };
            crate::lesson::start_with(lesson, dir, *force, *passes, &mut bench, out)
        }
        LessonCommand::Check { dir, answers } => {
            let result = crate::lesson::check(dir, answers.as_deref())?;
            crate::lesson::write_check(&result, out)?;
            Ok(result.outcome())
        }
        LessonCommand::Answer { dir, answers } => {
            use std::io::IsTerminal;
            let stdin = io::stdin();
            // Asked again after a refused answer only when a person is at a terminal.
            let retry = stdin.is_terminal();
            let end = crate::lesson::answer_folder(
                dir,
                answers.as_deref(),
                &mut stdin.lock(),
                out,
                retry,
            )?;
            // A refused answer came back as an error; the input ending first is exit 1.
            Ok(if end == crate::lesson::fill::AnswerEnd::Complete {
                LessonOutcome::Ok
            } else {
                LessonOutcome::NotAllRight
            })
        }
        LessonCommand::Key { dir } => {
            let folder = crate::lesson::Folder::load(dir)?;
            let key = folder.key()?;
            crate::lesson::write_key(&folder, &key, out)?;
            Ok(LessonOutcome::Ok)
        }
        LessonCommand::Class {
            dirs,
            export_csv,
            force,
        } => {
            if let Some(p) = export_csv {
                if !force && p.exists() {
                    return Err(crate::lesson::exists(p));
                }
            }
            let summary = crate::lesson::class_summary(dirs)?;
            crate::lesson::class::write_text(&summary, out)?;
            if let Some(p) = export_csv {
                crate::lesson::write_file(p, &crate::lesson::class::csv(&summary)?, *force)?;
                writeln!(out, "wrote {}", p.display())?;
            }
            Ok(LessonOutcome::Ok)
        }
    }
}

/// The exit code of a lesson command that ended: 0 done (every answer right where answers
/// were checked), 1 an answer is wrong or missing, or the run must be re-run.
pub fn outcome_code(outcome: LessonOutcome) -> u8 {
    match outcome {
        LessonOutcome::Ok => EXIT_OK,
        LessonOutcome::NotAllRight => EXIT_FAILED,
    }
}

/// A lesson command's error as a failure: its message and exit code (2 for input, output
/// and measurement errors, 3 without CUDA; a closed pipe is exit 0).
pub fn failure(e: LessonError) -> Failure {
    let code = match e {
        LessonError::Write(io) => return Failure::from(io),
        LessonError::NoCuda(_) => EXIT_NO_CUDA,
        LessonError::Input(_) | LessonError::Output(_) | LessonError::Measurement(_) => EXIT_INPUT,
    };
    Failure {
        code,
        message: e.to_string(),
    }
}
