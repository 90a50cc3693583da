//! The harness's launch kernel (written with the litmus crate's `KernelBuilder`): each work-item to
//! its role (`placement.rs`), each test thread's code with its instance's addresses, the epilogue
//! that stores observed registers, and the stress walk over a scratch buffer (MC Mutants' stress and
//! pre-stress).

use super::placement::{pad, ROLE_IDLE, ROLE_STRESS, SLOT_BYTES};
use super::LitmusSettings;
use crate::ir::*;
use crate::workload::{Buffer, Geometry, Init, Workload};
use gpumemsim_litmus::{buffer_params, location_buffers, KernelBuilder, LitmusTest};

/// u32 words of the stress scratch buffer (1 MiB).
const SCRATCH_WORDS: u64 = 1 << 18;

/// the epilogue that stores observed registers, and the stress loop.
pub(super) fn kernel(
    test: &LitmusTest,
    s: &LitmusSettings,
    n: u64,
    groups: u64,
    role: &[u32],
    slot: &[Vec<u64>],
    observed_regs: &[(usize, usize, Reg)],
) -> Workload {
    let nt = test.threads.len() as u64;
    let nobs = observed_regs.len().max(1) as u64;
    // Registers: location bases, then harness bases (the buffers' order), then temporaries, then
    // every thread's own.
    let mut code = KernelBuilder::new(test);
    let [r_role, r_slot, r_out, r_scratch] =
        ["$role", "$slot", "$out", "$scratch"].map(|x| code.reg(x));
    let [gid, rl, t, k, c, a, v, i] =
        ["$gid", "$r", "$t", "$k", "$c", "$a", "$v", "$i"].map(|x| code.reg(x));
    let bases = code.thread_regs();
    let stress_regs = StressRegs {
        gid,
        t,
        c,
        a,
        v,
        i,
        scratch: r_scratch,
    };
    let (r, imm) = (Operand::Reg, Operand::Imm);
    let head = test.threads.first().map(|th| th.loc).unwrap_or_default();
    // Prologue: my role.
    code.push(
        head,
        Inst::ReadSpecial {
            dst: gid,
            which: Special::GlobalLinearId,
        },
    );
    word(&mut code, head, a, r_role, gid, 2);
    code.push(head, load_u32(rl, a));
    code.eq(head, Ty::U32, c, rl, ROLE_STRESS as u64);
    let stress_branch = code.branch_if(head, c);
    code.eq(head, Ty::U32, c, rl, ROLE_IDLE as u64);
    let idle_branch = code.branch_if(head, c);
    if s.pre_stress_iterations > 0 {
        stress_walk(&mut code, head, s.pre_stress_iterations, stress_regs);
    }
    code.alu(head, AluOp::Rem, Ty::U32, t, r(rl), imm(nt));
    code.alu(head, AluOp::Div, Ty::U32, k, r(rl), imm(nt));
    let entries = code.thread_entries(Ty::U32, c, t, |ti| ti as u64);
    let exit_at = code.here();
    code.push(head, Inst::Exit);
    for (ti, th) in test.threads.iter().enumerate() {
        let entry = code.here();
        code.set_target(entries[ti], entry);
        let b = bases[ti];
        // Addresses of this instance's copies: base + slot[l][k] · 128.
        code.addresses(ti, |code, l0, l, dst| {
            code.alu(l0, AluOp::Add, Ty::U32, v, r(k), imm(l as u64 * n));
            word(code, l0, a, r_slot, v, 2);
            code.push(l0, load_u32(v, a));
            code.alu(l0, AluOp::Mul, Ty::U64, dst, r(v), imm(SLOT_BYTES));
            let buffer = code.location(l);
            code.alu(l0, AluOp::Add, Ty::U64, dst, r(dst), r(buffer));
        });
        // Arrays are refused in `launch`: no element addresses.
        code.reg_inits(ti);
        // The body; its exits and its end go to the epilogue.
        code.body(ti, true, |inst| inst);
        let end = th.locs.last().copied().unwrap_or(th.loc);
        for (j, &(_, thread, reg)) in observed_regs.iter().enumerate() {
            if thread != ti {
                continue;
            }
            code.alu(end, AluOp::Mul, Ty::U32, v, r(k), imm(nobs));
            code.alu(end, AluOp::Add, Ty::U32, v, r(v), imm(j as u64));
            word(&mut code, end, a, r_out, v, 3);
            code.push(
                end,
                Inst::Store {
                    space: Space::Global,
                    addr: at(a),
                    src: r(b + reg),
                    ty: Ty::U64,
                    ord: StoreOrd::Plain,
                    scope: Scope::Device,
                },
            );
        }
        code.push(end, Inst::Exit);
    }
    // Stress: a linear congruential walk over the scratch lines, load then store at each.
    let stress_at = code.here();
    stress_walk(&mut code, head, s.stress_iterations, stress_regs);
    code.push(head, Inst::Exit);
    code.set_target(stress_branch, stress_at);
    code.set_target(idle_branch, exit_at);
    let mut buffers = location_buffers(test, (0..test.locations.len()).map(|l| n * pad(test, l)));
    let internal = |name: &str, elem, len, init| Buffer {
        name: name.into(),
        elem,
        len,
        init,
        loc: head,
    };
    buffers.push(internal(
        "$role",
        Ty::U32,
        role.len() as u64,
        Init::Values(role.iter().map(|&x| x as u64).collect()),
    ));
    buffers.push(internal(
        "$slot",
        Ty::U32,
        (slot.len() as u64 * n).max(1),
        Init::Values(slot.iter().flatten().copied().collect()),
    ));
    buffers.push(internal("$out", Ty::U64, n * nobs, Init::Zero));
    buffers.push(internal("$scratch", Ty::U32, SCRATCH_WORDS, Init::Zero));
    let params = buffer_params(&buffers);
    Workload {
        kernel: code.finish(0),
        geometry: Geometry {
            groups: [groups as u32, 1, 1],
            group_size: [s.workgroup_size, 1, 1],
        },
        buffers,
        params,
        checks: vec![],
        reports: vec![],
        parameters: vec![],
    }
}

