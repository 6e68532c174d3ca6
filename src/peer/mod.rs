//! Other tools' numbers, reproduced from the same trace rule by rule, so a reader can see
//! which of their assumptions makes each difference from `worksheet`'s exact answer.
//!
//! `hta`: Holistic Trace Analysis 0.5.0's temporal breakdown (`import --compat hta`,
//! docs/hta-compat.md). A peer reads the trace floor (`crate::trace`), never the case.

pub mod hta;
