//! `gpumemsim`: the thin command-line front of the library. It parses arguments (clap derive), calls
//! the library, prints what it returns, and turns errors into a message with their whole cause chain and
//! exit status 1. Nothing here models hardware or knows a file format.
//!
//! Each subcommand is one variant of [`Command`] with its argument struct, and one `cmd_*` function
//! that returns the process exit code.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gpumemsim",
    version,
    about = "Cycle-level GPU memory-system simulator with scoped weak-memory semantics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<ExitCode> = match cli.command {};
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(1)
        }
    }
}
