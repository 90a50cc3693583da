//! `gpumemsim litmus generate`: families of litmus tests in the herd format, like diy7, each with
//! the oracle's verdict as its `expect:` line. A family is shapes × orders × scopes × placements:
//!
//! - shapes (`shapes.rs`): MP, SB, LB, S, R, 2+2W, CoRR, CoWR, CoRW, WRC, ISA2, RWC, W+RWC, 3.SB,
//!   3.LB, 4.SB, IRIW;
//! - orders: how the accesses are annotated: `weak` (PTX only: `.weak`), `relaxed`, `rel-acq`
//!   (release writes, acquire reads), `rel` (release writes), `acq` (acquire reads), `sc` (OpenCL
//!   only: seq_cst accesses), `fence-acqrel` and `fence-sc` (relaxed accesses with an acq_rel or
//!   seq_cst fence between consecutive accesses of a thread);
//! - scopes: one scope for every annotated access and fence: `cta`/`work_group`, `gpu`/`device`,
//!   `sys`/`system` (OpenCL `all_svm_devices`);
//! - placements: `diff` (each thread its own work-group), `same` (all in one), `pairs` (threads
//!   0 and 1 share one, 2 and 3 the next, ...); a placement equal to another for a shape's thread
//!   count is written once.
//!
//! Tests whose text would repeat another's (the scope of `weak` accesses) are written once; OpenCL
//! tests the oracle finds racy (scope races: work_group scope across work-groups) have undefined
//! behaviour and no verdict, so they are left out and counted.

mod emit;
mod shapes;

pub use shapes::SHAPES;

use super::model::{self, ModelOptions};
use super::{parse, Dialect};
use crate::ir::Scope;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Weak,
    Relaxed,
    RelAcq,
    Rel,
    Acq,
    Sc,
    FenceAcqRel,
    FenceSc,
}

impl Order {
    pub const ALL: [Order; 8] = [
        Order::Weak,
        Order::Relaxed,
        Order::RelAcq,
        Order::Rel,
        Order::Acq,
        Order::Sc,
        Order::FenceAcqRel,
        Order::FenceSc,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Order::Weak => "weak",
            Order::Relaxed => "relaxed",
            Order::RelAcq => "rel-acq",
            Order::Rel => "rel",
            Order::Acq => "acq",
            Order::Sc => "sc",
            Order::FenceAcqRel => "fence-acqrel",
            Order::FenceSc => "fence-sc",
        }
    }
    /// Whether the dialect can express the order.
    pub fn in_dialect(self, d: Dialect) -> bool {
        match self {
            Order::Weak => d == Dialect::Ptx,
            Order::Sc => d == Dialect::OpenCl,
            _ => true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Diff,
    Same,
    Pairs,
}

impl Placement {
    pub const ALL: [Placement; 3] = [Placement::Diff, Placement::Same, Placement::Pairs];
    pub fn name(self) -> &'static str {
        match self {
            Placement::Diff => "diff",
            Placement::Same => "same",
            Placement::Pairs => "pairs",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Placement::Diff => "each thread in its own work-group",
            Placement::Same => "all threads in one work-group",
            Placement::Pairs => "threads paired into work-groups",
        }
    }
    /// The work-group of each of `n` threads.
    pub fn groups(self, n: usize) -> Vec<u32> {
        (0..n as u32)
            .map(|i| match self {
                Placement::Diff => i,
                Placement::Same => 0,
                Placement::Pairs => i / 2,
            })
            .collect()
    }
}

/// One member of a family.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    pub dialect: Dialect,
    pub order: Order,
    pub scope: Scope,
    pub placement: Placement,
}

#[derive(Debug, Clone)]
pub struct GenOptions {
    pub dialect: Dialect,
    /// Empty: every shape (likewise below).
    pub shapes: Vec<String>,
    pub orders: Vec<String>,
    pub scopes: Vec<String>,
    pub placements: Vec<String>,
    pub out: PathBuf,
}

#[derive(Debug, Clone, Default)]
pub struct GenReport {
    pub written: usize,
    /// Tests whose witness the model allows / forbids.
    pub allowed: usize,
    pub forbidden: usize,
    /// OpenCL tests with a race (undefined behaviour), not written.
    pub racy: usize,
    /// Variants whose text repeats another's, not written.
    pub duplicates: usize,
    pub shapes: usize,
    pub orders: usize,
    pub scopes: usize,
    pub placements: usize,
}

#[derive(Debug, Error)]
pub enum GenerateError {
    #[error("--{what} {value}: unknown (allowed: {allowed})")]
    Unknown {
        what: &'static str,
        value: String,
        allowed: String,
    },
    #[error("{file}: cannot write: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A generated test the parser or the model rejects: a bug of the generator.
    #[error("generated test {name}: {message}")]
    Invalid { name: String, message: String },
}

fn pick<T: Copy>(
    what: &'static str,
    given: &[String],
    all: &[T],
    name: impl Fn(T) -> Vec<&'static str>,
) -> Result<Vec<T>, GenerateError> {
    if given.is_empty() {
        return Ok(all.to_vec());
    }
    given
        .iter()
        .map(|g| {
            all.iter()
                .copied()
                .find(|&x| name(x).iter().any(|n| n.eq_ignore_ascii_case(g)))
                .ok_or_else(|| GenerateError::Unknown {
                    what,
                    value: g.clone(),
                    allowed: all
                        .iter()
                        .map(|&x| name(x)[0])
                        .collect::<Vec<_>>()
                        .join(", "),
                })
        })
        .collect()
}

