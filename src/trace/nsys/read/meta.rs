//! What an export says about itself and its streams, apart from the CUDA activity rows:
//! stream flags, nsys's enum tables, strings, the session start, the GPUs listed and the
//! export's metadata (versions, derivation). Absent tables mean "not recorded".

use std::collections::HashMap;

use super::{
    quote, text_at, Export, StreamInfoRow, MEM_KIND_ENUM, META_NEW, META_OLD, SESSION_START,
    STREAM_INFO, STREAM_TYPE_ENUM, STRING_IDS, TARGET_GPU,
};
use crate::trace::nsys::error::{sqlite_error, NsysError};

/// A GPU listed in `TARGET_INFO_GPU`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// `id`: nsys's own GPU id, which need not be CUDA's device ordinal.
    pub id: Option<i64>,
    /// `cuDevice`, when the column exists.
    pub cu_device: Option<i64>,
    /// Marketing name.
    pub name: Option<String>,
    /// `uuid`.
    pub uuid: Option<String>,
    /// `busLocation`.
    pub bus: Option<String>,
}

/// What the file says about the export that wrote it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportInfo {
    /// `META_DATA_EXPORT` (2024.5 on), `EXPORT_META_DATA` (2022.2) or `None` (2021.2).
    pub metadata_table: Option<String>,
    /// `EXPORT_PRODUCT_VERSION`.
    pub nsys_version: Option<String>,
    /// `EXPORT_SCHEMA_VERSION`.
    pub schema_version: Option<String>,
    /// A version seen in an Nsight Systems install path in `StringIds`
    /// (`…/nsight-systems/2021.2.1/…`): the capture side's, which can differ from the
    /// export's. The only version a 2021.2 file carries.
    pub path_version: Option<String>,
    /// Extra `META_DATA_EXPORT` keys a derived file carries (`DERIVED_FROM`, ...).
    pub derived: Vec<(String, String)>,
}

