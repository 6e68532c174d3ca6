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
//! `render`, `report` and `export`. Still beside their analyses, to move next: `form`
//! (`form/mod.rs`), `lesson` (`lesson/mod.rs`), and `check`/`eval`/`compare` (in `cli.rs`).
//! `tests/architecture.rs` keeps the layers: nothing below this folder names it.

pub mod audit;
pub mod capture;
pub mod export;
pub mod import;
pub mod lab;
pub mod render;
pub mod report;
