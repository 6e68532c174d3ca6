//! How fast is `worksheet import` compared with what it cannot avoid doing?
//!
//! One real trace, `tests/data/traces/df_index_resolver.json.gz` (3.0 MB of gzip, 53.7 MB of
//! JSON, 216,092 events), measured four ways in one run:
//!
//! | bench | what it times |
//! |---|---|
//! | `gunzip_to_sink` | reference: read the file and decompress it into `io::sink()` |
//! | `ignored_any_json` | reference: one `serde_json::IgnoredAny` pass over the JSON text (in memory) |
//! | `import_json_gz` | `import_path` + `summarize_owned` of the `.json.gz` (what `worksheet import` does without `-o`) |
//! | `import_json` | the same from the decompressed `.json` (written to a temporary directory first) |
//!
//! Targets (issue 10, `BENCHMARKS.md`): `import_json_gz` ≤ 1.5 × `gunzip_to_sink`.
//!
//! Run with `cargo bench --bench import`.

use std::hint::black_box;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};

use worksheet::import::{import_path, summarize_owned, ImportOptions};

/// The trace, relative to the crate root.
const TRACE: &str = "tests/data/traces/df_index_resolver.json.gz";

fn trace_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(TRACE)
}

/// The decompressed JSON text of the trace.
fn decompressed() -> Vec<u8> {
    let gz = std::fs::read(trace_path()).expect("the trace is in the repository");
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(gz.as_slice())
        .read_to_end(&mut text)
        .expect("the trace is valid gzip");
    text
}

fn import_bench(c: &mut Criterion) {
    let text = decompressed();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("df_index_resolver.json");
    std::fs::write(&json, &text).expect("the temporary directory is writable");
    let gz = trace_path();
    let options = ImportOptions::default();

    let mut group = c.benchmark_group("import_df_index_resolver");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Bytes(text.len() as u64));

    group.bench_function("gunzip_to_sink", |b| {
        b.iter(|| {
            let file = std::fs::File::open(&gz).expect("open");
            let mut reader = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file));
            black_box(std::io::copy(&mut reader, &mut std::io::sink()).expect("gunzip"))
        });
    });
    group.bench_function("ignored_any_json", |b| {
        b.iter(|| {
            let v: serde::de::IgnoredAny =
                serde_json::from_slice(black_box(&text)).expect("valid JSON");
            black_box(v)
        });
    });
    group.bench_function("import_json_gz", |b| {
        b.iter(|| {
            let imported = import_path(&gz, &options).expect("imports");
            black_box(summarize_owned(imported, false, false).expect("summarizes"))
        });
    });
    group.bench_function("import_json", |b| {
        b.iter(|| {
            let imported = import_path(&json, &options).expect("imports");
            black_box(summarize_owned(imported, false, false).expect("summarizes"))
        });
    });
    group.finish();
}

criterion_group!(benches, import_bench);
criterion_main!(benches);
