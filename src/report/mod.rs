//! `worksheet report INPUT -o report.html`: one self-contained HTML page of a case, a
//! capture, a lab's case file or a trace (imported on the way).
//!
//! The page holds the verdict table (known / unknown with its reason), the per-stream and
//! per-device tables, one timeline panel per clock (never a shared axis) whose zoom and pan
//! recompute the exact per-pixel density from the intervals embedded in the page, and
//! sections that other commands can add ([`html::Section`]: the audit findings go there).
//! No network: CSS and JS are inline and hand-written ([`html`]). The command (arguments, the file
//! written) is `cmd/report.rs`.

pub mod audit;
pub mod audit_views;
pub mod html;
pub mod ranks;
pub mod steps;

pub use crate::import::input::{load_input, Source};
