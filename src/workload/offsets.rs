//! Where the next I/O goes inside one file's I/O region: sequential, random map (each block once
//! per pass), uniform without a map, zipf, pareto, normal or zoned; with `percentage_random` some
//! I/Os of a random job continue after the previous one instead. Random offsets are multiples of
//! the direction's alignment (`blockalign`, by default its smallest block size); sequential ones
//! follow the previous I/O's end. Sequential and mapped generators say when an offset starts a
//! new pass over the region, the point where fio resets the file and drops its cache again; the
//! others never finish a pass.
//!
//! An I/O is placed in two steps: `place` picks the offset and says how much room is left after
//! it, the caller picks a length that fits (`bsize.rs`), and `commit` records it: the next
//! sequential offset, and with variable sizes under a random map the blocks it covers (the
//! length is cut where an already covered block starts, as fio's `mark_random_map` cuts it).

use super::dist::{rank_to_block, Gauss, Pareto, Zipf, Zoned};
use super::randmap::RandMap;
use super::rng::Rng;
use crate::model::{Distribution, JobSpec, RandomGenerator};

#[derive(Debug, Clone)]
enum Kind {
    Sequential,
    Map(RandMap),
    /// Uniform draws moved to the next block no I/O of this pass covered yet (fio's random map
    /// with I/Os of several sizes).
    Covered,
    Uniform,
    Zipf(Zipf, u64),
    Pareto(Pareto, u64),
    Normal(Gauss, u64),
    Zoned(Zoned),
}

/// Which blocks of a pass are already covered: fio's random map (`axmap`), needed only when I/Os
/// of several sizes can overlap (one bit per block of the region, allocated once).
#[derive(Debug, Clone)]
struct Covered {
    words: Box<[u64]>,
    /// One bit per word of `words`: set when that word is full, so that finding the next free
    /// block skips 4096 covered blocks per step (fio's axmap has such levels too).
    full_words: Box<[u64]>,
    n: u64,
    count: u64,
}

impl Covered {
    fn new(n: u64) -> Self {
        let nw = n.div_ceil(64) as usize;
        let mut c = Covered {
            words: vec![0u64; nw].into_boxed_slice(),
            full_words: vec![0u64; nw.div_ceil(64)].into_boxed_slice(),
            n,
            count: 0,
        };
        c.clear();
        c
    }
    #[inline]
    fn get(&self, b: u64) -> bool {
        self.words[(b / 64) as usize] & (1 << (b % 64)) != 0
    }
    /// Marks block `b` (not yet marked) as covered.
    #[inline]
    fn set(&mut self, b: u64) {
        let w = (b / 64) as usize;
        self.words[w] |= 1 << (b % 64);
        if self.words[w] == u64::MAX {
            self.full_words[w / 64] |= 1 << (w % 64);
        }
        self.count += 1;
    }
    /// Empties the map for a region of `n` blocks, at most the one it was made for.
    fn reset(&mut self, n: u64) {
        self.n = n.min(self.words.len() as u64 * 64);
        self.clear();
    }
    fn full(&self) -> bool {
        self.count >= self.n
    }
    /// Empties the map; the bits past `n` stay set so searches skip them.
    fn clear(&mut self) {
        let used = self.n.div_ceil(64) as usize;
        self.words[..used].fill(0);
        self.words[used..].fill(u64::MAX);
        self.count = 0;
        let tail = self.n % 64;
        if tail != 0 {
            self.words[used - 1] = !0u64 << tail;
        }
        self.full_words.fill(0);
        for (w, &word) in self.words.iter().enumerate() {
            if word == u64::MAX {
                self.full_words[w / 64] |= 1 << (w % 64);
            }
        }
    }
    /// The first word in `[from, to)` with a free block.
    #[inline]
    fn free_word(&self, from: usize, to: usize) -> Option<usize> {
        let mut i = from;
        while i < to {
            let s = i / 64;
            let open = !self.full_words[s] & (!0u64 << (i % 64));
            if open != 0 {
                let w = s * 64 + open.trailing_zeros() as usize;
                return (w < to).then_some(w);
            }
            i = (s + 1) * 64;
        }
        None
    }
    /// The first free block at or after `b`, wrapping to the start (fio's `axmap_next_free`).
    /// The map must not be full.
    #[inline]
    fn next_free(&self, b: u64) -> u64 {
        let first = (b / 64) as usize;
        let masked = self.words[first] | ((1u64 << (b % 64)) - 1);
        if masked != u64::MAX {
            return first as u64 * 64 + (!masked).trailing_zeros() as u64;
        }
        match self
            .free_word(first + 1, self.words.len())
            .or_else(|| self.free_word(0, first + 1))
        {
            Some(w) => w as u64 * 64 + (!self.words[w]).trailing_zeros() as u64,
            None => b,
        }
    }
}

