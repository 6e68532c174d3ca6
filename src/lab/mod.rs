//! Teaching labs that really measure: `worksheet lab …`.
//!
//! ## The executor lab
//!
//! A deterministic task (FNV-1a over a fixed buffer, repeated; calibrated to about
//! `--target-ms` on this machine) is submitted to a real thread pool, one run at a time. Per
//! run, on **one declared host clock** (`CLOCK_MONOTONIC`, instance = the boot id), the
//! caller reads submission start, submission return, wait start, result ready and digest
//! checked; the worker reads work start and work end. Every digest is compared with a
//! reference computed once on the caller thread; a wrong digest is a failed run, kept in
//! the log and reported, never dropped.
//!
//! Outputs, all pure functions of the recorded run ([`export`]): the table (median / P90 /
//! max / MAD per interval, nearest rank; the share of work that ran after submission
//! returned; the steady-state verdict), the raw CSV log (one row per run, warm-ups
//! marked), JSON, Markdown, and a case file that `worksheet check` replays.
//!
//! ## How the thread pool is modelled in the case format
//!
//! The case format speaks of streams, events and waits, as for GPUs. The lab maps the pool
//! onto them as follows (see also `fixtures/README.md`, "Lab case files"):
//!
//! | pool                                   | case file                                       |
//! |----------------------------------------|-------------------------------------------------|
//! | the pool's job queue                   | stream `pool` of device `executor`, on the host clock |
//! | a job's work, read by the worker       | phase `job-N` in stream `pool`, launched at submission |
//! | the job's result handle                | event `done-N`, recorded after `job-N`, no timestamp |
//! | the caller blocking on the result      | `host-wait` `wait-for-N` on event `done-N`, returning at t3 |
//! | submission / completion / wait timers  | `submit-N` (t0→t1), `complete-N` (t0→t3), `wait-N` (t2→t3) |
//!
//! A stream promises in-order execution. A pool with several workers gives no such promise
//! in general, but here the caller waits for each job before submitting the next, so at
//! most one job is ever in flight and the order is real. Because the wait targets the job's
//! own event, the engine's host-completion rule applies exactly as for a GPU event: the
//! completion is known because the stop follows a wait that covers the job; submission is
//! known and makes no completion claim.
//!
//! Measurement is behind traits ([`clock::HostClock`], [`work::Work`]) so that tests run
//! the whole lab with a scripted clock and scripted digests.

pub mod clock;
pub mod executor;
pub mod export;
pub mod pool;
pub mod streams;
pub mod work;
