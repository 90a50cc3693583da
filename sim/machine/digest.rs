//! Digests of memory contents: the XOR of a hash of each aligned 8-byte word's address and value,
//! relative to the initial contents, kept up to date on every write that changes a value, so that
//! the watchdog (`watchdog.rs`) samples global and local memory without scanning it. A leaf: device
//! memory (`memory.rs`), shared memory (`sm/shared.rs`) and the watchdog use it.
//!
//! Not a cryptographic hash: two different contents may share a digest (with probability about
//! 2^-64 per pair), which at worst makes the watchdog take a state for one seen before.

/// A 64-bit mixer (SplitMix64's finaliser).
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The contribution of the aligned 8-byte word at `addr` holding `v` to a memory digest: the digest
/// of a memory is the XOR of its words' hashes relative to its initial contents, so a write changes
/// it by `word_hash(a, old) ^ word_hash(a, new)` for each word that changed (words, not bytes: a
/// line written at the L2 costs at most 16 pairs of hashes, and only where a value changed).
#[inline]
pub fn word_hash(addr: u64, v: u64) -> u64 {
    mix(v ^ mix(addr ^ 0x9e37_79b9_7f4a_7c15))
}

/// The XOR of [`word_hash`] over the aligned words holding addresses `addr..addr + len`, whose
/// bytes are `data[at..]` (a word's bytes lie together in `data`; bytes outside `data` read as 0).
#[inline]
pub fn words_hash(data: &[u8], at: usize, addr: u64, len: usize) -> u64 {
    let mut h = 0;
    let mut w = addr & !7;
    // Up to the address space's end at most (then the word after the last is not computed).
    let end = addr.saturating_add(len as u64);
    while w < end {
        // Index of address w in `data`; a word wholly inside it is read at once.
        let lo = (at as u64).wrapping_add(w).wrapping_sub(addr) as usize;
        if let Some(b) = data
            .get(lo..lo.wrapping_add(8))
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
        {
            h ^= word_hash(w, u64::from_le_bytes(b));
        } else {
            let mut b = [0u8; 8];
            for (i, x) in b.iter_mut().enumerate() {
                // Index of address w + i in `data`.
                if let Some(&v) = data.get(lo.wrapping_add(i)) {
                    *x = v;
                }
            }
            h ^= word_hash(w, u64::from_le_bytes(b));
        }
        let Some(next) = w.checked_add(8) else {
            break;
        };
        w = next;
    }
    h
}

/// Writes `new` at `data[at..]` (the bytes of addresses `addr..`), updating `digest` when a byte
/// changes; returns how many bytes changed.
#[inline]
pub fn write_tracked(data: &mut [u8], at: usize, addr: u64, new: &[u8], digest: &mut u64) -> u64 {
    let old = &data[at..at + new.len()];
    let changed = old.iter().zip(new).filter(|(a, b)| a != b).count() as u64;
    if changed > 0 {
        let before = words_hash(data, at, addr, new.len());
        data[at..at + new.len()].copy_from_slice(new);
        *digest ^= before ^ words_hash(data, at, addr, new.len());
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_digest_depends_on_the_contents_only() {
        let mut a = vec![0u8; 16];
        let mut da = 0;
        write_tracked(&mut a, 0, 100, &[1, 2, 3], &mut da);
        write_tracked(&mut a, 1, 101, &[7], &mut da);
        let mut b = vec![0u8; 16];
        let mut db = 0;
        write_tracked(&mut b, 0, 100, &[1, 7, 3], &mut db);
        assert_eq!(da, db, "same bytes, same digest, whatever the writes");
        assert_eq!(write_tracked(&mut b, 0, 100, &[1, 7], &mut db), 0);
        write_tracked(&mut b, 0, 100, &[0, 0, 0], &mut db);
        assert_eq!(db, 0, "back to the initial contents");
        write_tracked(&mut a, 3, 103, &[3], &mut da);
        assert_ne!(da, 0);
    }

    #[test]
    fn a_word_hash_reads_whole_words_as_byte_by_byte() {
        // The byte-by-byte definition: bytes of `data` where they exist, 0 elsewhere (in 128-bit
        // arithmetic: the address space's last word too).
        let slow = |data: &[u8], at: usize, addr: u64, len: usize| {
            let mut h = 0;
            let mut w = (addr & !7) as u128;
            while w < addr as u128 + len as u128 {
                let b: Vec<u8> = (0..8)
                    .map(|i| {
                        let idx = (at as u128 + w + i).wrapping_sub(addr as u128) as usize;
                        data.get(idx).copied().unwrap_or(0)
                    })
                    .collect();
                h ^= word_hash(w as u64, u64::from_le_bytes(b.try_into().unwrap()));
                w += 8;
            }
            h
        };
        let data: Vec<u8> = (0..40u8).map(|x| x.wrapping_mul(37) ^ 0x5a).collect();
        for at in 0..data.len() {
            for len in 1..=data.len() - at {
                // The last: a range that ends where the address space does.
                let last = u64::MAX - len as u64 + 1;
                for addr in [0x1000 + at as u64, 0x1003 + at as u64, 0x2005, 7, last] {
                    assert_eq!(
                        words_hash(&data, at, addr, len),
                        slow(&data, at, addr, len),
                        "at {at} len {len} addr {addr:#x}"
                    );
                }
            }
        }
    }
}
