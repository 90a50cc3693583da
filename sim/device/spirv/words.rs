//! SPIR-V words: a small module builder that writes the binary form directly (no intermediate
//! representation), with the sections in the order the specification requires, types and constants
//! declared once, and a function builder that tracks the current block for `OpPhi`.
//!
//! Models: the logical layout of a SPIR-V 1.5 module (SPIR-V spec §2.4). Does not model: anything the
//! translation does not emit (images, decorations beyond those it needs, debug line info).

use ::spirv as spv;
use spv::Op;
use std::collections::HashMap;

/// One instruction: word count and opcode, then the operands.
pub fn push_inst(out: &mut Vec<u32>, op: Op, operands: &[u32]) {
    out.push(((operands.len() as u32 + 1) << 16) | op as u32);
    out.extend_from_slice(operands);
}

/// A literal string: UTF-8, NUL-terminated, padded to whole words.
pub fn string_words(s: &str) -> Vec<u32> {
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    while bytes.len() % 4 != 0 {
        bytes.push(0);
    }
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The types the translation declares.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Void,
    Bool,
    /// Unsigned 32-bit (signedness lives in the opcodes, as in the IR).
    U32,
    /// Signed 32-bit, only as the result of `OpConvertFToS`.
    I32,
    U64,
    I64,
    F32,
    V3U32,
    Ptr(spv::StorageClass, u32),
    Func(u32, Vec<u32>),
}

/// A module under construction.
pub struct Module {
    next_id: u32,
    pub capabilities: Vec<spv::Capability>,
    pub glsl: u32,
    pub entry_interface: Vec<u32>,
    pub execution_modes: Vec<u32>,
    pub names: Vec<u32>,
    pub annotations: Vec<u32>,
    /// Types, constants and global variables, in declaration order.
    pub globals: Vec<u32>,
    pub functions: Vec<u32>,
    types: HashMap<Type, u32>,
    consts: HashMap<(u32, u64), u32>,
}

impl Default for Module {
    fn default() -> Self {
        Self::new()
    }
}

impl Module {
    pub fn new() -> Module {
        let mut m = Module {
            next_id: 1,
            capabilities: vec![spv::Capability::Shader, spv::Capability::VulkanMemoryModel],
            glsl: 0,
            entry_interface: Vec::new(),
            execution_modes: Vec::new(),
            names: Vec::new(),
            annotations: Vec::new(),
            globals: Vec::new(),
            functions: Vec::new(),
            types: HashMap::new(),
            consts: HashMap::new(),
        };
        m.glsl = m.id();
        m
    }

    pub fn id(&mut self) -> u32 {
        let i = self.next_id;
        self.next_id += 1;
        i
    }

    pub fn capability(&mut self, c: spv::Capability) {
        if !self.capabilities.contains(&c) {
            self.capabilities.push(c);
        }
    }

    pub fn name(&mut self, id: u32, name: &str) {
        let mut ops = vec![id];
        ops.extend(string_words(name));
        push_inst(&mut self.names, Op::Name, &ops);
    }

    pub fn decorate(&mut self, id: u32, d: spv::Decoration, extra: &[u32]) {
        let mut ops = vec![id, d as u32];
        ops.extend_from_slice(extra);
        push_inst(&mut self.annotations, Op::Decorate, &ops);
    }

    pub fn member_decorate(&mut self, id: u32, member: u32, d: spv::Decoration, extra: &[u32]) {
        let mut ops = vec![id, member, d as u32];
        ops.extend_from_slice(extra);
        push_inst(&mut self.annotations, Op::MemberDecorate, &ops);
    }

