//! Encoding one [`Table`] as a Parquet file (the `parquet` crate's column writers; no arrow):
//! INT64 and UTF-8 `BYTE_ARRAY` columns, `REQUIRED` or `OPTIONAL`, Snappy pages, row groups
//! of at most [`ROW_GROUP`] rows, and the `format` / `version` / `table` key-value metadata.

use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use super::{Table, Values, FORMAT, VERSION};

/// Rows per row group (engines split work by row group).
pub const ROW_GROUP: usize = 1 << 20;

/// The table's Parquet schema, as a message type.
fn message(t: &Table) -> String {
    let fields: String = t
        .columns
        .iter()
        .map(|c| {
            let rep = if c.nullable { "OPTIONAL" } else { "REQUIRED" };
            match c.values {
                Values::Int(_) => format!("  {rep} INT64 {};\n", c.name),
                Values::Text(_) => format!("  {rep} BYTE_ARRAY {} (STRING);\n", c.name),
            }
        })
        .collect();
    format!("message {} {{\n{fields}}}", t.name)
}

/// Definition levels of a slice of optional values (1 = present), and the present values.
fn split<T: Clone>(values: &[Option<T>]) -> (Vec<i16>, Vec<T>) {
    let defs = values.iter().map(|v| i16::from(v.is_some())).collect();
    (defs, values.iter().flatten().cloned().collect())
}

/// The file's bytes.
///
/// # Errors
/// The crate's error (an encoding bug; the schema is built here).
pub fn encode(t: &Table) -> Result<Vec<u8>, ParquetError> {
    let schema = Arc::new(parse_message_type(&message(t))?);
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!("worksheet {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(vec![
            KeyValue::new("format".to_owned(), FORMAT.to_owned()),
            KeyValue::new("version".to_owned(), VERSION.to_owned()),
            KeyValue::new("table".to_owned(), t.name.to_owned()),
        ]))
        .build();
    let mut bytes = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut bytes, schema, Arc::new(props))?;
    let rows = t.rows();
    let mut from = 0;
    while from < rows {
        let to = (from + ROW_GROUP).min(rows);
        let mut group = writer.next_row_group()?;
        for c in &t.columns {
            let mut col = group
                .next_column()?
                .ok_or_else(|| ParquetError::General(format!("no column `{}`", c.name)))?;
            let (defs, ints, texts) = match &c.values {
                Values::Int(v) => {
                    let (d, x) = split(&v[from..to]);
                    (d, x, Vec::new())
                }
                Values::Text(v) => {
                    let (d, x) = split(&v[from..to]);
                    (
                        d,
                        Vec::new(),
                        x.into_iter()
                            .map(|s: String| ByteArray::from(s.into_bytes()))
                            .collect(),
                    )
                }
            };
            let defs = c.nullable.then_some(defs.as_slice());
            match c.values {
                Values::Int(_) => {
                    col.typed::<Int64Type>().write_batch(&ints, defs, None)?;
                }
                Values::Text(_) => {
                    col.typed::<ByteArrayType>()
                        .write_batch(&texts, defs, None)?;
                }
            }
            col.close()?;
        }
        group.close()?;
        from = to;
    }
    writer.close()?;
    Ok(bytes)
}
