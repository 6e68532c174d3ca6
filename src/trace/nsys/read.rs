//! Reading an export: open it read-only, check it is an intact SQLite file, inspect the
//! schema, and read the CUDA tables into plain rows. No mapping decisions live here.
//!
//! Columns are read **by name** and only when the schema has them (`PRAGMA table_info`):
//! nsys adds columns between versions (`greenContextId` sits between `contextId` and
//! `streamId` from 2024.5 on), and creates a table only when it has rows.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::error::{sqlite_error, NsysError};

mod meta;

pub(crate) use meta::SessionStart;
pub use meta::{ExportInfo, GpuInfo};

/// Table names the reader knows.
pub(crate) const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
pub(crate) const MEMCPY: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
pub(crate) const MEMSET: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
pub(crate) const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
pub(crate) const SYNC: &str = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
pub(crate) const CUDA_EVENT: &str = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
const STRING_IDS: &str = "StringIds";
const STREAM_INFO: &str = "TARGET_INFO_CUDA_STREAM";
const MEM_KIND_ENUM: &str = "ENUM_CUDA_MEM_KIND";
const STREAM_TYPE_ENUM: &str = "ENUM_CUPTI_STREAM_TYPE";
const SESSION_START: &str = "TARGET_INFO_SESSION_START_TIME";
const TARGET_GPU: &str = "TARGET_INFO_GPU";
const META_NEW: &str = "META_DATA_EXPORT";
const META_OLD: &str = "EXPORT_META_DATA";

/// Every table name the readers (import and audit) read, besides the activity tables: a
/// view, trigger or virtual table under one of these names is refused (`not-a-table`).
const EXPECTED_TABLES: [&str; 15] = [
    KERNEL,
    MEMCPY,
    MEMSET,
    RUNTIME,
    SYNC,
    CUDA_EVENT,
    STRING_IDS,
    STREAM_INFO,
    MEM_KIND_ENUM,
    STREAM_TYPE_ENUM,
    SESSION_START,
    TARGET_GPU,
    META_NEW,
    META_OLD,
    "NVTX_EVENTS",
];

/// Columns read by a query of their own (not through [`Export::rows`], which checks its
/// columns as integers), with the affinity each must be declared with.
const TYPED_COLUMNS: &[(&str, &str, Affinity)] = &[
    (STRING_IDS, "id", Affinity::Integer),
    (STRING_IDS, "value", Affinity::Text),
    (MEM_KIND_ENUM, "id", Affinity::Integer),
    (MEM_KIND_ENUM, "name", Affinity::Text),
    (STREAM_TYPE_ENUM, "id", Affinity::Integer),
    (STREAM_TYPE_ENUM, "name", Affinity::Text),
    (SESSION_START, "utcEpochNs", Affinity::Integer),
    (TARGET_GPU, "id", Affinity::Integer),
    (TARGET_GPU, "cuDevice", Affinity::Integer),
    (TARGET_GPU, "name", Affinity::Text),
    (META_NEW, "name", Affinity::Text),
    (META_NEW, "value", Affinity::Text),
    (META_OLD, "name", Affinity::Text),
    (META_OLD, "value", Affinity::Text),
    (RUNTIME, "eventClass", Affinity::Integer),
    ("NVTX_EVENTS", "start", Affinity::Integer),
    ("NVTX_EVENTS", "end", Affinity::Integer),
    ("NVTX_EVENTS", "globalTid", Affinity::Integer),
    ("NVTX_EVENTS", "textId", Affinity::Integer),
    ("NVTX_EVENTS", "text", Affinity::Text),
];

/// A column's type affinity, from its declared type by SQLite's rules (§3.1 of "Datatypes
/// In SQLite"): `INT` anywhere is integer; else `CHAR`, `CLOB` or `TEXT` is text; else
/// `BLOB` or no type is blob; else `REAL`, `FLOA` or `DOUB` is real; else numeric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Affinity {
    Integer,
    Text,
    Blob,
    Real,
    Numeric,
}

