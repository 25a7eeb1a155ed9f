//! `kube-frames`: a check document as numbered, checksummed lines, the way an `iogauge kube`
//! pod hands its result to the controller through its log.
//!
//! A pod's log is not a file: container runtimes and log pipelines split long lines (containerd
//! at 16 KiB), the kubelet rotates the log at `containerLogMaxSize` (10 MiB by default) and
//! serves only the current file, and the container's stderr lands between stdout's lines. So the
//! document goes out as lines of at most [`PAYLOAD`] bytes of its JSON each, every one saying
//! which document it belongs to, where it goes and its checksum, and the reader puts back what
//! a runtime split, skips what is not a frame, and says exactly which frames were lost:
//!
//! ```text
//! iogauge-frame 1 <id> <seq>/<total> <bytes> <document crc32c> <frame crc32c> <payload>
//! ```
//!
//! `id` tells documents apart (a log may hold more than one); `bytes` and the document's
//! crc32c are those of the whole JSON text; the frame's crc32c covers the line from `id` up
//! to and including the payload (without its own field), so a damaged number is caught too.
//! Payloads are cut at UTF-8 character boundaries; JSON text has no line breaks.

use super::document::{CanaryDocument, CheckDocument, PreflightDocument};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What each frame line starts with.
pub(crate) const PREFIX: &str = "iogauge-frame ";
/// The frame layout's version (the second word).
const VERSION: &str = "1";
/// Payload bytes per frame at most: with the header, a line stays far below the 16 KiB at
/// which containerd splits lines, and below the usual caps of log pipelines.
pub(crate) const PAYLOAD: usize = 8192;
/// A frame line's header is far shorter; more than this is not one frame.
const MAX_LINE: usize = PAYLOAD + 256;

/// The document as frames, one per line: compact unless `intervals` (see [`compact`]).
pub(crate) fn render_check_frames(doc: &CheckDocument, intervals: bool) -> String {
    // Serialising these types cannot fail (string keys only); an empty value would be read
    // back as "not a check document", never as a wrong one.
    let mut v = serde_json::to_value(doc).unwrap_or_default();
    if !intervals {
        compact(&mut v);
    }
    let text = v.to_string();
    frames(&text, &document_id(&text))
}

/// A preflight document as frames (what an `iogauge kube preflight` pod prints).
pub(crate) fn render_preflight_frames(doc: &PreflightDocument) -> String {
    let text = serde_json::to_value(doc).unwrap_or_default().to_string();
    frames(&text, &document_id(&text))
}

/// A canary document as frames (what an `iogauge kube canary` pod prints after every probe;
/// its log then holds one document per probe, and the reader wants the latest).
pub(crate) fn render_canary_frames(doc: &CanaryDocument) -> String {
    let text = serde_json::to_value(doc).unwrap_or_default().to_string();
    frames(&text, &document_id(&text))
}

/// What marks a `kube fio` pod's result: its fio JSON document and its text output together,
/// so that the reader knows which document it got and can print the text block as it is.
pub(crate) const FIO_RESULT: &str = "iogauge_kube_fio";

/// An `iogauge fio` result as frames: `{"iogauge_kube_fio": 1, "fio": <the JSON document>,
/// "text": <the normal output>}`. A JSON text that does not parse (never: iogauge wrote it)
/// travels as a string, so that the reader names the problem.
pub(crate) fn render_fio_frames(json: &str, text: &str) -> String {
    let fio = serde_json::from_str::<Value>(json).unwrap_or_else(|_| Value::String(json.into()));
    // The writer's version, which the controller checks as it does a check document's.
    let v = serde_json::json!({
        FIO_RESULT: 1,
        "iogauge": env!("CARGO_PKG_VERSION"),
        "fio": fio,
        "text": text
    });
    let t = v.to_string();
    frames(&t, &document_id(&t))
}

