//! The exposed-time breakdown per device, following AMD TraceLens' split, in integer ns:
//!
//! ```text
//! span:           [...........................................)
//! compute:          [=====)     [=======)
//! communication:        [======)    [==)                        exposed: |comm \ compute|
//! memory:                            [===)   [==)               exposed: |mem \ (compute ∪ comm)|
//! idle:          .·                       ·       ·············  span − |all|
//! ```
//!
//! `exclusive compute + exposed communication + exposed memory + idle = span`, exactly:
//! exposed communication is `|C ∪ K| − |C|`, exposed memory `|C ∪ K ∪ M| − |C ∪ K|`, idle
//! `span − |C ∪ K ∪ M|`; the sum telescopes to the span. Each part is an exact union
//! ([`crate::interval::analyze`]), never a sum of durations.

use serde::Serialize;

use super::index::Index;
use super::model::{Activity, WorkClass};
use crate::interval::{analyze, Interval};
use crate::units::Nanos;

/// One device's breakdown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Breakdown {
    /// `gpu0`.
    pub device: String,
    /// First activity start → last activity end, ns.
    pub span_ns: i128,
    /// |compute|, ns.
    pub exclusive_compute_ns: i128,
    /// |communication \ compute|, ns.
    pub exposed_communication_ns: i128,
    /// |memory \ (compute ∪ communication)|, ns.
    pub exposed_memory_ns: i128,
    /// span − |all work|, ns.
    pub idle_ns: i128,
}

impl Breakdown {
    /// The sum of the four parts (equal to `span_ns` by construction; tests check it).
    pub fn total_ns(&self) -> i128 {
        self.exclusive_compute_ns + self.exposed_communication_ns + self.exposed_memory_ns + self.idle_ns
    }
}

/// The breakdown of one device's activities. `None` for no activities.
pub fn breakdown_of<'a>(device: &str, acts: impl IntoIterator<Item = &'a Activity>) -> Option<Breakdown> {
    let mut by: [Vec<Interval>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for a in acts {
        let Ok(iv) = Interval::new(Nanos::new(a.start), Nanos::new(a.end)) else {
            continue;
        };
        let k = match a.class() {
            WorkClass::Compute => 0,
            WorkClass::Communication => 1,
            WorkClass::Memory => 2,
        };
        by[k].push(iv);
    }
    let compute = analyze(&by[0]);
    let mut ck = by[0].clone();
    ck.extend_from_slice(&by[1]);
    let ck_a = analyze(&ck);
    ck.extend_from_slice(&by[2]);
    let all = analyze(&ck);
    let span = all.span_ns()?;
    Some(Breakdown {
        device: device.to_owned(),
        span_ns: span,
        exclusive_compute_ns: compute.union_ns,
        exposed_communication_ns: ck_a.union_ns - compute.union_ns,
        exposed_memory_ns: all.union_ns - ck_a.union_ns,
        idle_ns: span - all.union_ns,
    })
}

/// The breakdown of every device of the trace.
pub fn breakdowns(index: &Index) -> Vec<Breakdown> {
    index
        .by_device
        .iter()
        .filter_map(|(d, list)| {
            breakdown_of(
                &format!("gpu{d}"),
                list.iter().map(|&i| &index.trace.activities[i]),
            )
        })
        .collect()
}
