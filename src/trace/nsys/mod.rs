//! Nsight Systems SQLite exports (`nsys export --type sqlite`), read: opened read-only with
//! `query_only`, the schema inspected (an expected table must be a table, with the expected
//! column affinities), rows read by column name (`read`), and the same rows as the
//! format-neutral recorded model (`neutral`). What the rows mean is decided above, in
//! `import::nsys`, whose module documentation describes the mapping.

pub(crate) mod error;
pub mod neutral;
pub(crate) mod read;

pub use error::{NsysError, NSYS_ERROR_CODES};
