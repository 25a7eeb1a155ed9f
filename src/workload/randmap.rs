//! A random permutation of block indices without a bitmap: a full-period LCG over 2^k ≥ n,
//! scrambled by a bijection on k bits, rejecting values ≥ n. Each pass visits every block exactly
//! once (fio's random map) in O(1) memory; rejection costs under two steps per block on average.

#[derive(Debug, Clone)]
pub(crate) struct RandMap {
    n: u64,
    mask: u64,
    bits: u32,
    state: u64,
    inc: u64,
    /// Values handed out in the current pass.
    emitted: u64,
}

const LCG_MUL: u64 = 6_364_136_223_846_793_005; // ≡ 1 mod 4: full period mod 2^k (Hull–Dobell)

impl RandMap {
    pub(crate) fn new(n: u64, seed: u64) -> Self {
        assert!(n > 0, "a random map needs at least one block");
        let bits = 64 - (n - 1).leading_zeros();
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut m = RandMap {
            n,
            mask,
            bits,
            state: 0,
            inc: 1,
            emitted: 0,
        };
        m.reseed(seed);
        m
    }

    fn reseed(&mut self, seed: u64) {
        self.state = seed & self.mask;
        // Any odd increment gives a full period; vary it with the seed for different orders.
        self.inc = ((seed >> 17) | 1) & self.mask.max(1);
        self.emitted = 0;
    }

    /// Bijective mixing on `bits` bits: xorshift and odd multiplication are both invertible mod 2^k.
    #[inline]
    fn scramble(&self, mut x: u64) -> u64 {
        if self.bits < 2 {
            return x;
        }
        let s = (self.bits / 2).max(1);
        x ^= x >> s;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1) & self.mask;
        x ^= x >> s;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9 | 1) & self.mask;
        x ^= x >> s;
        x
    }

    /// Every block of the current pass was handed out: the next call starts a new pass.
    #[inline]
    pub(crate) fn pass_done(&self) -> bool {
        self.emitted == self.n
    }

    /// Next block index; after `n` calls a new pass starts with a fresh order.
    #[inline]
    pub(crate) fn next_block(&mut self) -> u64 {
        if self.pass_done() {
            let seed = self.state.wrapping_mul(LCG_MUL).wrapping_add(0x2545_F491);
            self.reseed(seed ^ (seed >> 29));
        }
        loop {
            self.state = self.state.wrapping_mul(LCG_MUL).wrapping_add(self.inc) & self.mask;
            let v = self.scramble(self.state);
            if v < self.n {
                self.emitted += 1;
                return v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_pass(n: u64, seed: u64) -> Vec<u64> {
        let mut m = RandMap::new(n, seed);
        (0..n).map(|_| m.next_block()).collect()
    }

    #[test]
    fn every_block_exactly_once_per_pass() {
        for &n in &[1u64, 2, 3, 7, 8, 9, 1000, 4097, 10_029] {
            let mut v = one_pass(n, 0x89);
            v.sort_unstable();
            assert_eq!(v, (0..n).collect::<Vec<_>>(), "n={n}");
        }
    }

    #[test]
    fn second_pass_is_also_a_permutation_in_another_order() {
        let n = 5000;
        let mut m = RandMap::new(n, 42);
        let first: Vec<u64> = (0..n).map(|_| m.next_block()).collect();
        let second: Vec<u64> = (0..n).map(|_| m.next_block()).collect();
        let mut s = second.clone();
        s.sort_unstable();
        assert_eq!(s, (0..n).collect::<Vec<_>>());
        assert_ne!(first, second);
    }

    #[test]
    fn order_looks_random_not_sequential() {
        let v = one_pass(10_000, 0x89);
        let ascending = v.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(ascending < 50, "{ascending} sequential steps");
        // Odd/even should not strictly alternate (the weakness of a bare LCG).
        let parity_flips = v.windows(2).filter(|w| (w[0] ^ w[1]) & 1 == 1).count();
        assert!((3000..7000).contains(&parity_flips), "{parity_flips}");
    }
}
