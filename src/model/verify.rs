//! Data verification settings (fio's `verify` family) and fio's pattern grammar, shared by
//! `verify_pattern` and `buffer_pattern`.

use super::{JobSpec, RwKind, DDIR_READ, DDIR_WRITE};

/// fio's `verify=`: how each written block is checked when read back. The numbers are fio
/// 3.33's `verify_type` values, written into every block's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VerifyKind {
    /// `0`: no verification.
    #[default]
    None,
    /// `meta`: the header only (plus `verify_pattern` when given).
    Meta,
    /// `md5`
    Md5,
    /// `crc64`
    Crc64,
    /// `crc32`
    Crc32,
    /// `crc32c` and `crc32c-intel` (fio stores both as crc32c).
    Crc32c,
    /// `crc16`
    Crc16,
    /// `crc7`
    Crc7,
    /// `sha256`
    Sha256,
    /// `sha512`
    Sha512,
    /// `sha3-224`
    Sha3_224,
    /// `sha3-256`
    Sha3_256,
    /// `sha3-384`
    Sha3_384,
    /// `sha3-512`
    Sha3_512,
    /// `xxhash` (XXH32, seed 1)
    Xxhash,
    /// `sha1`
    Sha1,
    /// `verify_pattern` without `verify=`: a header, then the pattern.
    Pattern,
    /// `verify=pattern`: the pattern only, no header.
    PatternNoHdr,
    /// `null`: pretend to verify.
    Null,
}

impl VerifyKind {
    /// fio's name for `verify=`, and the kind.
    pub(crate) const NAMES: [(&'static str, VerifyKind); 19] = [
        ("0", VerifyKind::None),
        ("md5", VerifyKind::Md5),
        ("crc64", VerifyKind::Crc64),
        ("crc32", VerifyKind::Crc32),
        ("crc32c-intel", VerifyKind::Crc32c),
        ("crc32c", VerifyKind::Crc32c),
        ("crc16", VerifyKind::Crc16),
        ("crc7", VerifyKind::Crc7),
        ("sha1", VerifyKind::Sha1),
        ("sha256", VerifyKind::Sha256),
        ("sha512", VerifyKind::Sha512),
        ("sha3-224", VerifyKind::Sha3_224),
        ("sha3-256", VerifyKind::Sha3_256),
        ("sha3-384", VerifyKind::Sha3_384),
        ("sha3-512", VerifyKind::Sha3_512),
        ("xxhash", VerifyKind::Xxhash),
        ("meta", VerifyKind::Meta),
        ("pattern", VerifyKind::PatternNoHdr),
        ("null", VerifyKind::Null),
    ];

    /// fio 3.33's `verify_type` number (enum in verify.h).
    pub(crate) fn fio_type(self) -> u16 {
        match self {
            VerifyKind::None => 0,
            VerifyKind::Meta => 1,
            VerifyKind::Md5 => 2,
            VerifyKind::Crc64 => 3,
            VerifyKind::Crc32 => 4,
            VerifyKind::Crc32c => 5,
            VerifyKind::Crc16 => 7,
            VerifyKind::Crc7 => 8,
            VerifyKind::Sha256 => 9,
            VerifyKind::Sha512 => 10,
            VerifyKind::Sha3_224 => 11,
            VerifyKind::Sha3_256 => 12,
            VerifyKind::Sha3_384 => 13,
            VerifyKind::Sha3_512 => 14,
            VerifyKind::Xxhash => 15,
            VerifyKind::Sha1 => 16,
            VerifyKind::Pattern => 17,
            VerifyKind::PatternNoHdr => 18,
            VerifyKind::Null => 19,
        }
    }
}

impl VerifyKind {
    /// Bytes of the checksum that follows the header (fio's struct vhdr_*).
    pub(crate) fn csum_len(self) -> usize {
        match self {
            VerifyKind::Md5 => 16,
            VerifyKind::Crc64 => 8,
            VerifyKind::Crc32 | VerifyKind::Crc32c | VerifyKind::Xxhash => 4,
            VerifyKind::Crc16 => 2,
            VerifyKind::Crc7 => 1,
            VerifyKind::Sha256 => 64,
            VerifyKind::Sha512 => 128,
            VerifyKind::Sha3_224 => 28,
            VerifyKind::Sha3_256 => 32,
            VerifyKind::Sha3_384 => 48,
            VerifyKind::Sha3_512 => 64,
            VerifyKind::Sha1 => 20,
            _ => 0,
        }
    }

    /// Header (40 bytes in fio 3.33) plus checksum at the start of each interval.
    pub(crate) fn hdr_size(self) -> usize {
        match self {
            VerifyKind::PatternNoHdr | VerifyKind::None => 0,
            k => 40 + k.csum_len(),
        }
    }