/// Where one I/O goes (from `OffsetGen::place`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Absolute offset in the file.
    pub offset: u64,
    /// Bytes from the offset to the region's end: the longest I/O that fits.
    pub room: u64,
    /// The offset was drawn at random (fio's `is_random`, which `bs_is_seq_rand` uses).
    pub random: bool,
    /// The offset starts a second or later pass over the region.
    pub new_pass: bool,
}

/// Generates offsets in `[start, start + len)` for one direction.
#[derive(Debug, Clone)]
pub(crate) struct OffsetGen {
    start: u64,
    len: u64,
    /// Random offsets are multiples of this (fio's `ba`).
    unit: u64,
    /// Random offsets are `block * unit` for block in [0, nblocks).
    nblocks: u64,
    /// Smallest sequential I/O: the region is done when it no longer fits.
    seq_min: u64,
    /// Smallest random I/O: random offsets leave room for it.
    min_rand: u64,
    /// Next sequential offset, relative to `start` (fio's `last_pos`).
    pos: u64,
    kind: Kind,
    /// Percent of a random job's I/Os at random offsets (100 unless `percentage_random`).
    perc_random: u32,
    covered: Option<Covered>,
    /// Bytes skipped after each sequential I/O (`rw=read:N`; negative steps backwards).
    seq_add: i64,
    /// `rw_sequencer=identical`: I/Os between new random offsets repeat the last one.
    identical: bool,
    /// The last I/O's offset, relative to `start` (fio's `last_start`).
    last_start: u64,
    /// Bytes of the current pass (for generators that never finish one).
    pass_bytes: u64,
}

/// Parameters of one direction's generator, taken from the job.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GenParams<'a> {
    pub random: bool,
    /// Alignment of random offsets.
    pub unit: u64,
    /// Smallest random I/O (random offsets leave room for it).
    pub min_rand: u64,
    /// Smallest sequential I/O.
    pub min_seq: u64,
    /// Random I/Os may have several sizes (a random map then tracks covered blocks).
    pub varying: bool,
    /// A mixed job whose reads and writes share one random map per file, as fio's (the
    /// direction placing an I/O holds it: see `lend_map`).
    pub shared_map: bool,
    /// With `shared_map`, this direction's generator is made holding the map.
    pub owns_map: bool,
    pub map: bool,
    pub generator: RandomGenerator,
    pub dist: Distribution,
    pub zones: &'a [crate::model::Zone],
    pub center: Option<f64>,
    pub perc_random: u32,
    pub seq_add: i64,
    pub identical: bool,
}

impl<'a> GenParams<'a> {
    /// Direction `d` of `job`.
    pub(crate) fn of(job: &'a JobSpec, d: usize) -> Self {
        use crate::model::{DDIR_READ, DDIR_WRITE};
        // bs_is_seq_rand: the read sizes serve sequential I/Os, the write sizes random ones.
        let (seq_d, rand_d) = if job.blocks.is_seq_rand {
            (DDIR_READ, DDIR_WRITE)
        } else {
            (d, d)
        };
        let (min_rand, max_rand) = job.bs_range(rand_d);
        let unit = job.block_align(d);
        let shared_map = shares_random_map(job);
        GenParams {
            random: job.rw.random,
            unit,
            min_rand,
            min_seq: job.bs_range(seq_d).0,
            // Sizes other than the map's block (several, or bs_is_seq_rand's write size) can
            // overlap: the map then tracks covered blocks, as fio's does.
            varying: min_rand != max_rand || max_rand != unit,
            shared_map,
            owns_map: !shared_map || d == DDIR_READ,
            map: job.uses_random_map(),
            generator: job.blocks.generator,
            dist: job.random_distribution,
            zones: &job.blocks.zones[d],
            center: job.blocks.center,
            perc_random: job.blocks.percentage_random[d],
            seq_add: job.blocks.rw_seq_add,
            identical: job.blocks.rw_seq_identical,
        }
    }