impl Affinity {
    pub(crate) fn of(declared: &str) -> Affinity {
        let t = declared.to_ascii_uppercase();
        if t.contains("INT") {
            Affinity::Integer
        } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
            Affinity::Text
        } else if t.contains("BLOB") || t.trim().is_empty() {
            Affinity::Blob
        } else if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") {
            Affinity::Real
        } else {
            Affinity::Numeric
        }
    }

    fn word(self) -> &'static str {
        match self {
            Affinity::Integer => "INTEGER",
            Affinity::Text => "TEXT",
            Affinity::Blob => "BLOB (or no type)",
            Affinity::Real => "REAL",
            Affinity::Numeric => "NUMERIC",
        }
    }
}

/// The 16 bytes every SQLite 3 database starts with.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// `streamId` / `eventId` meaning "none" (a context-wide sync, a sync without an event).
pub(crate) const NONE_ID: i64 = 4_294_967_295;

/// An open export and its schema.
pub(crate) struct Export {
    conn: Connection,
    /// Table name → its column names, in schema order.
    tables: BTreeMap<String, Vec<String>>,
    /// Table name → its columns' declared types, in schema order.
    types: BTreeMap<String, Vec<String>>,
    /// Cache of `StringIds` look-ups.
    strings: HashMap<i64, Option<String>>,
}

/// The process part of a `globalPid`/`globalTid`: the low 24 bits (the thread) cleared, so a
/// thread's `globalTid` and its process's `globalPid` give the same key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Proc(pub i64);

impl Proc {
    /// From a `globalPid` or a `globalTid`.
    pub(crate) fn from_global(id: i64) -> Self {
        Proc(id & !0xFF_FFFF)
    }

    /// The operating-system pid, bits 24–47.
    pub(crate) fn pid(self) -> i64 {
        (self.0 >> 24) & 0xFF_FFFF
    }
}

/// Which GPU activity table a row comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum GpuKind {
    /// `CUPTI_ACTIVITY_KIND_KERNEL`.
    Kernel,
    /// `CUPTI_ACTIVITY_KIND_MEMCPY`.
    Memcpy,
    /// `CUPTI_ACTIVITY_KIND_MEMSET`.
    Memset,
}

impl GpuKind {
    pub(crate) const ALL: [GpuKind; 3] = [GpuKind::Kernel, GpuKind::Memcpy, GpuKind::Memset];

    pub(crate) fn table(self) -> &'static str {
        match self {
            GpuKind::Kernel => KERNEL,
            GpuKind::Memcpy => MEMCPY,
            GpuKind::Memset => MEMSET,
        }
    }

    /// `kernel`, `memcpy`, `memset`: phase id prefix and summary word.
    pub(crate) fn word(self) -> &'static str {
        match self {
            GpuKind::Kernel => "kernel",
            GpuKind::Memcpy => "memcpy",
            GpuKind::Memset => "memset",
        }
    }
}

/// A stream as CUPTI names it, within one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct StreamKey {
    pub proc: Proc,
    pub device: i64,
    pub context: i64,
    pub stream: i64,
}

/// One row of a GPU activity table.
#[derive(Clone, Debug)]
pub(crate) struct GpuRow {
    pub kind: GpuKind,
    pub rowid: i64,
    pub start: i64,
    pub end: i64,
    pub key: StreamKey,
    pub correlation: i64,
    /// Kernels: `shortName` (else `demangledName`) string id.
    pub name_id: Option<i64>,
    /// Copies and sets: bytes.
    pub bytes: Option<i64>,
    /// Copies: `copyKind`.
    pub copy_kind: Option<i64>,
    /// Copies: `srcKind` (a memory kind, see [`Export::memory_kinds`]).
    pub src_kind: Option<i64>,
    /// Copies: `dstKind`.
    pub dst_kind: Option<i64>,
}

/// One row of `TARGET_INFO_CUDA_STREAM`: a stream and CUPTI's creation flag for it.
#[derive(Clone, Debug)]
pub(crate) struct StreamInfoRow {
    /// `processId` (the pid, not the `globalPid`).
    pub pid: i64,
    pub context: i64,
    pub stream: i64,
    /// `flag` (`CUpti_ActivityStreamFlag`; see [`Export::stream_flag_names`]).
    pub flag: Option<i64>,
}