    /// fio's name of the check, as its failure messages print it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            VerifyKind::Md5 => "md5",
            VerifyKind::Crc64 => "crc64",
            VerifyKind::Crc32 => "crc32",
            VerifyKind::Crc32c => "crc32c",
            VerifyKind::Crc16 => "crc16",
            VerifyKind::Crc7 => "crc7",
            VerifyKind::Sha256 => "sha256",
            VerifyKind::Sha512 => "sha512",
            VerifyKind::Sha3_224 => "sha3-224",
            VerifyKind::Sha3_256 => "sha3-256",
            VerifyKind::Sha3_384 => "sha3-384",
            VerifyKind::Sha3_512 => "sha3-512",
            VerifyKind::Xxhash => "xxhash",
            VerifyKind::Sha1 => "sha1",
            VerifyKind::Meta => "meta",
            VerifyKind::Null => "null",
            VerifyKind::None => "0",
            VerifyKind::Pattern | VerifyKind::PatternNoHdr => "pattern",
        }
    }
}

/// A byte pattern in fio's grammar, with the places where `%o` (the block's offset, 8 bytes
/// little-endian) is pasted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pattern {
    /// The pattern's bytes (`%o` places hold zeros).
    pub bytes: Vec<u8>,
    /// Byte positions of each `%o`.
    pub offsets_at: Vec<usize>,
}

/// fio's MAX_PATTERN_SIZE.
const MAX_PATTERN: usize = 512;

impl Pattern {
    /// Parses fio's pattern grammar (lib/pattern.c): a concatenation of `0x` hex byte strings of
    /// any length (`0xdeadbeef`), decimal integers in i32 range stored little-endian in as few
    /// bytes as they need (`-1024`, `66`), `"strings"` and, when `formats` is true, `%o`.
    pub(crate) fn parse(s: &str, formats: bool) -> Result<Pattern, String> {
        let mut p = Pattern::default();
        let b = s.as_bytes();
        let mut i = 0;
        if b.is_empty() {
            return Err("expected a pattern, e.g. 0xdeadbeef or \"text\"".into());
        }
        while i < b.len() {
            if b[i] == b'"' {
                let end = s[i + 1..]
                    .find('"')
                    .ok_or("a string starts with \" but has no closing \"")?;
                p.bytes.extend_from_slice(&b[i + 1..i + 1 + end]);
                i += end + 2;
            } else if b[i] == b'%' {
                if !formats {
                    return Err("formats such as %o are not allowed here".into());
                }
                if b.get(i + 1) != Some(&b'o') {
                    return Err("the only format is %o (the block's offset)".into());
                }
                p.offsets_at.push(p.bytes.len());
                p.bytes.extend_from_slice(&[0; 8]);
                i += 2;
            } else if b[i] == b'\'' {
                return Err("patterns read from a file ('name') are not supported".into());
            } else if b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X')) && {
                b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit())
            } {
                let start = i + 2;
                let mut end = start;
                while end < b.len() && b[end].is_ascii_hexdigit() {
                    end += 1;
                }
                // fio: "0xff0x14" is two numbers: a trailing "0" before "x" starts the next.
                if end < b.len() && matches!(b[end], b'x' | b'X') && b[end - 1] == b'0' {
                    end -= 1;
                }
                let hex = &s[start..end];
                if hex.is_empty() {
                    return Err(format!("'{s}': empty hex number"));
                }
                // fio reads an odd count's first byte from one digit ("0x123" is 01 23).
                let mut k = 0;
                while k < hex.len() {
                    let n = if k == 0 && hex.len() % 2 == 1 { 1 } else { 2 };
                    let v = u8::from_str_radix(&hex[k..k + n], 16)
                        .map_err(|_| format!("'{s}': bad hex digits"))?;
                    p.bytes.push(v);
                    k += n;
                }
                i = end;
            } else {
                let start = i;
                let mut end = i;
                if matches!(b[end], b'-' | b'+') {
                    end += 1;
                }
                while end < b.len() && b[end].is_ascii_digit() {
                    // A "0x" inside ends the decimal number (fio looks ahead for it).
                    if b[end] == b'0' && matches!(b.get(end + 1), Some(b'x' | b'X')) && end > start
                    {
                        break;
                    }
                    end += 1;
                }
                let v: i64 = s[start..end].parse().map_err(|_| {
                    format!(
                        "'{s}': expected 0x hex bytes, a decimal number, \"string\"{} at '{}'",
                        if formats { " or %o" } else { "" },
                        &s[start..]
                    )
                })?;
                if v > i32::MAX as i64 || v < i32::MIN as i64 {
                    return Err(format!("'{s}': decimal numbers must fit 32 bits"));
                }
                let mut u = v as i32 as u32;
                if u == 0 {
                    p.bytes.push(0);
                }
                while u != 0 {
                    p.bytes.push(u as u8);
                    u >>= 8;
                }
                i = end;
            }
        }
        if p.bytes.is_empty() {
            return Err("the pattern is empty".into());
        }
        if p.bytes.len() > MAX_PATTERN {
            return Err(format!("patterns are at most {MAX_PATTERN} bytes"));
        }
        Ok(p)
    }
}