    /// Fixed-size I/Os of `bs` bytes with a distribution (and a map unless `norandommap`).
    pub(crate) fn fixed(bs: u64, random: bool, norandommap: bool, dist: Distribution) -> Self {
        GenParams {
            random,
            unit: bs,
            min_rand: bs,
            min_seq: bs,
            varying: false,
            shared_map: false,
            owns_map: true,
            map: !norandommap && dist == Distribution::Random,
            generator: RandomGenerator::Tausworthe,
            dist,
            zones: &[],
            center: None,
            perc_random: 100,
            seq_add: 0,
            identical: false,
        }
    }
}

/// Bytes one pass of `rw=read:N` (or `:-N`) with `bs`-byte I/Os transfers over the region
/// `[start, start + len)`: fio's file is done when the next I/O no longer fits (`rw=read:512k`
/// with 1 MiB I/Os over 128 MiB reads 85 MiB), else the job issues until `len` bytes are done,
/// the last I/O possibly past it, as fio's do_io does. Walks the offsets (at most 16 M of them;
/// a longer pass is taken as never done).
pub(crate) fn holed_pass_bytes(start: u64, len: u64, bs: u64, seq_add: i64) -> u64 {
    let bs = bs.max(1);
    let whole = len.div_ceil(bs).saturating_mul(bs);
    if len < bs {
        return 0;
    }
    let p = GenParams {
        seq_add,
        ..GenParams::fixed(bs, false, true, Distribution::Random)
    };
    let mut g = OffsetGen::new(start, len, &p, 0);
    let mut rng = Rng::new(0);
    let mut bytes = 0;
    for i in 0..(1u64 << 24) {
        if bytes >= len {
            return bytes;
        }
        let at = g.place(&mut rng, true);
        if at.new_pass && i > 0 {
            return bytes;
        }
        bytes += g.commit(&at, bs);
    }
    whole
}

/// fio's `last_block`: random offsets are whole units that leave room for the smallest I/O.
fn random_blocks(len: u64, min_rand: u64, unit: u64) -> u64 {
    let usable = len.saturating_sub(min_rand.saturating_sub(unit));
    (usable / unit).max(1)
}

/// fio keeps one random map per file for reads and writes together: a mixed random job with a
/// map shares it when both directions cut the file into the same blocks (one alignment and
/// smallest size; otherwise each direction keeps its own).
pub(crate) fn shares_random_map(job: &JobSpec) -> bool {
    use crate::model::{RwKind, DDIR_READ, DDIR_WRITE};
    let rand_dir = |d: usize| {
        if job.blocks.is_seq_rand {
            DDIR_WRITE
        } else {
            d
        }
    };
    job.rw.kind == RwKind::ReadWrite
        && job.rw.random
        && job.uses_random_map()
        && job.block_align(DDIR_READ) == job.block_align(DDIR_WRITE)
        && job.bs_range(rand_dir(DDIR_READ)).0 == job.bs_range(rand_dir(DDIR_WRITE)).0
}

/// Hands the shared random map to `to` (the direction about to place an I/O) if `from` holds
/// it: a move of a pointer, no copy.
#[inline]
pub(crate) fn lend_map(from: &mut OffsetGen, to: &mut OffsetGen) {
    if to.covered.is_none() {
        to.covered = from.covered.take();
    }
}

impl OffsetGen {
    /// Moves the generator to `[start, start + len)` (the next strided zone, no longer than the
    /// first region): sequential I/O starts at its beginning and the random map afresh, as
    /// fio resets the file there. Allocates nothing.
    pub(crate) fn rebase(&mut self, start: u64, len: u64, seed: u64) {
        self.start = start;
        self.len = len;
        self.pos = 0;
        self.last_start = 0;
        self.nblocks = random_blocks(len, self.min_rand, self.unit);
        if let Kind::Map(m) = &mut self.kind {
            *m = RandMap::new(self.nblocks, seed);
        }
        if let Some(c) = &mut self.covered {
            c.reset(self.nblocks);
        }
    }