/// One row of `CUPTI_ACTIVITY_KIND_RUNTIME` (runtime and driver API calls).
#[derive(Clone, Debug)]
pub(crate) struct ApiRow {
    pub rowid: i64,
    pub start: i64,
    pub end: i64,
    pub proc: Proc,
    pub correlation: i64,
    pub name_id: i64,
    /// `eventClass` when the column exists (0 runtime, 1 driver).
    pub class: Option<i64>,
}

/// One row of `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`.
#[derive(Clone, Debug)]
pub(crate) struct SyncRow {
    pub rowid: i64,
    pub key: StreamKey,
    pub correlation: i64,
    pub event: Option<i64>,
    pub event_sync_id: Option<i64>,
}

/// One row of `CUPTI_ACTIVITY_KIND_CUDA_EVENT` (an event record in a stream).
#[derive(Clone, Debug)]
pub(crate) struct EventRow {
    pub rowid: i64,
    pub key: StreamKey,
    pub correlation: i64,
    pub event: i64,
    pub event_sync_id: Option<i64>,
}

/// Read-only open of `path`, after checking that it is a whole SQLite file.
///
/// # Errors
/// `io`, `empty-file`, `not-sqlite`, `truncated`, `corrupt`, `sqlite`.
pub(crate) fn open(path: &Path) -> Result<Export, NsysError> {
    check_header(path)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    // `-` (standard input) is read from its copy, as every reader reads it.
    let source = crate::input::source_path(path)?;
    let conn =
        Connection::open_with_flags(source.as_ref(), flags).map_err(|e| sqlite_error("$", &e))?;
    // Read-only twice over, and no function a schema names runs with any trust.
    conn.pragma_update(None, "query_only", true)
        .and_then(|()| conn.pragma_update(None, "trusted_schema", false))
        .map_err(|e| sqlite_error("$", &e))?;
    quick_check(&conn)?;
    let mut export = Export {
        conn,
        tables: BTreeMap::new(),
        types: BTreeMap::new(),
        strings: HashMap::new(),
    };
    export.read_schema()?;
    Ok(export)
}

/// `PRAGMA quick_check` before any table is read: a damaged b-tree (a rowid out of order,
/// a page used twice) is `corrupt`, named with SQLite's first findings, instead of rows
/// that silently repeat or go missing.
fn quick_check(conn: &Connection) -> Result<(), NsysError> {
    let findings: Vec<String> = conn
        .prepare("PRAGMA quick_check(3)")
        .and_then(|mut stmt| {
            stmt.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()
        })
        .map_err(|e| sqlite_error("$", &e))?;
    if findings.len() == 1 && findings[0] == "ok" {
        return Ok(());
    }
    let text = findings.join("; ").replace('\n', "; ");
    Err(NsysError::new(
        "$",
        "corrupt",
        format!(
            "SQLite's quick_check finds the database damaged ({text}); an intact `nsys export --type sqlite` file is expected"
        ),
    ))
}

/// Looks at the first 100 bytes (the SQLite header) and the file length, so that an empty,
/// foreign or truncated file is named as such before SQLite sees it.
fn check_header(path: &Path) -> Result<(), NsysError> {
    let io = |e: std::io::Error| NsysError::new("$", "io", format!("cannot read the file: {e}"));
    let mut file = crate::input::open_file(path)?;
    let len = file.metadata().map_err(io)?.len();
    let expected = "an Nsight Systems SQLite export (`nsys export --type sqlite`) is expected";
    if len == 0 {
        return Err(NsysError::new(
            "$",
            "empty-file",
            format!("the file is empty; {expected}"),
        ));
    }
    let mut header = Vec::with_capacity(100);
    file.by_ref()
        .take(100)
        .read_to_end(&mut header)
        .map_err(io)?;
    if header.len() < 16 || &header[..16] != SQLITE_MAGIC {
        return Err(NsysError::new(
            "$",
            "not-sqlite",
            format!(
                "the file does not start with the SQLite header (`SQLite format 3`); {expected}"
            ),
        ));
    }
    if header.len() < 100 {
        return Err(NsysError::new(
            "$",
            "truncated",
            format!("the file holds {len} bytes, less than the 100-byte SQLite header; {expected}"),
        ));
    }
    // Page size: bytes 16..18, big-endian; 1 means 65 536. Page count: bytes 28..32, valid
    // when the "version-valid-for" number (92..96) equals the change counter (24..28).
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536u64,
        n => u64::from(n),
    };
    let pages = u64::from(be32(28));
    if pages > 0 && be32(92) == be32(24) {
        let needed = pages * page_size;
        if len < needed {
            return Err(NsysError::new(
                "$",
                "truncated",
                format!(
                    "the SQLite header promises {pages} pages of {page_size} bytes ({needed} bytes) but the file holds {len}: it is cut short; {expected}"
                ),
            ));
        }
    }
    Ok(())
}

