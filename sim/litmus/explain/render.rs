//! The story told: each thread's accesses in program order with what served them and when (`line`, `what`),
//! and why the outcome happened, the communicating accesses and the reorderings it needed (`why`), rendered
//! as text (`render`).

use super::*;

impl Story<'_> {
    pub(super) fn render(&self, out: &mut String) {
        for (ti, t) in self.test.threads.iter().enumerate() {
            let mine: Vec<usize> = (0..self.accs.len())
                .filter(|&i| self.accs[i].thread == ti)
                .collect();
            match self.place[ti] {
                Some((sm, warp, lane)) => {
                    let _ = writeln!(
                        out,
                        "\n{} (SM {sm}, warp slot {warp}, lane {})",
                        t.name,
                        lane % self.ws as u64
                    );
                }
                None => {
                    let _ = writeln!(out, "\n{} (no global-memory access recorded)", t.name);
                }
            }
            for i in mine {
                let _ = writeln!(out, "  {}", self.line(i));
            }
        }
        let _ = writeln!(out, "\nwhy");
        let (facts, needed) = self.why();
        for s in facts {
            let _ = writeln!(out, "  {s}");
        }
        if needed.is_empty() {
            let _ = writeln!(
                out,
                "  needed: no reordering (no two communicating accesses of a thread took effect out of \
                 program order: an interleaving of the threads' accesses gives this state)"
            );
        }
        if !needed.is_empty() {
            let kinds: Vec<String> = needed.iter().map(|n| n.0.clone()).collect();
            let mut uniq: Vec<String> = Vec::new();
            for k in kinds {
                if !uniq.contains(&k) {
                    uniq.push(k);
                }
            }
            if uniq.len() == 1 {
                let _ = writeln!(out, "  needed: {}", uniq[0]);
            } else {
                // A cycle of such accesses closes only if some pair of one thread took effect out of
                // program order; any one of these would do.
                let _ = writeln!(
                    out,
                    "  needed: at least one of {} (all of them happened here)",
                    uniq.join(", ")
                );
            }
            for (_, text) in needed {
                let _ = writeln!(out, "    {text}");
            }
        }
    }

    /// One access's line in its thread's list.
    pub(super) fn line(&self, i: usize) -> String {
        let a = &self.accs[i];
        let v = |x: Option<i64>| x.map_or("?".to_string(), |v| v.to_string());
        match a.kind {
            AccessKind::Store { buffered } => {
                let mut s = format!(
                    "store {} = {:<4} issued {}",
                    a.loc,
                    v(a.value),
                    self.cyc(a.issued)
                );
                if buffered {
                    match a.vis.drained {
                        Some(d) => {
                            let _ = write!(s, "; in its store buffer until {}", self.cyc(d));
                        }
                        None => s.push_str("; in its store buffer (not drained in the run)"),
                    }
                } else {
                    s.push_str("; not buffered");
                }
                if let Some((p, held)) = a.vis.l1 {
                    let _ = write!(
                        s,
                        "; SM {}'s L1 at {}{}",
                        a.sm,
                        self.cyc(p),
                        if held {
                            " (line held: visible there)"
                        } else {
                            " (line not held: passed through)"
                        }
                    );
                }
                match a.vis.l2 {
                    Some((sl, p)) => {
                        let _ = write!(s, "; L2 slice {sl} at {}", self.cyc(p));
                    }
                    None => s.push_str("; never reached L2"),
                }
                s
            }
            AccessKind::Load | AccessKind::Rmw => {
                let what = if a.is_load() { "load " } else { "atomic" };
                let mut s = format!(
                    "{what} {} -> {:<3} issued {}, completed {}; ",
                    a.loc,
                    v(a.value),
                    self.cyc(a.issued),
                    a.done.map_or("?".into(), |d| self.cyc(d).to_string())
                );
                s.push_str(&match a.served {
                    Served::Forward => "its own store-buffer entry (forwarded)".into(),
                    Served::L1Hit { at, line } => format!(
                        "SM {}'s L1, hit at {} ({})",
                        a.sm,
                        self.cyc(at),
                        self.line_text(line)
                    ),
                    Served::L2 { slice, at, miss } => format!(
                        "L2 slice {slice}, read at {} ({})",
                        self.cyc(at),
                        if miss {
                            "L1 miss, line filled"
                        } else {
                            "bypassing the L1"
                        }
                    ),
                    Served::AtomicL2 { slice, at } => {
                        format!("L2 slice {slice}'s atomic unit at {}", self.cyc(at))
                    }
                    Served::AtomicL1 { at } => {
                        format!("SM {}'s L1 atomic unit at {}", a.sm, self.cyc(at))
                    }
                    Served::Unknown => "served by an unrecorded structure".into(),
                });
                let _ = write!(s, "; its value: {}", self.source_text(a.source));
                if let (Some(got), Some(exp)) = (a.value, self.value_of(a.source, a.addr)) {
                    if got != exp && a.is_load() {
                        let _ = write!(
                            s,
                            " (provenance disagrees: that holds {exp}, the load returned {got})"
                        );
                    }
                }
                s
            }
        }
    }

    /// "load of x", "store to x", "atomic on x".
    pub(super) fn what(&self, i: usize) -> String {
        let a = &self.accs[i];
        match a.kind {
            AccessKind::Load => format!("load of {}", a.loc),
            AccessKind::Store { .. } => format!("store to {}", a.loc),
            AccessKind::Rmw => format!("atomic on {}", a.loc),
        }
    }

    /// The facts the outcome rests on — stale reads (a load that missed another thread's store)
    /// and the coherence order of different threads' writes — and the reorderings the outcome
    /// needed (kind, sentence).
    pub(super) fn why(&self) -> (Vec<String>, Vec<(String, String)>) {
        let n = self.accs.len();
        let mut involved = vec![false; n];
        let mut facts = Vec::new();
        for i in 0..n {
            let a = &self.accs[i];
            if !(a.is_load() || matches!(a.kind, AccessKind::Rmw)) {
                continue;
            }
            if let Source::Store(j) = a.source {
                if self.accs[j].thread != a.thread {
                    involved[i] = true;
                    involved[j] = true;
                }
            }
            let Some(mine) = self.co(a.source) else {
                continue;
            };
            for j in 0..n {
                let b = &self.accs[j];
                if !b.writes() || b.addr != a.addr || b.thread == a.thread || j == i {
                    continue;
                }
                let Some(theirs) = self.co(Source::Store(j)) else {
                    continue;
                };
                if theirs <= mine || Source::Store(j) == a.source {
                    continue;
                }
                involved[i] = true;
                involved[j] = true;
                // An atomic reads the latest value at its unit: a later write is simply later.
                if matches!(a.kind, AccessKind::Rmw) {
                    continue;
                }
                let took = self.effect(i).unwrap_or(a.issued);
                let s = match a.served {
                    Served::L1Hit { .. } => {
                        let l2 = b.vis.l2.map(|x| x.1).expect("co has it");
                        let rel = if took < l2 { "before" } else { "after" };
                        let same = if self.cyc(took) == self.cyc(l2) {
                            if took < l2 {
                                ", later in the same cycle"
                            } else {
                                ", earlier in the same cycle"
                            }
                        } else {
                            ""
                        };
                        format!(
                            "stale: {}'s {} {} — a stale L1 line: its value was taken {rel} {}'s {} reached L2 (cycle {}{same})",
                            self.name(i),
                            self.what(i),
                            self.how(i),
                            self.name(j),
                            self.what(j),
                            self.cyc(l2),
                        )
                    }
                    _ => format!(
                        "stale: {}'s {} was {} when {}'s {} {}",
                        self.name(j),
                        self.what(j),
                        self.where_at(j, took),
                        self.name(i),
                        self.what(i),
                        self.how(i)
                    ),
                };
                facts.push(s);
            }
        }
        // Coherence between different threads' writes of one location: their order at L2.
        let mut addrs: Vec<u64> = Vec::new();
        for i in 0..n {
            let a = &self.accs[i];
            if !a.writes() || addrs.contains(&a.addr) {
                continue;
            }
            let mut ws: Vec<(Pt, usize)> = (0..n)
                .filter(|&j| self.accs[j].writes() && self.accs[j].addr == a.addr)
                .filter_map(|j| Some((self.accs[j].vis.l2?.1, j)))
                .collect();
            let threads = |ws: &[(Pt, usize)]| {
                let mut t: Vec<usize> = ws.iter().map(|w| self.accs[w.1].thread).collect();
                t.dedup();
                t.len()
            };
            ws.sort();
            if threads(&ws) < 2 {
                continue;
            }
            addrs.push(a.addr);
            for x in &ws {
                if ws
                    .iter()
                    .any(|y| self.accs[y.1].thread != self.accs[x.1].thread)
                {
                    involved[x.1] = true;
                }
            }
            let order: Vec<String> = ws
                .iter()
                .map(|&(p, j)| {
                    let v = self.accs[j]
                        .value
                        .filter(|_| matches!(self.accs[j].kind, AccessKind::Store { .. }))
                        .map(|v| format!(" ({} = {v})", a.loc))
                        .unwrap_or_default();
                    format!(
                        "{}'s {}{v} at cycle {}",
                        self.name(j),
                        self.what(j),
                        self.cyc(p)
                    )
                })
                .collect();
            facts.push(format!(
                "coherence: the writes of {} reached L2 in this order: {}",
                a.loc,
                order.join(", then ")
            ));
        }
        let mut needed = Vec::new();
        for (ti, t) in self.test.threads.iter().enumerate() {
            let mine: Vec<usize> = (0..n)
                .filter(|&i| self.accs[i].thread == ti && involved[i])
                .collect();
            for (x, &a) in mine.iter().enumerate() {
                for &b in &mine[x + 1..] {
                    let (aa, bb) = (&self.accs[a], &self.accs[b]);
                    if aa.addr == bb.addr {
                        continue;
                    }
                    let (Some(ea), Some(eb)) = (self.effect(a), self.effect(b)) else {
                        continue;
                    };
                    if eb >= ea {
                        continue;
                    }
                    let kind = |x: &Acc| match x.kind {
                        AccessKind::Load => "load",
                        AccessKind::Store { .. } => "store",
                        AccessKind::Rmw => "atomic",
                    };
                    let label = format!("{}→{} reordering in {}", kind(aa), kind(bb), t.name);
                    let b_reads = !matches!(bb.kind, AccessKind::Store { .. });
                    let text = match (aa.writes(), b_reads) {
                        (true, true) => format!(
                            "{}'s {} was {} when its later {} {}",
                            t.name,
                            self.what(a),
                            self.where_at(a, eb),
                            self.what(b),
                            self.how(b)
                        ),
                        (true, false) => format!(
                            "{}'s {} reached L2 at cycle {}, before its earlier {}, which was {}",
                            t.name,
                            self.what(b),
                            self.cyc(eb),
                            self.what(a),
                            self.where_at(a, eb)
                        ),
                        (false, true) => format!(
                            "{}'s {} {}, before its earlier {} {}",
                            t.name,
                            self.what(b),
                            self.how(b),
                            self.what(a),
                            self.how(a)
                        ),
                        (false, false) => format!(
                            "{}'s {} reached L2 at cycle {}, before its earlier {} took its value (it {})",
                            t.name,
                            self.what(b),
                            self.cyc(eb),
                            self.what(a),
                            self.how(a)
                        ),
                    };
                    needed.push((label, text));
                }
            }
        }
        (facts, needed)
    }
}