    /// `len` is the I/O region's length; it must hold at least one block.
    pub(crate) fn new(start: u64, len: u64, p: &GenParams<'_>, seed: u64) -> Self {
        let unit = p.unit.max(1);
        let nblocks = random_blocks(len, p.min_rand, unit);
        let off = |n: u64| p.center.map(|c| (c * n as f64) as u64).unwrap_or(0);
        let mut covered = None;
        let kind = if !p.random {
            Kind::Sequential
        } else {
            match p.dist {
                Distribution::Random if p.generator == RandomGenerator::Lfsr => {
                    Kind::Map(RandMap::new(nblocks, seed))
                }
                Distribution::Random if !p.map => Kind::Uniform,
                Distribution::Random if p.varying || p.shared_map => {
                    if p.owns_map {
                        covered = Some(Covered::new(nblocks));
                    }
                    Kind::Covered
                }
                Distribution::Random => Kind::Map(RandMap::new(nblocks, seed)),
                Distribution::Zipf(theta) => {
                    Kind::Zipf(Zipf::new(nblocks, theta), seed.wrapping_add(off(nblocks)))
                }
                Distribution::Pareto(h) => {
                    Kind::Pareto(Pareto::new(nblocks, h), seed.wrapping_add(off(nblocks)))
                }
                Distribution::Normal(dev) => {
                    Kind::Normal(Gauss::new(nblocks, dev), seed.wrapping_add(off(nblocks)))
                }
                Distribution::Zoned | Distribution::ZonedAbs if p.zones.is_empty() => Kind::Uniform,
                Distribution::Zoned | Distribution::ZonedAbs => Kind::Zoned(Zoned::new(
                    p.zones,
                    nblocks,
                    p.dist == Distribution::ZonedAbs,
                    unit,
                )),
            }
        };
        OffsetGen {
            start,
            len,
            unit,
            nblocks,
            seq_min: p.min_seq.max(1),
            min_rand: p.min_rand,
            pos: 0,
            kind,
            perc_random: p.perc_random,
            covered,
            seq_add: p.seq_add,
            identical: p.identical,
            last_start: 0,
            pass_bytes: 0,
        }
    }

    /// The current pass is over: the whole region was covered (sequential, mapped), or as
    /// many bytes as it holds were transferred (the others).
    pub(crate) fn pass_complete(&self) -> bool {
        match &self.kind {
            Kind::Sequential => self.pos > 0 && self.pos + self.seq_min > self.len,
            Kind::Map(m) => m.pass_done(),
            Kind::Covered => self.covered.as_ref().is_some_and(|c| c.full()),
            _ => self.pass_bytes + self.min_rand > self.len,
        }
    }

    /// Counts the bytes of a new pass from here (a file taken up again by sequential service).
    pub(crate) fn restart_pass_bytes(&mut self) {
        self.pass_bytes = 0;
    }

    /// Number of random blocks in the region: one pass of a mapped generator.
    #[cfg(test)]
    fn blocks(&self) -> u64 {
        self.nblocks
    }

    /// The next offset (never a new pass for the first). Sequential generators wrap to the
    /// start when the smallest I/O no longer fits; mapped ones start a new permutation once
    /// every block was handed out (or covered). `fresh` is false for the I/Os of
    /// `rw=randread:N` between new random offsets: they continue after the last I/O
    /// (`rw_sequencer=sequential`) or repeat its offset (`identical`).
    #[inline]
    pub(crate) fn place(&mut self, rng: &mut Rng, fresh: bool) -> Placement {
        let sequential = match self.kind {
            Kind::Sequential => true,
            _ if !fresh && self.identical => {
                return Placement {
                    offset: self.start + self.last_start,
                    room: self.len.saturating_sub(self.last_start),
                    random: false,
                    new_pass: false,
                };
            }
            // Past the region's end a random offset is drawn instead, as fio does.
            _ if !fresh => self.pos + self.seq_min <= self.len,
            _ => {
                self.perc_random < 100
                    && rng.below(100) >= self.perc_random as u64
                    && self.pos + self.seq_min <= self.len
            }
        };
        if sequential {
            let mut new_pass = false;
            if self.seq_add != 0 {
                let rel = match self.holed_offset() {
                    Some(rel) => rel,
                    None => {
                        // fio's file is done for this pass; the next one starts afresh.
                        self.pos = 0;
                        new_pass = true;
                        self.holed_offset().unwrap_or(0)
                    }
                };
                self.pos = rel;
                return Placement {
                    offset: self.start + rel,
                    room: self.len - rel,
                    random: false,
                    new_pass,
                };
            }
            if self.pos + self.seq_min > self.len && self.pos > 0 {
                self.pos = 0;
                new_pass = true;
            }
            return Placement {
                offset: self.start + self.pos,
                room: self.len - self.pos.min(self.len),
                random: false,
                new_pass,
            };
        }
        let mut new_pass = false;
        let n = self.nblocks;
        let block = match &mut self.kind {
            Kind::Sequential => 0,
            Kind::Map(m) => {
                new_pass = m.pass_done();
                m.next_block()
            }
            Kind::Covered => match &mut self.covered {
                Some(c) => {
                    if c.full() {
                        new_pass = true;
                        c.clear();
                    }
                    c.next_free(rng.below(n))
                }
                None => rng.below(n),
            },
            Kind::Uniform => rng.below(n),
            Kind::Zipf(z, salt) => rank_to_block(z.rank(rng), n, *salt),
            Kind::Pareto(p, salt) => rank_to_block(p.rank(rng), n, *salt),
            Kind::Normal(g, salt) => rank_to_block(g.rank(rng), n, *salt),
            Kind::Zoned(z) => z.block(rng),
        };
        let off = block * self.unit;
        Placement {
            offset: self.start + off,
            room: self.len.saturating_sub(off),
            random: true,
            new_pass,
        }
    }

