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
//!
//! Sharding for parallel simulation ([`GlobalMemory::split`]): because each line is owned by one
//! slice, the values split into one shard per memory partition, each holding only its slices' lines;
//! the SMs keep a bounds-only view (they never read values from device memory, only through their
//! L1). [`GlobalMemory::join`] puts the shards back together for the end-of-run checks.

use super::digest::{words_hash, write_tracked};
use crate::workload::Buffer;
use std::sync::Arc;

/// Byte address of the first buffer.
pub const GLOBAL_BASE: u64 = 0x1000_0000;

/// The name of the stress warps' scratch region among the placed buffers.
pub const SCRATCH: &str = "<scratch>";

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
    /// The lines one memory partition owns, packed in line order: line `i` (from [`GLOBAL_BASE`]) of
    /// this partition is at `map.slot[i] * map.line_bytes`.
    Shard { data: Vec<u8>, map: Arc<ShardMap> },
    /// An SM's view: the buffers' bounds, no values (an SM reads values only through its L1).
    BoundsOnly,
    /// No values (trace replay): reads return zero, writes are dropped, every address is in bounds.
    TimingOnly,
}

/// Which partition owns each line, and where in its shard the line is.
#[derive(Debug, PartialEq, Eq)]
pub struct ShardMap {
    pub line_bytes: u32,
    pub owner: Vec<u16>,
    pub slot: Vec<u32>,
}

