//! Launch statistics: for every activity joined to the host call that launched it (same
//! correlation), the call's duration against the activity's, and the launch delay; exact in
//! integer ns, summed per kernel name and over the trace.
//!
//! ```text
//! host:   [cudaLaunchKernel)            call duration = call end − call start
//!         │                 ·delay·)    launch delay  = activity start − call end (HTA's)
//! gpu:    │                        [k====)    submit→start = activity start − call start
//!         └───────── submit→start ─┘
//! ```
//!
//! HTA 0.5.0's `get_cuda_kernel_launch_stats` computes the same per correlation, with three
//! differences named in `docs/hta-views.md`: it joins only calls named `cudaLaunchKernel`,
//! `cudaLaunchKernelExC`, `cudaMemcpyAsync` and `cudaMemsetAsync` (here every call joined by
//! correlation: `cuLaunchKernel`, synchronous `cudaMemcpy`, ...), it clips a negative launch
//! delay (the activity started before the call returned) to 0 (here the signed sum, and the
//! clipped sum beside it), and it rounds to whole µs.
//!
//! The counts use HTA's plots' thresholds, labelled assumptions ([`SHORT_CALL_AT_MOST_NS`],
//! [`LONG_DELAY_ABOVE_NS`]): a **short kernel** is one that runs for less time than its launch
//! call took, with a call of at most 50 µs (the GPU waits on the host: launching costs more
//! than running); a **long call** takes more than 50 µs; a **long delay** is over 100 µs.

use std::collections::BTreeMap;

use serde::Serialize;

use super::index::Index;

/// HTA's `runtime_cutoff` default, 50 µs: a call at most this long, launching an activity
/// shorter than itself, makes a short kernel; a longer call is a long call.
pub const SHORT_CALL_AT_MOST_NS: i64 = 50_000;

/// HTA's `launch_delay_cutoff` default, 100 µs: a launch delay above it is a long delay.
pub const LONG_DELAY_ABOVE_NS: i64 = 100_000;

/// Sums over a set of launches.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaunchSums {
    /// Activities joined to their launch call.
    pub count: u64,
    /// Σ launch-call durations, ns.
    pub call_ns: i128,
    /// Σ activity durations, ns.
    pub gpu_ns: i128,
    /// Σ (activity start − call end), signed, ns.
    pub launch_delay_ns: i128,
    /// Σ max(0, activity start − call end), ns: HTA's clipped delay.
    pub launch_delay_clipped_ns: i128,
    /// Σ (activity start − call start), ns.
    pub submit_to_start_ns: i128,
    /// The largest launch delay, ns (exact: `i128`, as a delay between two 64-bit times need
    /// not fit in 64 bits).
    pub max_launch_delay_ns: Option<i128>,
    /// Activities that started before their call returned (negative launch delay).
    pub started_before_call_returned: u64,
    /// Short kernels: activity shorter than its call, call ≤ [`SHORT_CALL_AT_MOST_NS`].
    pub short: u64,
    /// Calls longer than [`SHORT_CALL_AT_MOST_NS`].
    pub long_calls: u64,
    /// Launch delays above [`LONG_DELAY_ABOVE_NS`].
    pub long_delays: u64,
}

impl LaunchSums {
    fn add(&mut self, call: (i64, i64), act: (i64, i64)) {
        let call_len = i128::from(call.1) - i128::from(call.0);
        let gpu_len = i128::from(act.1) - i128::from(act.0);
        let delay = i128::from(act.0) - i128::from(call.1);
        self.count += 1;
        self.call_ns += call_len;
        self.gpu_ns += gpu_len;
        self.launch_delay_ns += delay;
        self.launch_delay_clipped_ns += delay.max(0);
        self.submit_to_start_ns += i128::from(act.0) - i128::from(call.0);
        self.max_launch_delay_ns = Some(self.max_launch_delay_ns.map_or(delay, |m| m.max(delay)));
        self.started_before_call_returned += u64::from(delay < 0);
        self.short +=
            u64::from(call_len <= i128::from(SHORT_CALL_AT_MOST_NS) && gpu_len < call_len);
        self.long_calls += u64::from(call_len > i128::from(SHORT_CALL_AT_MOST_NS));
        self.long_delays += u64::from(delay > i128::from(LONG_DELAY_ABOVE_NS));
    }
}

