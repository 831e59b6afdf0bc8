//! The `copytrace` binary's building blocks: choosing backends, the pipeline steps the
//! commands run (ingest, crawl into the store, match), and the bundled demo.
//!
//! Everything here is glue between the library crates; algorithms live in
//! `copytrace-fingerprint` and `copytrace-matcher`, storage in `copytrace-store`, fetching in
//! `copytrace-crawler`. This is the only crate that knows which storage backend runs: it is
//! chosen once, from the database URL, in [`backend::open_store`].

pub mod backend;
pub mod config;
pub mod dedup;
pub mod demo;
pub mod inspect;
pub mod jobs;
pub mod pipeline;
pub mod processes;
pub mod recrawl;
pub mod scheduling;
pub mod textfile;
