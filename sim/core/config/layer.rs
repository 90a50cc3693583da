//! Configs that build on a base: `base = "h100"` (an embedded preset, by name) or
//! `base = "../configs/h100.toml"` (a file, relative to the file that names it) at the top of a config
//! file. The file then holds only what differs. Tables merge key by key; a value (an array included)
//! replaces the base's. A base may have a base of its own.
//!
//! Every layer goes through the same key walk as a complete file (unknown keys, kinds and ranges, at the
//! layer's `file:line:col`); the merged table must give every required key, and the typed config then
//! passes the cross-key rules, blamed on the top-most layer that set one of the keys a rule involves
//! (`mod.rs`). Each resolved value keeps its [`Origin`], which `gpumemsim config show` prints.
//!
//! Deliberately not here: element-wise merging of arrays (an array is one value), removing a key that a
//! base sets (give it another value), inheritance in sweep specs or kernels.

use super::{position, span_of, ConfigError, PRESETS};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The top-level key that names a config's base.
pub const BASE_KEY: &str = "base";

/// Longest chain of bases (a file, its base, that one's base, ...).
const MAX_DEPTH: usize = 16;

/// Where a resolved value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// An embedded preset: `base = "h100"`, or the embedded default when no file is given.
    Preset { name: String },
    /// A config file, at `file:line:col`.
    File { at: String },
    /// A `--set KEY=VALUE` override.
    Set { arg: String },
    /// Given nowhere: the key's default (the optional `[stress]` and `[watchdog]` keys).
    Default,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Preset { name } => write!(f, "preset {name}"),
            Origin::File { at } => write!(f, "{at}"),
            Origin::Set { arg } => write!(f, "--set {arg}"),
            Origin::Default => write!(f, "default"),
        }
    }
}

/// One file of a chain: the parsed document (for positions) and its table without `base`.
pub(super) struct Layer {
    /// How errors name it: the path as given, or `configs/h100.toml (embedded)`.
    pub file: String,
    pub text: String,
    pub doc: toml_edit::ImDocument<String>,
    pub table: toml::Table,
    /// The preset's name when the layer is an embedded preset.
    pub preset: Option<String>,
    /// What `base` says, as written.
    pub base: Option<String>,
}

impl Layer {
    /// The `file:line:col` of `path` in this layer, if the layer sets it.
    pub fn at(&self, path: &str) -> Option<String> {
        if !sets(&self.table, path) {
            return None;
        }
        Some(position(
            &self.file,
            &self.text,
            span_of(self.doc.as_table(), path),
        ))
    }

    fn origin(&self, path: &str) -> Origin {
        match &self.preset {
            Some(name) => Origin::Preset { name: name.clone() },
            None => Origin::File {
                at: self.at(path).unwrap_or_else(|| self.file.clone()),
            },
        }
    }
}

/// Whether `table` holds a value (not a table) at the dotted `path`.
fn sets(table: &toml::Table, path: &str) -> bool {
    let mut cur = table;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        match cur.get(*p) {
            Some(toml::Value::Table(t)) if i + 1 < parts.len() => cur = t,
            Some(v) => return i + 1 == parts.len() && !v.is_table(),
            None => return false,
        }
    }
    false
}

/// Names of the embedded presets, for `base = "NAME"`: the file stems of [`PRESETS`].
pub fn preset_names() -> Vec<&'static str> {
    PRESETS
        .iter()
        .map(|(path, _)| {
            path.rsplit('/')
                .next()
                .unwrap_or(path)
                .trim_end_matches(".toml")
        })
        .collect()
}

/// The embedded preset called `name` (`h100`), as `(file as errors name it, text)`.
pub fn preset(name: &str) -> Option<(String, &'static str)> {
    PRESETS
        .iter()
        .zip(preset_names())
        .find(|(_, n)| *n == name)
        .map(|((path, text), _)| (format!("{path} (embedded)"), *text))
}