impl Export {
    /// Rows of `TARGET_INFO_CUDA_STREAM` (absent table: none).
    pub(crate) fn stream_info(&self) -> Result<Vec<StreamInfoRow>, NsysError> {
        let rows = self.rows(
            STREAM_INFO,
            &["streamId", "processId", "contextId"],
            &["flag"],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| StreamInfoRow {
                stream: r.values[0].unwrap_or_default(),
                pid: r.values[1].unwrap_or_default(),
                context: r.values[2].unwrap_or_default(),
                flag: r.values[3],
            })
            .collect())
    }

    /// `ENUM_CUDA_MEM_KIND` as id → name (`CUDA_MEMOPR_MEMORY_KIND_PAGEABLE`), when the
    /// file has it; `None` otherwise.
    pub(crate) fn memory_kinds(&self) -> Result<Option<HashMap<i64, String>>, NsysError> {
        self.enum_names(MEM_KIND_ENUM)
    }

    /// `ENUM_CUPTI_STREAM_TYPE` as id → name (`CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL`), when
    /// the file has it; `None` otherwise.
    pub(crate) fn stream_flag_names(&self) -> Result<Option<HashMap<i64, String>>, NsysError> {
        self.enum_names(STREAM_TYPE_ENUM)
    }

    /// An nsys `ENUM_*` table (`id`, `name`) as a map.
    fn enum_names(&self, table: &str) -> Result<Option<HashMap<i64, String>>, NsysError> {
        if !(self.has_column(table, "id") && self.has_column(table, "name")) {
            return Ok(None);
        }
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT id, name FROM {}", quote(table)))
            .map_err(|e| sqlite_error(table, &e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<String>>(1)?))
            })
            .map_err(|e| sqlite_error(table, &e))?;
        let mut map = HashMap::new();
        for row in rows {
            if let (Some(id), Some(name)) = row.map_err(|e| sqlite_error(table, &e))? {
                map.insert(id, name);
            }
        }
        Ok(Some(map))
    }

    /// The text of `StringIds` id `id`, or `None` when the table or the id is missing.
    pub(crate) fn string(&mut self, id: i64) -> Result<Option<String>, NsysError> {
        if let Some(s) = self.strings.get(&id) {
            return Ok(s.clone());
        }
        let value = if self.has_table(STRING_IDS) {
            // A value past MAX_NAME_BYTES is measured in SQLite and never copied out.
            let cap = crate::trace::MAX_NAME_BYTES as i64;
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT CASE WHEN length(CAST(value AS BLOB)) <= ?2 THEN value END, \
                     length(CAST(value AS BLOB)) FROM StringIds WHERE id = ?1",
                )
                .map_err(|e| sqlite_error(STRING_IDS, &e))?;
            let mut rows = stmt
                .query([id, cap])
                .map_err(|e| sqlite_error(STRING_IDS, &e))?;
            match rows.next().map_err(|e| sqlite_error(STRING_IDS, &e))? {
                Some(row) => {
                    let len: Option<i64> = row.get(1).unwrap_or(None);
                    if let Some(len) = len.filter(|&l| l > cap) {
                        return Err(NsysError::new(
                            format!("{STRING_IDS}[id {id}].value"),
                            "too-large",
                            format!(
                                "the string holds {len} bytes, more than the {cap} bytes a name may hold; no kernel or call name is that long"
                            ),
                        ));
                    }
                    text_at(row, 0, || format!("{STRING_IDS}[id {id}].value"))?
                }
                None => None,
            }
        } else {
            None
        };
        self.strings.insert(id, value.clone());
        Ok(value)
    }

    /// `utcEpochNs` of the session start, when the table exists and holds exactly one value.
    pub(crate) fn session_start(&self) -> Result<SessionStart, NsysError> {
        if !self.has_column(SESSION_START, "utcEpochNs") {
            return Ok(SessionStart::Absent);
        }
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")
            .map_err(|e| sqlite_error(SESSION_START, &e))?;
        let values: Vec<Option<i64>> = stmt
            .query_map([], |r| r.get::<_, Option<i64>>(0))
            .map_err(|e| sqlite_error(SESSION_START, &e))?
            .collect::<Result<_, _>>()
            .map_err(|e| {
                NsysError::new(
                    format!("{SESSION_START}.utcEpochNs"),
                    "bad-row",
                    format!("an integer is expected here: {e}"),
                )
            })?;
        Ok(match values.as_slice() {
            [Some(ns)] => SessionStart::Utc(*ns),
            [] => SessionStart::Absent,
            _ => SessionStart::Ambiguous(values.len()),
        })
    }

    /// The GPUs of `TARGET_INFO_GPU` (absent table: none).
    pub(crate) fn gpus(&self) -> Result<Vec<GpuInfo>, NsysError> {
        if !self.has_table(TARGET_GPU) {
            return Ok(Vec::new());
        }
        let col = |c: &str| {
            if self.has_column(TARGET_GPU, c) {
                quote(c)
            } else {
                "NULL".to_owned()
            }
        };
        let sql = format!(
            "SELECT {}, {}, {}, {}, {}, rowid FROM {TARGET_GPU} ORDER BY rowid",
            col("id"),
            col("cuDevice"),
            col("name"),
            col("uuid"),
            col("busLocation")
        );
        let mut stmt = self
            .conn
            .prepare(&sql)
            .map_err(|e| sqlite_error(TARGET_GPU, &e))?;
        let mut rows = stmt.query([]).map_err(|e| sqlite_error(TARGET_GPU, &e))?;
        let mut gpus = Vec::new();
        while let Some(r) = rows.next().map_err(|e| sqlite_error(TARGET_GPU, &e))? {
            let rowid = r.get::<_, i64>(5).unwrap_or_default();
            let text = |i: usize, column: &str| {
                text_at(r, i, || format!("{TARGET_GPU}[rowid {rowid}].{column}"))
            };
            gpus.push(GpuInfo {
                id: r.get::<_, Option<i64>>(0).ok().flatten(),
                cu_device: r.get::<_, Option<i64>>(1).ok().flatten(),
                name: text(2, "name")?,
                uuid: text(3, "uuid")?,
                bus: text(4, "busLocation")?,
            });
        }
        Ok(gpus)
    }

    /// Versions from the export metadata table, and from install paths in `StringIds`.
    pub(crate) fn export_info(&self) -> Result<ExportInfo, NsysError> {
        let mut info = ExportInfo::default();
        let table = [META_NEW, META_OLD]
            .into_iter()
            .find(|t| self.has_column(t, "name") && self.has_column(t, "value"));
        if let Some(table) = table {
            info.metadata_table = Some(table.to_owned());
            let mut stmt = self
                .conn
                .prepare(&format!("SELECT name, value FROM {table} ORDER BY rowid"))
                .map_err(|e| sqlite_error(table, &e))?;
            let pairs: Vec<(Option<String>, Option<String>)> = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, Option<String>>(0).ok().flatten(),
                        r.get::<_, Option<String>>(1).ok().flatten(),
                    ))
                })
                .map_err(|e| sqlite_error(table, &e))?
                .collect::<Result<_, _>>()
                .map_err(|e| sqlite_error(table, &e))?;
            for (name, value) in pairs {
                let (Some(name), Some(value)) = (name, value) else {
                    continue;
                };
                match name.as_str() {
                    "EXPORT_PRODUCT_VERSION" => info.nsys_version = Some(value),
                    "EXPORT_SCHEMA_VERSION" => info.schema_version = Some(value),
                    n if n.starts_with("DERIVED_") => info.derived.push((name, value)),
                    _ => {}
                }
            }
        }
        if self.has_table(STRING_IDS) {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT value FROM StringIds WHERE value LIKE '%nsight-systems/%' \
                     OR value LIKE '%Nsight-Systems/%' ORDER BY id LIMIT 50",
                )
                .map_err(|e| sqlite_error(STRING_IDS, &e))?;
            let paths: Vec<String> = stmt
                .query_map([], |r| r.get::<_, Option<String>>(0))
                .map_err(|e| sqlite_error(STRING_IDS, &e))?
                .filter_map(|r| r.ok().flatten())
                .collect();
            info.path_version = paths.iter().find_map(|p| version_in_path(p));
        }
        Ok(info)
    }
}

