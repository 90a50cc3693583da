//! Writing one generated test in the herd format of either dialect (the syntax `ptx.rs` and
//! `opencl.rs` parse).

use super::shapes::{Cond, Op, Shape};
use super::{Order, Variant};
use crate::ir::Scope;
use crate::Dialect;
use std::fmt::Write as _;

const LOCS: [&str; 4] = ["x", "y", "z", "w"];

/// How the test's accesses are annotated: the order of a write and of a read, and the fence
/// between two accesses of a thread.
fn annotation(order: Order) -> (Mode, Mode, Option<Fence>) {
    match order {
        Order::Weak => (Mode::Plain, Mode::Plain, None),
        Order::Relaxed => (Mode::Relaxed, Mode::Relaxed, None),
        Order::RelAcq => (Mode::Release, Mode::Acquire, None),
        Order::Rel => (Mode::Release, Mode::Relaxed, None),
        Order::Acq => (Mode::Relaxed, Mode::Acquire, None),
        Order::Sc => (Mode::SeqCst, Mode::SeqCst, None),
        Order::FenceAcqRel => (Mode::Relaxed, Mode::Relaxed, Some(Fence::AcqRel)),
        Order::FenceSc => (Mode::Relaxed, Mode::Relaxed, Some(Fence::Sc)),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plain,
    Relaxed,
    Acquire,
    Release,
    SeqCst,
}

#[derive(Clone, Copy)]
enum Fence {
    AcqRel,
    Sc,
}

fn ptx_scope(s: Scope) -> &'static str {
    match s {
        Scope::WorkItem | Scope::SubGroup | Scope::WorkGroup => "cta",
        Scope::Device => "gpu",
        Scope::System => "sys",
    }
}

fn cl_scope(s: Scope) -> &'static str {
    match s {
        Scope::WorkItem => "memory_scope_work_item",
        Scope::SubGroup => "memory_scope_sub_group",
        Scope::WorkGroup => "memory_scope_work_group",
        Scope::Device => "memory_scope_device",
        Scope::System => "memory_scope_all_svm_devices",
    }
}

fn cl_order(m: Mode) -> &'static str {
    match m {
        Mode::Plain | Mode::Relaxed => "memory_order_relaxed",
        Mode::Acquire => "memory_order_acquire",
        Mode::Release => "memory_order_release",
        Mode::SeqCst => "memory_order_seq_cst",
    }
}

/// One thread's instructions (a fence between consecutive accesses when the order says so).
fn thread_code(dialect: Dialect, ops: &[Op], v: &Variant) -> Vec<String> {
    let (wm, rm, fence) = annotation(v.order);
    let mut out = Vec::new();
    let mut reg = 0;
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            if let Some(f) = fence {
                out.push(match (dialect, f) {
                    (Dialect::Ptx, Fence::AcqRel) => {
                        format!("fence.acq_rel.{}", ptx_scope(v.scope))
                    }
                    (Dialect::Ptx, Fence::Sc) => format!("fence.sc.{}", ptx_scope(v.scope)),
                    (Dialect::OpenCl, f) => format!(
                        "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, {}, {});",
                        match f {
                            Fence::AcqRel => "memory_order_acq_rel",
                            Fence::Sc => "memory_order_seq_cst",
                        },
                        cl_scope(v.scope)
                    ),
                });
            }
        }
        out.push(match (*op, dialect) {
            (Op::W(l, val), Dialect::Ptx) => {
                let loc = LOCS[l as usize];
                match wm {
                    Mode::Plain => format!("st.weak [{loc}], {val}"),
                    Mode::Relaxed => format!("st.relaxed.{} [{loc}], {val}", ptx_scope(v.scope)),
                    _ => format!("st.release.{} [{loc}], {val}", ptx_scope(v.scope)),
                }
            }
            (Op::R(l), Dialect::Ptx) => {
                let loc = LOCS[l as usize];
                reg += 1;
                match rm {
                    Mode::Plain => format!("ld.weak r{}, [{loc}]", reg - 1),
                    Mode::Relaxed => {
                        format!("ld.relaxed.{} r{}, [{loc}]", ptx_scope(v.scope), reg - 1)
                    }
                    _ => format!("ld.acquire.{} r{}, [{loc}]", ptx_scope(v.scope), reg - 1),
                }
            }
            (Op::W(l, val), Dialect::OpenCl) => format!(
                "atomic_store_explicit({}, {val}, {}, {});",
                LOCS[l as usize],
                cl_order(wm),
                cl_scope(v.scope)
            ),
            (Op::R(l), Dialect::OpenCl) => {
                reg += 1;
                format!(
                    "int r{} = atomic_load_explicit({}, {}, {});",
                    reg - 1,
                    LOCS[l as usize],
                    cl_order(rm),
                    cl_scope(v.scope)
                )
            }
        });
    }
    out
}

