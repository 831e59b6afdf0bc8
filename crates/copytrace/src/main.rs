//! `copytrace`: the command-line entry point. Reads the configuration file, parses arguments,
//! runs one command ([`copytrace::cli`]), and turns errors into a one-line message and an exit
//! code.
//!
//! Exit codes: 0 success; 1 error (nothing half-written); 2 bad command line; 3 the command
//! finished but some inputs failed (e.g. a seed URL of a crawl was unreachable). A reader that
//! stops early (`copytrace … | head`) ends any command quietly with 0 (see
//! `exit_quietly_on_a_closed_pipe`).

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use copytrace::cli::{self, Cli};

/// mimalloc instead of glibc's malloc: matching allocates per page on several threads (the
/// blocking pool's and SQLite's), where glibc's malloc took about a fifth of the matching
/// thread's CPU (docs/benchmarks.md, "The allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    exit_quietly_on_a_closed_pipe();
    // The configuration file feeds the command-line parser (as environment defaults), so it is
    // read first; see `copytrace::config`.
    if let Err(error) = apply_config_file() {
        eprintln!("error: {}", one_line(&error));
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    init_logging(cli.globals.verbose);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(cli)) {
        Ok(code) => code,
        // `copytrace … | head` closing the pipe early is not an error.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", one_line(&error));
            ExitCode::FAILURE
        }
    }
}

/// Sets the environment variable of every setting of the configuration file that the
/// environment does not set already.
fn apply_config_file() -> Result<()> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let Some(path) = copytrace::config::config_path(&args) else {
        return Ok(());
    };
    let file = copytrace::config::ConfigFile::read(&path)?;
    for (name, value) in file.to_env() {
        if std::env::var_os(&name).is_none() {
            #[allow(unsafe_code)]
            // SAFETY: called first thing in `main`, before the async runtime or any other
            // thread exists, so nothing can read the environment concurrently.
            unsafe {
                std::env::set_var(name, value);
            }
        }
    }
    Ok(())
}

/// The cause chain on one line. A cause that only repeats the end of the message before it
/// (database drivers print their source inside their own message) is left out.
fn one_line(error: &anyhow::Error) -> String {
    let error: &(dyn std::error::Error + 'static) = &**error;
    copytrace_service::error::one_line(error)
}

/// Ends the process quietly, with exit code 0, when `println!` (or `eprintln!`) finds its
/// reader gone: `copytrace notice show 1 | head -3`. A command that returns the `BrokenPipe`
/// error instead ends the same way (see `main`), as ripgrep and fd do.
///
/// Rust's runtime ignores SIGPIPE, so writing to a closed pipe is an `EPIPE` error, and the
/// print macros turn that error into a panic ("failed printing to stdout: Broken pipe", exit
/// 101). Restoring SIGPIPE's default disposition, the C convention, is not safe here: the
/// disposition is the whole process's, and `serve` and the workers also write to sockets (HTTP
/// clients, PostgreSQL, Redis, Chromium's DevTools connection). Rust's plain socket write
/// passes `MSG_NOSIGNAL`, but a vectored write (hyper's) is a `writev`, which raises SIGPIPE, so
/// a client hanging up could kill the server. SIGPIPE therefore stays ignored, every socket
/// error stays an error its caller handles, and only this one panic, on standard output or
/// standard error, becomes a quiet exit, from whichever thread prints. Every other panic, and
/// any other failure to print (a full disk), goes to the default hook as before.
fn exit_quietly_on_a_closed_pipe() {
    let closed = std::io::Error::from_raw_os_error(nix::errno::Errno::EPIPE as i32);
    let messages =
        ["stdout", "stderr"].map(|stream| format!("failed printing to {stream}: {closed}"));
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info
            .payload_as_str()
            .is_some_and(|message| messages.iter().any(|closed| closed == message))
        {
            std::process::exit(0);
        }
        default_hook(info);
    }));
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn init_logging(verbose: u8) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("COPYTRACE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_log_filter(verbose)));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// The log filter for `-v` repeated `verbose` times. By default only Copytrace's own warnings
/// reach stderr: the libraries' (the HTML parser's "foster parenting not implemented", the
/// browser protocol's "WS Invalid message") say nothing a user can act on, and per-URL crawl
/// failures are summarised by the command itself, so the crawler's lines would only repeat them.
/// `-v` adds Copytrace's debug lines, `-vv` everything.
fn default_log_filter(verbose: u8) -> &'static str {
    match verbose {
        0 => "off,copytrace=warn,copytrace_crawler=error",
        1 => "off,copytrace=debug",
        _ => "debug",
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;
    use std::sync::{Arc, Mutex};

    use super::{default_log_filter, one_line};

    /// What the default filter for `verbose` lets through of a library's and Copytrace's
    /// warnings and debug lines.
    fn logged(verbose: u8) -> String {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(default_log_filter(
                verbose,
            )))
            .with_writer(move || Writer(writer.clone()))
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(target: "html5ever::tree_builder", "foster parenting not implemented");
            tracing::warn!(target: "chromiumoxide::handler", "WS Invalid message");
            tracing::warn!(target: "copytrace_service::crawl", "own warning");
            tracing::info!(target: "copytrace_crawler::crawl", "fetch failed");
            tracing::debug!(target: "copytrace_service::dedup", "own debug line");
        });
        String::from_utf8(buffer.lock().unwrap().clone()).unwrap()
    }

    struct Writer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Writer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn library_warnings_are_logged_only_at_the_highest_verbosity() {
        let quiet = logged(0);
        assert!(quiet.contains("own warning"), "{quiet}");
        for hidden in [
            "foster parenting",
            "WS Invalid",
            "fetch failed",
            "own debug",
        ] {
            assert!(
                !quiet.contains(hidden),
                "{hidden} at the default level: {quiet}"
            );
        }
        let verbose = logged(1);
        assert!(verbose.contains("own debug line") && verbose.contains("fetch failed"));
        assert!(!verbose.contains("foster parenting") && !verbose.contains("WS Invalid"));
        let everything = logged(2);
        assert!(everything.contains("foster parenting") && everything.contains("WS Invalid"));
    }

    #[derive(Debug)]
    struct Server;

    impl fmt::Display for Server {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("database \"ct\" does not exist")
        }
    }

    impl std::error::Error for Server {}

    /// A driver error that prints its source inside its own message and also returns it.
    #[derive(Debug)]
    struct Driver(Server);

    impl fmt::Display for Driver {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "error returned from database: {}", self.0)
        }
    }

    impl std::error::Error for Driver {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_repeating_the_previous_message_is_printed_once() {
        let error = anyhow::Error::new(Driver(Server)).context("cannot open database pg://h/ct");
        assert_eq!(
            one_line(&error),
            "cannot open database pg://h/ct: error returned from database: database \"ct\" does \
             not exist"
        );
        let plain = anyhow::anyhow!("disk full").context("cannot write");
        assert_eq!(one_line(&plain), "cannot write: disk full");
    }
}