    /// The next offset (relative) of `rw=read:N` / `rw=read:-N`, or None when fio's file is
    /// done for this pass: fio's get_next_seq_offset and get_next_offset, quirks included
    /// (its wrap compares a relative position with the file's absolute end, and a backward job
    /// with an offset starts from `io_size`). The file's end is taken as the region's end.
    fn holed_offset(&self) -> Option<u64> {
        let (fo, io) = (self.start, self.len);
        let real = fo + io;
        let add = self.seq_add as u64;
        let mut last = fo + self.pos;
        if last >= real {
            return None;
        }
        let end = if real > io { io } else { real };
        if last == fo && fo != 0 && self.seq_add < 0 {
            last = end;
        }
        let mut pos = last.wrapping_sub(fo);
        if pos != 0 {
            pos = pos.wrapping_add(add);
            if pos >= real {
                pos = if self.seq_add > 0 {
                    fo
                } else {
                    end.wrapping_add(add)
                };
            }
        }
        // The smallest I/O must fit in the file (fio's fill_io_u), and start in the region.
        (pos < io && pos.checked_add(self.seq_min).is_some_and(|e| e <= io)).then_some(pos)
    }

    /// Records an I/O of `len` bytes at `p` and returns its length: `len`, or shorter when it
    /// would run into blocks a larger random I/O of this pass already covered.
    #[inline]
    pub(crate) fn commit(&mut self, p: &Placement, len: u64) -> u64 {
        let mut len = len;
        if p.random {
            if let Some(c) = &mut self.covered {
                let first = (p.offset - self.start) / self.unit;
                let want = len.div_ceil(self.unit);
                let mut got = 0;
                while got < want && first + got < self.nblocks && !c.get(first + got) {
                    c.set(first + got);
                    got += 1;
                }
                len = len.min(got.max(1) * self.unit);
            }
        }
        self.last_start = p.offset - self.start;
        self.pos = self.last_start + len;
        if p.new_pass {
            self.pass_bytes = 0;
        }
        self.pass_bytes += len;
        len
    }