/// The `verify` family of a job (fio 3.33's defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifySpec {
    /// `verify=`
    pub kind: VerifyKind,
    /// `verify=` was given (so `verify_pattern` does not choose the kind).
    pub kind_set: bool,
    /// `do_verify` (default 1): run the read-back phase after writing.
    pub do_verify: bool,
    /// `verify_pattern`
    pub pattern: Option<Pattern>,
    /// `verify_interval` (0: the write block size).
    pub interval: u32,
    /// `verify_offset`: the header is swapped to this offset within each interval.
    pub offset: u32,
    /// `verify_fatal`: stop at the first bad interval of a block.
    pub fatal: bool,
    /// `verify_only`: do not write; read back what the write workload would have written.
    pub only: bool,
    /// `verify_backlog`: verify written blocks every N writes (0: at the end only).
    pub backlog: u64,
    /// `verify_backlog_batch` (0: `verify_backlog`).
    pub backlog_batch: u64,
    /// `verify_dump`: write the received and expected data of a bad block to files.
    pub dump: bool,
    /// verify_async: fio hands checks of read blocks to this many threads. iogauge checks every
    /// block inline on the job's thread, which gives fio's results (the same reads, the same
    /// blocks caught); only the CPU time moves. Kept to echo in the job's options.
    pub async_threads: u32,
    /// `experimental_verify`: keep no log of written blocks; the read-back replays the write
    /// workload's offsets from its start (its generators reset) and reads its writes back.
    pub experimental: bool,
}

impl Default for VerifySpec {
    fn default() -> Self {
        VerifySpec {
            kind: VerifyKind::None,
            kind_set: false,
            do_verify: true,
            pattern: None,
            interval: 0,
            offset: 0,
            fatal: false,
            only: false,
            backlog: 0,
            backlog_batch: 0,
            dump: false,
            async_threads: 0,
            experimental: false,
        }
    }
}

impl VerifySpec {
    /// Whether blocks carry verification data at all.
    pub(crate) fn enabled(&self) -> bool {
        self.kind != VerifyKind::None
    }
}

