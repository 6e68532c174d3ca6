//! HTA's other first-page views as text tables: the idle breakdown per stream, the queue per
//! stream, the launch statistics and the memory bandwidth by kind (`render.rs` places them).

use comfy_table::{presets::ASCII_MARKDOWN, Table};

use super::derived;
use crate::audit::index::percent;
use crate::audit::launch::{LaunchSums, LONG_DELAY_ABOVE_NS, SHORT_CALL_AT_MOST_NS};
use crate::audit::Audit;
use crate::engine::wide;
use crate::units::Nanos;

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(header.to_vec());
    t
}

fn fitted(t: &Table) -> String {
    crate::table::fitted_records(t)
}

/// How many kernel names the launch table shows.
const LAUNCH_ROWS: usize = 5;

/// The idle breakdown per stream.
pub fn idle_text(audit: &Audit) -> String {
    if audit.idle.is_empty() {
        return String::new();
    }
    let mut t = table(&[
        "stream",
        "span",
        "idle",
        "host wait",
        "kernel wait",
        "other",
        "gaps h/k/o",
    ]);
    for r in &audit.idle {
        // idle = span − busy: unknown when either is (review D10), as the breakdown's is.
        t.add_row(vec![
            r.stream.clone(),
            wide(r.span_ns),
            derived(&[r.span_ns, r.busy_ns, r.idle_ns()], || {
                format!(
                    "{} ({})",
                    wide(r.idle_ns()),
                    percent(r.idle_ns(), r.span_ns)
                )
            }),
            wide(r.host_wait_ns),
            wide(r.kernel_wait_ns),
            wide(r.other_ns),
            format!("{}/{}/{}", r.gaps[0], r.gaps[1], r.gaps[2]),
        ]);
    }
    format!(
        "{}\n{}\n",
        crate::table::wrap_prose(
            &format!(
                "idle time per stream, by HTA's causes (exact; idle = span − busy): host wait = launched after the stream went idle; kernel wait = a shorter gap than {} (HTA's consecutive_kernel_delay, an assumption); other = the rest",
                Nanos::new(crate::audit::idle::KERNEL_WAIT_BELOW_NS)
            ),
            "  "
        ),
        fitted(&t)
    )
}

/// The queue per stream.
pub fn queue_text(audit: &Audit) -> String {
    if audit.queues.iter().all(|q| q.launched == 0) {
        return String::new();
    }
    let mut t = table(&[
        "stream",
        "launched",
        "max outstanding",
        "time ≥ 1 outstanding",
        "max pending",
        "time ≥ 1 pending",
    ]);
    for q in audit.queues.iter().filter(|q| q.launched > 0) {
        t.add_row(vec![
            q.stream.clone(),
            q.launched.to_string(),
            q.outstanding.max.to_string(),
            wide(q.outstanding.time_at_1_or_more_ns),
            q.pending.max.to_string(),
            wide(q.pending.time_at_1_or_more_ns),
        ]);
    }
    format!(
        "{}\n{}\n",
        crate::table::wrap_prose(
            "launch queue per stream (exact): outstanding = launch call start → activity end; pending = launch call start → activity start (HTA's queue length)",
            "  "
        ),
        fitted(&t)
    )
}

fn launch_cells(name: String, s: &LaunchSums) -> Vec<String> {
    // A mean of a sum past 64-bit ns is unknown, as the sum is (review D10).
    let mean = |total: i128| {
        let n = i128::from(s.count.max(1));
        derived(&[total], || wide((2 * total + n) / (2 * n)))
    };
    vec![
        name,
        s.count.to_string(),
        mean(s.call_ns),
        mean(s.gpu_ns),
        mean(s.launch_delay_ns),
        s.max_launch_delay_ns.map_or_else(|| "-".to_owned(), wide),
        s.short.to_string(),
        s.long_calls.to_string(),
        s.long_delays.to_string(),
    ]
}

/// The launch statistics: all launches, then the kernel names with the most call time.
pub fn launch_text(audit: &Audit) -> String {
    let l = &audit.launches;
    if l.total.count == 0 {
        return String::new();
    }
    let mut t = table(&[
        "kernel",
        "launches",
        "mean call",
        "mean kernel",
        "mean delay",
        "max delay",
        "short",
        "long calls",
        "long delays",
    ]);
    t.add_row(launch_cells("(all)".to_owned(), &l.total));
    for k in l.kernels.iter().take(LAUNCH_ROWS) {
        let name = super::middle(&k.name, 60);
        t.add_row(launch_cells(name, &k.sums));
    }
    format!(
        "{}\n{}\n",
        crate::table::wrap_prose(
            &format!(
                "launch statistics (exact; means rounded to the ns): delay = kernel start − launch call end; short = kernel shorter than its call, call ≤ {}; long call > {}; long delay > {} (HTA's cutoffs, assumptions); {} launched activities, {} without a launch call; top {} names by call time",
                Nanos::new(SHORT_CALL_AT_MOST_NS),
                Nanos::new(SHORT_CALL_AT_MOST_NS),
                Nanos::new(LONG_DELAY_ABOVE_NS),
                l.total.count,
                l.unlaunched,
                LAUNCH_ROWS.min(l.kernels.len())
            ),
            "  "
        ),
        fitted(&t)
    )
}

/// `1.234 GB/s` from whole MB/s over `total_ns`: `unknown (overflow)` when that total does not
/// fit in 64-bit ns (review D10).
fn mean_rate(mb: Option<u128>, total_ns: i128) -> String {
    derived(&[total_ns], || rate(mb))
}

/// `1.234 GB/s` from whole MB/s.
fn rate(mb: Option<u128>) -> String {
    mb.map_or_else(
        || "unknown".to_owned(),
        |mb| format!("{}.{:03} GB/s", mb / 1000, mb % 1000),
    )
}

/// The memory bandwidth by device and kind.
pub fn bandwidth_text(audit: &Audit) -> String {
    if audit.bandwidth.is_empty() {
        return String::new();
    }
    let mut t = table(&[
        "device",
        "kind",
        "count",
        "bytes",
        "total",
        "busy",
        "mean rate",
        "peak copy",
    ]);
    let mut why = Vec::new();
    for b in &audit.bandwidth {
        t.add_row(vec![
            b.device.clone(),
            b.kind.clone(),
            b.count.to_string(),
            b.bytes
                .map_or_else(|| "unknown".to_owned(), |n| n.to_string()),
            wide(b.total_ns),
            wide(b.busy_ns),
            mean_rate(b.mb_per_s, b.total_ns),
            rate(b.peak_copy_mb_per_s),
        ]);
        if let Some(w) = &b.unknown_why {
            why.push(format!("  {} {}: unknown: {w}\n", b.device, b.kind));
        }
    }
    format!(
        "{}\n{}\n{}",
        crate::table::wrap_prose(
            "memory bandwidth by kind (exact bytes / ns, rounded to the MB/s; mean = Σ bytes / Σ durations; peak = the fastest single copy)",
            "  "
        ),
        fitted(&t),
        why.concat()
    )
}

/// The four views, each after a blank line (empty for a trace without activities).
pub fn views_text(audit: &Audit) -> String {
    let mut s = String::new();
    for part in [
        idle_text(audit),
        queue_text(audit),
        launch_text(audit),
        bandwidth_text(audit),
    ] {
        if !part.is_empty() {
            s.push('\n');
            s.push_str(&part);
        }
    }
    s
}
