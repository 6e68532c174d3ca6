//! The audit's breakdowns as tables: `kernels` (the kernel breakdown) and `ops` (the op →
//! kernels view), per input file, row for row as `worksheet audit --format json` writes
//! `kernels` and `ops`.

use super::{ns, Cell, Input, Kind, Table};
use crate::error::Refusal;
use crate::trace::model::WorkClass;

/// The kernel breakdown `worksheet audit` prints (`kernels` in its JSON), per input file:
/// one row per device, stream and activity name, in the audit's order (largest total first).
pub(super) fn kernels(input: &Input) -> Result<Table, Refusal> {
    use Kind::{Int, Text};
    let mut t = Table::new(
        "kernels",
        &[
            ("rank", Int, true),
            ("name", Text, false),
            ("class", Text, false),
            ("device", Text, false),
            ("stream", Text, false),
            ("count", Int, false),
            ("total_ns", Int, false),
            ("mean_ns", Int, true),
            ("min_ns", Int, false),
            ("max_ns", Int, false),
            ("share_of_busy_permille", Int, true),
        ],
    );
    for (rank, audit) in &input.audits {
        for k in &audit.kernels {
            t.push(vec![
                Cell::I(*rank),
                Cell::S(Some(k.name.clone())),
                Cell::S(Some(class_word(k.class).to_owned())),
                Cell::S(Some(k.device.clone())),
                Cell::S(Some(k.stream.clone())),
                Cell::I(Some(ns(i128::from(k.count))?)),
                Cell::I(Some(ns(k.total_ns)?)),
                Cell::I(k.mean_ns.map(ns).transpose()?),
                Cell::I(Some(ns(k.min_ns)?)),
                Cell::I(Some(ns(k.max_ns)?)),
                Cell::I(k.share_of_busy_permille),
            ]);
        }
    }
    Ok(t)
}

/// The word `worksheet audit --format json` writes for a class of work.
fn class_word(class: WorkClass) -> &'static str {
    match class {
        WorkClass::Compute => "compute",
        WorkClass::Communication => "communication",
        WorkClass::Memory => "memory",
    }
}

/// The op → kernels view `worksheet audit` prints (`ops` in its JSON), per input file: one
/// row per launching op name and device (and one `(no recorded op)` row per device for the
/// kernels whose op is not recorded), in the audit's order (largest total first), with the
/// row's largest kernel.
pub(super) fn ops(input: &Input) -> Result<Table, Refusal> {
    use Kind::{Int, Text};
    let mut t = Table::new(
        "ops",
        &[
            ("rank", Int, true),
            ("name", Text, false),
            ("recorded", Int, false),
            ("device", Text, false),
            ("kernels", Int, false),
            ("launches", Int, false),
            ("total_ns", Int, false),
            ("mean_ns", Int, true),
            ("min_ns", Int, false),
            ("max_ns", Int, false),
            ("share_of_busy_permille", Int, true),
            ("top_kernel", Text, true),
            ("top_kernel_count", Int, true),
            ("top_kernel_total_ns", Int, true),
        ],
    );
    for (rank, audit) in &input.audits {
        for r in &audit.ops {
            let top = r.top_kernels.first();
            t.push(vec![
                Cell::I(*rank),
                Cell::S(Some(r.name.clone())),
                Cell::I(Some(i64::from(r.recorded))),
                Cell::S(Some(r.device.clone())),
                Cell::I(Some(ns(i128::from(r.kernels))?)),
                Cell::I(Some(ns(i128::from(r.launches))?)),
                Cell::I(Some(ns(r.total_ns)?)),
                Cell::I(r.mean_ns.map(ns).transpose()?),
                Cell::I(Some(ns(r.min_ns)?)),
                Cell::I(Some(ns(r.max_ns)?)),
                Cell::I(r.share_of_busy_permille),
                Cell::S(top.map(|k| k.name.clone())),
                Cell::I(top.map(|k| ns(i128::from(k.count))).transpose()?),
                Cell::I(top.map(|k| ns(k.total_ns)).transpose()?),
            ]);
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::{build, load, Values};

    /// The `ops` table is the audit's op view of `nccl_data` row for row: 23 rows whose
    /// kernels add up to the trace's 2700, every one linked (`recorded` = 1), largest first.
    #[test]
    fn the_ops_table_is_the_audits_op_view() {
        let path = PathBuf::from("tests/data/traces/nccl_data.json.gz");
        let input = load(std::slice::from_ref(&path), false, &[]).expect("loads");
        let tables = build(&input).expect("tables");
        let t = tables.iter().find(|t| t.name == "ops").expect("ops");
        let audit = &input.audits[0].1;
        assert_eq!(t.rows(), 23);
        assert_eq!(t.rows(), audit.ops.len());
        let int = |col: &str| match &t.columns.iter().find(|c| c.name == col).unwrap().values {
            Values::Int(v) => v.clone(),
            Values::Text(_) => panic!("`{col}` is text"),
        };
        let totals: Vec<Option<i64>> = audit
            .ops
            .iter()
            .map(|r| Some(i64::try_from(r.total_ns).unwrap()))
            .collect();
        assert_eq!(int("total_ns"), totals);
        assert_eq!(int("total_ns")[0], Some(46_876_493));
        assert_eq!(int("kernels")[0], Some(21));
        let kernels: i64 = int("kernels").iter().map(|k| k.unwrap()).sum();
        assert_eq!(kernels, 2700);
        assert!(int("recorded").iter().all(|r| *r == Some(1)));
        assert_eq!(int("top_kernel_count")[0], Some(15));
    }
}