/// Leaves out the per-interval latency histograms (`iogauge.lat_intervals` of each direction
/// of each fio report): they are most of a document's size and grow with run time and IOPS
/// (483 KiB of the default suite's 516 KiB on a virtio disk; MBs on faster disks or longer
/// runs), while the bandwidth and IOPS series and every summary stay.
pub(crate) fn compact(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Object(ig)) = m.get_mut("iogauge") {
                ig.remove("lat_intervals");
            }
            m.values_mut().for_each(compact);
        }
        Value::Array(a) => a.iter_mut().for_each(compact),
        _ => {}
    }
}

/// An id for one document: its checksum mixed with the time and process, so that the same
/// result printed by two runs still tells apart.
fn document_id(text: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let salt = format!("{nanos} {}", std::process::id());
    let id = crc32c::crc32c_append(crc32c::crc32c(text.as_bytes()), salt.as_bytes());
    format!("{id:08x}")
}

/// `text` as frame lines of document `id`.
pub(crate) fn frames(text: &str, id: &str) -> String {
    let pieces = split(text, PAYLOAD);
    let total = pieces.len();
    let doc_crc = crc32c::crc32c(text.as_bytes());
    let mut out = String::with_capacity(text.len() + total * 80);
    for (i, p) in pieces.iter().enumerate() {
        let covered = format!("{id} {}/{total} {} {doc_crc:08x} ", i + 1, text.len());
        let crc = crc32c::crc32c_append(crc32c::crc32c(covered.as_bytes()), p.as_bytes());
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{PREFIX}{VERSION} {covered}{crc:08x} {p}");
    }
    out
}

/// `text` in pieces of at most `max` bytes (at least one piece), each ending at a character
/// boundary.
fn split(text: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while rest.len() > max {
        let mut at = max;
        while !rest.is_char_boundary(at) {
            at -= 1;
        }
        let (piece, after) = rest.split_at(at);
        out.push(piece);
        rest = after;
    }
    out.push(rest);
    out
}

/// Why a log's frames do not make a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FramesError {
    /// Frames of the last document are missing (or damaged past repair).
    #[error("{} missing", lost_text(lost, *total))]
    Lost {
        /// The missing frames' numbers (1-based), ascending.
        lost: Vec<u32>,
        /// The document's frame count; 0 when no sound frame said it.
        total: u32,
        /// The document's size in bytes.
        bytes: u64,
        /// How many of `lost` were there but failed their checksum.
        damaged: usize,
        /// A sound frame of the document follows its last damaged frame in the log: the damage
        /// is in the middle (altered on the way), not where the log ends (cut).
        whole_after: bool,
    },
    /// Every frame is there and sound, but the whole does not match its checksum or size.
    #[error("its frames are all there but do not add up to the document they announce")]
    Mismatch,
}

/// One frame as read.
#[derive(Debug, Clone)]
struct Frame {
    id: String,
    seq: u32,
    total: u32,
    bytes: u64,
    doc_crc: String,
    payload: String,
}

/// A line that starts like a frame, parsed and checked; `Err(Some((id, seq)))` for a frame
/// whose number could be read but whose checksum fails, `Err(None)` when not even that.
fn parse(line: &str) -> Result<Frame, Option<(String, u32)>> {
    let rest = line.strip_prefix(PREFIX).ok_or(None)?;
    let f: Vec<&str> = rest.splitn(7, ' ').collect();
    let [version, id, seq_total, bytes, doc_crc, crc, payload] = f.as_slice() else {
        return Err(None);
    };
    let (seq, total) = seq_total.split_once('/').ok_or(None)?;
    let seq: u32 = seq.parse().map_err(|_| None)?;
    let bad = || Some((id.to_string(), seq));
    if *version != VERSION {
        return Err(bad());
    }
    let covered = format!("{id} {seq_total} {bytes} {doc_crc} ");
    let want = crc32c::crc32c_append(crc32c::crc32c(covered.as_bytes()), payload.as_bytes());
    if format!("{want:08x}") != *crc {
        return Err(bad());
    }
    Ok(Frame {
        id: id.to_string(),
        seq,
        total: total.parse().map_err(|_| bad())?,
        bytes: bytes.parse().map_err(|_| bad())?,
        doc_crc: doc_crc.to_string(),
        payload: payload.to_string(),
    })
}

