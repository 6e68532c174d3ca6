//! The command layer: one file per subcommand, with its clap arguments, its `run`, and the
//! files it writes. It is the only layer above the library's analyses: commands call down into
//! readers (`import`), the recorded model (`trace`) and analyses (`audit`, `engine`), and
//! nothing below names a command.
//!
//! ```text
//! cli.rs (the clap tree) ──▶ cmd::<command>::run ──▶ import / trace / audit / engine …
//! ```
//!
//! Here: `check`, `eval`, `audit` (and `audit DIR`), `import` (and its multi-rank run),
//! `capture`, `lab`, `render`, `report`, `export`, `form`, `lesson` and `compare`; `cli.rs`
//! holds only the clap tree and the dispatch. Exit codes ([`exit`]) live here too: the
//! modules below return their own errors and outcomes, and each command maps them to a code.
//! `tests/architecture.rs` keeps the layers (nothing below this folder names it) and that only
//! `cmd/` and `cli.rs` name clap or exit codes.

pub mod audit;
pub mod capture;
pub mod check;
pub mod compare;
pub mod eval;
pub mod exit;
pub mod export;
pub mod form;
pub mod import;
pub mod lab;
pub mod lesson;
pub mod render;
pub mod report;