    /// The id of a type, declared on first use.
    pub fn ty(&mut self, t: Type) -> u32 {
        if let Some(&id) = self.types.get(&t) {
            return id;
        }
        let id = self.id();
        let (op, ops): (Op, Vec<u32>) = match &t {
            Type::Void => (Op::TypeVoid, vec![id]),
            Type::Bool => (Op::TypeBool, vec![id]),
            Type::U32 => (Op::TypeInt, vec![id, 32, 0]),
            Type::I32 => (Op::TypeInt, vec![id, 32, 1]),
            Type::U64 => (Op::TypeInt, vec![id, 64, 0]),
            Type::I64 => (Op::TypeInt, vec![id, 64, 1]),
            Type::F32 => (Op::TypeFloat, vec![id, 32]),
            Type::V3U32 => {
                let u = self.ty(Type::U32);
                (Op::TypeVector, vec![id, u, 3])
            }
            Type::Ptr(sc, inner) => (Op::TypePointer, vec![id, *sc as u32, *inner]),
            Type::Func(ret, params) => {
                let mut v = vec![id, *ret];
                v.extend_from_slice(params);
                (Op::TypeFunction, v)
            }
        };
        push_inst(&mut self.globals, op, &ops);
        self.types.insert(t, id);
        id
    }

    /// A type declared by the caller (arrays, structs: each needs its own decorations).
    pub fn raw_global(&mut self, op: Op, operands: &[u32]) {
        push_inst(&mut self.globals, op, operands);
    }

    pub fn u32_(&mut self) -> u32 {
        self.ty(Type::U32)
    }
    pub fn u64_(&mut self) -> u32 {
        self.ty(Type::U64)
    }
    pub fn bool_(&mut self) -> u32 {
        self.ty(Type::Bool)
    }
    pub fn f32_(&mut self) -> u32 {
        self.ty(Type::F32)
    }
    pub fn ptr(&mut self, sc: spv::StorageClass, inner: u32) -> u32 {
        self.ty(Type::Ptr(sc, inner))
    }

    /// A scalar constant of type `ty` (32- or 64-bit) holding `bits`.
    pub fn constant(&mut self, ty: u32, bits: u64) -> u32 {
        if let Some(&id) = self.consts.get(&(ty, bits)) {
            return id;
        }
        let id = self.id();
        let wide =
            self.types.get(&Type::U64) == Some(&ty) || self.types.get(&Type::I64) == Some(&ty);
        if wide {
            push_inst(
                &mut self.globals,
                Op::Constant,
                &[ty, id, bits as u32, (bits >> 32) as u32],
            );
        } else {
            push_inst(&mut self.globals, Op::Constant, &[ty, id, bits as u32]);
        }
        self.consts.insert((ty, bits), id);
        id
    }

    pub fn c32(&mut self, v: u32) -> u32 {
        let t = self.u32_();
        self.constant(t, v as u64)
    }
    pub fn c64(&mut self, v: u64) -> u32 {
        let t = self.u64_();
        self.constant(t, v)
    }
    pub fn cf32(&mut self, v: f32) -> u32 {
        let t = self.f32_();
        self.constant(t, v.to_bits() as u64)
    }
    pub fn cbool(&mut self, v: bool) -> u32 {
        let t = self.bool_();
        let key = (t, v as u64);
        if let Some(&id) = self.consts.get(&key) {
            return id;
        }
        let id = self.id();
        let op = if v {
            Op::ConstantTrue
        } else {
            Op::ConstantFalse
        };
        push_inst(&mut self.globals, op, &[t, id]);
        self.consts.insert(key, id);
        id
    }

    /// A global variable (listed in the entry point's interface, as SPIR-V 1.4+ requires).
    pub fn global_var(&mut self, sc: spv::StorageClass, pointee: u32, init: Option<u32>) -> u32 {
        let p = self.ptr(sc, pointee);
        let id = self.id();
        match init {
            Some(i) => push_inst(&mut self.globals, Op::Variable, &[p, id, sc as u32, i]),
            None => push_inst(&mut self.globals, Op::Variable, &[p, id, sc as u32]),
        }
        self.entry_interface.push(id);
        id
    }