/// A damaged frame: its document id, number, and line in the log.
type Damaged = (String, u32, usize);

/// The frames in a log, in order: a frame line that a runtime or pipeline split is put back
/// together from the lines right after it, until its checksum holds. Damaged frames are
/// returned apart, as (id, seq, line), when their number could be read; sound ones with their
/// line too.
fn scan(log: &str) -> (Vec<(usize, Frame)>, Vec<Damaged>) {
    let lines: Vec<&str> = log.lines().collect();
    let (mut frames, mut damaged) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with(PREFIX) {
            i += 1;
            continue;
        }
        let mut joined = lines[i].to_string();
        let mut next = i + 1;
        let mut first_err = None;
        loop {
            match parse(&joined) {
                Ok(f) => {
                    frames.push((i, f));
                    i = next;
                    break;
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                    let piece = lines.get(next).filter(|l| !l.starts_with(PREFIX));
                    match piece {
                        Some(p) if joined.len() + p.len() <= MAX_LINE => {
                            joined.push_str(p);
                            next += 1;
                        }
                        _ => {
                            // Not repairable: the lines after it are read on their own.
                            let e = first_err.take().flatten();
                            damaged.extend(e.map(|(id, seq)| (id, seq, i)));
                            i += 1;
                            break;
                        }
                    }
                }
            }
        }
    }
    (frames, damaged)
}

/// The last complete document's JSON text in `log`, byte for byte as written; None when the
/// log has no frame at all.
pub(crate) fn read_frames(log: &str) -> Result<Option<String>, FramesError> {
    let (frames, damaged) = scan(log);
    // Documents by id, in the order their last frame appears; within one, the last copy of
    // each frame number counts (a document printed twice).
    let mut order: Vec<String> = Vec::new();
    let mut docs: BTreeMap<String, BTreeMap<u32, Frame>> = BTreeMap::new();
    // Damage followed by a sound frame of the same document is in the middle of the log.
    let whole_after = |id: &str| {
        let last_damaged = damaged
            .iter()
            .filter(|(d, ..)| d == id)
            .map(|(.., l)| *l)
            .max();
        let last_whole = frames
            .iter()
            .filter(|(_, f)| f.id == id)
            .map(|(l, _)| *l)
            .max();
        matches!((last_whole, last_damaged), (Some(w), Some(d)) if w > d)
    };
    for (_, f) in frames.iter().cloned() {
        order.retain(|id| id != &f.id);
        order.push(f.id.clone());
        docs.entry(f.id.clone()).or_default().insert(f.seq, f);
    }
    for id in damaged.iter().map(|(id, ..)| id) {
        if !order.contains(id) {
            order.push(id.clone());
        }
    }
    let Some(last) = order.last() else {
        return Ok(None);
    };
    let mut last_err = None;
    for id in order.iter().rev() {
        let parts = docs.remove(id).unwrap_or_default();
        match assemble(&parts) {
            Ok(text) => return Ok(Some(text)),
            Err(e) if id == last => {
                let e = match e {
                    FramesError::Lost {
                        mut lost,
                        total,
                        bytes,
                        ..
                    } => {
                        let bad: Vec<u32> = damaged
                            .iter()
                            .filter(|(d, ..)| d == id)
                            .map(|(_, s, _)| *s)
                            .collect();
                        if total == 0 {
                            lost.clone_from(&bad);
                            lost.sort_unstable();
                            lost.dedup();
                        }
                        FramesError::Lost {
                            damaged: lost.iter().filter(|s| bad.contains(s)).count(),
                            lost,
                            total,
                            bytes,
                            whole_after: whole_after(id),
                        }
                    }
                    e => e,
                };
                last_err = Some(e);
            }
            Err(_) => {}
        }
    }
    Err(last_err.unwrap_or(FramesError::Mismatch))
}

