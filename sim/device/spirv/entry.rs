//! The entry point: the dispatcher loop over the basic blocks, local memory zeroed before the first block,
//! and faults raised with a value known only at run time.

use super::*;

impl Gen<'_> {
    /// The entry point: ids into private variables, the dispatcher loop over the block functions, and
    /// (when the kernel has barriers) the outer loop where all work-items meet at one barrier.
    pub(super) fn main(&mut self, blocks: &[u32], record: u32, opts: Options) -> u32 {
        let (u, bl, void) = (self.ids.u32_, self.ids.bool_, self.ids.void);
        let v3 = self.m.ty(Type::V3U32);
        let (f, _) = Func::new(&mut self.m, void, &[]);
        let id = f.id;
        self.m.name(id, "main");
        self.f = Some(f);
        let (blk, steps, counted) = {
            let f = self.f.as_mut().unwrap();
            let a = f.var(&mut self.m, u);
            let b = f.var(&mut self.m, u);
            let c = f.var(&mut self.m, bl);
            (a, b, c)
        };
        let zero = self.c32(0);
        let done_c = self.c32(u32::MAX);
        let fals = self.m.cbool(false);
        self.store(blk, zero);
        self.store(steps, zero);
        self.store(counted, fals);
        // cur_group = wid.x + nwg.x * (wid.y + nwg.y * wid.z); cur_thread = cur_group * T + lidx.
        let wid = self.load(v3, self.ids.wid);
        let nwg = self.load(v3, self.ids.nwg);
        let wx = self.op(u, Op::CompositeExtract, &[wid, 0]);
        let wy = self.op(u, Op::CompositeExtract, &[wid, 1]);
        let wz = self.op(u, Op::CompositeExtract, &[wid, 2]);
        let nx = self.op(u, Op::CompositeExtract, &[nwg, 0]);
        let ny = self.op(u, Op::CompositeExtract, &[nwg, 1]);
        let a = self.op(u, Op::IMul, &[ny, wz]);
        let a = self.op(u, Op::IAdd, &[wy, a]);
        let a = self.op(u, Op::IMul, &[nx, a]);
        let cg = self.op(u, Op::IAdd, &[wx, a]);
        self.store(self.ids.cur_group, cg);
        let [x, y, z] = self.group_size;
        let gt = self.c32(x * y * z);
        let lidx = self.load(u, self.ids.lidx);
        let ct = self.op(u, Op::IMul, &[cg, gt]);
        let ct = self.op(u, Op::IAdd, &[ct, lidx]);
        self.store(self.ids.cur_thread, ct);
        if self.ids.lmem != 0 {
            self.zero_local(lidx, gt);
        }

        let barriers: Vec<(SpaceSet, Scope)> = self
            .k
            .insts
            .iter()
            .filter_map(|i| match *i {
                Inst::Barrier { spaces, scope, .. } => Some((spaces, scope)),
                _ => None,
            })
            .collect();
        let has_barrier = !barriers.is_empty();
        let (outer_header, outer_body, outer_cont, outer_merge) =
            (self.m.id(), self.m.id(), self.m.id(), self.m.id());
        let after_inner = self.m.id();
        if has_barrier {
            self.emit(Op::Branch, &[outer_header]);
            self.label(outer_header);
            self.emit(Op::LoopMerge, &[outer_merge, outer_cont, 0]);
            self.emit(Op::Branch, &[outer_body]);
            self.label(outer_body);
            let b = self.load(u, blk);
            let live = self.op(bl, Op::INotEqual, &[b, done_c]);
            let inner = self.m.id();
            self.emit(Op::SelectionMerge, &[after_inner, 0]);
            self.emit(Op::BranchConditional, &[live, inner, after_inner]);
            self.label(inner);
        }
        // The inner dispatcher loop.
        let (ih, ib, ic, im, after_sw) = (
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
        );
        self.emit(Op::Branch, &[ih]);
        self.label(ih);
        self.emit(Op::LoopMerge, &[im, ic, 0]);
        self.emit(Op::Branch, &[ib]);
        self.label(ib);
        let s = self.load(u, steps);
        let one = self.c32(1);
        let s = self.op(u, Op::IAdd, &[s, one]);
        self.store(steps, s);
        let maxc = self.c32(opts.max_steps);
        let over = self.op(bl, Op::UGreaterThan, &[s, maxc]);
        let b = self.load(u, blk);
        let z = self.c32(0);
        self.call_fault_dyn(over, FaultCode::StepLimit, b, z);
        let b2 = self.op(u, Op::Select, &[over, done_c, b]);
        self.store(blk, b2);
        let cases: Vec<u32> = blocks.iter().map(|_| self.m.id()).collect();
        self.emit(Op::SelectionMerge, &[after_sw, 0]);
        let mut sw = vec![b2, after_sw];
        for (i, &c) in cases.iter().enumerate() {
            sw.push(i as u32);
            sw.push(c);
        }
        self.emit(Op::Switch, &sw);
        for (i, &c) in cases.iter().enumerate() {
            self.label(c);
            let r = self.op(u, Op::FunctionCall, &[blocks[i]]);
            self.store(blk, r);
            self.emit(Op::Branch, &[after_sw]);
        }
        self.label(after_sw);
        let fc = self.load(u, self.ids.f[0]);
        let faulted = self.op(bl, Op::INotEqual, &[fc, z]);
        let b3 = self.load(u, blk);
        let b3 = self.op(u, Op::Select, &[faulted, done_c, b3]);
        self.store(blk, b3);
        let is_done = self.op(bl, Op::IEqual, &[b3, done_c]);
        let atb = self.load(bl, self.ids.at_barrier);
        let stop = self.op(bl, Op::LogicalOr, &[is_done, atb]);
        self.emit(Op::BranchConditional, &[stop, im, ic]);
        self.label(ic);
        self.emit(Op::Branch, &[ih]);
        self.label(im);
        if has_barrier {
            self.emit(Op::Branch, &[after_inner]);
            self.label(after_inner);
            let local_words = self.k.local_bytes.div_ceil(4);
            let lp = self.m.ptr(SC::Workgroup, u);
            let (ci_exit, ci_live) = (self.c32(local_words), self.c32(local_words + 1));
            let p_exit = self.op(lp, Op::AccessChain, &[self.ids.lmem, ci_exit]);
            let p_live = self.op(lp, Op::AccessChain, &[self.ids.lmem, ci_live]);
            let wg = self.c32(spv::Scope::Workgroup as u32);
            let relaxed = self.c32(0);
            // if (blk == DONE && !counted) { counted = true; atomicAdd(&wg_exited, 1u); }
            let b = self.load(u, blk);
            let d = self.op(bl, Op::IEqual, &[b, done_c]);
            let c = self.load(bl, counted);
            let nc = self.op(bl, Op::LogicalNot, &[c]);
            let cnt = self.op(bl, Op::LogicalAnd, &[d, nc]);
            let (cb, cm) = (self.m.id(), self.m.id());
            self.emit(Op::SelectionMerge, &[cm, 0]);
            self.emit(Op::BranchConditional, &[cnt, cb, cm]);
            self.label(cb);
            let t = self.m.cbool(true);
            self.store(counted, t);
            self.op(u, Op::AtomicIAdd, &[p_exit, wg, relaxed, one]);
            self.emit(Op::Branch, &[cm]);
            self.label(cm);
            // One barrier for every barrier instruction: the widest scope and every space any names.
            let mut spaces = SpaceSet::LOCAL;
            let mut scope = Scope::WorkGroup;
            for (sp, sc) in &barriers {
                spaces.local |= sp.local;
                spaces.global |= sp.global;
                if *sc > scope && sp.global {
                    scope = *sc;
                }
            }
            let msc = self.scope(scope);
            let sem = self.sem(MemOrder::AcqRel, spaces);
            self.emit(Op::ControlBarrier, &[wg, msc, sem]);
            // if (lidx == 0u) { wg_live = GROUP_THREADS - atomicLoad(&wg_exited); }
            let li = self.load(u, self.ids.lidx);
            let first = self.op(bl, Op::IEqual, &[li, z]);
            let (lb, lm) = (self.m.id(), self.m.id());
            self.emit(Op::SelectionMerge, &[lm, 0]);
            self.emit(Op::BranchConditional, &[first, lb, lm]);
            self.label(lb);
            let ex = self.op(u, Op::AtomicLoad, &[p_exit, wg, relaxed]);
            let lv = self.op(u, Op::ISub, &[gt, ex]);
            let np = spv::MemoryAccess::NON_PRIVATE_POINTER.bits();
            self.emit(Op::Store, &[p_live, lv, np]);
            self.emit(Op::Branch, &[lm]);
            self.label(lm);
            // workgroupUniformLoad(&wg_live): barrier, load, barrier.
            let wsem = self.sem(MemOrder::AcqRel, SpaceSet::LOCAL);
            self.emit(Op::ControlBarrier, &[wg, wg, wsem]);
            let live = self.op(u, Op::Load, &[p_live, np]);
            self.emit(Op::ControlBarrier, &[wg, wg, wsem]);
            let none = self.op(bl, Op::IEqual, &[live, z]);
            self.emit(Op::BranchConditional, &[none, outer_merge, outer_cont]);
            self.label(outer_cont);
            self.store(self.ids.at_barrier, fals);
            self.emit(Op::Branch, &[outer_header]);
            self.label(outer_merge);
        }
        // Left the loops unfinished without a fault: the driver ended a loop (`FaultCode::LoopCut`).
        let b = self.load(u, blk);
        let unfinished = self.op(bl, Op::INotEqual, &[b, done_c]);
        let fc = self.load(u, self.ids.f[0]);
        let clean = self.op(bl, Op::IEqual, &[fc, z]);
        let cut = self.op(bl, Op::LogicalAnd, &[unfinished, clean]);
        self.call_fault_dyn(cut, FaultCode::LoopCut, b, z);
        let fc = self.load(u, self.ids.f[0]);
        let faulted = self.op(bl, Op::INotEqual, &[fc, z]);
        let (rb, rm) = (self.m.id(), self.m.id());
        self.emit(Op::SelectionMerge, &[rm, 0]);
        self.emit(Op::BranchConditional, &[faulted, rb, rm]);
        self.label(rb);
        self.op(void, Op::FunctionCall, &[record]);
        self.emit(Op::Branch, &[rm]);
        self.label(rm);
        self.emit(Op::Return, &[]);
        let f = self.f.take().unwrap();
        f.finish(&mut self.m);
        id
    }

    /// Zeroes local memory (and the barrier counters) as WGSL's workgroup variables are zeroed: each
    /// work-item clears the words `lidx, lidx + T, …`, then a work-group barrier (uniform: the start
    /// of the entry point).
    pub(super) fn zero_local(&mut self, lidx: u32, threads: u32) {
        let (u, bl) = (self.ids.u32_, self.ids.bool_);
        let has_barrier = self
            .k
            .insts
            .iter()
            .any(|i| matches!(i, Inst::Barrier { .. }));
        let words = self.k.local_bytes.div_ceil(4) + if has_barrier { 2 } else { 0 };
        let i = {
            let f = self.f.as_mut().unwrap();
            f.var(&mut self.m, u)
        };
        self.store(i, lidx);
        let (header, body, cont, merge) = (self.m.id(), self.m.id(), self.m.id(), self.m.id());
        self.emit(Op::Branch, &[header]);
        self.label(header);
        let x = self.load(u, i);
        let n = self.c32(words);
        let more = self.op(bl, Op::ULessThan, &[x, n]);
        self.emit(Op::LoopMerge, &[merge, cont, 0]);
        self.emit(Op::BranchConditional, &[more, body, merge]);
        self.label(body);
        let lp = self.m.ptr(SC::Workgroup, u);
        let p = self.op(lp, Op::AccessChain, &[self.ids.lmem, x]);
        let zero = self.c32(0);
        let np = spv::MemoryAccess::NON_PRIVATE_POINTER.bits();
        self.emit(Op::Store, &[p, zero, np]);
        self.emit(Op::Branch, &[cont]);
        self.label(cont);
        let next = self.op(u, Op::IAdd, &[x, threads]);
        self.store(i, next);
        self.emit(Op::Branch, &[header]);
        self.label(merge);
        let wg = self.c32(spv::Scope::Workgroup as u32);
        let sem = self.sem(MemOrder::AcqRel, SpaceSet::LOCAL);
        self.emit(Op::ControlBarrier, &[wg, wg, sem]);
    }

    /// A fault whose pc is a run-time value (the step limit records the block).
    pub(super) fn call_fault_dyn(&mut self, cond: u32, code: FaultCode, pc: u32, z: u32) {
        let code = self.c32(code as u32);
        let void = self.ids.void;
        let fun = self.ids.fault_fn;
        self.op(void, Op::FunctionCall, &[fun, cond, code, pc, z, z, z]);
    }
}
