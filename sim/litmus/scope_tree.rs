//! herd's placement sections after the program: the *scope tree*, which says which threads share a
//! work-group and a device, and the *memory map*, which says which locations are work-group-local —
//! as the GPU tests of herdtools7 write them (`lib/GPU_PTXParser.mly`, `lib/scopeRules.mly`):
//!
//! ```text
//! scopeTree
//! (device (kernel (cta (warp P0)) (cta (warp P1) (warp P2))))
//! x: global, y: shared
//! ```
//!
//! The tree is one or more nodes `(LEVEL item ...)`, an item being a thread (`P0`, or herd's bare
//! `0`) or a node of a lower level. Levels, outermost first: `system`; `device` (`dev`, `gpu`);
//! `kernel` (`grid`: groups work-groups, no scope of its own); `cta` (`block`, `work_group`, `wg`,
//! `workgroup`); `warp` (`sub_group`, `sg`, `subgroup`); `thread` (`work_item`, `wi`). A level may be
//! skipped (`(device (cta P0) (cta P1))`). `scopes:` introduces the tree as well, and a bare
//! `(device ...)` after the program is read as one. The memory map lists `NAME: SPACE` entries,
//! separated by `,` or `;`, SPACE being `global`, `shared` or `local` (the last two:
//! work-group-local). Both sections may stand before or after the final condition (herd reads them
//! before it; litmus7's logs print them after).
//!
//! What a tree means here: threads under one `cta` node share a work-group; threads under no `cta`
//! node each get a work-group of their own (they share none, as herd's `same-cta` relation says);
//! `device` nodes number the devices in order (device 0 without one). A `warp` node groups threads
//! of one work-group (a `warp` outside any `cta` is a work-group of its own): neither PTX nor OpenCL
//! gives warps a scope, so the models' allowed outcomes do not depend on it, and the machine runs each
//! litmus thread in its own warp of that work-group — threads a tree puts in one warp are *not* run in
//! lockstep lanes of one warp (not modelled; README "Litmus tests"). A thread named in the tree
//! must not have a placement in its header too, and each thread must appear exactly once.

use super::lex::{Cursor, Tok};
use super::test::{Location, Thread};
use super::LitmusError;
use crate::ir::{Space, SrcLoc};

/// Deepest tree accepted (the levels are six; deeper input is refused, not recursed into).
const MAX_DEPTH: usize = 8;

/// Scope levels, outermost first (the order they nest in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    System,
    Device,
    Kernel,
    Cta,
    Warp,
    Thread,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::System => "system",
            Level::Device => "device",
            Level::Kernel => "kernel",
            Level::Cta => "cta",
            Level::Warp => "warp",
            Level::Thread => "thread",
        }
    }

    fn parse(name: &str) -> Option<Level> {
        Some(match name {
            "system" | "sys" => Level::System,
            "device" | "dev" | "gpu" => Level::Device,
            "kernel" | "grid" => Level::Kernel,
            "cta" | "block" | "work_group" | "wg" | "workgroup" => Level::Cta,
            "warp" | "sub_group" | "sg" | "subgroup" => Level::Warp,
            "thread" | "work_item" | "wi" => Level::Thread,
            _ => return None,
        })
    }
}

/// A node of the tree.
#[derive(Debug)]
struct Node {
    level: Level,
    items: Vec<Item>,
}

#[derive(Debug)]
enum Item {
    Thread(String, SrcLoc),
    Node(Node),
}

/// The sections read so far.
#[derive(Debug, Default)]
pub struct Sections {
    tree: Option<(Vec<Node>, SrcLoc)>,
    spaces: Vec<(String, Space, SrcLoc)>,
}

/// Whether the cursor is at a placement section: `scopeTree`, `scopes:` or a node `(`.
pub fn at_section(c: &Cursor) -> bool {
    c.is_ident("scopeTree")
        || c.is_ident("ScopeTree")
        || (c.is_ident("scopes") && matches!(c.peek_at(1), Some(Tok::Punct(":"))))
        || c.is_punct("(")
}