/// One document from its frames (by number).
fn assemble(parts: &BTreeMap<u32, Frame>) -> Result<String, FramesError> {
    // What the frames announce; the last one read decides if they disagree (then the
    // checksum fails).
    let Some(any) = parts.values().next_back() else {
        // Only damaged frames (the caller names them): nothing says how many there were.
        return Err(FramesError::Lost {
            lost: Vec::new(),
            total: 0,
            bytes: 0,
            damaged: 0,
            whole_after: false,
        });
    };
    let lost: Vec<u32> = (1..=any.total).filter(|s| !parts.contains_key(s)).collect();
    if !lost.is_empty() {
        return Err(FramesError::Lost {
            lost,
            total: any.total,
            bytes: any.bytes,
            damaged: 0,
            whole_after: false,
        });
    }
    let text: String = (1..=any.total)
        .filter_map(|s| parts.get(&s))
        .map(|f| f.payload.as_str())
        .collect();
    let crc = format!("{:08x}", crc32c::crc32c(text.as_bytes()));
    if text.len() as u64 != any.bytes || crc != any.doc_crc || parts.len() as u32 != any.total {
        return Err(FramesError::Mismatch);
    }
    Ok(text)
}

/// `frame 5 of 40`, `frames 1–37 of 40`, `frames 2, 5 of an unknown number`.
pub(crate) fn lost_text(lost: &[u32], total: u32) -> String {
    let s = if lost.len() == 1 { "" } else { "s" };
    let of = if total == 0 {
        "an unknown number".to_string()
    } else {
        total.to_string()
    };
    format!("frame{s} {} of {of}", ranges(lost))
}