/// fio's verify_interval as fixed up in init.c: the smallest write block when write sizes vary
/// and none was given; at most the smallest write (or, for a job that reads, read) block; a
/// divisor of the smallest and largest write block (else their gcd). With `bs_unaligned` the
/// block is one interval whatever its size (fio's get_hdr_inc): [`usize::MAX`].
pub(crate) fn resolve_interval(job: &JobSpec) -> usize {
    if job.blocks.unaligned {
        return usize::MAX;
    }
    let (wmin, wmax) = job.bs_range(DDIR_WRITE);
    let (wmin, wmax) = (wmin.max(1), wmax.max(1));
    let rmin = job.bs_range(DDIR_READ).0.max(1);
    let reads = matches!(job.rw.kind, RwKind::Read | RwKind::ReadWrite);
    let mut iv = job.verify.interval as u64;
    if wmin != wmax && iv == 0 {
        iv = wmin;
    }
    if iv > wmin {
        iv = wmin;
    } else if reads && iv > rmin {
        iv = rmin;
    }
    if iv == 0 || !wmin.is_multiple_of(iv) || !wmax.is_multiple_of(iv) {
        iv = gcd(wmin, wmax);
    }
    iv as usize
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Verify settings that cannot work, refused before anything runs (the message names the job's
/// options).
pub(crate) fn check_job(job: &JobSpec) -> Result<(), String> {
    let v = &job.verify;
    if !v.enabled() {
        return Ok(());
    }
    let iv = match resolve_interval(job) {
        // bs_unaligned: each block is one interval, the smallest must hold the header.
        usize::MAX => job.bs_range(DDIR_WRITE).0 as usize,
        iv => iv,
    };
    let hs = v.kind.hdr_size();
    if v.kind != VerifyKind::Null && hs > 0 && iv <= hs {
        return Err(format!(
            "verify={}: a verify interval of {iv} bytes cannot hold the {hs}-byte verify header \
             and data; use a larger bs or verify_interval",
            v.kind.name()
        ));
    }
    if v.offset as usize + hs > iv {
        return Err(format!(
            "verify_offset={} puts the {hs}-byte verify header past the end of the {iv}-byte \
             verify interval",
            v.offset
        ));
    }
    if matches!(v.kind, VerifyKind::Pattern | VerifyKind::PatternNoHdr) && v.pattern.is_none() {
        return Err("verify=pattern needs verify_pattern, e.g. verify_pattern=0xdeadbeef".into());
    }
    if job.loops > 1
        && job.rw.kind != RwKind::Read
        && v.do_verify
        && v.kind != VerifyKind::Null
        && (v.only
            || job.norandommap
            || job.blocks.io_size.is_some()
            || job.blocks.number_ios.is_some())
    {
        return Err(
            "verify with loops > 1 and verify_only, norandommap, io_size or number_ios is not \
             supported by iogauge yet (fio 3.33 reads back only part of the later loops' blocks \
             without the random map, a loop's size is not the file's with io_size/number_ios, \
             and verify_only reads back after each loop's dry run); use loops=1 or leave those \
             out"
            .into(),
        );
    }
    if v.experimental && v.do_verify && v.kind != VerifyKind::Null {
        check_experimental(job)?;
    }
    Ok(())
}

/// experimental_verify's replay needs a workload it can generate again from the start on its
/// own: the combinations below are refused rather than replayed wrong.
fn check_experimental(job: &JobSpec) -> Result<(), String> {
    // (verify_backlog is accepted: its reads come from the log, which is not kept, so only
    // the final read-back runs, as in fio 3.33.)
    let why = if matches!(job.rw.kind, RwKind::Trim | RwKind::TrimWrite) {
        "trims are not replayed as reads by iogauge"
    } else if job.files.open_files > 0 {
        "the openfiles window is not replayed by iogauge"
    } else {
        return Ok(());
    };
    Err(format!(
        "experimental_verify=1 with this job is not supported: {why}; write \
         experimental_verify=0 (the default verify reads back every written block)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.33 init.c's fix-ups, case by case.
    #[test]
    fn verify_interval_is_fios() {
        use crate::model::{BsSplit, DDIR_READ};
        let iv = |f: &dyn Fn(&mut JobSpec)| {
            let mut j = JobSpec::default();
            j.verify.kind = VerifyKind::Md5;
            f(&mut j);
            resolve_interval(&j)
        };
        assert_eq!(iv(&|_| {}), 4096);
        assert_eq!(iv(&|j| j.verify.interval = 512), 512);
        // Not a divisor of the block: the block.
        assert_eq!(iv(&|j| j.verify.interval = 1000), 4096);
        // Larger than the block: the block.
        assert_eq!(iv(&|j| j.verify.interval = 8192), 4096);
        // Mixed write sizes: the smallest, a divisor of both ends (else their gcd).
        let split = |j: &mut JobSpec| {
            j.blocks.split[DDIR_WRITE] = vec![
                BsSplit { bs: 512, perc: 50 },
                BsSplit {
                    bs: 1 << 20,
                    perc: 50,
                },
            ]
        };
        assert_eq!(iv(&split), 512);
        assert_eq!(
            iv(&|j| j.blocks.range[DDIR_WRITE] = Some((4096, 6144))),
            2048
        );
        assert_eq!(
            iv(&|j| j.blocks.range[DDIR_WRITE] = Some((4096, 16384))),
            4096
        );
        // A job that reads: at most the smallest read.
        assert_eq!(
            iv(&|j| {
                j.rw.kind = RwKind::ReadWrite;
                j.bs[DDIR_READ] = 1024;
                j.verify.interval = 2048;
            }),
            1024
        );
        // bs_unaligned: one interval per block, whatever its size.
        assert_eq!(iv(&|j| j.blocks.unaligned = true), usize::MAX);
    }

    #[test]
    fn fio_pattern_examples() {
        let p = |s| Pattern::parse(s, true).unwrap().bytes;
        assert_eq!(p("\"abcd\""), b"abcd");
        assert_eq!(p("-1024"), [0x00, 0xfc, 0xff, 0xff]);
        assert_eq!(p("66"), [0x42]);
        assert_eq!(p("0xFF0X1"), [0xff, 0x01]);
        assert_eq!(p("%o"), [0; 8]);
        assert_eq!(p("\"123\"0xFFeeCC"), [0x31, 0x32, 0x33, 0xff, 0xee, 0xcc]);
        let q = Pattern::parse("-100xab\"1\"%o\"2\"", true).unwrap();
        assert_eq!(
            q.bytes,
            [0xf6, 0xff, 0xff, 0xff, 0xab, 0x31, 0, 0, 0, 0, 0, 0, 0, 0, 0x32]
        );
        assert_eq!(q.offsets_at, [6]);
        assert_eq!(p("0xdeadbeef"), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("0"), [0]);
        assert_eq!(p("0x123"), [0x01, 0x23]);
        assert!(Pattern::parse("%o", false).is_err());
        assert!(Pattern::parse("\"abc", true).is_err());
        assert!(Pattern::parse("zz", true).is_err());
    }
}
