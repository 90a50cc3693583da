//! Hardware configuration: TOML → [`GpuConfig`] (serde, unknown keys denied) → validation.
//!
//! Parsing goes in five steps, each with errors that name the place and what is allowed:
//! 1. TOML syntax (`file:line:col: message`), for the file and each base it builds on
//!    (`base = "h100"` or a path: `layer.rs`);
//! 2. a walk of each parsed file against the key table (`keys.rs`): unknown keys (with the keys
//!    allowed there), values of the wrong kind or out of range — at the key's or value's
//!    `file:line:col`;
//! 3. the files merged, base first, and every required key present;
//! 4. `--set KEY=VALUE` overrides, each checked against the same table (`--set arg: ...`);
//! 5. deserialisation into the typed spec and the cross-key rules of `validate.rs`, blamed on the
//!    override that set one of the keys involved, or on the key's position in the top-most file that
//!    set it (or one of the keys the rule involves).
//!
//! Each resolved value keeps its origin (preset, file position, `--set`, default): [`Resolved`],
//! printed by `gpumemsim config show` (`show.rs`).
//!
//! The H100 preset is embedded so that a run needs no file ([`DEFAULT_TOML`]); every preset is
//! embedded in [`PRESETS`] so that a unit test proves each one valid, and so that a file can build on
//! one by name.

pub mod doc;
pub mod keys;
pub mod kind;
pub mod layer;
pub mod show;
pub mod spec;
pub mod validate;

pub use layer::Origin;
pub use spec::*;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

/// The embedded default: the H100 preset.
pub const DEFAULT_TOML: &str = include_str!("../../../configs/h100.toml");
pub const DEFAULT_NAME: &str = "configs/h100.toml (embedded)";
/// The embedded default's preset name (`base = "h100"`).
pub const DEFAULT_PRESET: &str = "h100";

/// Every preset shipped in `configs/`, by file name.
pub const PRESETS: &[(&str, &str)] = &[
    ("configs/h100.toml", DEFAULT_TOML),
    (
        "configs/a100.toml",
        include_str!("../../../configs/a100.toml"),
    ),
    (
        "configs/v100.toml",
        include_str!("../../../configs/v100.toml"),
    ),
    (
        "configs/tiny.toml",
        include_str!("../../../configs/tiny.toml"),
    ),
    (
        "configs/stress.toml",
        include_str!("../../../configs/stress.toml"),
    ),
];

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// TOML syntax, or (rarely, after the key walk) a value serde cannot take.
    #[error("{at}: {message}")]
    Parse { at: String, message: String },
    #[error("{at}: {key} = {value}: {allowed}")]
    Invalid {
        /// `file` or `file:line:col`.
        at: String,
        key: String,
        value: String,
        allowed: String,
    },
    #[error("{at}: {message}")]
    UnknownKey {
        at: String,
        key: String,
        message: String,
    },
    #[error("{at}: missing key `{key}` ({expected})")]
    Missing {
        at: String,
        key: String,
        expected: String,
    },
    #[error("--set {arg}: {message}")]
    Override { arg: String, message: String },
}

/// A file the reader could not read, or whose bytes are not text, at its position (`text.rs`).
impl From<crate::text::TextError> for ConfigError {
    fn from(e: crate::text::TextError) -> Self {
        match e.located() {
            Err((file, source)) => Self::Io { file, source },
            Ok(l) => Self::Parse {
                at: l.at(),
                message: l.message,
            },
        }
    }
}

/// `file:line:col` of byte `offset` in `text` (1-based line and column, column in characters).
fn position(file: &str, text: &str, offset: Option<usize>) -> String {
    match offset {
        Some(o) => {
            // Spans start at tokens, so on character boundaries; be safe anyway.
            let before = text.get(..o).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let col = before
                .rsplit_once('\n')
                .map_or(before, |(_, l)| l)
                .chars()
                .count()
                + 1;
            format!("{file}:{line}:{col}")
        }
        None => file.to_string(),
    }
}

/// The same value as a `toml::Value` (which `keys::Key::check` takes).
fn plain(v: &toml_edit::Value) -> toml::Value {
    use toml_edit::Value as E;
    match v {
        E::String(s) => toml::Value::String(s.value().clone()),
        E::Integer(i) => toml::Value::Integer(*i.value()),
        E::Float(f) => toml::Value::Float(*f.value()),
        E::Boolean(b) => toml::Value::Boolean(*b.value()),
        // A datetime stays one, so that a key expecting a string refuses it.
        E::Datetime(d) => toml::Value::Datetime(*d.value()),
        E::Array(a) => toml::Value::Array(a.iter().map(plain).collect()),
        E::InlineTable(t) => {
            toml::Value::Table(t.iter().map(|(k, v)| (k.to_string(), plain(v))).collect())
        }
    }
}