/// The address of register `reg`'s value, no offset.
fn at(reg: Reg) -> Address {
    Address {
        base: Operand::Reg(reg),
        offset: 0,
    }
}

/// A plain global u32 load of `[addr]` into `dst`.
fn load_u32(dst: Reg, addr: Reg) -> Inst {
    Inst::Load {
        dst,
        space: Space::Global,
        addr: at(addr),
        ty: Ty::U32,
        ord: LoadOrd::Plain,
        scope: Scope::Device,
    }
}

/// `dst` = the address of element `index` (`1 << shift` bytes each) of the buffer at `base`.
fn word(code: &mut KernelBuilder, at: SrcLoc, dst: Reg, base: Reg, index: Reg, shift: u64) {
    code.alu(
        at,
        AluOp::Shl,
        Ty::U64,
        dst,
        Operand::Reg(index),
        Operand::Imm(shift),
    );
    code.alu(
        at,
        AluOp::Add,
        Ty::U64,
        dst,
        Operand::Reg(dst),
        Operand::Reg(base),
    );
}

/// The registers the stress walk uses (temporaries of [`kernel`], and the scratch buffer's address).
#[derive(Clone, Copy)]
struct StressRegs {
    gid: Reg,
    t: Reg,
    c: Reg,
    a: Reg,
    v: Reg,
    i: Reg,
    scratch: Reg,
}

/// The stress walk: `iterations` loads and stores to pseudo-random scratch lines (a linear
/// congruential walk, load then store at each), seeded by the work-item's global id.
fn stress_walk(code: &mut KernelBuilder, head: SrcLoc, iterations: u32, regs: StressRegs) {
    let StressRegs {
        gid,
        t,
        c,
        a,
        v,
        i,
        scratch,
    } = regs;
    let (r, imm) = (Operand::Reg, Operand::Imm);
    code.alu(head, AluOp::Mul, Ty::U32, v, r(gid), imm(2_654_435_761));
    code.push(
        head,
        Inst::Mov {
            dst: i,
            src: imm(0),
        },
    );
    let top = code.here();
    code.alu(head, AluOp::Mul, Ty::U32, v, r(v), imm(1_664_525));
    code.alu(head, AluOp::Add, Ty::U32, v, r(v), imm(1_013_904_223));
    code.alu(head, AluOp::Shr, Ty::U32, t, r(v), imm(8));
    code.alu(head, AluOp::Rem, Ty::U32, t, r(t), imm(SCRATCH_WORDS));
    // Whole lines: the word index rounded to 32 words.
    code.alu(head, AluOp::And, Ty::U32, t, r(t), imm(!31u32 as u64));
    word(code, head, a, scratch, t, 2);
    code.push(head, load_u32(c, a));
    code.alu(head, AluOp::Add, Ty::U32, c, r(c), imm(1));
    code.push(
        head,
        Inst::Store {
            space: Space::Global,
            addr: at(a),
            src: r(c),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
    );
    code.alu(head, AluOp::Add, Ty::U32, i, r(i), imm(1));
    code.push(
        head,
        Inst::Cmp {
            op: CmpOp::Lt,
            ty: Ty::U32,
            dst: c,
            a: r(i),
            b: imm(iterations as u64),
        },
    );
    code.push(
        head,
        Inst::Branch {
            target: top,
            cond: Some((c, true)),
        },
    );
}
