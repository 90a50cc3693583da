//! Device memory as the coherence point sees it: the values of every global buffer.
//!
//! Models: one flat backing store for all buffers; buffers placed at 256-byte-aligned addresses from
//! [`GLOBAL_BASE`]; bounds checks against the buffers. The L2 slices read and write these values at the
//! moment they serve a request, so a load returns what the serving structure holds at that cycle.
//!
//! Why DRAM keeps no separate copy: every device address is owned by exactly one L2 slice, and DRAM is
//! reached only through that slice (write-back, write-allocate). The DRAM copy of a line can therefore
//! never be observed while it differs from the slice's; DRAM is modelled for timing only (`dram.rs`).
//! Structures that *can* hold different values — store buffers, L1 lines, in-flight messages — keep
//! their own bytes.
//!
//! A replayed Accel-Sim trace has no values and addresses anywhere in a 47-bit space: its memory is
//! [`GlobalMemory::timing_only`], which holds nothing, reads zero, ignores writes and bounds nothing.

use crate::workload::Buffer;

/// Byte address of the first buffer.
pub const GLOBAL_BASE: u64 = 0x1000_0000;

/// Where a buffer lives.
#[derive(Debug, Clone)]
pub struct Placed {
    pub name: String,
    pub base: u64,
    pub bytes: u64,
    pub elem_bytes: u32,
}

/// What backs device memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backing {
    /// The bytes of every placed buffer, from [`GLOBAL_BASE`].
    Values(Vec<u8>),
    /// No values (trace replay): reads return zero, writes are dropped, every address is in bounds.
    TimingOnly,
}

pub struct GlobalMemory {
    pub backing: Backing,
    pub placed: Vec<Placed>,
    /// Number of value-changing writes (progress for the watchdog).
    pub changes: u64,
}

impl GlobalMemory {
    /// Places the buffers and writes their initial contents; `extra` appends an unnamed scratch region.
    pub fn new(buffers: &[Buffer], extra: u64) -> GlobalMemory {
        let mut placed = Vec::new();
        let mut next = GLOBAL_BASE;
        for b in buffers {
            let bytes = b.bytes().max(1);
            placed.push(Placed {
                name: b.name.clone(),
                base: next,
                bytes,
                elem_bytes: b.elem.width().bytes(),
            });
            next = (next + bytes).div_ceil(256) * 256;
        }
        if extra > 0 {
            placed.push(Placed {
                name: "<scratch>".into(),
                base: next,
                bytes: extra,
                elem_bytes: 4,
            });
            next = (next + extra).div_ceil(256) * 256;
        }
        let mut data = vec![0u8; (next - GLOBAL_BASE) as usize + 256];
        for (b, p) in buffers.iter().zip(&placed) {
            let eb = p.elem_bytes as usize;
            for i in 0..b.len {
                let v = b.initial(i);
                let off = (p.base - GLOBAL_BASE) as usize + i as usize * eb;
                data[off..off + eb].copy_from_slice(&v.to_le_bytes()[..eb]);
            }
        }
        GlobalMemory {
            backing: Backing::Values(data),
            placed,
            changes: 0,
        }
    }

    /// Memory of a trace replay: no buffers, no values.
    pub fn timing_only() -> GlobalMemory {
        GlobalMemory {
            backing: Backing::TimingOnly,
            placed: Vec::new(),
            changes: 0,
        }
    }

    /// Whether loads return values (false for a trace replay).
    pub fn has_values(&self) -> bool {
        matches!(self.backing, Backing::Values(_))
    }

    /// Bytes of the value store (0 without values).
    pub fn len(&self) -> u64 {
        match &self.backing {
            Backing::Values(d) => d.len() as u64,
            Backing::TimingOnly => 0,
        }
    }

    pub fn base_of(&self, name: &str) -> Option<u64> {
        self.placed.iter().find(|p| p.name == name).map(|p| p.base)
    }

    /// Whether `[addr, addr+len)` lies inside one buffer.
    pub fn in_bounds(&self, addr: u64, len: u64) -> bool {
        if !self.has_values() {
            return true;
        }
        // Buffers are sorted by base.
        let i = self.placed.partition_point(|p| p.base <= addr);
        i > 0 && {
            let p = &self.placed[i - 1];
            addr + len <= p.base + p.bytes
        }
    }

    #[inline]
    fn off(addr: u64) -> usize {
        (addr - GLOBAL_BASE) as usize
    }

    pub fn read(&self, addr: u64, len: u32) -> u64 {
        let Backing::Values(data) = &self.backing else {
            return 0;
        };
        let o = Self::off(addr);
        let mut b = [0u8; 8];
        b[..len as usize].copy_from_slice(&data[o..o + len as usize]);
        u64::from_le_bytes(b)
    }

    pub fn write(&mut self, addr: u64, len: u32, v: u64) {
        let Backing::Values(data) = &mut self.backing else {
            return;
        };
        let o = Self::off(addr);
        let bytes = &v.to_le_bytes()[..len as usize];
        if &data[o..o + len as usize] != bytes {
            self.changes += 1;
            data[o..o + len as usize].copy_from_slice(bytes);
        }
    }

    /// Copies a line's bytes (zero outside the store).
    pub fn read_line(&self, line_addr: u64, line_bytes: u32, out: &mut [u8]) {
        let n = line_bytes as usize;
        let Backing::Values(data) = &self.backing else {
            out[..n].fill(0);
            return;
        };
        let o = Self::off(line_addr);
        let end = (o + n).min(data.len());
        out[..end - o].copy_from_slice(&data[o..end]);
        out[end - o..n].fill(0);
    }

    /// Writes the bytes selected by `mask` (bit i = byte i of the line).
    pub fn write_masked(&mut self, line_addr: u64, bytes: &[u8], mask: u128) {
        let Backing::Values(data) = &mut self.backing else {
            return;
        };
        let o = Self::off(line_addr);
        let mut m = mask;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            if o + i < data.len() && data[o + i] != bytes[i] {
                data[o + i] = bytes[i];
                self.changes += 1;
            }
        }
    }

    /// Final contents of buffer `idx` as raw element values.
    pub fn buffer_values(&self, b: &Buffer, idx: usize) -> Vec<u64> {
        let p = &self.placed[idx];
        (0..b.len)
            .map(|i| self.read(p.base + i * p.elem_bytes as u64, p.elem_bytes))
            .collect()
    }
}

/// Byte mask of `len` bytes at offset `off` within a line.
#[inline]
pub fn byte_mask(off: u32, len: u32) -> u128 {
    let m = if len >= 128 {
        u128::MAX
    } else {
        (1u128 << len) - 1
    };
    m << off
}