/// Step 2: unknown keys, values of the wrong kind or range (missing keys: [`check_required`], on the
/// merged table of a file and its bases).
fn check_document(doc: &toml_edit::Table, file: &str, text: &str) -> Result<(), ConfigError> {
    fn walk(
        t: &dyn toml_edit::TableLike,
        prefix: &str,
        file: &str,
        text: &str,
    ) -> Result<(), ConfigError> {
        for (name, item) in t.iter() {
            if prefix.is_empty() && name == layer::BASE_KEY {
                continue; // read by `layer::chain`
            }
            let path = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            };
            let key_at = t
                .get_key_value(name)
                .and_then(|(k, _)| k.span())
                .map(|s| s.start);
            let at = |span: Option<usize>| position(file, text, span.or(key_at));
            if let Some(key) = keys::find(&path) {
                let Some(v) = item.as_value() else {
                    return Err(ConfigError::Invalid {
                        at: at(None),
                        key: path,
                        value: "(a table)".into(),
                        allowed: format!(
                            "expected {} ({})",
                            key.kind.type_name(),
                            key.kind.allowed()
                        ),
                    });
                };
                let pv = plain(v);
                key.check(&pv).map_err(|allowed| ConfigError::Invalid {
                    at: at(v.span().map(|s| s.start)),
                    key: path.clone(),
                    value: match &pv {
                        // Its `to_string` would show serde's private wrapper.
                        toml::Value::Datetime(d) => d.to_string(),
                        pv => pv.to_string(),
                    },
                    allowed,
                })?;
            } else if keys::is_table(&path) {
                let Some(sub) = item.as_table_like() else {
                    return Err(ConfigError::UnknownKey {
                        at: at(None),
                        message: format!(
                            "`{path}` must be a table with keys: {}",
                            keys::describe_children(&path)
                        ),
                        key: path,
                    });
                };
                walk(sub, &path, file, text)?;
            } else {
                return Err(ConfigError::UnknownKey {
                    at: at(None),
                    message: validate::unknown_key_message(&path),
                    key: path,
                });
            }
        }
        Ok(())
    }
    walk(doc, "", file, text)
}

/// Every required key is in the merged table of a file and its bases; `file` is the top file.
fn check_required(table: &toml::Table, file: &str) -> Result<(), ConfigError> {
    for key in keys::KEYS.iter().filter(|k| k.required) {
        let mut item: Option<&toml::Value> = None;
        let mut t: Option<&toml::Table> = Some(table);
        for part in key.path.split('.') {
            item = t.and_then(|t| t.get(part));
            t = item.and_then(|i| i.as_table());
        }
        if item.is_none() {
            return Err(ConfigError::Missing {
                at: file.to_string(),
                key: key.path.to_string(),
                expected: format!(
                    "{}: {}{}",
                    key.kind.type_name(),
                    key.kind.allowed(),
                    if key.unit.is_empty() {
                        String::new()
                    } else {
                        format!(", {}", key.unit)
                    }
                ),
            });
        }
    }
    Ok(())
}

/// Byte offset of the value of `path` in the document (or of the table that holds it).
fn span_of(doc: &toml_edit::Table, path: &str) -> Option<usize> {
    let mut table: &dyn toml_edit::TableLike = doc;
    let mut last = None;
    for part in path.split('.') {
        let (k, item) = table.get_key_value(part)?;
        last = item.span().or_else(|| k.span()).map(|s| s.start);
        match item.as_table_like() {
            Some(t) => table = t,
            None => {
                return item
                    .as_value()
                    .and_then(|v| v.span())
                    .map(|s| s.start)
                    .or(last)
            }
        }
    }
    last
}

/// A validated config with where each value came from.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub config: GpuConfig,
    /// Every leaf's dotted path → its origin.
    pub origins: BTreeMap<String, Origin>,
    /// The file and its bases: `my.toml on preset h100`.
    pub chain: String,
}

/// Parses and validates a config held in memory; `file` names it in errors, and a relative `base`
/// is found from `file`'s folder.
pub fn parse_str(text: &str, file: &str, overrides: &[String]) -> Result<GpuConfig, ConfigError> {
    resolve(text, file, None, overrides).map(|r| r.config)
}

