//! `gpumemsim config show`: the resolved config as TOML, each value followed by a comment naming its
//! origin (a preset, a file position, a `--set` override, or the key's default). The text parses back
//! to the same config, so it can be saved as a complete file.

use super::{validate, ConfigError, Origin, Resolved};
use std::fmt::Write as _;

/// Column where the origin comments start (longer lines push theirs one space further).
const COMMENT_COLUMN: usize = 40;

/// The resolved config as commented TOML.
pub fn render(r: &Resolved) -> Result<String, ConfigError> {
    let leaves = validate::leaves(&r.config).map_err(|message| ConfigError::Parse {
        at: "(resolved config)".into(),
        message,
    })?;
    let mut out = String::new();
    let _ = writeln!(out, "# Resolved config: {}.", r.chain);
    let _ = writeln!(
        out,
        "# After each value, where it comes from: a preset, a file position, --set, or default.\n"
    );
    let mut table = String::new();
    for (path, value) in &leaves {
        let (t, key) = path.rsplit_once('.').unwrap_or(("", path));
        if t != table {
            let _ = write!(out, "\n[{t}]\n");
            table = t.to_string();
        }
        let line = format!("{key} = {value}");
        let origin = r.origins.get(path).cloned().unwrap_or(Origin::Default);
        let pad = COMMENT_COLUMN.saturating_sub(line.chars().count()).max(1);
        let _ = writeln!(out, "{line}{:pad$}# {origin}", "");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::config::{load_resolved, resolve, show::render, Origin, DEFAULT_TOML};

    #[test]
    fn shown_config_parses_back_to_the_same_config_and_names_origins() {
        let r = load_resolved(None, &["l2.slices=50".into(), "l2.partitions=5".into()]).unwrap();
        let text = render(&r).unwrap();
        assert!(text.starts_with("# Resolved config: configs/h100.toml (embedded)."));
        assert!(
            text.contains("slices = 50                             # --set l2.slices=50\n"),
            "{text}"
        );
        assert!(
            text.contains("ways = 16                               # preset h100\n"),
            "{text}"
        );
        let back = resolve(&text, "shown.toml", None, &[]).unwrap();
        assert_eq!(back.config, r.config);
        // Read back, every value is the shown file's own, at its line.
        assert!(
            matches!(&back.origins["l2.slices"], Origin::File { at } if at.starts_with("shown.toml:"))
        );
        assert_ne!(
            r.config,
            resolve(DEFAULT_TOML, "h", None, &[]).unwrap().config
        );
    }
}