fn scope_names(d: Dialect, s: Scope) -> Vec<&'static str> {
    let (ptx, cl) = match s {
        Scope::WorkGroup => ("cta", "work_group"),
        Scope::Device => ("gpu", "device"),
        _ => ("sys", "all_svm_devices"),
    };
    let mut v = match d {
        Dialect::Ptx => vec![ptx, cl],
        Dialect::OpenCl => vec![cl, ptx],
    };
    v.extend(match s {
        Scope::WorkGroup => ["wg", "work_group"],
        Scope::Device => ["dev", "device"],
        _ => ["system", "all"],
    });
    v
}

/// Writes the family into `opts.out` (created if needed).
pub fn generate(opts: &GenOptions) -> Result<GenReport, GenerateError> {
    let d = opts.dialect;
    let shapes = pick("shapes", &opts.shapes, SHAPES, |s| vec![s.name])?;
    let orders: Vec<Order> = Order::ALL.into_iter().filter(|o| o.in_dialect(d)).collect();
    let orders = pick("orders", &opts.orders, &orders, |o| vec![o.name()])?;
    let scopes = pick(
        "scopes",
        &opts.scopes,
        &[Scope::WorkGroup, Scope::Device, Scope::System],
        |s| scope_names(d, s),
    )?;
    let placements = pick("placements", &opts.placements, &Placement::ALL, |p| {
        vec![p.name()]
    })?;
    let io = |file: &Path, source| GenerateError::Io {
        file: file.display().to_string(),
        source,
    };
    std::fs::create_dir_all(&opts.out).map_err(|e| io(&opts.out, e))?;
    let mut report = GenReport {
        shapes: shapes.len(),
        orders: orders.len(),
        scopes: scopes.len(),
        placements: placements.len(),
        ..Default::default()
    };
    let mut bodies: HashSet<String> = HashSet::new();
    for shape in &shapes {
        let n = shape.threads.len();
        let mut groupings: Vec<Vec<u32>> = Vec::new();
        for &placement in &placements {
            if groupings.contains(&placement.groups(n)) {
                continue;
            }
            groupings.push(placement.groups(n));
            for &order in &orders {
                for &scope in &scopes {
                    let v = Variant {
                        dialect: d,
                        order,
                        scope,
                        placement,
                    };
                    let name = format!(
                        "{}+{}+{}+{}",
                        shape.name,
                        order.name(),
                        scope_names(d, scope)[0],
                        placement.name()
                    );
                    let body = emit::text(shape, &v, "", None);
                    if !bodies.insert(body) {
                        report.duplicates += 1;
                        continue;
                    }
                    let draft = emit::text(shape, &v, &name, None);
                    let invalid = |message: String| GenerateError::Invalid {
                        name: name.clone(),
                        message,
                    };
                    let test = parse(&draft, &name).map_err(|e| invalid(e.to_string()))?;
                    let decision = model::decide(&test, &ModelOptions::default())
                        .map_err(|e| invalid(e.to_string()))?;
                    // Undefined behaviour (an OpenCL race) has no verdict to expect; a PTX race
                    // has one (the race is reported beside it).
                    if decision.undefined() {
                        report.racy += 1;
                        continue;
                    }
                    let allowed = decision.witness_allowed(&test.condition).ok_or_else(|| {
                        invalid("the model hit its bound on a loop-free test".into())
                    })?;
                    let expect = if allowed { "allowed" } else { "forbidden" };
                    if allowed {
                        report.allowed += 1;
                    } else {
                        report.forbidden += 1;
                    }
                    let text = emit::text(shape, &v, &name, Some(expect));
                    let file = opts.out.join(format!("{}.litmus", name.replace('+', "_")));
                    crate::stats::write_atomic(&file, text.as_bytes()).map_err(|e| io(&file, e))?;
                    report.written += 1;
                }
            }
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_generated_test_parses_and_is_decided() {
        for d in [Dialect::Ptx, Dialect::OpenCl] {
            let out = std::env::temp_dir()
                .join(format!("gpumemsim-gen-unit-{}-{d:?}", std::process::id()));
            let r = generate(&GenOptions {
                dialect: d,
                shapes: vec!["MP".into(), "IRIW".into()],
                orders: vec![],
                scopes: vec!["gpu".into(), "cta".into()],
                placements: vec![],
                out: out.clone(),
            })
            .expect("generates");
            assert!(r.written > 10, "{r:?}");
            assert_eq!(r.written, r.allowed + r.forbidden);
            assert_eq!(std::fs::read_dir(&out).expect("dir").count(), r.written);
            std::fs::remove_dir_all(out).ok();
        }
    }

    #[test]
    fn unknown_names_are_errors_that_list_the_choices() {
        let e = generate(&GenOptions {
            dialect: Dialect::Ptx,
            shapes: vec!["XYZ".into()],
            orders: vec![],
            scopes: vec![],
            placements: vec![],
            out: std::env::temp_dir(),
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("--shapes XYZ") && e.contains("IRIW"), "{e}");
        let e = generate(&GenOptions {
            dialect: Dialect::OpenCl,
            shapes: vec![],
            orders: vec!["weak".into()],
            scopes: vec![],
            placements: vec![],
            out: std::env::temp_dir(),
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("--orders weak"), "{e}");
    }
}