/// [`parse_str`] keeping each value's origin; `preset` names an embedded preset's text.
pub fn resolve(
    text: &str,
    file: &str,
    preset: Option<&str>,
    overrides: &[String],
) -> Result<Resolved, ConfigError> {
    let layers = layer::chain(text, file, preset, &check_document)?;
    let (mut table, mut origins) = layer::merge(&layers);
    check_required(&table, file)?;
    let mut overridden: Vec<(&'static str, &String)> = Vec::new();
    for o in overrides {
        let key = validate::apply_override(&mut table, o)?;
        origins.insert(key.to_string(), Origin::Set { arg: o.clone() });
        overridden.push((key, o));
    }
    let cfg =
        GpuConfig::deserialize(toml::Value::Table(table)).map_err(|e| ConfigError::Parse {
            at: file.to_string(),
            message: e.to_string(),
        })?;
    validate::validate(&cfg).map_err(|v| {
        let cause = overridden
            .iter()
            .rev()
            .find(|(k, _)| *k == v.key || v.related.contains(k));
        match cause {
            Some((_, arg)) => ConfigError::Override {
                arg: arg.to_string(),
                message: format!("{} = {}: {}", v.key, v.value, v.allowed),
            },
            // The top-most layer that set the key, or else one the rule involves: in a file that
            // builds on a preset, the line that made a preset's value wrong.
            None => ConfigError::Invalid {
                at: layers
                    .iter()
                    .find_map(|l| {
                        l.at(&v.key)
                            .or_else(|| v.related.iter().find_map(|k| l.at(k)))
                    })
                    .unwrap_or_else(|| file.to_string()),
                key: v.key,
                value: v.value,
                allowed: v.allowed,
            },
        }
    })?;
    for (path, _) in validate::leaves(&cfg).unwrap_or_default() {
        origins.entry(path).or_insert(Origin::Default);
    }
    Ok(Resolved {
        config: cfg,
        origins,
        chain: layer::describe(&layers),
    })
}

/// Keys added since the shipped sweep reports were made whose default leaves every result as it was,
/// as their JSON at that default: [`digest_json`] leaves them out then. Each key's name is unique in
/// the config (a unit test checks), and the text is the field as `serde_json` writes it.
const DIGEST_QUIET_AT_DEFAULT: &[&str] = &["\"input_depth\":0"];

/// The config as the JSON a sweep hashes into its points' ids (`sweep/plan.rs`): its serialization
/// in field order, less the keys of [`DIGEST_QUIET_AT_DEFAULT`] at their default, so that adding a key
/// whose default changes nothing keeps every point's id (and the shipped reports stay what the build
/// computes); set to anything else, the key is hashed like any other.
pub fn digest_json(cfg: &GpuConfig) -> String {
    // Serialising an in-memory config cannot fail (no maps with non-string keys).
    let mut s = serde_json::to_string(cfg).unwrap_or_default();
    for quiet in DIGEST_QUIET_AT_DEFAULT {
        // The field with the comma that joins it to its table's previous (or next) one.
        for field in [format!(",{quiet}"), format!("{quiet},")] {
            if let Some(at) = s.find(&field) {
                s.replace_range(at..at + field.len(), "");
                break;
            }
        }
    }
    s
}

/// Loads `path`, or the embedded default when `None`.
pub fn load(path: Option<&Path>, overrides: &[String]) -> Result<GpuConfig, ConfigError> {
    load_resolved(path, overrides).map(|r| r.config)
}

/// [`load`] keeping each value's origin (what `gpumemsim config show` prints).
pub fn load_resolved(path: Option<&Path>, overrides: &[String]) -> Result<Resolved, ConfigError> {
    match path {
        None => resolve(DEFAULT_TOML, DEFAULT_NAME, Some(DEFAULT_PRESET), overrides),
        Some(p) => {
            let text = crate::text::read(p)?;
            resolve(&text, &p.display().to_string(), None, overrides)
        }
    }
}

/// The embedded default config (H100). A unit test proves the embedded preset valid, so callers may
/// treat an error here as a build defect; it is returned, not panicked on.
pub fn default_config() -> Result<GpuConfig, ConfigError> {
    parse_str(DEFAULT_TOML, DEFAULT_NAME, &[])
}

#[cfg(test)]
mod tests;