fn condition(shape: &Shape) -> String {
    let parts: Vec<String> = shape
        .cond
        .iter()
        .map(|c| match *c {
            Cond::Reg(t, r, v) => format!("P{t}:r{r}={v}"),
            Cond::Loc(l, v) => format!("{}={v}", LOCS[l as usize]),
        })
        .collect();
    format!("exists ({})", parts.join(" /\\ "))
}

/// The locations a shape uses.
fn locations(shape: &Shape) -> Vec<&'static str> {
    let mut used = [false; LOCS.len()];
    for t in shape.threads {
        for op in *t {
            let (Op::W(l, _) | Op::R(l)) = *op;
            used[l as usize] = true;
        }
    }
    (0..LOCS.len())
        .filter(|&l| used[l])
        .map(|l| LOCS[l])
        .collect()
}

/// The test text, with `expect` (`None`: no expectation line yet).
pub fn text(shape: &Shape, v: &Variant, name: &str, expect: Option<&str>) -> String {
    let dialect = v.dialect;
    let groups = v.placement.groups(shape.threads.len());
    let mut s = String::new();
    let head = match dialect {
        Dialect::Ptx => "PTX",
        Dialect::OpenCl => "OpenCL",
    };
    let _ = writeln!(s, "{head} {name}");
    // Without a name (the text that decides whether two variants are the same test), no comment.
    if !name.is_empty() {
        let scope = match dialect {
            Dialect::Ptx => ptx_scope(v.scope).to_string(),
            Dialect::OpenCl => cl_scope(v.scope).replace("memory_scope_", ""),
        };
        let scope = if v.order == Order::Weak {
            "no".to_string()
        } else {
            scope
        };
        let _ = writeln!(
            s,
            "\"generated by gpumemsim litmus generate: {} with {} accesses at {scope} scope, {}\"",
            shape.name,
            v.order.name(),
            v.placement.describe()
        );
    }
    if let Some(e) = expect {
        let _ = match dialect {
            Dialect::Ptx => writeln!(s, "(* the oracle's verdict; expect: {e} *)"),
            Dialect::OpenCl => writeln!(s, "// the oracle's verdict; expect: {e}"),
        };
    }
    let locs = locations(shape);
    let init: Vec<String> = locs.iter().map(|l| format!("{l}=0;")).collect();
    let _ = writeln!(s, "{{ {} }}", init.join(" "));
    let code: Vec<Vec<String>> = shape
        .threads
        .iter()
        .map(|t| thread_code(dialect, t, v))
        .collect();
    match dialect {
        Dialect::Ptx => {
            let heads: Vec<String> = groups
                .iter()
                .enumerate()
                .map(|(i, g)| format!("P{i}@cta {g},gpu 0"))
                .collect();
            let rows = code.iter().map(Vec::len).max().unwrap_or(0);
            let width: Vec<usize> = (0..code.len())
                .map(|t| {
                    code[t]
                        .iter()
                        .map(String::len)
                        .chain([heads[t].len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let row = |cells: Vec<&str>| {
                let padded: Vec<String> = cells
                    .iter()
                    .enumerate()
                    .map(|(t, c)| format!("{c:<w$}", w = width[t]))
                    .collect();
                format!(" {} ;", padded.join(" | "))
            };
            let _ = writeln!(s, "{}", row(heads.iter().map(String::as_str).collect()));
            for r in 0..rows {
                let cells = code
                    .iter()
                    .map(|c| c.get(r).map(String::as_str).unwrap_or(""))
                    .collect();
                let _ = writeln!(s, "{}", row(cells));
            }
        }
        Dialect::OpenCl => {
            for (t, c) in code.iter().enumerate() {
                let params: Vec<String> = locs
                    .iter()
                    .map(|l| format!("global atomic_int* {l}"))
                    .collect();
                let _ = writeln!(s, "P{t}@wg {}, dev 0 ({}) {{", groups[t], params.join(", "));
                for line in c {
                    let _ = writeln!(s, "  {line}");
                }
                let _ = writeln!(s, "}}");
            }
        }
    }
    let _ = writeln!(s, "{}", condition(shape));
    s
}
