//! What race detection reports (`RunResult::races`, re-exported by `../api.rs`): the kind of race
//! and the two accesses, as a user reads them. Detection itself is `mod.rs`.

use serde::{Deserialize, Serialize};

/// What a race is (DESIGN.md, "morally strong").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RaceKind {
    /// Conflicting accesses, at least one plain, not ordered by happens-before.
    Data,
    /// Conflicting atomic accesses not ordered by happens-before whose scopes do not include each
    /// other's thread (not morally strong).
    Scope,
}

impl std::fmt::Display for RaceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RaceKind::Data => "data",
            RaceKind::Scope => "scope",
        })
    }
}

/// One of the two accesses of a race.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceAccess {
    /// `file:line:col` of the instruction.
    pub location: String,
    /// Global linear thread id and work-group.
    pub thread: u64,
    pub group: u64,
    /// What it was: `plain store`, `relaxed load at device scope`, `acq_rel rmw at work_group scope`.
    pub access: String,
    /// The litmus test's name of the thread (`P0`), when run as a litmus test.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
}

impl std::fmt::Display for RaceAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(n) => write!(f, "{} {} at {}", n, self.access, self.location),
            None => write!(
                f,
                "{} at {} (thread {}, work-group {})",
                self.access, self.location, self.thread, self.group
            ),
        }
    }
}

/// A race found by `--races`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceReport {
    pub kind: RaceKind,
    pub address: u64,
    /// The earlier access (in the simulated execution) and the later one.
    pub first: RaceAccess,
    pub second: RaceAccess,
}

impl RaceReport {
    /// Whether two reports are the same pair of instructions (for reporting each pair once).
    pub fn same_pair(&self, o: &RaceReport) -> bool {
        self.kind == o.kind
            && self.first.location == o.first.location
            && self.second.location == o.second.location
    }
}

impl std::fmt::Display for RaceReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} race at {:#x}: {} / {}",
            self.kind, self.address, self.first, self.second
        )
    }
}
