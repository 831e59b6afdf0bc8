//! Rebuilds the crate when a migration is added: `sqlx::migrate!` embeds the files at compile
//! time, and a proc macro cannot ask Cargo to watch a directory on stable Rust.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