    /// Place and commit a fixed-size I/O: its offset and whether it starts a new pass.
    #[cfg(test)]
    pub(crate) fn next_fixed(&mut self, rng: &mut Rng, len: u64) -> (u64, bool) {
        let p = self.place(rng, true);
        self.commit(&p, len);
        (p.offset, p.new_pass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BsSplit, JobSpec, RwKind, RwMode};
    use crate::workload::bsize::BlockSizer;

    fn gen(
        start: u64,
        len: u64,
        bs: u64,
        random: bool,
        norandommap: bool,
        dist: Distribution,
        seed: u64,
    ) -> (OffsetGen, u64) {
        let p = GenParams::fixed(bs, random, norandommap, dist);
        (OffsetGen::new(start, len, &p, seed), bs)
    }

    #[test]
    fn sequential_walks_blocks_then_wraps() {
        let mut rng = Rng::new(1);
        let (mut g, bs) = gen(
            4096,
            4 * 2300 + 100,
            2300,
            false,
            false,
            Distribution::Random,
            0,
        );
        let v: Vec<(u64, bool)> = (0..9).map(|_| g.next_fixed(&mut rng, bs)).collect();
        let (b0, b1, b2, b3) = (4096, 4096 + 2300, 4096 + 4600, 4096 + 6900);
        // A new pass starts at the wrap, not at the very first offset.
        assert_eq!(
            v,
            vec![
                (b0, false),
                (b1, false),
                (b2, false),
                (b3, false),
                (b0, true),
                (b1, false),
                (b2, false),
                (b3, false),
                (b0, true)
            ]
        );
    }

    #[test]
    fn random_map_covers_region_once_aligned() {
        let mut rng = Rng::new(1);
        let (mut g, bs) = gen(0, 1 << 20, 4096, true, false, Distribution::Random, 0x89);
        let mut v: Vec<u64> = (0..g.blocks())
            .map(|_| g.next_fixed(&mut rng, bs).0)
            .collect();
        assert!(v.iter().all(|o| o % 4096 == 0 && *o + 4096 <= 1 << 20));
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 256);
    }

    #[test]
    fn random_map_flags_the_first_offset_of_each_later_pass() {
        let mut rng = Rng::new(1);
        let (mut g, bs) = gen(0, 1 << 20, 4096, true, false, Distribution::Random, 0x89);
        let starts: Vec<usize> = (0..256 * 3 + 10)
            .filter(|_| g.next_fixed(&mut rng, bs).1)
            .collect();
        assert_eq!(starts, vec![256, 512, 768]);
        // A single-block region: every offset after the first starts a pass.
        let (mut g, bs) = gen(0, 4096, 4096, true, false, Distribution::Random, 7);
        let flags: Vec<bool> = (0..3).map(|_| g.next_fixed(&mut rng, bs).1).collect();
        assert_eq!(flags, vec![false, true, true]);
    }

    #[test]
    fn generators_without_a_map_never_finish_a_pass() {
        // As in fio: norandommap, zipf and pareto never run out of blocks, so never reset.
        let mut rng = Rng::new(1);
        for dist in [
            Distribution::Random,
            Distribution::Zipf(1.2),
            Distribution::Pareto(0.9),
        ] {
            let (mut g, bs) = gen(0, 64 * 4096, 4096, true, true, dist, 5);
            assert!((0..1000).all(|_| !g.next_fixed(&mut rng, bs).1), "{dist:?}");
        }
    }

    #[test]
    fn norandommap_repeats_blocks() {
        let mut rng = Rng::new(1);
        let (mut g, bs) = gen(0, 1 << 20, 4096, true, true, Distribution::Random, 0x89);
        let mut v: Vec<u64> = (0..256).map(|_| g.next_fixed(&mut rng, bs).0).collect();
        v.sort_unstable();
        v.dedup();
        // Uniform draws of 256 from 256 leave about 1/e of the blocks untouched.
        assert!(v.len() < 220 && v.len() > 120, "{}", v.len());
    }

    fn random_job(len: u64) -> JobSpec {
        JobSpec {
            rw: RwMode {
                kind: RwKind::Read,
                random: true,
            },
            size: Some(crate::model::SizeSpec::Bytes(len)),
            ..JobSpec::default()
        }
    }

    /// Place, size and commit I/Os until `total` bytes: (offset, len, new_pass) each.
    fn run(j: &JobSpec, len: u64, total: u64) -> Vec<(u64, u64, bool)> {
        let mut g = OffsetGen::new(0, len, &GenParams::of(j, 0), 0x89);
        let mut s = BlockSizer::new(j, 0, 0x89);
        let mut rng = Rng::new(3);
        let mut out = Vec::new();
        let mut done = 0;
        while done < total {
            let p = g.place(&mut rng, true);
            let l = g.commit(&p, s.pick(p.room));
            assert!(l > 0 && p.offset + l <= len, "{p:?} {l}");
            out.push((p.offset, l, p.new_pass));
            done += l;
        }
        out
    }