/// Parses one file: syntax, `base`, and the key walk (`check`), which reports unknown keys and values of
/// the wrong kind or range at their position.
fn parse_layer(
    text: String,
    file: String,
    preset: Option<String>,
    check: &dyn Fn(&toml_edit::Table, &str, &str) -> Result<(), ConfigError>,
) -> Result<Layer, ConfigError> {
    let doc = toml_edit::ImDocument::parse(text.clone()).map_err(|e| ConfigError::Parse {
        at: position(&file, &text, e.span().map(|s| s.start)),
        message: e.message().trim().to_string(),
    })?;
    let base = match doc.get(BASE_KEY) {
        None => None,
        Some(item) => match item.as_str() {
            Some(s) if !s.trim().is_empty() => Some(s.to_string()),
            _ => {
                let at = position(
                    &file,
                    &text,
                    item.span()
                        .or_else(|| doc.get_key_value(BASE_KEY).and_then(|(k, _)| k.span()))
                        .map(|s| s.start),
                );
                return Err(ConfigError::Invalid {
                    at,
                    key: BASE_KEY.into(),
                    value: item.to_string().trim().to_string(),
                    allowed: base_allowed(),
                });
            }
        },
    };
    check(doc.as_table(), &file, &text)?;
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| ConfigError::Parse {
        at: position(&file, &text, e.span().map(|s| s.start)),
        message: e.message().trim().to_string(),
    })?;
    table.remove(BASE_KEY);
    Ok(Layer {
        file,
        text,
        doc,
        table,
        preset,
        base,
    })
}

fn base_allowed() -> String {
    format!(
        "expected a preset name ({}) or the path of a .toml file, relative to this file",
        preset_names().join(", ")
    )
}

/// Reads `text` (named `file`; `preset` when it is an embedded preset) and every base below it: the
/// chain, top layer first.
pub(super) fn chain(
    text: &str,
    file: &str,
    top_preset: Option<&str>,
    check: &dyn Fn(&toml_edit::Table, &str, &str) -> Result<(), ConfigError>,
) -> Result<Vec<Layer>, ConfigError> {
    let mut layers = vec![parse_layer(
        text.to_string(),
        file.to_string(),
        top_preset.map(str::to_string),
        check,
    )?];
    // Identities seen so far (a preset's name or a file's canonical path), to stop cycles.
    let identity = |file: &str, preset: &Option<String>| match preset {
        Some(p) => format!("preset:{p}"),
        None => std::fs::canonicalize(file)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| file.to_string()),
    };
    let mut seen = vec![identity(file, &layers[0].preset)];
    while let Some(base) = layers.last().and_then(|l| l.base.clone()) {
        let child = layers.last().expect("the chain is never empty");
        let at = child
            .doc
            .get(BASE_KEY)
            .and_then(|i| i.span())
            .map(|s| s.start);
        let at = position(&child.file, &child.text, at);
        let fail = |allowed: String| ConfigError::Invalid {
            at: at.clone(),
            key: BASE_KEY.into(),
            value: format!("{base:?}"),
            allowed,
        };
        if layers.len() > MAX_DEPTH {
            return Err(fail(format!(
                "a chain of more than {MAX_DEPTH} bases (each file's base has a base ...)"
            )));
        }
        let is_name = !base.contains(['/', '\\']) && !base.ends_with(".toml");
        let (text, file, preset) = if is_name {
            let (file, text) = preset(&base).ok_or_else(|| {
                fail(format!(
                    "no preset is called {base:?}; {}",
                    base_allowed().trim_start_matches("expected ")
                ))
            })?;
            (text.to_string(), file, Some(base.clone()))
        } else if child.preset.is_some() {
            return Err(fail(
                "an embedded preset cannot name a file as its base".into(),
            ));
        } else {
            let dir = Path::new(&child.file)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let path: PathBuf = dir.join(&base);
            let file = path.display().to_string();
            // Read like every input (bounded; a byte that is not UTF-8 named by its place).
            let text = crate::text::read(&path).map_err(|e| match e {
                crate::text::TextError::Io { source, .. } => {
                    fail(format!("cannot read {file}: {source}"))
                }
                e => fail(e.to_string()),
            })?;
            (text, file, None)
        };
        let id = identity(&file, &preset);
        if seen.contains(&id) {
            return Err(fail(format!(
                "a cycle: {file} is already in the chain ({})",
                layers
                    .iter()
                    .map(|l| l.file.as_str())
                    .collect::<Vec<_>>()
                    .join(" → ")
            )));
        }
        seen.push(id);
        layers.push(parse_layer(text, file, preset, check)?);
    }
    Ok(layers)
}