impl Export {
    /// Reads `sqlite_master`: every real table with its columns and declared types. A view,
    /// trigger or virtual table named like a table the readers expect is `not-a-table` (a
    /// view's rows are not the export's, and a recursive one never ends: none is read), and
    /// a column read by a query of its own must have its expected type.
    fn read_schema(&mut self) -> Result<(), NsysError> {
        let entries: Vec<(String, String, Option<String>)> = {
            let mut stmt = self
                .conn
                .prepare("SELECT type, name, sql FROM sqlite_master")
                .map_err(|e| sqlite_error("sqlite_master", &e))?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(|e| sqlite_error("sqlite_master", &e))?;
            rows.collect::<Result<_, _>>()
                .map_err(|e| sqlite_error("sqlite_master", &e))?
        };
        let mut names = Vec::new();
        for (kind, name, sql) in entries {
            let is_virtual = sql.as_deref().is_some_and(|s| {
                s.trim_start()
                    .to_ascii_uppercase()
                    .starts_with("CREATE VIRTUAL")
            });
            let what = match kind.as_str() {
                "table" if is_virtual => "a virtual table",
                "table" => {
                    names.push(name);
                    continue;
                }
                "view" => "a view",
                "trigger" => "a trigger",
                _ => continue, // an index names no rows
            };
            if let Some(expected) = EXPECTED_TABLES
                .iter()
                .find(|t| t.eq_ignore_ascii_case(&name))
            {
                return Err(NsysError::new(
                    name.as_str(),
                    "not-a-table",
                    format!(
                        "`{name}` is {what}, where an Nsight Systems export has the table `{expected}`: only real tables are read (a view's rows are not the export's); an unmodified `nsys export --type sqlite` file is expected"
                    ),
                ));
            }
        }
        for name in names {
            let mut stmt = self
                .conn
                .prepare(&format!("PRAGMA table_info({})", quote(&name)))
                .map_err(|e| sqlite_error(name.as_str(), &e))?;
            let cols: Vec<(String, String)> = stmt
                .query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, String>(2)?)))
                .map_err(|e| sqlite_error(name.as_str(), &e))?
                .collect::<Result<_, _>>()
                .map_err(|e| sqlite_error(name.as_str(), &e))?;
            let (cols, types) = cols.into_iter().unzip();
            self.tables.insert(name.clone(), cols);
            self.types.insert(name, types);
        }
        for (table, column, affinity) in TYPED_COLUMNS {
            self.check_type(table, column, *affinity)?;
        }
        Ok(())
    }

    /// `wrong-column-type` when `table.column` exists with another affinity than `expected`.
    fn check_type(&self, table: &str, column: &str, expected: Affinity) -> Result<(), NsysError> {
        let Some(at) = self
            .tables
            .get(table)
            .and_then(|cols| cols.iter().position(|c| c == column))
        else {
            return Ok(());
        };
        let declared = &self.types[table][at];
        if Affinity::of(declared) == expected {
            return Ok(());
        }
        Err(NsysError::new(
            format!("{table}.{column}"),
            "wrong-column-type",
            format!(
                "column `{column}` of {table} is declared `{declared}` ({} affinity); this reader expects {}, as nsys writes it",
                Affinity::of(declared).word(),
                expected.word()
            ),
        ))
    }

    /// Whether the table exists.
    pub(crate) fn has_table(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    /// Whether the table exists and has the column.
    pub(crate) fn has_column(&self, table: &str, column: &str) -> bool {
        self.tables
            .get(table)
            .is_some_and(|cols| cols.iter().any(|c| c == column))
    }

    /// The open connection, for readers with queries of their own (the audit's NVTX ranges).
    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Number of tables in the file.
    pub(crate) fn table_count(&self) -> usize {
        self.tables.len()
    }

    /// Whether any table looks like an Nsight Systems one.
    pub(crate) fn looks_like_nsys(&self) -> bool {
        self.tables.keys().any(|t| {
            t == STRING_IDS
                || t.starts_with("CUPTI_ACTIVITY_KIND_")
                || t.starts_with("TARGET_INFO_")
                || t == META_NEW
                || t == META_OLD
        })
    }

    /// Rows of `table`, each as `rowid` plus the named columns. A column in `optional` that
    /// the schema lacks reads as NULL; one in `required` that it lacks is `missing-column`,
    /// and a NULL in a required column is `bad-row`. A table that does not exist has no rows.
    fn rows(
        &self,
        table: &str,
        required: &[&str],
        optional: &[&str],
    ) -> Result<Vec<Row>, NsysError> {
        if !self.has_table(table) {
            return Ok(Vec::new());
        }
        let mut select = vec!["rowid".to_owned()];
        for c in required {
            if !self.has_column(table, c) {
                return Err(NsysError::new(
                    format!("{table}.{c}"),
                    "missing-column",
                    format!(
                        "table {table} has no column `{c}`; this reader needs it (columns found: {})",
                        self.tables[table].join(", ")
                    ),
                ));
            }
            self.check_type(table, c, Affinity::Integer)?;
            select.push(quote(c));
        }
        for c in optional {
            self.check_type(table, c, Affinity::Integer)?;
            select.push(if self.has_column(table, c) {
                quote(c)
            } else {
                "NULL".to_owned()
            });
        }
        let sql = format!("SELECT {} FROM {}", select.join(", "), quote(table));
        let mut stmt = self
            .conn
            .prepare(&sql)
            .map_err(|e| sqlite_error(table, &e))?;
        let mut rows = stmt.query([]).map_err(|e| sqlite_error(table, &e))?;
        let names: Vec<&str> = required.iter().chain(optional).copied().collect();
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| sqlite_error(table, &e))? {
            let rowid: i64 = row.get(0).map_err(|e| sqlite_error(table, &e))?;
            let mut values = Vec::with_capacity(names.len());
            for (i, name) in names.iter().enumerate() {
                let v: Option<i64> = row.get(i + 1).map_err(|e| {
                    NsysError::new(
                        format!("{table}[rowid {rowid}].{name}"),
                        "bad-row",
                        format!("an integer is expected here: {e}"),
                    )
                })?;
                if v.is_none() && i < required.len() {
                    return Err(NsysError::new(
                        format!("{table}[rowid {rowid}].{name}"),
                        "bad-row",
                        "NULL where an integer is needed",
                    ));
                }
                values.push(v);
            }
            out.push(Row { rowid, values });
        }
        Ok(out)
    }

    /// Rows of one GPU activity table (absent table: none).
    pub(crate) fn gpu_rows(&self, kind: GpuKind) -> Result<Vec<GpuRow>, NsysError> {
        let table = kind.table();
        let required = [
            "start",
            "end",
            "deviceId",
            "contextId",
            "streamId",
            "correlationId",
            "globalPid",
        ];
        let optional: &[&str] = match kind {
            GpuKind::Kernel => &["shortName", "demangledName"],
            GpuKind::Memcpy => &["bytes", "copyKind", "srcKind", "dstKind"],
            GpuKind::Memset => &["bytes"],
        };
        let rows = self.rows(table, &required, optional)?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let v = |i: usize| r.values[i].unwrap_or_default();
                let (name_id, bytes, copy_kind) = match kind {
                    GpuKind::Kernel => (r.values[7].or(r.values[8]), None, None),
                    GpuKind::Memcpy => (None, r.values[7], r.values[8]),
                    GpuKind::Memset => (None, r.values[7], None),
                };
                GpuRow {
                    kind,
                    rowid: r.rowid,
                    start: v(0),
                    end: v(1),
                    key: StreamKey {
                        proc: Proc::from_global(v(6)),
                        device: v(2),
                        context: v(3),
                        stream: v(4),
                    },
                    correlation: v(5),
                    name_id,
                    bytes,
                    copy_kind,
                    src_kind: (kind == GpuKind::Memcpy).then(|| r.values[9]).flatten(),
                    dst_kind: (kind == GpuKind::Memcpy).then(|| r.values[10]).flatten(),
                }
            })
            .collect())
    }

    /// Rows of `CUPTI_ACTIVITY_KIND_RUNTIME` (absent table: none).
    pub(crate) fn api_rows(&self) -> Result<Vec<ApiRow>, NsysError> {
        let rows = self.rows(
            RUNTIME,
            &["start", "end", "globalTid", "correlationId", "nameId"],
            &["eventClass"],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let v = |i: usize| r.values[i].unwrap_or_default();
                ApiRow {
                    rowid: r.rowid,
                    start: v(0),
                    end: v(1),
                    proc: Proc::from_global(v(2)),
                    correlation: v(3),
                    name_id: v(4),
                    class: r.values[5],
                }
            })
            .collect())
    }

    /// Rows of `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION` (absent table: none).
    pub(crate) fn sync_rows(&self) -> Result<Vec<SyncRow>, NsysError> {
        let rows = self.rows(
            SYNC,
            &[
                "deviceId",
                "contextId",
                "streamId",
                "correlationId",
                "globalPid",
            ],
            &["eventId", "eventSyncId"],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let v = |i: usize| r.values[i].unwrap_or_default();
                SyncRow {
                    rowid: r.rowid,
                    key: StreamKey {
                        proc: Proc::from_global(v(4)),
                        device: v(0),
                        context: v(1),
                        stream: v(2),
                    },
                    correlation: v(3),
                    event: r.values[5].filter(|&e| e != NONE_ID),
                    event_sync_id: r.values[6],
                }
            })
            .collect())
    }

    /// Rows of `CUPTI_ACTIVITY_KIND_CUDA_EVENT` (absent table: none).
    pub(crate) fn event_rows(&self) -> Result<Vec<EventRow>, NsysError> {
        let rows = self.rows(
            CUDA_EVENT,
            &[
                "deviceId",
                "contextId",
                "streamId",
                "correlationId",
                "globalPid",
                "eventId",
            ],
            &["eventSyncId"],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let v = |i: usize| r.values[i].unwrap_or_default();
                EventRow {
                    rowid: r.rowid,
                    key: StreamKey {
                        proc: Proc::from_global(v(4)),
                        device: v(0),
                        context: v(1),
                        stream: v(2),
                    },
                    correlation: v(3),
                    event: v(5),
                    event_sync_id: r.values[6],
                }
            })
            .collect())
    }
}