    #[test]
    fn mixed_sizes_under_a_random_map_cover_each_block_once_per_pass() {
        // As fio's mark_random_map: an I/O that runs into a covered block is cut there, so a pass
        // moves exactly the region's bytes and every 4 KiB block is touched once.
        let mut j = random_job(1 << 20);
        j.blocks.split[0] = vec![
            BsSplit { bs: 4096, perc: 50 },
            BsSplit {
                bs: 16384,
                perc: 30,
            },
            BsSplit {
                bs: 65536,
                perc: 20,
            },
        ];
        let ios = run(&j, 1 << 20, 1 << 20);
        assert_eq!(ios.iter().map(|i| i.1).sum::<u64>(), 1 << 20);
        let mut blocks: Vec<u64> = ios
            .iter()
            .flat_map(|&(o, l, _)| (o / 4096)..((o + l) / 4096))
            .collect();
        blocks.sort_unstable();
        assert_eq!(blocks, (0..256).collect::<Vec<_>>());
        assert!(ios.iter().all(|i| !i.2));
        // Sizes were mixed, and the next I/O starts a new pass.
        assert!(ios.iter().any(|i| i.1 > 4096) && ios.iter().any(|i| i.1 == 4096));
        let more = run(&j, 1 << 20, (1 << 20) + 1);
        assert!(more.last().unwrap().2);
    }

    #[test]
    fn sequential_sizes_follow_each_other_and_fill_the_region() {
        let mut j = random_job(100_000);
        j.rw.random = false;
        j.blocks.range[0] = Some((4096, 16384));
        let ios = run(&j, 100_000, 97_000);
        let mut pos = 0;
        for &(o, l, _) in &ios {
            assert_eq!(o, pos);
            pos += l;
        }
        // 100000 / 4096 = 24 blocks: the pass ends at 98304 whatever the sizes were.
        let ios = run(&j, 100_000, 98_304);
        assert_eq!(ios.iter().map(|i| i.1).sum::<u64>(), 98_304);
        let next = run(&j, 100_000, 98_305);
        assert_eq!(next.last().map(|i| (i.0, i.2)), Some((0, true)));
    }

    #[test]
    fn lfsr_visits_every_block_exactly_once_per_pass() {
        let mut j = random_job(1 << 20);
        j.blocks.generator = RandomGenerator::Lfsr;
        let ios = run(&j, 1 << 20, 2 << 20);
        for pass in ios.chunks(256) {
            let mut v: Vec<u64> = pass.iter().map(|i| i.0 / 4096).collect();
            v.sort_unstable();
            assert_eq!(v, (0..256).collect::<Vec<_>>());
        }
        assert!(ios[256].2 && !ios[255].2);
    }

    #[test]
    fn blockalign_sets_random_offsets_apart_from_the_size() {
        let mut j = random_job(1 << 20);
        j.bs = [8192; 3];
        j.blocks.align = [512; 3];
        let ios = run(&j, 1 << 20, 4 << 20);
        assert!(ios.iter().all(|i| i.0 % 512 == 0 && i.0 + 8192 <= 1 << 20));
        assert!(ios.iter().any(|i| i.0 % 4096 != 0));
    }

    #[test]
    fn percentage_random_continues_after_the_previous_io() {
        let mut j = random_job(64 << 20);
        j.blocks.percentage_random = [25; 3];
        let ios = run(&j, 64 << 20, 4000 * 4096);
        let follow = ios.windows(2).filter(|w| w[1].0 == w[0].0 + w[0].1).count();
        let share = follow as f64 / (ios.len() - 1) as f64;
        assert!((share - 0.75).abs() < 0.03, "{share}");
    }

    #[test]
    fn zoned_offsets_fall_in_their_zones() {
        let mut j = random_job(1 << 20);
        j.random_distribution = Distribution::Zoned;
        j.blocks.zones[0] = vec![
            crate::model::Zone {
                access: 80,
                size: 10,
            },
            crate::model::Zone {
                access: 20,
                size: 90,
            },
        ];
        let ios = run(&j, 1 << 20, 10_000 * 4096);
        let hot = ios.iter().filter(|i| i.0 < (1 << 20) / 10).count() as f64 / ios.len() as f64;
        assert!((hot - 0.8).abs() < 0.02, "{hot}");
    }