/// Merges the chain (top layer first) into one table, bottom up, with each leaf's origin.
pub(super) fn merge(layers: &[Layer]) -> (toml::Table, BTreeMap<String, Origin>) {
    fn overlay(
        dst: &mut toml::Table,
        src: &toml::Table,
        prefix: &str,
        layer: &Layer,
        origins: &mut BTreeMap<String, Origin>,
    ) {
        for (k, v) in src {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match (dst.get_mut(k), v) {
                (Some(toml::Value::Table(d)), toml::Value::Table(s)) => {
                    overlay(d, s, &path, layer, origins)
                }
                (_, toml::Value::Table(s)) => {
                    let mut d = toml::Table::new();
                    overlay(&mut d, s, &path, layer, origins);
                    dst.insert(k.clone(), toml::Value::Table(d));
                }
                (_, v) => {
                    origins.insert(path.clone(), layer.origin(&path));
                    dst.insert(k.clone(), v.clone());
                }
            }
        }
    }
    let mut table = toml::Table::new();
    let mut origins = BTreeMap::new();
    for layer in layers.iter().rev() {
        overlay(&mut table, &layer.table, "", layer, &mut origins);
    }
    (table, origins)
}

/// `file (base NAME) (base FILE) ...`: how a chain reads in messages and in `config show`.
pub(super) fn describe(layers: &[Layer]) -> String {
    let mut s = layers[0].file.clone();
    for l in &layers[1..] {
        match &l.preset {
            Some(p) => s.push_str(&format!(" on preset {p}")),
            None => s.push_str(&format!(" on {}", l.file)),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::config::{load, load_resolved, parse_str, Origin, DEFAULT_TOML};
    use std::path::{Path, PathBuf};

    /// A folder of config files, removed on drop.
    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str, files: &[(&str, &str)]) -> Dir {
            let d =
                std::env::temp_dir().join(format!("gpumemsim-layer-{}-{tag}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            for (name, text) in files {
                let p = d.join(name);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, text).unwrap();
            }
            Dir(d)
        }
        fn path(&self, name: &str) -> PathBuf {
            self.0.join(name)
        }
        fn err(&self, name: &str) -> String {
            load(Some(&self.path(name)), &[]).unwrap_err().to_string()
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn h100(sets: &[&str]) -> crate::config::GpuConfig {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        parse_str(DEFAULT_TOML, "h100", &sets).unwrap()
    }

    #[test]
    fn a_file_on_a_preset_holds_only_what_differs() {
        let d = Dir::new(
            "diff",
            &[("slices.toml", "base = \"h100\"\n\n[l2]\nslices = 50\n")],
        );
        let r = load_resolved(Some(&d.path("slices.toml")), &[]).unwrap();
        assert_eq!(r.config, h100(&["l2.slices=50"]));
        let file = d.path("slices.toml").display().to_string();
        assert_eq!(r.chain, format!("{file} on preset h100"));
        assert_eq!(
            r.origins["l2.slices"],
            Origin::File {
                at: format!("{file}:4:10")
            }
        );
        assert_eq!(
            r.origins["l2.ways"],
            Origin::Preset {
                name: "h100".into()
            }
        );
        assert_eq!(r.origins["stress.randomise_placement"], Origin::Default);
        // --set wins over the file and says so.
        let r = load_resolved(Some(&d.path("slices.toml")), &["l2.slices=200".into()]).unwrap();
        assert_eq!(r.config.l2.slices, 200);
        assert_eq!(
            r.origins["l2.slices"],
            Origin::Set {
                arg: "l2.slices=200".into()
            }
        );
    }

    #[test]
    fn bases_chain_through_files_relative_to_the_file_naming_them() {
        let d = Dir::new(
            "chain",
            &[
                ("common/more-slices.toml", "base = \"h100\"\n[l2]\nslices = 200\n"),
                (
                    "variants/wide.toml",
                    "base = \"../common/more-slices.toml\"\nname = \"wide\"\n[atomics.l2]\nops_per_cycle = 4\n",
                ),
            ],
        );
        let r = load_resolved(Some(&d.path("variants/wide.toml")), &[]).unwrap();
        assert_eq!(r.config.name, "wide");
        assert_eq!(
            r.config,
            crate::config::GpuConfig {
                name: "wide".into(),
                ..h100(&["l2.slices=200", "atomics.l2.ops_per_cycle=4"])
            }
        );
        assert!(
            matches!(&r.origins["l2.slices"], Origin::File { at } if at.contains("more-slices.toml:3:")),
            "{:?}",
            r.origins["l2.slices"]
        );
        assert!(
            r.chain.ends_with("more-slices.toml on preset h100"),
            "{}",
            r.chain
        );
    }

    #[test]
    fn every_key_of_a_layered_file_is_checked_where_it_is_written() {
        let d = Dir::new(
            "errors",
            &[
                ("unknown.toml", "base = \"h100\"\n[l2]\nwayz = 8\n"),
                ("range.toml", "base = \"h100\"\n[l2]\nways = 0\n"),
                ("cross.toml", "base = \"h100\"\n[l2]\nslices = 3\n"),
                ("noname.toml", "base = \"h200\"\n"),
                ("notstring.toml", "base = 5\n"),
                ("missing.toml", "base = \"nothere.toml\"\n"),
                ("a.toml", "base = \"b.toml\"\n"),
                ("b.toml", "base = \"a.toml\"\n"),
                ("partial.toml", "[l2]\nslices = 50\n"),
                ("onpartial.toml", "base = \"partial.toml\"\n"),
            ],
        );
        let at = |n: &str| d.path(n).display().to_string();
        assert_eq!(
            d.err("unknown.toml"),
            format!(
                "{}:3:1: unknown key `l2.wayz`; keys in [l2]: slices, hash, size_bytes, line_bytes, ways, latency, mshrs, partitions, far_latency, far_bytes_per_cycle, near_copy_lines, input_depth, write_validate, membar_ack",
                at("unknown.toml")
            )
        );
        assert_eq!(
            d.err("range.toml"),
            format!("{}:3:8: l2.ways = 0: must be at least 1", at("range.toml"))
        );
        // The preset's size no longer fits 3 slices: blamed on the line that set the slices.
        let e = d.err("cross.toml");
        assert!(
            e.starts_with(&format!(
                "{}:3:10: l2.size_bytes = 52428800: must be line 128 × ways 16 × slices 3",
                at("cross.toml")
            )),
            "{e}"
        );
        let e = d.err("noname.toml");
        assert!(
            e.starts_with(&format!(
                "{}:1:8: base = \"h200\": no preset is called \"h200\"; a preset name (h100, a100, v100, tiny, stress)",
                at("noname.toml")
            )),
            "{e}"
        );
        let e = d.err("notstring.toml");
        assert!(
            e.starts_with(&format!(
                "{}:1:8: base = 5: expected a preset name",
                at("notstring.toml")
            )),
            "{e}"
        );
        let e = d.err("missing.toml");
        assert!(e.contains("base = \"nothere.toml\": cannot read"), "{e}");
        let e = d.err("a.toml");
        assert!(
            e.contains("a cycle:") && e.contains("a.toml is already in the chain"),
            "{e}"
        );
        // Without a complete base, the merged file still needs every required key.
        let e = d.err("onpartial.toml");
        assert!(
            e.starts_with(&format!("{}: missing key `name`", at("onpartial.toml"))),
            "{e}"
        );
        assert!(Path::new(&at("partial.toml")).exists());
    }
}
