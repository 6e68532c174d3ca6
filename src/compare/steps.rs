//! Steps as a sample (issue 26 §7, review N9): a training run's steps are repetitions of one
//! piece of work, so `compare` compares the steady steps of each run as one series with the
//! bootstrap verdict, instead of judging every step alone ("one value per run: nothing
//! measures the noise").
//!
//! The step questions an import writes are `step:<NAME>#<N>:host` and
//! `step:<NAME>#<N>:launched` (`step:ProfilerStep#6:host`). Each family (`NAME`, kind) with
//! at least two known steps becomes one row `step:<NAME>#*:<kind>` of group `steps`, whose
//! samples are the steps after the run's warm-up ([`crate::stats::warmup::warmup_prefix`]:
//! leading steps slower than every later one by more than the steps' noise). The one-step
//! rows stay, as detail.
//!
//! ```text
//! BASE  #6 174.0  #7 176.9  #8 181.3  …   (ms)   ┐  one series each,
//! NEW   #6 123.9  #7 126.8  #8 126.3  …          ┘  bootstrap of the median ratio
//! ```

use std::collections::BTreeMap;

use super::measure::{Data, Metric};
use crate::units::Nanos;

/// `(family name, step number)` of a step question id: `step:ProfilerStep#6:host` →
/// `("step:ProfilerStep#*:host", 6)`; `None` for any other id.
pub fn step_of(id: &str) -> Option<(String, u64)> {
    let rest = id.strip_prefix("step:")?;
    let (name, kind) = rest.rsplit_once(':')?;
    let (base, number) = name.rsplit_once('#')?;
    let n: u64 = number.parse().ok()?;
    Some((format!("step:{base}#*:{kind}"), n))
}

/// The `steps` rows of a run's question metrics: one per family of two or more known steps,
/// its samples the steady steps (the warm-up prefix left out), sorted.
pub fn step_series(metrics: &[Metric]) -> Vec<Metric> {
    let mut families: BTreeMap<String, Vec<(u64, Nanos)>> = BTreeMap::new();
    for m in metrics.iter().filter(|m| m.group == "question") {
        if let (Some((family, n)), Data::Single(v)) = (step_of(&m.name), &m.data) {
            families.entry(family).or_default().push((n, *v));
        }
    }
    families
        .into_iter()
        .filter(|(_, steps)| steps.len() >= 2)
        .map(|(name, mut steps)| {
            steps.sort_by_key(|(n, _)| *n);
            let in_order: Vec<Nanos> = steps.iter().map(|(_, v)| *v).collect();
            let warmup = crate::stats::warmup::warmup_prefix(&in_order).len;
            let mut steady = in_order[warmup..].to_vec();
            steady.sort();
            Metric {
                group: "steps",
                name,
                data: Data::Samples(steady),
            }
        })
        .collect()
}

/// What a `steps` row leaves out, for its `why`: `steady steps: BASE 5 of 6, NEW 6 of 6`.
pub fn steady_note(
    family: &str,
    base: &[Metric],
    new: &[Metric],
    base_n: usize,
    new_n: usize,
) -> String {
    let of = |metrics: &[Metric]| {
        metrics
            .iter()
            .filter(|m| m.group == "question")
            .filter(|m| step_of(&m.name).is_some_and(|(f, _)| f == family))
            .count()
    };
    format!(
        "steady steps, the warm-up left out: BASE {base_n} of {}, NEW {new_n} of {}",
        of(base),
        of(new)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(name: &str, ms: i64) -> Metric {
        Metric {
            group: "question",
            name: name.into(),
            data: Data::Single(Nanos::new(ms * 1_000_000)),
        }
    }

    #[test]
    fn step_ids_name_their_family_and_number() {
        assert_eq!(
            step_of("step:ProfilerStep#6:host"),
            Some(("step:ProfilerStep#*:host".to_owned(), 6))
        );
        assert_eq!(step_of("step:ProfilerStep#x:host"), None);
        assert_eq!(step_of("stream:gpu0-s7"), None);
    }

    #[test]
    fn a_runs_steps_are_one_series_without_the_warm_up() {
        // #1 is slower than every later step by far more than their noise: a warm-up.
        let metrics = vec![
            q("step:ProfilerStep#1:host", 560),
            q("step:ProfilerStep#2:host", 100),
            q("step:ProfilerStep#3:host", 99),
            q("step:ProfilerStep#4:host", 101),
            q("step:ProfilerStep#5:host", 98),
            q("other", 7),
        ];
        let series = step_series(&metrics);
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].name, "step:ProfilerStep#*:host");
        assert_eq!(
            series[0].data,
            Data::Samples(
                [98, 99, 100, 101]
                    .map(|ms| Nanos::new(ms * 1_000_000))
                    .to_vec()
            )
        );
        assert_eq!(
            steady_note("step:ProfilerStep#*:host", &metrics, &metrics, 4, 4),
            "steady steps, the warm-up left out: BASE 4 of 5, NEW 4 of 5"
        );
    }
}
