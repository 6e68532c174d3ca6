//! # worksheet — GPU and async timing that says "unknown" when it must
//!
//! Asynchronous APIs return before their work is done. People then mistake launch time for
//! kernel time, add up overlapping phases, subtract timestamps of unrelated clocks and
//! count warm-up as steady state. `worksheet` takes declared boundaries (a *case*: clocks,
//! streams, events, phases, waits, host timers and the questions asked about them),
//! computes an exact interval algebra per clock, and answers every question either
//! **known** — an exact integer-nanosecond value with notes — or **unknown**, with a
//! stable reason code.
//!
//! ```
//! use worksheet::case::load_case_str;
//! use worksheet::engine::evaluate;
//!
//! let text = std::fs::read_to_string("fixtures/cases/three-boundaries.json").unwrap();
//! let case = load_case_str(&text, "three-boundaries.json").unwrap();
//! let report = evaluate(&case);
//! let completion = report.answer("host-completion").unwrap();
//! assert_eq!(completion.headline(), "known 140 us");
//! ```
//!
//! Layout: [`units`] (exact values), [`clock`] (clocks and timestamps), [`interval`] (the
//! algebra), [`verdict`] (known / unknown and reason codes), [`case`] (the file format),
//! [`engine`] (answers), [`check`] (expected versus actual), [`form`] (boundary-declaration
//! forms: blank, fill, check, answer from a capture), [`lab`] (labs that measure), [`render`]
//! (timeline pictures), [`capture`] (real CUDA captures and the stream-overlap lab; the
//! driver-facing half is `cuda`, feature `cuda`). The core never does I/O
//! except in [`case`]'s readers and [`check`]'s file discovery.

#![deny(missing_docs)]

pub mod audit;
pub mod capture;
pub mod case;
pub mod check;
pub mod cli;
pub mod clock;
pub mod cmd;
pub mod compare;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod engine;
pub mod error;
pub mod escape;
pub mod export;
pub mod form;
pub mod import;
pub mod input;
pub mod interval;
pub mod interval_set;
pub mod kind;
pub mod lab;
pub mod lesson;
pub mod memory;
pub mod output;
pub mod peer;
pub mod progress;
pub mod relation;
pub mod render;
pub mod report;
pub mod schedule;
pub mod stats;
pub mod table;
#[cfg(any(test, feature = "proptest"))]
pub mod testing;
pub mod trace;
pub mod units;
pub mod verdict;
