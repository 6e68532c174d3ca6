//! The command layer: one file per subcommand, with its clap arguments, its `run`, and the
//! files it writes. It is the only layer above the library's analyses: commands call down into
//! readers (`import`), the recorded model (`trace`) and analyses (`audit`, `engine`), and
//! nothing below names a command.
//!
//! ```text
//! cli.rs (the clap tree) ──▶ cmd::<command>::run ──▶ import / trace / audit / engine …
//! ```
//!
//! Here: `audit` (and `audit DIR`), `import` (and its multi-rank run), `capture`, `lab`,
//! `render`, `report`, `export`, `form`, `lesson` and `compare`. `check` and `eval` keep their
//! few lines of run in `cli.rs`, the clap tree, beside their argument variants.
//! `tests/architecture.rs` keeps the layers (nothing below this folder names it) and that only
//! `cmd/` and `cli.rs` name clap.

pub mod audit;
pub mod capture;
pub mod compare;
pub mod export;
pub mod form;
pub mod import;
pub mod lab;
pub mod lesson;
pub mod render;
pub mod report;
