//! What a compared run is made of: named measurements ([`Metric`]) of a [`Run`], each known,
//! a sample, or unknown with its reason ([`Data`]). The readers (`input`) fill them; the step
//! series (`steps`), the statistics and the renderers read them.

use std::collections::BTreeMap;

use crate::units::Nanos;
use crate::verdict::Reason;

/// What one measurement holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    /// Raw samples, sorted (the runs of a series, the instances of a kernel).
    Samples(Vec<Nanos>),
    /// Instances in the order they occurred (the launches of one kernel): two runs with the
    /// same count are paired instance by instance.
    Instances(Vec<Nanos>),
    /// One exact value (a question's answer, a stream's busy time).
    Single(Nanos),
    /// The run's own answer is unknown.
    Unknown {
        /// Why.
        reason: Reason,
        /// The engine's detail.
        detail: String,
    },
}

/// One named measurement of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// What it is grouped under: `boundary` (a series or a lab interval), `question`,
    /// `stream`, `device`, `kernel`.
    pub group: &'static str,
    /// Its name within the group (a series id, a question id, a kernel name).
    pub name: String,
    /// The values.
    pub data: Data,
}

/// The two kinds of input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A `worksheet-case` file.
    Case,
    /// A `worksheet lab executor --export-json` report.
    LabExecutor,
}

impl Kind {
    /// For messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Case => "case",
            Kind::LabExecutor => "lab executor report",
        }
    }
}

/// One side of a comparison.
#[derive(Clone, Debug)]
pub struct Run {
    /// The file as named.
    pub file: String,
    /// Which kind of input.
    pub kind: Kind,
    /// What must match between two comparable runs: device, clocks, workload, configuration.
    pub context: BTreeMap<String, String>,
    /// The measurements, in file order.
    pub metrics: Vec<Metric>,
}
