//! The command layer: one file per subcommand, with its clap arguments, its `run`, and the
//! files it writes. It is the only layer above the library's analyses: commands call down into
//! readers (`import`), the recorded model (`trace`) and analyses (`audit`, `engine`), and
//! nothing below names a command.
//!
//! ```text
//! cli.rs (the clap tree) ──▶ cmd::<command>::run ──▶ import / trace / audit / engine …
//! ```
//!
//! `audit` lives here; the other subcommands still keep their arguments and `run` beside
//! their analysis (`import/mod.rs`, `render/`, `report/`, `export/`, `form/`, `lab/`,
//! `lesson/`, `capture/command.rs`, and `check`/`eval`/`compare` in `cli.rs`), and move here one
//! by one. `tests/architecture.rs` keeps the rules that already hold.

pub mod audit;
pub mod capture;
pub mod import;
pub mod lab;