/// The session start as the file records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SessionStart {
    /// `utcEpochNs`.
    Utc(i64),
    /// No table, or an empty one (2021.2 files).
    Absent,
    /// More than one distinct value: none is used.
    Ambiguous(usize),
}

/// `2021.2.1` from `/opt/nvidia/nsight-systems/2021.2.1/target-linux-x64/...`.
fn version_in_path(path: &str) -> Option<String> {
    let lower = path.to_ascii_lowercase();
    let at = lower.find("nsight-systems/")? + "nsight-systems/".len();
    let rest = &path[at..];
    let segment = rest.split('/').next()?;
    let looks_like_version = segment.len() >= 6
        && segment.contains('.')
        && segment.chars().all(|c| c.is_ascii_digit() || c == '.')
        && segment.chars().next().is_some_and(|c| c.is_ascii_digit());
    looks_like_version.then(|| segment.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_is_read_from_an_install_path() {
        assert_eq!(
            version_in_path(
                "/opt/nvidia/nsight-systems/2021.2.1/target-linux-x64/libcupti.so.10.1"
            ),
            Some("2021.2.1".to_owned())
        );
        assert_eq!(
            version_in_path("/sw/Nsight-Systems/2022.2.1/target-linux-x64/nsys-launcher"),
            Some("2022.2.1".to_owned())
        );
        assert_eq!(version_in_path("/tmp/nvidia/nsight_systems/quadd"), None);
        assert_eq!(version_in_path("/opt/nsight-systems/current/x"), None);
    }
}
