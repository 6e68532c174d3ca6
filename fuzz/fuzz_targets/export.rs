//! `worksheet export`: one input file (a Kineto trace, gzipped or not, or a case file),
//! written to a scratch file and read by `export::tables::load` (the importer, or the case
//! reader for a file the importers refuse, and the audit), the tables built
//! (`export::build`), then the whole command (`cmd::export::run`) writing Parquet into a scratch
//! folder.
//! Beyond "no panic": every failure is exit 2 with a stable `error[code]`, never
//! `internal`; the tables come in `tables::NAMES` order with columns of one length and no
//! null in a required column; the command writes one Parquet file per table (`PAR1` at both
//! ends) with as many rows as the table.
#![no_main]
use libfuzzer_sys::fuzz_target;
use worksheet::cmd::exit::Failure;
use worksheet::export::tables::{load, NAMES};
use worksheet::cmd::export::{run, ExportArgs};
use worksheet::export::{build, table_path, Values};

fn refused(f: &Failure) {
    assert_eq!(f.code, 2, "{}", f.message);
    assert!(!f.message.contains("error[internal]"), "{}", f.message);
    assert!(f.message.contains("error["), "no code: {}", f.message);
}

fuzz_target!(|data: &[u8]| {
    let name = if data.starts_with(&[0x1f, 0x8b]) {
        "input.json.gz"
    } else {
        "input.json"
    };
    let path = worksheet_fuzz::scratch_file(name, data);
    let input = match load(&[path.clone()], false, &[]) {
        Ok(input) => input,
        Err(f) => return refused(&f.into()),
    };
    let tables = match build(&input) {
        Ok(t) => t,
        Err(f) => return refused(&f.into()),
    };
    assert_eq!(tables.iter().map(|t| t.name).collect::<Vec<_>>(), NAMES);
    for t in &tables {
        let rows = t.rows();
        for c in &t.columns {
            let (len, nulls) = match &c.values {
                Values::Int(v) => (v.len(), v.iter().any(Option::is_none)),
                Values::Text(v) => (v.len(), v.iter().any(Option::is_none)),
            };
            assert_eq!(len, rows, "{}.{}", t.name, c.name);
            assert!(
                c.nullable || !nulls,
                "null in required {}.{}",
                t.name,
                c.name
            );
        }
    }
    let dir = path.with_file_name("parquet");
    let args = ExportArgs {
        inputs: vec![path],
        parquet: Some(dir.clone()),
        csv: None,
        perfetto: None,
        force: true,
        round_sub_ns: false,
        clocks_within: Vec::new(),
        quiet: true,
    };
    let mut out = Vec::new();
    match run(&args, &mut out) {
        Ok(code) => assert_eq!(code, 0),
        Err(f) => return refused(&f),
    }
    let said = String::from_utf8(out).unwrap();
    for t in &tables {
        let bytes = std::fs::read(table_path(&dir, t.name)).expect("the table was written");
        assert!(
            bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
            "{}",
            t.name
        );
        assert!(
            said.contains(&format!(
                "{}: {} row(s)",
                table_path(&dir, t.name).display(),
                t.rows()
            )),
            "{said}"
        );
    }
});
