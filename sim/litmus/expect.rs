//! `--expect FILE`: expectations kept outside the tests, one per line:
//! `TEST-NAME allowed|forbidden [required]`, `#` starts a comment. An entry overrides the test's own
//! `expect:` comment; entries naming tests that are not run are ignored (one file can serve a suite).

use super::parse::parse_expectation;
use super::test::{Expectation, LitmusTest};
use super::LitmusError;
use crate::text::Located;
use std::path::Path;

#[derive(Debug, Clone)]
pub struct ExpectEntry {
    pub name: String,
    pub expectation: Expectation,
}

pub fn load_expectations(path: &Path) -> Result<Vec<ExpectEntry>, LitmusError> {
    let text = crate::text::read(path)?;
    parse_expectations(&text, &path.display().to_string())
}

/// The entries of an expectations file held in memory; `file` names it in errors.
pub fn parse_expectations(text: &str, file: &str) -> Result<Vec<ExpectEntry>, LitmusError> {
    let mut out: Vec<ExpectEntry> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or_default();
        let trimmed = body.trim_start();
        if trimmed.is_empty() {
            continue;
        }
        let col = (body.len() - trimmed.len()) as u32 + 1;
        let err = |col: u32, message: String| {
            LitmusError::Syntax(Located {
                file: file.to_string(),
                line: i as u32 + 1,
                col,
                message,
            })
        };
        let name = trimmed.split_whitespace().next().unwrap_or_default();
        let rest = &trimmed[name.len()..];
        let expectation = parse_expectation(rest).map_err(|m| {
            err(
                col + name.chars().count() as u32 + 1,
                format!("{m} (lines are `TEST-NAME allowed|forbidden [required]`)"),
            )
        })?;
        if out.iter().any(|e| e.name == name) {
            return Err(err(col, format!("a second expectation for {name}")));
        }
        out.push(ExpectEntry {
            name: name.to_string(),
            expectation,
        });
    }
    Ok(out)
}

/// Sets the expectation of every test an entry names.
pub fn apply_expectations(tests: &mut [LitmusTest], entries: &[ExpectEntry]) {
    for t in tests {
        if let Some(e) = entries.iter().find(|e| e.name == t.name) {
            t.expectation = Some(e.expectation);
        }
    }
}
