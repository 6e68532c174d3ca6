//! The recorded model of a profiler trace: what a profiler recorded, in integer ns on the
//! trace's one clock, before any decision about what it means ([`model`]).
//!
//! This floor sits below the analyses that read it (`audit`) and the interpretation that
//! builds a case (`import`). The readers that fill it are the Kineto and Nsight Systems readers
//! of `import` today (the importer's streaming pass, `import::kineto::audit`; the lenient
//! reader, `import::kineto::trace`; `import::nsys::trace`); the model itself depends on nothing
//! above the core.

pub mod model;
pub mod scan;
