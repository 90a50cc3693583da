//! A kernel instruction printed back in the kernel language's syntax, with register names (for
//! diagnostics: the watchdog's stuck warps, runtime errors, explanations).

use super::*;

impl Kernel {
    /// Instruction `pc` in the kernel language's syntax, with register names (for diagnostics).
    pub fn disassemble(&self, pc: usize) -> String {
        let Some(inst) = self.insts.get(pc) else {
            return format!("<no instruction at pc {pc}>");
        };
        let reg = |r: Reg| {
            self.reg_names
                .get(r as usize)
                .cloned()
                .unwrap_or_else(|| format!("%r{r}"))
        };
        let op = |o: Operand, ty: Ty| match o {
            Operand::Reg(r) => reg(r),
            Operand::Imm(v) if ty == Ty::F32 => format!("{}", bits_f32(v)),
            Operand::Imm(v) if matches!(ty, Ty::I32) => format!("{}", v as u32 as i32),
            Operand::Imm(v) if matches!(ty, Ty::I64) => format!("{}", v as i64),
            Operand::Imm(v) => format!("{v}"),
        };
        let addr = |a: Address| {
            let base = op(a.base, Ty::U64);
            match a.offset {
                0 => format!("[{base}]"),
                o if o < 0 => format!("[{base} - {}]", o.unsigned_abs()),
                o => format!("[{base} + {o}]"),
            }
        };
        let mem = |ord: Option<&str>, scope: Scope, space: Space, ty: Ty| match ord {
            Some(o) => format!(".{o}.{scope}.{}.{}", space.name(), ty.name()),
            None => format!(".{}.{}", space.name(), ty.name()),
        };
        let spaces = |s: SpaceSet| match (s.local, s.global) {
            (true, true) | (false, false) => String::new(),
            (true, false) => ".local".into(),
            (false, true) => ".global".into(),
        };
        let lower = |d: &dyn fmt::Debug| {
            let s = format!("{d:?}");
            let mut out = String::new();
            for (i, c) in s.chars().enumerate() {
                if c.is_ascii_uppercase() {
                    if i > 0 {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                } else {
                    out.push(c);
                }
            }
            out
        };
        match *inst {
            Inst::Mov { dst, src } => format!("mov.b64 {}, {}", reg(dst), op(src, Ty::U64)),
            Inst::ReadSpecial { dst, which } => {
                let d = |d: Dim| ["x", "y", "z"][d.index()];
                let name = match which {
                    Special::GlobalId(x) => format!("global_id.{}", d(x)),
                    Special::LocalId(x) => format!("local_id.{}", d(x)),
                    Special::GroupId(x) => format!("group_id.{}", d(x)),
                    Special::GlobalSize(x) => format!("global_size.{}", d(x)),
                    Special::LocalSize(x) => format!("local_size.{}", d(x)),
                    Special::NumGroups(x) => format!("num_groups.{}", d(x)),
                    Special::GlobalLinearId => "global_linear_id".into(),
                    Special::LocalLinearId => "local_linear_id".into(),
                    Special::GroupLinearId => "group_linear_id".into(),
                    Special::Lane => "sub_group_local_id".into(),
                    Special::SubGroupId => "sub_group_id".into(),
                    Special::SubGroupSize => "sub_group_size".into(),
                    Special::NumSubGroups => "num_sub_groups".into(),
                    Special::SmId => "sm_id".into(),
                    Special::Clock => "clock".into(),
                };
                format!("mov.u64 {}, %{name}", reg(dst))
            }
            Inst::Alu {
                op: o,
                ty,
                dst,
                a,
                b,
            } => format!(
                "{}.{} {}, {}, {}",
                lower(&o),
                ty.name(),
                reg(dst),
                op(a, ty),
                op(b, ty)
            ),
            Inst::Cmp {
                op: o,
                ty,
                dst,
                a,
                b,
            } => format!(
                "setp.{}.{} {}, {}, {}",
                lower(&o),
                ty.name(),
                reg(dst),
                op(a, ty),
                op(b, ty)
            ),
            Inst::Select { dst, cond, a, b } => format!(
                "selp.b64 {}, {}, {}, {}",
                reg(dst),
                op(a, Ty::U64),
                op(b, Ty::U64),
                reg(cond)
            ),
            Inst::Cvt { dst, src, from, to } => {
                format!(
                    "cvt.{}.{} {}, {}",
                    to.name(),
                    from.name(),
                    reg(dst),
                    reg(src)
                )
            }
            Inst::Branch { target, cond } => match cond {
                None => format!("bra pc {target}"),
                Some((r, true)) => format!("@{} bra pc {target}", reg(r)),
                Some((r, false)) => format!("@!{} bra pc {target}", reg(r)),
            },
            Inst::Load {
                dst,
                space,
                addr: a,
                ty,
                ord,
                scope,
            } => {
                let o = ord.atomic_order().map(MemOrder::name);
                format!("ld{} {}, {}", mem(o, scope, space, ty), reg(dst), addr(a))
            }
            Inst::Store {
                space,
                addr: a,
                src,
                ty,
                ord,
                scope,
            } => {
                let o = ord.atomic_order().map(MemOrder::name);
                format!(
                    "st{} {}, {}",
                    mem(o, scope, space, ty),
                    addr(a),
                    op(src, ty)
                )
            }
            Inst::Rmw {
                dst,
                op: o,
                space,
                addr: a,
                operand,
                ty,
                ord,
                scope,
            } => {
                let q = mem(Some(ord.order().name()), scope, space, ty);
                match dst {
                    Some(d) => format!(
                        "atom.{}{q} {}, {}, {}",
                        lower(&o),
                        reg(d),
                        addr(a),
                        op(operand, ty)
                    ),
                    None => format!("red.{}{q} {}, {}", lower(&o), addr(a), op(operand, ty)),
                }
            }
            Inst::Cas {
                dst,
                space,
                addr: a,
                expected,
                desired,
                ty,
                success,
                scope,
                weak,
                ..
            } => format!(
                "atom.cas{}{} {}, {}, {}, {}",
                if weak { ".weak" } else { "" },
                mem(Some(success.order().name()), scope, space, ty),
                dst.map(reg).unwrap_or_else(|| "_".into()),
                addr(a),
                op(expected, ty),
                op(desired, ty)
            ),
            Inst::Fence {
                ord,
                scope,
                spaces: sp,
            } => format!("fence.{}.{scope}{}", ord.order().name(), spaces(sp)),
            Inst::Barrier {
                kind: BarrierKind::WorkGroup,
                spaces: sp,
                scope,
            } => format!("barrier{}.{scope}", spaces(sp)),
            Inst::Barrier {
                kind: BarrierKind::Named(b),
                ..
            } => {
                let n = b.threads.map(|n| format!(", {n}")).unwrap_or_default();
                match b.op {
                    BarrierOp::Sync => format!("bar.sync {}{n}", b.id),
                    BarrierOp::Arrive => format!("bar.arrive {}{n}", b.id),
                    BarrierOp::Reduce {
                        op,
                        dst,
                        pred,
                        negated,
                        ..
                    } => format!(
                        "bar.red.{} {}, {}{n}, {}{}",
                        op.name(),
                        reg(dst),
                        b.id,
                        if negated { "!" } else { "" },
                        reg(pred)
                    ),
                }
            }
            Inst::Barrier { spaces: sp, .. } => format!("sub_group_barrier{}", spaces(sp)),
            Inst::Math {
                op: o,
                ty,
                mode,
                dst,
                args,
            } => {
                let name = lower(&o);
                let name = name
                    .split([' ', '(', '{'])
                    .next()
                    .unwrap_or("math")
                    .to_string();
                let n = math_arity(o);
                let ops: Vec<String> = args[..n].iter().map(|a| op(*a, ty)).collect();
                let mut m = String::new();
                if ty.is_float() {
                    m.push_str(match mode.round {
                        Round::Nearest => "",
                        Round::Zero => ".rz",
                        Round::Down => ".rm",
                        Round::Up => ".rp",
                    });
                    if mode.ftz {
                        m.push_str(".ftz");
                    }
                    if mode.sat {
                        m.push_str(".sat");
                    }
                }
                format!("{name}{m}.{} {}, {}", ty.name(), reg(dst), ops.join(", "))
            }
            Inst::Warp {
                op: o,
                ty,
                dst,
                pred,
                args,
                members,
            } => {
                let name = match o {
                    WarpOp::Shfl(m) => format!("shfl.sync.{}", lower(&m)),
                    WarpOp::Vote(m) => format!("vote.sync.{}", lower(&m)),
                    WarpOp::MatchAny => "match.any.sync".into(),
                    WarpOp::MatchAll => "match.all.sync".into(),
                    WarpOp::Redux(r) => format!("redux.sync.{}", lower(&r)),
                    WarpOp::ActiveMask => "activemask".into(),
                };
                let n = match o {
                    WarpOp::Shfl(_) => 3,
                    WarpOp::ActiveMask => 0,
                    _ => 1,
                };
                let mut ops: Vec<String> = args[..n].iter().map(|a| op(*a, ty)).collect();
                if !matches!(o, WarpOp::ActiveMask) {
                    ops.push(op(members, Ty::U32));
                }
                let d = match pred {
                    Some(p) => format!("{}|{}", reg(dst), reg(p)),
                    None => reg(dst),
                };
                let sep = if ops.is_empty() { "" } else { ", " };
                format!("{name}.{} {d}{sep}{}", ty.name(), ops.join(", "))
            }
            Inst::Compute { class } => format!("compute.{}", lower(&class)),
            Inst::Exit => "exit".into(),
        }
    }
}
