//! Hardware configuration: TOML → [`GpuConfig`] (serde, unknown keys denied) → validation.
//!
//! The H100 preset is embedded so that a run needs no file. `--set KEY=VALUE` overrides edit the TOML
//! tree before deserialisation, so an override is checked exactly like a value in the file.

pub mod spec;
pub mod validate;

pub use spec::*;

use std::path::Path;
use thiserror::Error;

/// The embedded default: the H100 preset.
pub const DEFAULT_TOML: &str = include_str!("../../configs/h100.toml");
pub const DEFAULT_NAME: &str = "configs/h100.toml (embedded)";

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: {key} = {value}: {allowed}")]
    Invalid {
        file: String,
        key: String,
        value: String,
        allowed: String,
    },
    #[error("--set {arg}: {message}")]
    Override { arg: String, message: String },
}

/// Parses and validates a config held in memory; `file` names it in errors.
pub fn parse_str(text: &str, file: &str, overrides: &[String]) -> Result<GpuConfig, ConfigError> {
    let mut value: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    for o in overrides {
        validate::apply_override(&mut value, o)?;
    }
    let cfg: GpuConfig =
        GpuConfig::deserialize(toml::Value::Table(value)).map_err(|e| ConfigError::Parse {
            file: file.to_string(),
            message: e.to_string(),
        })?;
    validate::validate(&cfg).map_err(|(key, value, allowed)| ConfigError::Invalid {
        file: file.to_string(),
        key,
        value,
        allowed,
    })?;
    Ok(cfg)
}

use serde::Deserialize;

/// Loads `path`, or the embedded default when `None`.
pub fn load(path: Option<&Path>, overrides: &[String]) -> Result<GpuConfig, ConfigError> {
    match path {
        None => parse_str(DEFAULT_TOML, DEFAULT_NAME, overrides),
        Some(p) => {
            let file = p.display().to_string();
            let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Io {
                file: file.clone(),
                source,
            })?;
            parse_str(&text, &file, overrides)
        }
    }
}

/// The embedded default config, already validated.
pub fn default_config() -> GpuConfig {
    // The embedded preset is validated by a unit test, so this cannot fail at run time.
    parse_str(DEFAULT_TOML, DEFAULT_NAME, &[]).expect("embedded default config is valid")
}