    #[test]
    fn normal_hits_few_blocks_often() {
        // fio hashes the normal value onto a block, so the hot blocks are spread over the file;
        // what the distribution keeps is how concentrated the hits are.
        let mut j = random_job(64 << 20);
        j.random_distribution = Distribution::Normal(0.0);
        let ios = run(&j, 64 << 20, 100_000 * 4096);
        let mut counts = std::collections::HashMap::new();
        for i in &ios {
            *counts.entry(i.0).or_insert(0u32) += 1;
        }
        let mut c: Vec<u32> = counts.into_values().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        // 16384 blocks; a deviation of n/12 puts 68 % of the hits on about 1/6 of them.
        let top: u32 = c.iter().take(16384 / 6).sum();
        let share = top as f64 / ios.len() as f64;
        assert!(share > 0.6, "{share}");
    }

    #[test]
    fn a_holed_pass_ends_where_fios_file_is_done() {
        // read:512k, 1 MiB I/Os over 128 MiB: 85 fit before the next no longer does.
        assert_eq!(holed_pass_bytes(0, 128 << 20, 1 << 20, 512 << 10), 85 << 20);
        // read:4k over 30 KiB wraps exactly at the end: never done, 8 I/Os (past the 30 KiB).
        assert_eq!(holed_pass_bytes(0, 30 << 10, 4096, 4096), 32 << 10);
        // With offset=8k, fio's wrap goes to the relative position 8k: 3 I/Os, then done.
        assert_eq!(holed_pass_bytes(8 << 10, 32 << 10, 4096, 8192), 12 << 10);
        // Backwards: 0, 24k, 20k, … never done.
        assert_eq!(holed_pass_bytes(0, 32 << 10, 4096, -8192), 32 << 10);
        // A region smaller than one I/O has no pass.
        assert_eq!(holed_pass_bytes(0, 2048, 4096, 4096), 0);
    }

    #[test]
    fn holes_skip_bytes_after_each_sequential_io_and_wrap() {
        // rw=read:4k with 4 KiB I/Os over 32 KiB: 0, 8k, 16k, 24k, then back to 0 (within the
        // pass, as fio's wrap is).
        let mut j = random_job(32 << 10);
        j.rw.random = false;
        j.blocks.rw_seq_add = 4096;
        let ios = run(&j, 32 << 10, 6 * 4096);
        let offs: Vec<(u64, bool)> = ios.iter().map(|i| (i.0 / 1024, i.2)).collect();
        assert_eq!(
            offs,
            vec![
                (0, false),
                (8, false),
                (16, false),
                (24, false),
                (0, false),
                (8, false)
            ]
        );
    }

    #[test]
    fn random_offsets_every_nth_io_sequential_or_identical_between() {
        let mut j = random_job(64 << 20);
        let mut g = OffsetGen::new(0, 64 << 20, &GenParams::of(&j, 0), 1);
        let mut rng = Rng::new(5);
        // Fresh on every 4th I/O here; the others follow the last one.
        let mut offs = Vec::new();
        for k in 1..=12 {
            let p = g.place(&mut rng, k % 4 == 0);
            offs.push(p.offset);
            g.commit(&p, 4096);
        }
        assert_eq!(&offs[..3], &[0, 4096, 8192]);
        assert_eq!(offs[4], offs[3] + 4096);
        assert_eq!(offs[6], offs[3] + 3 * 4096);
        j.blocks.rw_seq_identical = true;
        let mut g = OffsetGen::new(0, 64 << 20, &GenParams::of(&j, 0), 1);
        let mut offs = Vec::new();
        for k in 1..=8 {
            let p = g.place(&mut rng, k % 4 == 0);
            offs.push(p.offset);
            g.commit(&p, 4096);
        }
        assert_eq!(&offs[..3], &[0, 0, 0]);
        assert_eq!(&offs[4..7], &[offs[3]; 3]);
        assert_ne!(offs[7], offs[3]);
    }

    #[test]
    fn next_free_block_matches_a_plain_scan() {
        let mut rng = Rng::new(17);
        for n in [1u64, 63, 64, 65, 4095, 4096, 4097, 70_000] {
            let mut c = Covered::new(n);
            let mut plain = vec![false; n as usize];
            for _ in 0..n {
                let b = rng.below(n);
                let want = (0..n)
                    .map(|i| (b + i) % n)
                    .find(|&i| !plain[i as usize])
                    .unwrap();
                assert_eq!(c.next_free(b), want, "n={n} b={b}");
                c.set(want);
                plain[want as usize] = true;
            }
            assert!(c.full());
            c.reset(n / 2 + 1);
            assert!(!c.full());
            assert_eq!(c.next_free(n / 2), n / 2);
        }
    }
}
