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
//! ([`crate::interval::analyze_numbers`]), never a sum of durations.

use serde::Serialize;

use super::index::Index;
use crate::interval::{analyze_numbers, Interval};
use crate::trace::model::{Activity, WorkClass};
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
        self.exclusive_compute_ns
            + self.exposed_communication_ns
            + self.exposed_memory_ns
            + self.idle_ns
    }
}

/// The breakdown of one device's activities. `None` for no activities.
pub fn breakdown_of<'a>(
    device: &str,
    acts: impl IntoIterator<Item = &'a Activity>,
) -> Option<Breakdown> {
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
    let compute = analyze_numbers(&by[0]);
    let mut ck = by[0].clone();
    ck.extend_from_slice(&by[1]);
    let ck_a = analyze_numbers(&ck);
    ck.extend_from_slice(&by[2]);
    let all = analyze_numbers(&ck);
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::trace::model::ActivityKind;

    fn act(kind: ActivityKind, name: &str, start: i64, end: i64) -> Activity {
        Activity {
            kind,
            name: name.into(),
            device: 0,
            stream: 7,
            start,
            end,
            correlation: None,
            external: None,
            copy: None,
            collective: None,
            bytes: None,
        }
    }

    /// ```text
    /// 0    10   20   30   40   50   60   70   80
    /// [compute=====)      [compute=)
    ///      [nccl==========)    [nccl=======)
    ///                                   [memcpy=)   [memset)
    /// ```
    #[test]
    fn communication_under_compute_is_not_exposed() {
        let acts = [
            act(ActivityKind::Kernel, "gemm", 0, 20),
            act(ActivityKind::Kernel, "gemm", 30, 40),
            act(ActivityKind::Kernel, "ncclKernel_AllReduce", 10, 30),
            act(ActivityKind::Kernel, "ncclKernel_AllReduce", 35, 50),
            act(ActivityKind::Memcpy, "Memcpy HtoD", 45, 55),
            act(ActivityKind::Memset, "Memset", 60, 70),
        ];
        let b = breakdown_of("gpu0", &acts).unwrap();
        assert_eq!(b.span_ns, 70);
        assert_eq!(b.exclusive_compute_ns, 30);
        assert_eq!(b.exposed_communication_ns, 20); // 20..30 and 40..50
        assert_eq!(b.exposed_memory_ns, 15); // 50..55 and 60..70
        assert_eq!(b.idle_ns, 5); // 55..60
        assert_eq!(b.total_ns(), b.span_ns);
    }

    #[test]
    fn no_activities_have_no_breakdown() {
        assert_eq!(breakdown_of("gpu0", &[]), None);
    }

    fn kind_of(k: u8) -> (ActivityKind, &'static str) {
        match k % 3 {
            0 => (ActivityKind::Kernel, "gemm"),
            1 => (ActivityKind::Kernel, "ncclKernel"),
            _ => (ActivityKind::Memcpy, "Memcpy"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The four parts add up to the span, each is what a tick-by-tick count says.
        #[test]
        fn the_parts_sum_to_the_span_and_match_a_tick_oracle(
            raw in proptest::collection::vec((0i64..40, 0i64..12, 0u8..3), 1..14)
        ) {
            let acts: Vec<Activity> = raw
                .iter()
                .map(|&(s, len, k)| {
                    let (kind, name) = kind_of(k);
                    act(kind, name, s, s + len)
                })
                .collect();
            let b = breakdown_of("gpu0", &acts).unwrap();
            prop_assert_eq!(b.total_ns(), b.span_ns);
            let lo = acts.iter().map(|a| a.start).min().unwrap();
            let hi = acts.iter().map(|a| a.end).max().unwrap();
            let (mut c, mut k, mut m, mut idle) = (0i128, 0i128, 0i128, 0i128);
            for t in lo..hi {
                let on = |class: WorkClass| acts.iter().any(|a| a.class() == class && a.start <= t && t < a.end);
                if on(WorkClass::Compute) {
                    c += 1;
                } else if on(WorkClass::Communication) {
                    k += 1;
                } else if on(WorkClass::Memory) {
                    m += 1;
                } else {
                    idle += 1;
                }
            }
            prop_assert_eq!(b.span_ns, i128::from(hi - lo));
            prop_assert_eq!(
                (b.exclusive_compute_ns, b.exposed_communication_ns, b.exposed_memory_ns, b.idle_ns),
                (c, k, m, idle)
            );
        }
    }
}