    /// The finished binary: header, then the sections in the required order.
    pub fn finish(mut self, entry: u32, local_size: [u32; 3]) -> Vec<u32> {
        let mut w = vec![
            spv::MAGIC_NUMBER,
            0x0001_0500, // SPIR-V 1.5: the Vulkan memory model is core.
            0,
            0, // bound, patched below
            0,
        ];
        for c in &self.capabilities {
            push_inst(&mut w, Op::Capability, &[*c as u32]);
        }
        let mut ops = vec![self.glsl];
        ops.extend(string_words("GLSL.std.450"));
        push_inst(&mut w, Op::ExtInstImport, &ops);
        push_inst(
            &mut w,
            Op::MemoryModel,
            &[
                spv::AddressingModel::Logical as u32,
                spv::MemoryModel::Vulkan as u32,
            ],
        );
        let mut ops = vec![spv::ExecutionModel::GLCompute as u32, entry];
        ops.extend(string_words("main"));
        ops.extend_from_slice(&self.entry_interface);
        push_inst(&mut w, Op::EntryPoint, &ops);
        push_inst(
            &mut w,
            Op::ExecutionMode,
            &[
                entry,
                spv::ExecutionMode::LocalSize as u32,
                local_size[0],
                local_size[1],
                local_size[2],
            ],
        );
        w.append(&mut self.execution_modes);
        w.append(&mut self.names);
        w.append(&mut self.annotations);
        w.append(&mut self.globals);
        w.append(&mut self.functions);
        w[3] = self.next_id;
        w
    }
}

/// A function under construction: its `OpVariable`s (which must open the first block) apart from the
/// body, and the label of the block being written (for `OpPhi`).
pub struct Func {
    pub id: u32,
    header: Vec<u32>,
    vars: Vec<u32>,
    pub body: Vec<u32>,
    pub cur: u32,
}

impl Func {
    /// Opens a function with `params` of the given types; returns it and the parameter ids.
    pub fn new(m: &mut Module, ret: u32, params: &[u32]) -> (Func, Vec<u32>) {
        let fty = m.ty(Type::Func(ret, params.to_vec()));
        let id = m.id();
        let mut header = Vec::new();
        push_inst(
            &mut header,
            Op::Function,
            &[ret, id, spv::FunctionControl::NONE.bits(), fty],
        );
        let ids: Vec<u32> = params
            .iter()
            .map(|&t| {
                let p = m.id();
                push_inst(&mut header, Op::FunctionParameter, &[t, p]);
                p
            })
            .collect();
        let entry = m.id();
        push_inst(&mut header, Op::Label, &[entry]);
        (
            Func {
                id,
                header,
                vars: Vec::new(),
                body: Vec::new(),
                cur: entry,
            },
            ids,
        )
    }

    /// A function-local variable (declared in the entry block).
    pub fn var(&mut self, m: &mut Module, pointee: u32) -> u32 {
        let p = m.ptr(spv::StorageClass::Function, pointee);
        let id = m.id();
        push_inst(
            &mut self.vars,
            Op::Variable,
            &[p, id, spv::StorageClass::Function as u32],
        );
        id
    }

    /// An instruction with a result: returns its id.
    pub fn op(&mut self, m: &mut Module, ty: u32, op: Op, operands: &[u32]) -> u32 {
        let id = m.id();
        let mut v = Vec::with_capacity(operands.len() + 2);
        v.push(ty);
        v.push(id);
        v.extend_from_slice(operands);
        push_inst(&mut self.body, op, &v);
        id
    }

    /// An instruction without a result.
    pub fn emit(&mut self, op: Op, operands: &[u32]) {
        push_inst(&mut self.body, op, operands);
    }

    /// Starts block `label`.
    pub fn label(&mut self, label: u32) {
        push_inst(&mut self.body, Op::Label, &[label]);
        self.cur = label;
    }

    /// An extended instruction of GLSL.std.450.
    pub fn glsl(&mut self, m: &mut Module, ty: u32, inst: u32, args: &[u32]) -> u32 {
        let mut v = vec![m.glsl, inst];
        v.extend_from_slice(args);
        self.op(m, ty, Op::ExtInst, &v)
    }

    /// Closes the function (the caller has written the last terminator) and adds it to the module.
    pub fn finish(mut self, m: &mut Module) {
        m.functions.append(&mut self.header);
        m.functions.append(&mut self.vars);
        m.functions.append(&mut self.body);
        push_inst(&mut m.functions, Op::FunctionEnd, &[]);
    }
}
