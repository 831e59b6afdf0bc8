//! The `copytrace` binary's building blocks: the command line ([`cli`]), the configuration
//! file, choosing backends, the long-running processes, and the bundled demo.
//!
//! No pipeline step lives here: every operation is `copytrace-service`'s, and this crate only
//! parses, configures and wires. It is the only crate that knows which storage backend runs: it
//! is chosen once, from the database URL, in [`backend::open_store`].

pub mod backend;
pub mod cli;
pub mod config;
pub mod demo;
pub mod processes;