/// One kernel name's launches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchRow {
    /// The activity's name.
    pub name: String,
    /// The sums.
    #[serde(flatten)]
    pub sums: LaunchSums,
}

/// The launch statistics of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Launches {
    /// Over every launched activity.
    pub total: LaunchSums,
    /// Activities with no launch call in the trace (not in the sums).
    pub unlaunched: u64,
    /// Per kernel name, the largest Σ launch-call duration first (ties: name).
    pub kernels: Vec<LaunchRow>,
}

/// The launch statistics of the trace.
pub fn launches(index: &Index) -> Launches {
    let trace = index.trace;
    let mut out = Launches::default();
    let mut rows: BTreeMap<&str, LaunchSums> = BTreeMap::new();
    for (i, a) in trace.activities.iter().enumerate() {
        let Some(c) = index.launch[i] else {
            out.unlaunched += 1;
            continue;
        };
        let call = &trace.calls[c];
        out.total.add((call.start, call.end), (a.start, a.end));
        rows.entry(&*a.name)
            .or_default()
            .add((call.start, call.end), (a.start, a.end));
    }
    out.kernels = rows
        .into_iter()
        .map(|(name, sums)| LaunchRow {
            name: name.to_owned(),
            sums,
        })
        .collect();
    out.kernels.sort_by(|x, y| {
        y.sums
            .call_ns
            .cmp(&x.sums.call_ns)
            .then_with(|| x.name.cmp(&y.name))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::{Activity, ActivityKind, ApiCall, Trace};

    fn launch(t: &mut Trace, name: &str, call: (i64, i64), act: (i64, i64)) {
        let corr = t.calls.len() as i64;
        t.calls.push(ApiCall {
            name: "cudaLaunchKernel".into(),
            thread: Some(1),
            start: call.0,
            end: call.1,
            correlation: Some(corr),
            external: None,
            sync_recorded: false,
        });
        t.activities.push(Activity {
            kind: ActivityKind::Kernel,
            name: name.into(),
            device: 0,
            stream: 7,
            start: act.0,
            end: act.1,
            correlation: Some(corr),
            external: None,
            copy: None,
            collective: None,
            bytes: None,
        });
    }

    #[test]
    fn sums_counts_and_htas_clip() {
        let mut t = Trace::default();
        // A short kernel: 4 µs call, 2 µs kernel, 3 µs after the call returned.
        launch(&mut t, "relu", (0, 4_000), (7_000, 9_000));
        // A kernel that starts before its 60 µs call returns (a long call, delay −10 µs).
        launch(&mut t, "gemm", (10_000, 70_000), (60_000, 200_000));
        // A long delay: 150 µs after a 5 µs call.
        launch(&mut t, "relu", (300_000, 305_000), (455_000, 460_000));
        // A copy with no launch call in the trace.
        t.activities.push(Activity {
            correlation: None,
            external: None,
            ..t.activities[0].clone()
        });
        let l = launches(&Index::new(&t));
        assert_eq!(l.unlaunched, 1);
        let s = &l.total;
        assert_eq!(s.count, 3);
        assert_eq!(s.call_ns, 4_000 + 60_000 + 5_000);
        assert_eq!(s.gpu_ns, 2_000 + 140_000 + 5_000);
        assert_eq!(s.launch_delay_ns, 3_000 - 10_000 + 150_000);
        assert_eq!(s.launch_delay_clipped_ns, 3_000 + 150_000);
        assert_eq!(s.submit_to_start_ns, 7_000 + 50_000 + 155_000);
        assert_eq!(s.max_launch_delay_ns, Some(150_000));
        assert_eq!(
            (
                s.started_before_call_returned,
                s.short,
                s.long_calls,
                s.long_delays
            ),
            (1, 1, 1, 1)
        );
        assert_eq!(l.kernels[0].name, "gemm");
        assert_eq!(
            (l.kernels[1].name.as_str(), l.kernels[1].sums.count),
            ("relu", 2)
        );
    }
}