/// A row as read: its rowid and the requested columns.
struct Row {
    rowid: i64,
    values: Vec<Option<i64>>,
}

/// The text in column `i` of `row`: NULL (and a blob) is `None`, an integer its digits; text
/// that is not UTF-8 is `bad-row` at `at()` (like `StringIds[id 5].value`), naming the first
/// bad byte and its offset.
fn text_at(
    row: &rusqlite::Row,
    i: usize,
    at: impl Fn() -> String,
) -> Result<Option<String>, NsysError> {
    use rusqlite::types::ValueRef;
    match row.get_ref(i) {
        Ok(ValueRef::Text(bytes)) => match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Some(s.to_owned())),
            Err(e) => {
                let at_byte = e.valid_up_to();
                Err(NsysError::new(
                    at(),
                    "bad-row",
                    format!(
                        "the text is not UTF-8: byte 0x{:02x} at offset {at_byte} of {} bytes does not begin a valid sequence",
                        bytes[at_byte],
                        bytes.len()
                    ),
                ))
            }
        },
        Ok(ValueRef::Integer(n)) => Ok(Some(n.to_string())),
        _ => Ok(None),
    }
}

/// `"name"` with embedded quotes doubled: an SQLite identifier.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_key_clears_the_thread_bits() {
        let tid = (50_556i64 << 24) | 0x1234;
        let pid = 50_556i64 << 24;
        assert_eq!(Proc::from_global(tid), Proc::from_global(pid));
        assert_eq!(Proc::from_global(tid).pid(), 50_556);
    }
}
