//! HTA's other first-page views in the report's audit section: the idle breakdown and the
//! queue per stream, the launch statistics and the memory bandwidth by kind, drawn from the
//! audit's JSON (`idle`, `queues`, `launches`, `bandwidth`; absent in an older case's
//! provenance, then nothing is drawn).

use std::fmt::Write;

use serde_json::Value;

use crate::render::draw::esc;
use crate::units::Nanos;

fn text(v: &Value, key: &str) -> String {
    esc(v[key].as_str().unwrap_or(""))
}

fn ns(v: &Value) -> String {
    v.as_i64()
        .map_or_else(|| "—".to_owned(), |n| Nanos::new(n).to_string())
}

fn count(v: &Value) -> String {
    v.as_u64().map_or_else(|| "—".to_owned(), |n| n.to_string())
}

fn rate(v: &Value) -> String {
    v.as_u64().map_or_else(
        || "unknown".to_owned(),
        |mb| format!("{}.{:03} GB/s", mb / 1000, mb % 1000),
    )
}

/// One table: a heading, the header cells, and the rows' cells (already escaped).
fn table(html: &mut String, heading: &str, header: &[&str], rows: Vec<Vec<String>>) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(html, "<h3>{heading}</h3><table class=\"views\"><thead><tr>");
    for h in header {
        let _ = write!(html, "<th>{h}</th>");
    }
    html.push_str("</tr></thead><tbody>");
    for row in rows {
        html.push_str("<tr>");
        for cell in row {
            let _ = write!(html, "<td>{cell}</td>");
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>");
}

/// The four views' tables, appended to `html`.
pub fn views(audit: &Value, html: &mut String) {
    let list = |key: &str| audit[key].as_array().map_or(&[][..], Vec::as_slice);
    let idle = list("idle")
        .iter()
        .map(|r| {
            vec![
                text(r, "stream"),
                ns(&r["span_ns"]),
                ns(&r["host_wait_ns"]),
                ns(&r["kernel_wait_ns"]),
                ns(&r["other_ns"]),
            ]
        })
        .collect();
    table(
        html,
        "Idle time per stream, by HTA's causes (exact; kernel wait: gaps under 30 µs)",
        &["stream", "span", "host wait", "kernel wait", "other"],
        idle,
    );
    let queues = list("queues")
        .iter()
        .filter(|q| q["launched"].as_u64().unwrap_or(0) > 0)
        .map(|q| {
            vec![
                text(q, "stream"),
                count(&q["launched"]),
                count(&q["outstanding"]["max"]),
                ns(&q["outstanding"]["time_at_1_or_more_ns"]),
                count(&q["pending"]["max"]),
                ns(&q["pending"]["time_at_1_or_more_ns"]),
            ]
        })
        .collect();
    table(
        html,
        "Launch queue per stream (outstanding: call start → end; pending: call start → start, HTA's)",
        &["stream", "launched", "max outstanding", "time ≥ 1", "max pending", "time ≥ 1"],
        queues,
    );
    let t = &audit["launches"]["total"];
    if t["count"].as_u64().unwrap_or(0) > 0 {
        let row = vec![
            count(&t["count"]),
            ns(&t["call_ns"]),
            ns(&t["gpu_ns"]),
            ns(&t["launch_delay_ns"]),
            count(&t["short"]),
            count(&t["long_calls"]),
            count(&t["long_delays"]),
        ];
        table(
            html,
            "Launch statistics (sums; short: kernel shorter than its call ≤ 50 µs; long call > 50 µs; long delay > 100 µs)",
            &["launches", "Σ call", "Σ kernel", "Σ delay", "short", "long calls", "long delays"],
            vec![row],
        );
    }
    let bandwidth = list("bandwidth")
        .iter()
        .map(|b| {
            vec![
                text(b, "device"),
                text(b, "kind"),
                count(&b["count"]),
                count(&b["bytes"]),
                ns(&b["total_ns"]),
                rate(&b["mb_per_s"]),
                rate(&b["peak_copy_mb_per_s"]),
            ]
        })
        .collect();
    table(
        html,
        "Memory bandwidth by kind (exact bytes / ns)",
        &[
            "device",
            "kind",
            "count",
            "bytes",
            "total",
            "mean rate",
            "peak copy",
        ],
        bandwidth,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables show the audit's values; an older audit without the views draws nothing.
    #[test]
    fn the_views_are_drawn_from_the_audit_json() {
        let audit = serde_json::json!({
            "idle": [{"stream": "gpu0-s7", "span_ns": 150000, "host_wait_ns": 40000,
                      "kernel_wait_ns": 10000, "other_ns": 50000}],
            "queues": [{"stream": "gpu0-s7", "launched": 4,
                        "outstanding": {"max": 2, "time_at_1_or_more_ns": 24},
                        "pending": {"max": 1, "time_at_1_or_more_ns": 14}},
                       {"stream": "gpu0-s9", "launched": 0}],
            "launches": {"total": {"count": 0}},
            "bandwidth": [{"device": "gpu0", "kind": "HtoD", "count": 2, "bytes": null,
                           "total_ns": 2000000, "mb_per_s": 3000, "peak_copy_mb_per_s": null}],
        });
        let mut html = String::new();
        views(&audit, &mut html);
        for part in [
            "<td>gpu0-s7</td><td>150 us</td><td>40 us</td><td>10 us</td><td>50 us</td>",
            "<td>gpu0-s7</td><td>4</td><td>2</td><td>24 ns</td><td>1</td><td>14 ns</td>",
            "<td>HtoD</td><td>2</td><td>—</td><td>2 ms</td><td>3.000 GB/s</td><td>unknown</td>",
        ] {
            assert!(html.contains(part), "{part}: {html}");
        }
        assert!(!html.contains("gpu0-s9") && !html.contains("Launch statistics"));
        let mut empty = String::new();
        views(&serde_json::json!({}), &mut empty);
        assert_eq!(empty, "");
    }
}
