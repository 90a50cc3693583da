//! The walk over a kernel's IR that every shader translator (WGSL, SPIR-V, PTX) shares, done once:
//! the launch checks and inputs (ids and addresses in 32 bits, the buffers' layout, each parameter's
//! register and value), the basic blocks (leaders, block ids, each block's instruction range), the
//! register analysis (which registers need 64 bits, the instruction that first writes one, which
//! instructions need 64-bit integers, def-use: the register each instruction writes), and what the
//! kernel asks of local memory. Each translator then emits its own language block by block.
//!
//! Also the one [`Shader`] type a translation holds.
//!
//! Does not structure control flow: every translator still emits the blocks of an unstructured
//! control-flow graph (the WGSL and SPIR-V dispatcher loop, PTX labels and branches).

use super::wgsl::TranslateError;
use crate::ir::*;
use crate::machine::memory::{GlobalMemory, GLOBAL_BASE};
use crate::workload::{ParamValue, Workload};
use std::collections::{BTreeSet, HashMap};

/// The shader a translation holds, in its language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shader {
    /// A WGSL module, compiled by wgpu.
    Wgsl(String),
    /// A SPIR-V module's words, passed through to a Vulkan driver.
    Spirv(Vec<u32>),
}

impl Shader {
    /// The WGSL text, if this is WGSL.
    pub fn wgsl(&self) -> Option<&str> {
        match self {
            Shader::Wgsl(s) => Some(s),
            _ => None,
        }
    }

    /// The shader as a file holds it: the text, or the words little-endian.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Shader::Wgsl(s) => s.as_bytes().to_vec(),
            Shader::Spirv(w) => w.iter().flat_map(|w| w.to_le_bytes()).collect(),
        }
    }

    /// The SPIR-V words, if this is SPIR-V.
    pub fn spirv(&self) -> Option<&[u32]> {
        match self {
            Shader::Spirv(w) => Some(w),
            _ => None,
        }
    }
}

/// A kernel walked once for a translation to `what` ("WGSL", "SPIR-V", "PTX": the launch errors
/// name it).
pub(crate) struct Walk<'k> {
    pub k: &'k Kernel,
    /// The flat memory as the simulator lays it out.
    pub mem: GlobalMemory,
    /// Each parameter's register and value (buffer addresses resolved).
    pub params: Vec<(Reg, u64)>,
    /// First instruction of each basic block, ascending (block ids index this).
    pub leaders: Vec<usize>,
    /// Leader instruction → block id.
    pub block_of: HashMap<usize, usize>,
    /// Per register: some value written to it needs 64 bits.
    pub wide: Vec<bool>,
}