pub struct GlobalMemory {
    pub backing: Backing,
    pub placed: Vec<Placed>,
    /// Number of value-changing writes.
    pub changes: u64,
    /// Digest of the values for the watchdog (`watchdog.rs`): XOR of the hashes of the bytes that
    /// differ from the initial contents, kept up to date by every write.
    pub digest: u64,
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
                name: SCRATCH.into(),
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
            digest: 0,
        }
    }

    /// Memory of a trace replay: no buffers, no values.
    pub fn timing_only() -> GlobalMemory {
        GlobalMemory {
            backing: Backing::TimingOnly,
            placed: Vec::new(),
            changes: 0,
            digest: 0,
        }
    }

    /// Whether loads return values (false for a trace replay).
    pub fn has_values(&self) -> bool {
        !matches!(self.backing, Backing::TimingOnly)
    }

    /// Splits whole-memory values into one shard per partition (`owner(line)` names a line's) and a
    /// bounds-only view. Timing-only memory splits into timing-only parts.
    pub fn split(
        self,
        line_bytes: u32,
        parts: usize,
        owner: impl Fn(u64) -> usize,
    ) -> (GlobalMemory, Vec<GlobalMemory>) {
        let part = |backing| GlobalMemory {
            backing,
            placed: self.placed.clone(),
            changes: 0,
            digest: 0,
        };
        let Backing::Values(data) = &self.backing else {
            let b = self.backing.clone();
            return (
                part(b.clone()),
                (0..parts).map(|_| part(b.clone())).collect(),
            );
        };
        let lb = line_bytes as usize;
        let n = data.len() / lb;
        let mut shards: Vec<Vec<u8>> = vec![Vec::new(); parts];
        let mut map = ShardMap {
            line_bytes,
            owner: Vec::with_capacity(n),
            slot: Vec::with_capacity(n),
        };
        for (i, line) in data.chunks_exact(lb).enumerate() {
            let p = owner(GLOBAL_BASE + (i * lb) as u64);
            map.owner.push(p as u16);
            map.slot.push((shards[p].len() / lb) as u32);
            shards[p].extend_from_slice(line);
        }
        let map = Arc::new(map);
        let shards = shards
            .into_iter()
            .map(|data| {
                part(Backing::Shard {
                    data,
                    map: map.clone(),
                })
            })
            .collect();
        (part(Backing::BoundsOnly), shards)
    }

    /// The whole memory again from the shards [`GlobalMemory::split`] made (other backings: the
    /// first part as it is).
    pub fn join(shards: &[GlobalMemory]) -> GlobalMemory {
        let placed = shards.first().map(|s| s.placed.clone()).unwrap_or_default();
        let changes = shards.iter().map(|s| s.changes).sum();
        let digest = shards.iter().fold(0, |d, s| d ^ s.digest);
        let backing = match shards.first().map(|s| &s.backing) {
            Some(Backing::Shard { map, .. }) => {
                let lb = map.line_bytes as usize;
                let mut data = vec![0u8; map.owner.len() * lb];
                for (i, (&o, &slot)) in map.owner.iter().zip(&map.slot).enumerate() {
                    if let Backing::Shard { data: d, .. } = &shards[o as usize].backing {
                        let at = slot as usize * lb;
                        data[i * lb..(i + 1) * lb].copy_from_slice(&d[at..at + lb]);
                    }
                }
                Backing::Values(data)
            }
            Some(b) => b.clone(),
            None => Backing::TimingOnly,
        };
        GlobalMemory {
            backing,
            placed,
            changes,
            digest,
        }
    }

    /// The bytes at `addr` (`len` of them, within one line) and where they are, if values are held.
    fn bytes_at(backing: &mut Backing, addr: u64) -> Option<(&mut Vec<u8>, usize)> {
        let o = Self::off(addr);
        match backing {
            Backing::Values(d) => Some((d, o)),
            Backing::Shard { data, map } => {
                let lb = map.line_bytes as usize;
                Some((data, map.slot[o / lb] as usize * lb + o % lb))
            }
            Backing::BoundsOnly => unreachable!("an SM reads device memory only through its L1"),
            Backing::TimingOnly => None,
        }
    }

    fn bytes_ref(&self, addr: u64) -> Option<(&Vec<u8>, usize)> {
        let o = Self::off(addr);
        match &self.backing {
            Backing::Values(d) => Some((d, o)),
            Backing::Shard { data, map } => {
                let lb = map.line_bytes as usize;
                Some((data, map.slot[o / lb] as usize * lb + o % lb))
            }
            Backing::BoundsOnly => unreachable!("an SM reads device memory only through its L1"),
            Backing::TimingOnly => None,
        }
    }

    /// The bytes of whole-memory values from [`GLOBAL_BASE`] (empty for other backings).
    pub fn into_values(self) -> Vec<u8> {
        match self.backing {
            Backing::Values(d) => d,
            _ => Vec::new(),
        }
    }

    /// Bytes of the value store (0 without values).
    pub fn len(&self) -> u64 {
        match &self.backing {
            Backing::Values(d) | Backing::Shard { data: d, .. } => d.len() as u64,
            Backing::BoundsOnly | Backing::TimingOnly => 0,
        }
    }

    pub fn base_of(&self, name: &str) -> Option<u64> {
        self.placed.iter().find(|p| p.name == name).map(|p| p.base)
    }

    /// Whether `[addr, addr+len)` lies inside one buffer.
    pub fn in_bounds(&self, addr: u64, len: u64) -> bool {
        if matches!(self.backing, Backing::TimingOnly) {
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
        let Some((data, o)) = self.bytes_ref(addr) else {
            return 0;
        };
        let mut b = [0u8; 8];
        b[..len as usize].copy_from_slice(&data[o..o + len as usize]);
        u64::from_le_bytes(b)
    }

    pub fn write(&mut self, addr: u64, len: u32, v: u64) {
        let Some((data, o)) = Self::bytes_at(&mut self.backing, addr) else {
            return;
        };
        let bytes = &v.to_le_bytes()[..len as usize];
        if write_tracked(data, o, addr, bytes, &mut self.digest) > 0 {
            self.changes += 1;
        }
    }

    /// Copies a line's bytes (zero outside the store).
    pub fn read_line(&self, line_addr: u64, line_bytes: u32, out: &mut [u8]) {
        let n = line_bytes as usize;
        let Some((data, o)) = self.bytes_ref(line_addr) else {
            out[..n].fill(0);
            return;
        };
        let end = (o + n).min(data.len());
        out[..end - o].copy_from_slice(&data[o..end]);
        out[end - o..n].fill(0);
    }

    /// Writes the bytes selected by `mask` (bit i = byte i of the line).
    pub fn write_masked(&mut self, line_addr: u64, bytes: &[u8], mask: u128) {
        let Some((data, o)) = Self::bytes_at(&mut self.backing, line_addr) else {
            return;
        };
        let mut changes = 0;
        // The bytes that change, then the digest over the words holding them.
        let mut changed = 0u128;
        let mut m = mask;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            if o + i < data.len() && data[o + i] != bytes[i] {
                changed |= 1 << i;
                changes += 1;
            }
        }
        if changed == 0 {
            return;
        }
        let span = 128 - changed.leading_zeros() as usize;
        let before = words_hash(data, o, line_addr, span);
        let mut m = changed;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            data[o + i] = bytes[i];
        }
        self.digest ^= before ^ words_hash(data, o, line_addr, span);
        self.changes += changes;
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