/// `1–37`, `2, 5–6`: frame numbers as ranges.
pub(crate) fn ranges(seqs: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seqs.len() {
        let start = seqs[i];
        let mut end = start;
        while i + 1 < seqs.len() && seqs[i + 1] == end + 1 {
            i += 1;
            end = seqs[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}–{end}")
        });
        i += 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A document of `n` bytes of JSON with non-ASCII text that falls on frame boundaries.
    fn text(n: usize) -> String {
        let mut s = String::from("{\"s\":\"");
        let mut i = 0;
        while s.len() < n {
            s.push(['a', 'é', '€', '𝄞', ' '][i % 5]);
            i += 1;
        }
        s.push_str("\"}");
        s
    }

    fn lines(log: &str) -> Vec<String> {
        log.lines().map(String::from).collect()
    }

    #[test]
    fn a_document_round_trips_in_frames_cut_at_character_boundaries() {
        for n in [0, 10, PAYLOAD - 8, PAYLOAD * 3 + 1, 50_000] {
            let t = text(n);
            let log = frames(&t, "0000abcd");
            let ls = lines(&log);
            assert_eq!(ls.len(), t.len().div_ceil(PAYLOAD).max(1));
            for l in &ls {
                assert!(l.starts_with("iogauge-frame 1 0000abcd "), "{l}");
                assert!(l.len() <= PAYLOAD + 80, "{}", l.len());
            }
            assert!(ls[0].contains(&format!(" 1/{} {} ", ls.len(), t.len())));
            assert_eq!(read_frames(&log).unwrap().as_deref(), Some(t.as_str()));
        }
        assert_eq!(read_frames("no frames\nat all\n"), Ok(None));
        assert_eq!(read_frames(""), Ok(None));
    }

    #[test]
    fn stderr_between_frames_and_split_lines_are_tolerated() {
        let t = text(30_000);
        let mut log = String::from("iogauge check: starting\n");
        for l in lines(&frames(&t, "00000001")) {
            // A runtime splitting at 3000 bytes (anywhere, even inside a character's bytes
            // would be impossible for a text log: at a character boundary), then a stderr line.
            for p in split(&l, 3000) {
                log.push_str(p);
                log.push('\n');
            }
            log.push_str("iogauge check: a note on stderr\n");
        }
        log.push_str("iogauge check: done\n");
        assert_eq!(read_frames(&log).unwrap().as_deref(), Some(t.as_str()));
        // Split inside the header too (after the prefix: no runtime splits a line that short).
        let one: String = frames("{\"a\":1}", "00000002")
            .lines()
            .flat_map(|l| split(l, 20).into_iter().map(|p| format!("{p}\n")))
            .collect();
        assert_eq!(one.lines().count(), 3);
        assert_eq!(read_frames(&one).unwrap().as_deref(), Some("{\"a\":1}"));
    }

    #[test]
    fn missing_and_damaged_frames_are_named() {
        let t = text(40 * PAYLOAD - 100);
        let ls = lines(&frames(&t, "00000003"));
        assert_eq!(ls.len(), 40);
        // Rotation: the head is gone.
        let rotated = ls[37..].join("\n");
        let e = read_frames(&rotated).unwrap_err();
        assert_eq!(
            e,
            FramesError::Lost {
                lost: (1..=37).collect(),
                total: 40,
                bytes: t.len() as u64,
                damaged: 0,
                whole_after: false
            }
        );
        assert_eq!(e.to_string(), "frames 1–37 of 40 missing");
        // Cut: the tail is gone, and the last line is half a frame.
        let mut cut = ls[..20].join("\n");
        cut.push('\n');
        cut.push_str(split(&ls[20], 100)[0]);
        let Err(FramesError::Lost { lost, damaged, .. }) = read_frames(&cut) else {
            panic!()
        };
        assert_eq!((ranges(&lost), damaged), ("21–40".to_string(), 1));
        // A corrupted payload byte.
        let mut bad = ls.clone();
        let c = bad[4].pop().unwrap();
        bad[4].push(if c == 'a' { 'b' } else { 'a' });
        let Err(FramesError::Lost { lost, damaged, .. }) = read_frames(&bad.join("\n")) else {
            panic!()
        };
        assert_eq!((lost, damaged), (vec![5], 1));
        assert_eq!(ranges(&[2, 5, 6, 9, 10, 11]), "2, 5–6, 9–11");
        // Only a damaged frame: its number, of an unknown count.
        let Err(e) = read_frames(&bad[4]) else {
            panic!()
        };
        assert_eq!(e.to_string(), "frame 5 of an unknown number missing");
    }

    #[test]
    fn the_last_complete_document_wins() {
        let (a, b) = (text(20_000), text(9_000).replace('a', "b"));
        let two = format!("{}{}", frames(&a, "0000000a"), frames(&b, "0000000b"));
        assert_eq!(read_frames(&two).unwrap().as_deref(), Some(b.as_str()));
        // The same document twice (same id): still one.
        let again = format!("{}{}", frames(&a, "0000000a"), frames(&a, "0000000a"));
        assert_eq!(read_frames(&again).unwrap().as_deref(), Some(a.as_str()));
        // A later document cut short: the earlier complete one.
        let fb = lines(&frames(&b, "0000000b"));
        let late = format!("{}{}\n", frames(&a, "0000000a"), fb[1]);
        assert_eq!(read_frames(&late).unwrap().as_deref(), Some(a.as_str()));
        // Frames of two documents under one id do not add up.
        let mixed = format!(
            "{}{}",
            lines(&frames(&a, "0000000c"))[0],
            "\n".to_string()
                + &lines(&frames(&text(20_001).replace('a', "c"), "0000000c"))[1..].join("\n")
        );
        assert_eq!(read_frames(&mixed), Err(FramesError::Mismatch));
    }

    #[test]
    fn compact_leaves_out_the_interval_histograms_only() {
        let mut v = serde_json::json!({"profiles": [{"report": {"jobs": [{
            "read": {"iops": 1, "iogauge": {"bw_series": [[1, 2]], "lat_intervals": {"x": 1}}},
            "sync": {"iogauge": {"lat_intervals": {"x": 1}, "write_and_sync_lat_ns": {}}}}]}}]});
        compact(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"profiles": [{"report": {"jobs": [{
                "read": {"iops": 1, "iogauge": {"bw_series": [[1, 2]]}},
                "sync": {"iogauge": {"write_and_sync_lat_ns": {}}}}]}}]})
        );
    }
}