impl<'k> Walk<'k> {
    /// Checks the launch and walks `wl`'s kernel.
    pub fn new(wl: &'k Workload, what: &str) -> Result<Walk<'k>, TranslateError> {
        let k = &wl.kernel;
        let (mem, params) = check_launch(wl, what)?;
        let leaders = leaders(k);
        let block_of = leaders.iter().enumerate().map(|(b, &i)| (i, b)).collect();
        let wide = wide_registers(k, &params);
        Ok(Walk {
            k,
            mem,
            params,
            leaders,
            block_of,
            wide,
        })
    }

    /// Each basic block: (block id, first instruction, one past its last).
    pub fn blocks(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        self.leaders.iter().enumerate().map(|(b, &start)| {
            let end = self
                .leaders
                .get(b + 1)
                .copied()
                .unwrap_or(self.k.insts.len());
            (b, start, end)
        })
    }

    /// The first 64-bit register: `Some(pc)` of the first instruction that writes it (`Some(None)`
    /// when only a parameter does); `None` when every register fits 32 bits.
    pub fn first_wide_def(&self) -> Option<Option<usize>> {
        let r = self.wide.iter().position(|&w| w)?;
        Some(
            self.k
                .insts
                .iter()
                .position(|i| dst_of(i) == Some(r as Reg)),
        )
    }

    /// Some register or instruction needs 64-bit integers.
    pub fn needs_64(&self) -> bool {
        self.wide.iter().any(|&w| w) || self.k.insts.iter().any(uses_64)
    }

    /// Some access to local memory is atomic (local memory then needs an atomic view).
    pub fn local_atomic(&self) -> bool {
        self.k.insts.iter().any(|i| match i {
            Inst::Load { space, ord, .. } => *space == Space::Local && *ord != LoadOrd::Plain,
            Inst::Store { space, ord, .. } => *space == Space::Local && *ord != StoreOrd::Plain,
            Inst::Rmw { space, .. } | Inst::Cas { space, .. } => *space == Space::Local,
            _ => false,
        })
    }

    /// Every placed allocation: (base address, bytes, at least 1), for the bounds checks.
    pub fn placed(&self) -> Vec<(u64, u64)> {
        self.mem
            .placed
            .iter()
            .map(|p| (p.base, p.bytes.max(1)))
            .collect()
    }

    /// Where each of the workload's `n` buffers lives in the flat memory: (byte offset, bytes).
    pub fn buffers(&self, n: usize) -> Vec<(u64, u64)> {
        self.mem
            .placed
            .iter()
            .take(n)
            .map(|p| (p.base - GLOBAL_BASE, p.bytes))
            .collect()
    }
}

/// `file:line:col` of instruction `pc` with `message`.
pub(crate) fn err(k: &Kernel, pc: usize, message: impl Into<String>) -> TranslateError {
    TranslateError {
        location: k.where_is(pc),
        message: message.into(),
    }
}

/// Which registers need 64 bits: a register is narrow when every value written to it fits in 32 bits.
pub(crate) fn wide_registers(k: &Kernel, params: &[(Reg, u64)]) -> Vec<bool> {
    let mut wide = vec![false; k.num_regs()];
    for &(r, v) in params {
        if v > u32::MAX as u64 {
            wide[r as usize] = true;
        }
    }
    let fits_op = |o: Operand, wide: &[bool]| match o {
        Operand::Reg(r) => !wide[r as usize],
        Operand::Imm(v) => v <= u32::MAX as u64,
    };
    loop {
        let mut changed = false;
        for inst in &k.insts {
            let (dst, fits) = match *inst {
                Inst::Mov { dst, src } => (dst, fits_op(src, &wide)),
                Inst::ReadSpecial { dst, .. } => (dst, true),
                Inst::Alu { dst, ty, .. } => (dst, ty.width() == Width::B32),
                Inst::Cmp { dst, .. } => (dst, true),
                Inst::Select { dst, a, b, .. } => (dst, fits_op(a, &wide) && fits_op(b, &wide)),
                Inst::Cvt { dst, from, to, .. } => (
                    dst,
                    to.width() == Width::B32 || (from == Ty::U32 && !to.is_float()),
                ),
                Inst::Load { dst, ty, .. } => (dst, ty.width() == Width::B32),
                Inst::Rmw {
                    dst: Some(dst), ty, ..
                }
                | Inst::Cas {
                    dst: Some(dst), ty, ..
                } => (dst, ty.width() == Width::B32),
                _ => continue,
            };
            if !fits && !wide[dst as usize] {
                wide[dst as usize] = true;
                changed = true;
            }
        }
        if !changed {
            return wide;
        }
    }
}

/// Basic-block leaders: instruction 0, every branch target, every instruction after a branch, exit or
/// barrier. Returns the sorted leader list.
pub(crate) fn leaders(k: &Kernel) -> Vec<usize> {
    let n = k.insts.len();
    let mut set = BTreeSet::new();
    set.insert(0usize);
    for (i, inst) in k.insts.iter().enumerate() {
        match *inst {
            Inst::Branch { target, .. } => {
                if (target as usize) < n {
                    set.insert(target as usize);
                }
                set.insert(i + 1);
            }
            Inst::Exit | Inst::Barrier { .. } => {
                set.insert(i + 1);
            }
            _ => {}
        }
    }
    set.into_iter().filter(|&i| i < n).collect()
}

/// The register an instruction writes.
pub(crate) fn dst_of(inst: &Inst) -> Option<Reg> {
    match *inst {
        Inst::Mov { dst, .. }
        | Inst::ReadSpecial { dst, .. }
        | Inst::Alu { dst, .. }
        | Inst::Cmp { dst, .. }
        | Inst::Select { dst, .. }
        | Inst::Cvt { dst, .. }
        | Inst::Load { dst, .. } => Some(dst),
        Inst::Rmw { dst, .. } | Inst::Cas { dst, .. } => dst,
        _ => None,
    }
}

/// Whether an instruction needs 64-bit integers.
pub(crate) fn uses_64(inst: &Inst) -> bool {
    match inst {
        Inst::Alu { ty, .. } | Inst::Cmp { ty, .. } => ty.width() == Width::B64,
        Inst::Cvt { from, to, .. } => from.width() == Width::B64 || to.width() == Width::B64,
        Inst::Load { ty, .. }
        | Inst::Store { ty, .. }
        | Inst::Rmw { ty, .. }
        | Inst::Cas { ty, .. } => ty.width() == Width::B64,
        _ => false,
    }
}

/// The launch checks and inputs every translation shares (`what`: "WGSL", "SPIR-V", "PTX"): ids
/// and addresses fit 32 bits, the buffers' layout, and each parameter's register and value.
pub(crate) fn check_launch(
    wl: &Workload,
    what: &str,
) -> Result<(GlobalMemory, Vec<(Reg, u64)>), TranslateError> {
    let k = &wl.kernel;
    let launch = format!("{}:1:1", k.file);
    let launch_err = |message: String| TranslateError {
        location: launch.clone(),
        message,
    };
    let geo = wl.geometry;
    if geo.group_threads() == 0 || geo.num_groups() == 0 {
        return Err(launch_err("the launch has no work-items".into()));
    }
    if geo.num_groups() * geo.group_threads() as u64 > u32::MAX as u64 {
        return Err(launch_err(format!(
            "{} work-items: the {what} translation computes ids in 32 bits (at most {})",
            geo.num_groups() * geo.group_threads() as u64,
            u32::MAX
        )));
    }
    let mem = GlobalMemory::new(&wl.buffers, 0);
    if GLOBAL_BASE + mem.len() > u32::MAX as u64 {
        return Err(launch_err(format!(
            "the buffers take {} bytes; the {what} translation addresses at most {} bytes",
            mem.len(),
            u32::MAX as u64 - GLOBAL_BASE
        )));
    }
    let mut params = Vec::new();
    for p in &wl.params {
        let v = match &p.value {
            ParamValue::Scalar(v) => *v,
            ParamValue::BufferAddr(b) => mem.base_of(b).ok_or_else(|| {
                launch_err(format!("parameter {} names unknown buffer {b}", p.name))
            })?,
        };
        if p.reg as usize >= k.num_regs() {
            return Err(launch_err(format!(
                "parameter {} is register {}, but the kernel has {} registers",
                p.name,
                p.reg,
                k.num_regs()
            )));
        }
        params.push((p.reg, v));
    }
    Ok((mem, params))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(src: &str) -> Workload {
        crate::kernel::parse(src, "walk.kern", &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    const LOOP: &str = "\
groups 1
group_size 4
buffer out: u32[4] = zero

kernel walk {
    reg %i, %p
    mov.u32 %i, 0
top:
    add.u32 %i, %i, 1
    setp.lt.u32 %p, %i, 10
    @%p bra top
    barrier
    mov.u32 %p, 7
}
";

    #[test]
    fn blocks_start_at_branch_targets_and_after_branches_and_barriers() {
        let wl = kernel(LOOP);
        let w = Walk::new(&wl, "PTX").unwrap();
        let b: Vec<_> = w.blocks().collect();
        // mov | add setp bra | barrier | mov (and the exit the lowering appends, if any)
        let n = wl.kernel.insts.len();
        assert_eq!(b, vec![(0, 0, 1), (1, 1, 4), (2, 4, 5), (3, 5, n)]);
        assert!(n == 6 || n == 7, "{:?}", wl.kernel.insts);
        assert_eq!(w.block_of[&1], 1);
        assert!(!w.block_of.contains_key(&2));
    }

    #[test]
    fn a_32_bit_kernel_has_no_wide_register_and_a_64_bit_add_makes_one() {
        let wl = kernel(LOOP);
        let w = Walk::new(&wl, "PTX").unwrap();
        assert_eq!(w.first_wide_def(), None);
        assert!(!w.needs_64());
        let wl = kernel(&LOOP.replace("add.u32 %i, %i, 1", "add.u64 %i, %i, 1"));
        let w = Walk::new(&wl, "PTX").unwrap();
        // %i is wide; the first instruction writing it is the `mov` at 0, not the add that widens it.
        assert_eq!(w.first_wide_def(), Some(Some(0)));
        assert!(w.needs_64());
    }
}
