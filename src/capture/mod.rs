//! Real captures of the three boundaries, and the stream-overlap lab.
//!
//! `worksheet capture` runs a kernel that busy-waits on `%globaltimer` for N ns and records,
//! for every run and each on its own clock, the **host submission** (host timer around
//! event record + launch + event record), the **device interval** (two timing-enabled events
//! in one stream, read after the end event completed), the **host-observed completion**
//! (from a synchronized start to the return of a wait on the end event) and the **kernel
//! body** (`%globaltimer`), with the stream idle or held behind a gate ([`record::Mode`]).
//! It calibrates the event clock (step and floor) and shows the SPEC's unknowns on the
//! device ([`record::Demos`]). The result is a case file that `check`, `eval` and the forms
//! read, a per-run CSV, and a table of median / P90 / max per boundary.
//!
//! Only `crate::cuda` (feature `cuda`) talks to a GPU. Everything here is pure and
//! builds everywhere:
//!
//! | module | what |
//! |---|---|
//! | [`backend`] | the device operations, as a trait |
//! | [`procedure`] | the capture: calls, order, timers |
//! | [`lcg`] | the lab kernel's LCG and its closed form (the lab is `lab::streams`) |
//! | [`record`] | what was recorded (integer ns; the one `f32` conversion) |
//! | [`build`] | a record as a case file, with its expectations |
//! | [`report`] | per-run CSV and tables |
//! | [`relations`] | what must hold of any real capture, without exact times |
//! | [`sim`] | a deterministic simulator of the backend, for tests and `--simulate` |
//! | `cmd::capture` | the two subcommands (in the command layer) |

pub mod backend;
pub mod build;
pub mod lcg;
pub mod procedure;
pub mod record;
pub mod relations;
pub mod report;
pub mod sim;

pub use record::{ms_to_nanos, utc_from_unix};
