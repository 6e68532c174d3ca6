//! HTA's other first-page views in the report's audit section: the idle breakdown and the
//! queue per stream, the launch statistics and the memory bandwidth by kind, drawn from the
//! audit's JSON (`idle`, `queues`, `launches`, `bandwidth`; absent in an older case's
//! provenance, then nothing is drawn); and the op → kernels table (`ops`, `op_links`).

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

/// How many op rows the page lists (the audit's JSON has them all).
const OP_ROWS: usize = 25;

/// The op → kernels table (`ops`), with how the kernels were joined (`op_links`); for an
/// input that cannot record the link, the reason alone. Nothing for an older audit.
pub fn ops_table(audit: &Value, html: &mut String) {
    let rows = audit["ops"].as_array().map_or(&[][..], Vec::as_slice);
    if rows.is_empty() {
        return;
    }
    let links = &audit["op_links"];
    if let Some(why) = links["unknown_why"].as_str() {
        let _ = write!(
            html,
            "<h3>Ops → kernels</h3><p class=\"note\">Unknown: {}.</p>",
            esc(why)
        );
        return;
    }
    let shown = rows.len().min(OP_ROWS);
    let cells = rows[..shown]
        .iter()
        .map(|r| {
            // A mean or share the audit could not know (review D10) says so, not `—`.
            let unknown = |cell: String| {
                if cell == "—" && r["unknown_why"].is_string() {
                    "unknown (overflow)".to_owned()
                } else {
                    cell
                }
            };
            let top = &r["top_kernels"][0];
            vec![
                text(r, "name"),
                text(r, "device"),
                count(&r["kernels"]),
                count(&r["launches"]),
                ns(&r["total_ns"]),
                unknown(ns(&r["mean_ns"])),
                ns(&r["min_ns"]),
                ns(&r["max_ns"]),
                unknown(
                    r["share_of_busy_permille"]
                        .as_i64()
                        .map_or_else(|| "—".to_owned(), |p| format!("{}.{}%", p / 10, p % 10)),
                ),
                if top.is_object() {
                    format!("{} ×{}", text(top, "name"), count(&top["count"]))
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    table(
        html,
        &format!(
            "Ops → kernels ({shown} of {} rows by total; {} of {} kernels joined to their op by the link the trace records: kernel → launch call → External id → cpu_op)",
            rows.len(),
            count(&links["linked"]),
            rows.iter().filter_map(|r| r["kernels"].as_u64()).sum::<u64>()
        ),
        &[
            "op",
            "device",
            "kernels",
            "launches",
            "total",
            "mean",
            "min",
            "max",
            "share of kernel busy",
            "top kernel",
        ],
        cells,
    );
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

    /// The op table shows the audit's rows; an unknown link says why; an older audit
    /// draws nothing.
    #[test]
    fn the_op_table_is_drawn_from_the_audit_json() {
        let audit = serde_json::json!({
            "ops": [{"name": "aten::addmm", "recorded": true, "device": "gpu0", "kernels": 3,
                     "launches": 3, "total_ns": 60000, "mean_ns": 20000, "min_ns": 10000,
                     "max_ns": 30000, "share_of_busy_permille": 674,
                     "top_kernels": [{"name": "gemm<float>", "count": 2, "total_ns": 50000}]},
                    {"name": "(no recorded op)", "recorded": false, "device": "gpu0",
                     "kernels": 1, "launches": 0, "total_ns": 18446744073709551615_u64,
                     "mean_ns": null, "min_ns": 1, "max_ns": 2, "share_of_busy_permille": null,
                     "unknown_why": "overflow: …", "top_kernels": []}],
            "op_links": {"linked": 3},
        });
        let mut html = String::new();
        ops_table(&audit, &mut html);
        for part in [
            "3 of 4 kernels joined",
            "<td>aten::addmm</td><td>gpu0</td><td>3</td><td>3</td><td>60 us</td><td>20 us</td><td>10 us</td><td>30 us</td><td>67.4%</td><td>gemm&lt;float&gt; ×2</td>",
            "<td>(no recorded op)</td><td>gpu0</td><td>1</td><td>0</td><td>—</td><td>unknown (overflow)</td>",
        ] {
            assert!(html.contains(part), "{part}: {html}");
        }
        let mut nsys = String::new();
        ops_table(
            &serde_json::json!({"ops": [{"name": "(no recorded op)"}],
                                "op_links": {"unknown_why": "not recorded: <why>"}}),
            &mut nsys,
        );
        assert_eq!(
            nsys,
            "<h3>Ops → kernels</h3><p class=\"note\">Unknown: not recorded: &lt;why&gt;.</p>"
        );
        let mut empty = String::new();
        ops_table(&serde_json::json!({}), &mut empty);
        assert_eq!(empty, "");
    }
}
