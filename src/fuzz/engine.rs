//! A coverage-blind mutational fuzzer that runs on stable Rust: each input is a corpus entry with
//! 1 to 8 stacked mutations (bit flips, interesting bytes, inserted, deleted, duplicated or spliced
//! ranges, and tokens of the target's grammar), fed to the target under `catch_unwind`. It finds
//! what a parser does with almost-valid input, which is where parsers panic (slicing, unwraps,
//! overflow); it does not steer towards new code the way libFuzzer does, and it has no memory
//! limit. It is the quick stable-Rust run (tests/fuzz_short.rs); the long coverage-guided run
//! with time and memory limits is cargo fuzz's (fuzz/, docs/FUZZING.md).

use super::Target;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// What one target's run found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Inputs fed.
    pub execs: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// Panics, by message and location, with the first input that caused each.
    pub panics: BTreeMap<String, (u64, Vec<u8>)>,
    /// The slowest input and how long it took: a hang shows here (libFuzzer's -timeout stops
    /// at one; this engine has no watchdog, so a real hang hangs it).
    pub slowest: (Duration, Vec<u8>),
}

impl Outcome {
    /// Inputs that panicked, in all.
    pub fn panic_count(&self) -> u64 {
        self.panics.values().map(|(n, _)| n).sum()
    }
}

/// xorshift64*: fast, and a fixed seed makes a run repeatable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const INTERESTING: &[&[u8]] = &[
    b"0",
    b"-1",
    b"4294967295",
    b"4294967296",
    b"18446744073709551615",
    b"18446744073709551616",
    b"99999999999999999999999",
    b"0x",
    b"0xffffffffffffffff",
    b"1e308",
    b"nan",
    b"-0",
    b"%",
    b"100%",
    b"101%",
    b":",
    b",",
    b"=",
    b"-",
    b"/",
    b"..",
    b"\x00",
    b"\xff",
    b"\xe2\x82\xac",
    b" ",
    b"\t",
    b"\n",
    b"\r\n",
    b"'",
    b"\"",
    b"\\",
];

/// Tokens of the inputs' grammars: fio options and units, YAML and troubleshoot words.
const TOKENS: &[&[u8]] = &[
    b"[global]\n",
    b"[job]\n",
    b"--name=",
    b"--",
    b"bs=",
    b"size=",
    b"rw=",
    b"randrw",
    b"ioengine=",
    b"io_uring",
    b"libaio",
    b"iodepth=",
    b"numjobs=",
    b"runtime=",
    b"time_based",
    b"rate=",
    b"rate_iops=",
    b"bssplit=",
    b"4k/50:64k/50",
    b"bsrange=",
    b"4k-64k",
    b"offset=",
    b"filesize=",
    b"nrfiles=",
    b"random_distribution=",
    b"zipf:",
    b"pareto:",
    b"normal:",
    b"zoned:",
    b"percentile_list=",
    b"verify=",
    b"md5",
    b"include ",
    b"${",
    b"}",
    b"$jobnum",
    b"k",
    b"m",
    b"g",
    b"KiB",
    b"MiB",
    b"ms",
    b"us",
    b"s",
    b"h",
    b"--section=",
    b"--output-format=",
    b"json+",
    b"--cmdhelp=",
    b"--parse-only",
    b"apiVersion: troubleshoot.sh/v1beta2\n",
    b"kind: HostPreflight\n",
    b"spec:\n",
    b"collectors:\n",
    b"analyzers:\n",
    b"- filesystemPerformance:\n",
    b"collectorName: ",
    b"fileSize: ",
    b"operationSizeBytes: ",
    b"runTime: ",
    b"timeout: ",
    b"datasync: ",
    b"outcomes:\n",
    b"- pass:\n",
    b"- fail:\n",
    b"when: ",
    b"p99 < 10ms",
    b"iops >= ",
    b"fileNotCollected",
    b"message: ",
    b"{{ .P99 }}",
    b"{{ .String }}",
    b"{{",
    b"}}",
    b"---\n",
    b": ",
    b"- ",
    b"{",
    b"[",
    b"]",
    b"&a ",
    b"*a",
    b"!!binary ",
    b"|\n",
    b"name: ",
    b"workload:\n",
    b"metrics:\n",
    b"key: ",
    b"sync_p99",
    b"better: ",
    b"lower",
    b"pass: ",
    b"warn: ",
    b"source: ",
    b"small_files: ",
    b"scale: ",
    b"\"Min\":",
    b"\"P99\":",
    b"\"jobs\":",
    b"\"sync\":",
    b"\"lat_ns\":",
    b"\"percentile\":",
    b"\"99.000000\":",
    b"fsperf",
    b"null",
    b"true",
    b"1.5",
    b"-5",
    b"--storage-class\n",
    b"--size\n",
    b"--namespace\n",
    b"--node-selector\n",
    b"--toleration\n",
    b"--cpu-limit\n",
    b"--memory-request\n",
    b"1Ei",
    b"250m",
    b"\"schema_version\":",
    b"\"targets\":",
    b"\"run_id\":",
    b"\"profiles\":",
    b"\"dir\":",
    b"\"collectors\":",
    b"\"outcomes\":",
    b"\"fio version\":",
    b"\"metrics\":",
    b"5e-324",
    b"1e309",
    b"\x00",
];

