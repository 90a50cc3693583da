//! Value checks after deserialisation, and `--set` overrides. (Filled in by the config work.)

use super::{ConfigError, GpuConfig};

/// Checks every value; on failure returns (key path, value, what is allowed).
pub fn validate(_cfg: &GpuConfig) -> Result<(), (String, String, String)> {
    Ok(())
}

/// Applies one `KEY.PATH=VALUE` override to the TOML tree.
pub fn apply_override(table: &mut toml::Table, arg: &str) -> Result<(), ConfigError> {
    let (key, val) = arg.split_once('=').ok_or_else(|| ConfigError::Override {
        arg: arg.to_string(),
        message: "expected KEY=VALUE".into(),
    })?;
    let key = key.trim();
    let parsed: toml::Value = toml::from_str::<toml::Table>(&format!("v = {}", val.trim()))
        .map(|mut t| {
            t.remove("v")
                .unwrap_or(toml::Value::String(val.trim().to_string()))
        })
        .unwrap_or_else(|_| toml::Value::String(val.trim().to_string()));
    let mut cur = table;
    let parts: Vec<&str> = key.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            cur.insert(p.to_string(), parsed);
            return Ok(());
        }
        cur = match cur
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(Default::default()))
        {
            toml::Value::Table(t) => t,
            _ => {
                return Err(ConfigError::Override {
                    arg: arg.to_string(),
                    message: format!("{p} is not a table"),
                })
            }
        };
    }
    Ok(())
}
