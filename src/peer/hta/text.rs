//! The `--compat hta` table for people: exact µs, thousands separated, one delta row per
//! assumption.

use super::{Breakdown, Delta, HtaCompat};
use crate::units::{Nanos, Unit};

/// A ns count in exact µs, thousands separated: `338,781` / `336,419.714`.
pub(super) fn micros(ns: i64) -> String {
    let text = Nanos::new(ns).format_in(Unit::Micros);
    let (sign, body) = text
        .strip_prefix('-')
        .map_or(("", text.as_str()), |b| ("-", b));
    let (int, frac) = body
        .split_once('.')
        .map_or((body, None), |(a, b)| (a, Some(b)));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

pub(super) fn signed_micros(ns: i64) -> String {
    if ns > 0 {
        format!("+{}", micros(ns))
    } else {
        micros(ns)
    }
}

impl HtaCompat {
    /// The comparison as text: one table (µs, exact), then what each assumption does.
    pub fn to_text(&self) -> String {
        use comfy_table::presets::ASCII_MARKDOWN;
        let rank = self
            .rank
            .map_or_else(|| "the trace".to_owned(), |r| format!("rank {r}"));
        let devices = match self.devices.as_slice() {
            [] => "no device".to_owned(),
            [d] => format!("device {d}"),
            many => format!(
                "devices {} pooled, as HTA does",
                many.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut s = format!(
            "\n--compat hta: HTA {} get_temporal_breakdown() of {rank} ({devices}), reproduced; µs, exact\n",
            self.hta_version
        );
        let mut t = comfy_table::Table::new();
        crate::table::fit(&mut t);
        t.load_preset(ASCII_MARKDOWN).set_header(vec![
            "breakdown",
            "kernel time (span)",
            "idle",
            "compute",
            "non-compute",
            "rows",
        ]);
        let row = |label: String, b: &Option<Breakdown>| match b {
            Some(b) => vec![
                label,
                micros(b.kernel_time_ns),
                micros(b.idle_ns),
                micros(b.compute_ns),
                micros(b.non_compute_ns),
                b.rows.to_string(),
            ],
            None => vec![label, "— (no rows: HTA fails)".to_owned()],
        };
        let label = if self.hta_options == super::HtaOptions::HTA_DEFAULTS {
            "HTA defaults"
        } else {
            "HTA (HTA_DISABLE_NS_ROUNDING=1)"
        };
        t.add_row(row(label.to_owned(), &self.hta_defaults));
        t.add_row(row("exact (all four off)".to_owned(), &self.exact));
        let delta_row = |label: String, d: &Option<Delta>| match d {
            Some(d) => vec![
                label,
                signed_micros(d.kernel_time_ns),
                signed_micros(d.idle_ns),
                signed_micros(d.compute_ns),
                signed_micros(d.non_compute_ns),
                format!("{:+}", d.rows),
            ],
            None => vec![label, "—".to_owned()],
        };
        for a in &self.assumptions {
            t.add_row(delta_row(format!("Δ {}", a.assumption.code()), &a.delta));
        }
        t.add_row(delta_row("Δ together only".to_owned(), &self.interaction));
        s.push_str(&format!("{t}\n"));
        for a in &self.assumptions {
            s.push_str(&format!("  {}: {}\n", a.assumption.code(), a.why));
        }
        if let Some(b) = self.hta_defaults.filter(|b| b.reversed_rows > 0) {
            s.push_str(&format!(
                "  {} rows come out reversed by the µs rounding; HTA subtracts them\n",
                b.reversed_rows
            ));
        }
        if self.hta_defaults.is_some_and(|b| b.hta_fails()) {
            s.push_str("  HTA 0.5.0 itself stops with an AssertionError on this trace: the rounding leaves a negative busy time\n");
        }
        s.push_str("  Δ = HTA − HTA with that assumption also off (docs/hta-compat.md)\n");
        s
    }
}