fn mutate(rng: &mut Rng, data: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    let pos = |rng: &mut Rng, d: &Vec<u8>| rng.below(d.len() + 1);
    match rng.below(9) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] ^= 1 << rng.below(8);
        }
        1 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] = rng.next() as u8;
        }
        2 => {
            let i = pos(rng, data);
            let t = INTERESTING[rng.below(INTERESTING.len())];
            data.splice(i..i, t.iter().copied());
        }
        3 if !data.is_empty() => {
            let i = rng.below(data.len());
            let n = 1 + rng.below((data.len() - i).min(16));
            data.drain(i..i + n);
        }
        4 if !data.is_empty() => {
            let i = rng.below(data.len());
            let n = 1 + rng.below((data.len() - i).min(64));
            let chunk: Vec<u8> = data[i..i + n].to_vec();
            let j = pos(rng, data);
            data.splice(j..j, chunk);
        }
        5 if !corpus.is_empty() => {
            let other = &corpus[rng.below(corpus.len())];
            if !other.is_empty() {
                let a = rng.below(other.len());
                let b = a + 1 + rng.below((other.len() - a).min(128));
                let j = pos(rng, data);
                data.splice(j..j, other[a..b].iter().copied());
            }
        }
        6 if !data.is_empty() => {
            // Replace a run of digits or letters with an interesting value.
            let i = rng.below(data.len());
            let end = data[i..]
                .iter()
                .position(|b| !b.is_ascii_alphanumeric())
                .map_or(data.len(), |n| i + n);
            let t = INTERESTING[rng.below(INTERESTING.len())];
            data.splice(i..end, t.iter().copied());
        }
        7 if data.len() > 1 => {
            // Cut at a random point: truncated input.
            let i = rng.below(data.len());
            data.truncate(i);
        }
        _ => {
            let i = pos(rng, data);
            let t = TOKENS[rng.below(TOKENS.len())];
            data.splice(i..i, t.iter().copied());
        }
    }
    // Keep inputs small: a parser's edge cases do not need megabytes.
    data.truncate(64 * 1024);
}

/// Feeds `target` mutated corpus entries until `execs` inputs or `budget` time, whichever comes
/// first. The panic hook is silenced meanwhile (panics are counted, not printed).
pub fn fuzz(
    target: &Target,
    corpus: &[Vec<u8>],
    execs: u64,
    budget: Duration,
    seed: u64,
) -> Outcome {
    let mut rng = Rng(seed | 1);
    let mut out = Outcome::default();
    let seeds: Vec<Vec<u8>> = if corpus.is_empty() {
        vec![Vec::new()]
    } else {
        corpus.to_vec()
    };
    let last = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let hook_last = last.clone();
    let old_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let loc = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if let Ok(mut l) = hook_last.lock() {
            *l = format!("{loc}: {msg}");
        }
    }));
    let start = Instant::now();
    let mut input = Vec::with_capacity(4096);
    while out.execs < execs {
        // Checking the clock every input would cost more than many parses.
        if out.execs % 256 == 0 && start.elapsed() >= budget {
            break;
        }
        input.clear();
        input.extend_from_slice(&seeds[rng.below(seeds.len())]);
        for _ in 0..1 + rng.below(8) {
            mutate(&mut rng, &mut input, &seeds);
        }
        out.execs += 1;
        let t0 = Instant::now();
        let r = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(&input)));
        let took = t0.elapsed();
        if took > out.slowest.0 {
            out.slowest = (took, input.clone());
        }
        if r.is_err() {
            let key = last.lock().map(|l| l.clone()).unwrap_or_default();
            let e = out.panics.entry(key).or_insert((0, input.clone()));
            e.0 += 1;
        }
    }
    out.elapsed = start.elapsed();
    panic::set_hook(old_hook);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panics_on_x(data: &[u8]) {
        assert!(!data.contains(&b'X'), "found an X");
    }

    #[test]
    fn panics_are_caught_counted_and_kept() {
        let t = Target {
            name: "t",
            about: "test",
            run: panics_on_x,
        };
        let o = fuzz(&t, &[b"abc".to_vec()], 20_000, Duration::from_secs(30), 7);
        assert_eq!(o.execs, 20_000);
        assert!(o.panic_count() > 0, "mutations never produced an X");
        let (_, (n, input)) = o.panics.iter().next().unwrap();
        assert!(*n > 0 && input.contains(&b'X'));
        assert!(o.panics.keys().all(|k| k.contains("found an X")));
    }
}
