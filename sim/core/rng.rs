//! The one seeded random source of a run (SplitMix64: tiny, fast, well distributed), passed down
//! explicitly. Sub-streams are derived by hashing a stream id into the seed so that parallel runs draw
//! the same numbers as serial ones.

#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    #[inline]
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// A new independent stream for `(seed, stream)`.
    #[inline]
    pub fn stream(seed: u64, stream: u64) -> Self {
        SplitMix64 {
            state: Self::hash(seed ^ Self::hash(stream.wrapping_add(0x632B_E59B_D9B4_E019))),
        }
    }

    #[inline]
    pub fn hash(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..=max` (`max = 0` returns 0 without drawing).
    #[inline]
    pub fn upto(&mut self, max: u32) -> u32 {
        if max == 0 {
            0
        } else {
            (self.next_u64() % (max as u64 + 1)) as u32
        }
    }

    /// Uniform in `0..n`, `n > 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
