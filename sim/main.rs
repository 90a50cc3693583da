//! `gpumemsim`: the thin command-line front of the library. It parses arguments (clap derive), calls
//! the library, prints what it returns, and turns errors into a message with their whole cause chain and
//! exit status 1. Nothing here models hardware or knows a file format.
//!
//! Each subcommand is one variant of [`Command`] with its argument struct, and one `cmd_*` function
//! that returns the process exit code.

use anyhow::Result;
use clap::{Parser, Subcommand};
use gpumemsim::config;
use std::path::PathBuf;
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
enum Command {
    /// Validate, show and document hardware configs (TOML).
    #[command(subcommand)]
    Config(ConfigCmd),
}

#[derive(Subcommand)]
enum ConfigCmd {
    /// Validate config files: prints `FILE: ok` or the error for each; exit 1 if any is invalid.
    Check {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Print the resolved config as TOML (without FILE: the embedded H100 default).
    Show {
        file: Option<PathBuf>,
        /// Override one key, e.g. `--set l2.slices=8` (repeatable; checked like the file).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Print every key with its type, unit, allowed values, default and description.
    Doc {
        /// As the markdown table of README.md's configuration reference.
        #[arg(long)]
        markdown: bool,
    },
}

fn cmd_config(c: ConfigCmd) -> Result<ExitCode> {
    match c {
        ConfigCmd::Check { files } => {
            let mut failed = false;
            for f in &files {
                match config::load(Some(f), &[]) {
                    Ok(_) => println!("{}: ok", f.display()),
                    Err(e) => {
                        failed = true;
                        eprintln!("{e}");
                    }
                }
            }
            Ok(ExitCode::from(failed as u8))
        }
        ConfigCmd::Show { file, set } => {
            let cfg = config::load(file.as_deref(), &set)?;
            print!("{}", config::to_toml(&cfg)?);
            Ok(ExitCode::SUCCESS)
        }
        ConfigCmd::Doc { markdown } => {
            let cfg = config::default_config()?;
            let out = if markdown {
                config::doc::markdown(&cfg, config::DEFAULT_NAME)?
            } else {
                config::doc::text(&cfg)?
            };
            print!("{out}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<ExitCode> = match cli.command {
        Command::Config(c) => cmd_config(c),
    };
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