/// Whether the cursor is at a memory-map entry (`x: global`).
pub fn at_space(c: &Cursor) -> bool {
    matches!(
        (c.peek(), c.peek_at(1), c.peek_at(2)),
        (Some(Tok::Ident(_)), Some(Tok::Punct(":")), Some(Tok::Ident(s)))
            if matches!(s.as_str(), "global" | "shared" | "local")
    )
}

impl Sections {
    /// Reads the sections at the cursor (none, a tree, a memory map, or both, in any order).
    pub fn parse(&mut self, c: &mut Cursor) -> Result<(), LitmusError> {
        loop {
            if at_section(c) {
                let at = c.loc();
                if self.tree.is_some() {
                    return Err(c.error_at(at, "a second scope tree (a test has one)"));
                }
                if !c.eat_ident("scopeTree") && !c.eat_ident("ScopeTree") && c.eat_ident("scopes") {
                    c.expect_punct(":")?;
                }
                let mut roots = node(c, 0)?;
                while c.is_punct("(") {
                    roots.extend(node(c, 0)?);
                }
                self.tree = Some((roots, at));
            } else if at_space(c) {
                while at_space(c) {
                    let (name, at) = c.ident("a location")?;
                    c.expect_punct(":")?;
                    let (space, _) = c.ident("global, shared or local")?;
                    let space = if space == "global" {
                        Space::Global
                    } else {
                        Space::Local
                    };
                    if self.spaces.iter().any(|(n, _, _)| *n == name) {
                        return Err(c.error_at(at, format!("the memory map names {name} twice")));
                    }
                    self.spaces.push((name, space, at));
                    if !c.eat_punct(",") {
                        c.eat_punct(";");
                    }
                }
            } else {
                return Ok(());
            }
        }
    }

    /// Places the threads as the tree says and gives the locations the memory map's spaces.
    pub fn apply(
        self,
        c: &Cursor,
        threads: &mut [Thread],
        locations: &mut [Location],
    ) -> Result<(), LitmusError> {
        for (name, space, at) in self.spaces {
            let Some(l) = locations.iter_mut().find(|l| l.name == name) else {
                return Err(c.error_at(at, format!("{name} is not a location of the test")));
            };
            if l.space_given && l.space != space {
                return Err(c.error_at(
                    at,
                    format!(
                        "location {name} is {} memory in the memory map but {} memory in the \
                         init block or an access",
                        space.name(),
                        l.space.name()
                    ),
                ));
            }
            l.space = space;
            l.space_given = true;
        }
        let Some((roots, at)) = self.tree else {
            return Ok(());
        };
        let mut place = Placer {
            c,
            placed: vec![None; threads.len()],
            threads,
            next_device: 0,
            next_cta: 0,
        };
        for root in &roots {
            place.node(root, None, None)?;
        }
        for (t, p) in place.threads.iter_mut().zip(place.placed) {
            let Some((device, cta)) = p else {
                return Err(c.error_at(
                    at,
                    format!("the scope tree does not place thread {}", t.name),
                ));
            };
            t.device = device;
            t.cta = cta;
        }
        Ok(())
    }
}

/// `(LEVEL item ...)`.
/// A thread in a tree: `P0`, herd's GPU_PTX `T0`, or a bare `0`.
fn thread_name(s: &str) -> bool {
    (s.starts_with('P') || s.starts_with('T')) && s.len() > 1 && s[1..].parse::<u32>().is_ok()
}

/// One node `(LEVEL item ...)`, or nodes in extra parentheses: `((LEVEL item ...))` (as some
/// catalogues write the root; herd's parser reads it) is the node itself, and a parenthesised list
/// of nodes without a level, `((cta P0) (cta P1))`, is those nodes, as if written without the
/// extra parentheses (a grouping, no scope of its own).
fn node(c: &mut Cursor, depth: usize) -> Result<Vec<Node>, LitmusError> {
    let loc = c.expect_punct("(")?;
    if depth >= MAX_DEPTH {
        return Err(c.error_at(loc, format!("a scope tree nested deeper than {MAX_DEPTH}")));
    }
    if c.is_punct("(") {
        let mut nodes = node(c, depth + 1)?;
        while c.is_punct("(") {
            nodes.extend(node(c, depth + 1)?);
        }
        c.expect_punct(")")?;
        return Ok(nodes);
    }
    let (name, nat) = c.ident("a scope level (device, kernel, cta, warp, thread)")?;
    Ok(vec![node_items(c, depth, name, nat)?])
}

/// The items of a node whose level is `name` (at `nat`), up to its `)`.
fn node_items(
    c: &mut Cursor,
    depth: usize,
    name: String,
    nat: SrcLoc,
) -> Result<Node, LitmusError> {
    let Some(level) = Level::parse(&name) else {
        return Err(c.error_at(
            nat,
            format!(
                "unknown scope level `{name}` (allowed, outermost first: system, device, kernel, \
                 cta or work_group, warp or sub_group, thread or work_item)"
            ),
        ));
    };
    let mut items = Vec::new();
    loop {
        match c.peek() {
            Some(Tok::Punct(")")) => {
                c.next();
                break;
            }
            Some(Tok::Punct("(")) => {
                let at = c.loc();
                for n in node(c, depth + 1)? {
                    if n.level <= level {
                        return Err(c.error_at(
                            at,
                            format!(
                                "a {} level inside a {} level: levels nest system > device > \
                                 kernel > cta > warp > thread",
                                n.level.name(),
                                level.name()
                            ),
                        ));
                    }
                    items.push(Item::Node(n));
                }
            }
            Some(Tok::Int(n)) => {
                let at = c.loc();
                let n = *n;
                c.next();
                items.push(Item::Thread(format!("P{n}"), at));
            }
            Some(Tok::Ident(s)) if thread_name(s) => {
                let (s, at) = c.ident("a thread")?;
                items.push(Item::Thread(format!("P{}", &s[1..]), at));
            }
            _ => return Err(c.error("a thread (`P0`), a nested level `(...)` or `)`")),
        }
    }
    Ok(Node { level, items })
}

/// Walks the tree, numbering devices and work-groups in order.
struct Placer<'a, 'c> {
    c: &'c Cursor<'a>,
    threads: &'c mut [Thread],
    /// Per thread: (device, work-group) once placed.
    placed: Vec<Option<(u32, u32)>>,
    next_device: u32,
    next_cta: u32,
}

impl Placer<'_, '_> {
    fn node(&mut self, n: &Node, device: Option<u32>, cta: Option<u32>) -> Result<(), LitmusError> {
        let (device, cta) = match n.level {
            Level::Device => {
                let d = self.next_device;
                self.next_device += 1;
                (Some(d), cta)
            }
            // A warp outside any work-group is a work-group of its own (a warp lies in one).
            Level::Cta | Level::Warp if cta.is_none() => {
                let g = self.next_cta;
                self.next_cta += 1;
                (device, Some(g))
            }
            _ => (device, cta),
        };
        for item in &n.items {
            match item {
                Item::Node(m) => self.node(m, device, cta)?,
                Item::Thread(name, at) => {
                    let Some(i) = self.threads.iter().position(|t| t.name == *name) else {
                        return Err(self
                            .c
                            .error_at(*at, format!("the test has no thread {name}")));
                    };
                    if self.placed[i].is_some() {
                        return Err(self
                            .c
                            .error_at(*at, format!("the scope tree places {name} twice")));
                    }
                    if self.threads[i].placed {
                        return Err(self.c.error_at(
                            *at,
                            format!("{name} is placed by its header (`@...`) and by the scope tree: give one"),
                        ));
                    }
                    let g = cta.unwrap_or_else(|| {
                        let g = self.next_cta;
                        self.next_cta += 1;
                        g
                    });
                    self.placed[i] = Some((device.unwrap_or(0), g));
                }
            }
        }
        Ok(())
    }
}
