//! Reading a check's result back from its pod's log. The pod runs `iogauge check … --format
//! kube-frames`, which writes the document as numbered, checksummed lines of at most 8 KiB
//! (`report::frames`): runtimes split longer lines, the kubelet rotates the log and serves only
//! the current file, and the check's stderr (plan lines, notes) falls between stdout's lines.

use super::pod_document::{cap, document, Words};
pub(crate) use super::pod_document::{is_other_version, TAIL_CHARS};
use crate::report::document::{CheckDocument, DocumentKind};
use crate::report::frames::{lost_text, FramesError};

/// The pod's document, from its frames; or, from an image that prints the whole document as
/// one line (`--format json-line`), that line. Err: what went wrong, or what the log ends with
/// instead, so a pod that failed before printing says why (its own stderr) in the caller's
/// error. What the document is, and whether this iogauge reads its version, is
/// [`DocumentKind`]'s decision, as for every reader.
pub fn parse_check_log(log: &str) -> Result<CheckDocument, String> {
    let no_frames = |log: &str| {
        log.lines()
            .rev()
            .find(|l| l.starts_with("{\"schema_version\""))
            .map(str::to_string)
            .ok_or_else(|| no_result(log))
    };
    let bad = |e: serde_json::Error| {
        cap(&format!(
            "the pod's result does not parse as a check document: {e}"
        ))
    };
    let words = Words {
        no_frames: &no_frames,
        damaged: &lost,
        bad: &bad,
    };
    document(log, DocumentKind::Check, "check", &words)
}

/// A log without any document: an image too old for the pod's command line is named as such,
/// anything else by how the log ends.
fn no_result(log: &str) -> String {
    if log.contains("invalid value 'kube-frames'") {
        return "the image's iogauge is older than this one (it does not know --format \
                kube-frames); run the image of this iogauge version (--image)"
            .into();
    }
    // runc's words when the image's binary is for another CPU (`exec /iogauge: exec format
    // error`; `standard_init_linux.go:228: exec user process caused: exec format error` before
    // runc 1.1).
    if log.contains("exec format error") {
        return format!(
            "the image's /iogauge is not built for this node's architecture (exec format \
             error); use an image of the node's architecture (--image, with --node-selector \
             kubernetes.io/arch=ARCH for the nodes it runs on); the log ends with: {}",
            tail(log, 1)
        );
    }
    format!("no result in the pod's log; it ends with: {}", tail(log, 3))
}

/// Frames lost or damaged on the way: which, the likely cause, and what makes the result fit.
fn lost(e: &FramesError) -> String {
    let FramesError::Lost {
        lost,
        total,
        bytes,
        damaged,
        whole_after,
    } = e
    else {
        return format!(
            "the pod's result in its log is damaged: {e}; run the target again (its log was \
             altered on the way)"
        );
    };
    let cut = "the log was cut: the container stopped while printing it, or a log pipeline \
               capped it";
    if *total == 0 {
        // Nothing sound says the count: one cut frame, or frames altered on the way.
        let why = if *whole_after {
            "their checksums fail; run the target again (its log was altered on the way)"
        } else {
            cut
        };
        return format!(
            "the pod's log holds only damaged frames of its result ({}: {why})",
            lost_text(lost, *total)
        );
    }
    let why = if lost.first() == Some(&1) {
        "the kubelet keeps only the current log file, rotated at containerLogMaxSize, 10 MiB by \
         default"
            .to_string()
    } else if *damaged == lost.len() && *whole_after {
        // Damage with whole frames after it: the log went on, so it was not cut.
        "their checksums fail: the log was altered on the way".to_string()
    } else {
        let also = if *damaged > 0 {
            format!(", {damaged} of them damaged")
        } else {
            String::new()
        };
        format!("{cut}{also}")
    };
    format!(
        "the pod's log lost {} ({why}); the result was {}: run a shorter --duration, or leave \
         out --intervals",
        lost_text(lost, *total),
        size(*bytes)
    )
}

/// `812 bytes`, `312 KiB`, `12.4 MiB`.
fn size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < KIB * KIB {
        format!("{:.0} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / KIB / KIB)
    }
}

/// The last `n` non-empty lines, joined with " | " (or "(an empty log)"), at most
/// [`TAIL_CHARS`] characters of their end.
pub(crate) fn tail(log: &str, n: usize) -> String {
    let mut lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "(an empty log)".into();
    }
    lines.drain(..lines.len().saturating_sub(n));
    let joined = lines.join(" | ");
    let chars = joined.chars().count();
    if chars <= TAIL_CHARS {
        return joined;
    }
    let end: String = joined.chars().skip(chars - TAIL_CHARS).collect();
    format!("(the last {TAIL_CHARS} of {chars} characters) …{end}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::cluster::pod_document::VERSION;

    /// A check document with `n` bytes of padding in a note-like field (`dir`).
    fn doc(pad: usize) -> CheckDocument {
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "iogauge": env!("CARGO_PKG_VERSION"),
            "context": {"iogauge": env!("CARGO_PKG_VERSION"), "hostname": "pod-é",
                "kernel": "6.8", "directory": "/data", "filesystem": null, "device": null},
            "dir": format!("/data/{}", "ü".repeat(pad / 2)), "profiles": [],
            "summary": {"passed": 0, "warned": 0, "failed": 0, "errors": 0, "interrupted": 0,
                "skipped": 0}}))
        .unwrap()
    }

    #[test]
    fn framed_and_one_line_documents_are_read() {
        let d = doc(40_000);
        let framed = crate::report::frames::render_check_frames(&d, false);
        let log = format!("iogauge check: etcd\n{framed}iogauge check: done\n");
        assert_eq!(parse_check_log(&log).unwrap(), d);
        // An image that prints the document on one line.
        let line = format!("note\n{}\nnote\n", serde_json::to_string(&d).unwrap());
        assert_eq!(parse_check_log(&line).unwrap(), d);
    }

    #[test]
    fn lost_frames_say_which_why_and_what_to_do() {
        let d = doc(300_000);
        let framed = crate::report::frames::render_check_frames(&d, false);
        let lines: Vec<&str> = framed.lines().collect();
        let n = lines.len();
        assert_eq!(n, 37);
        let rotated = format!("{}\n", lines[30..].join("\n"));
        assert_eq!(
            parse_check_log(&rotated).unwrap_err(),
            "the pod's log lost frames 1–30 of 37 (the kubelet keeps only the current log file, \
             rotated at containerLogMaxSize, 10 MiB by default); the result was 293 KiB: run a \
             shorter --duration, or leave out --intervals"
        );
        let cut = lines[..10].join("\n");
        assert_eq!(
            parse_check_log(&cut).unwrap_err(),
            "the pod's log lost frames 11–37 of 37 (the log was cut: the container stopped \
             while printing it, or a log pipeline capped it); the result was 293 KiB: run a \
             shorter --duration, or leave out --intervals"
        );
        // A 2-frame document cut inside its last frame: cut, not altered.
        let two = doc(10_000);
        let framed = crate::report::frames::render_check_frames(&two, false);
        assert_eq!(framed.lines().count(), 2);
        // Cut at a character boundary, as a pipeline that keeps text does.
        let head = |s: &str, n: usize| -> String {
            let at = (0..=n).rev().find(|i| s.is_char_boundary(*i)).unwrap();
            s[..at].to_string()
        };
        let cut = head(&framed, framed.lines().next().unwrap().len() + 1 + 1_000);
        assert_eq!(
            parse_check_log(&format!("iogauge check: etcd\n{cut}")).unwrap_err(),
            "the pod's log lost frame 2 of 2 (the log was cut: the container stopped while \
             printing it, or a log pipeline capped it, 1 of them damaged); the result was 10 KiB: \
             run a shorter --duration, or leave out --intervals"
        );
        // The same damage with a whole frame after it (printed twice): altered on the way.
        let again = format!("{cut}\n{}", framed.lines().next().unwrap());
        assert!(parse_check_log(&again)
            .unwrap_err()
            .contains("(their checksums fail: the log was altered on the way)"));
        // A one-frame document cut short: cut, though nothing sound says how many frames.
        let one = crate::report::frames::render_check_frames(&doc(10), false);
        assert_eq!(
            parse_check_log(&head(&one, one.len() / 2)).unwrap_err(),
            "the pod's log holds only damaged frames of its result (frame 1 of an unknown \
             number: the log was cut: the container stopped while printing it, or a log \
             pipeline capped it)"
        );
        // An older image refuses the pod's format: said so, not as a clap error.
        assert_eq!(
            parse_check_log(
                "error: invalid value 'kube-frames' for '--format <FORMAT>'\n  [possible \
                 values: text, json, markdown, csv]\n"
            )
            .unwrap_err(),
            "the image's iogauge is older than this one (it does not know --format \
             kube-frames); run the image of this iogauge version (--image)"
        );
    }

    #[test]
    fn a_cut_line_never_puts_more_than_500_characters_into_a_message() {
        let d = doc(82_000);
        let whole = serde_json::to_string(&d).unwrap();
        let at = (0..=60_000)
            .rev()
            .find(|i| whole.is_char_boundary(*i))
            .unwrap();
        let one = &whole[..at];
        // A json-line document cut by a pipeline: its start is a document line that does not
        // parse.
        let e = parse_check_log(one).unwrap_err();
        assert!(e.chars().count() <= TAIL_CHARS + 1, "{}", e.len());
        assert!(e.starts_with("the pod's result does not parse as a check document: "));
        // A cut line that does not even start like one: the tail.
        let e = parse_check_log(&format!("x{one}")).unwrap_err();
        assert!(e.chars().count() < TAIL_CHARS + 100, "{}", e.len());
        assert!(
            e.starts_with("no result in the pod's log; it ends with: (the last 500 of ")
                && e.contains(" characters) …"),
            "{e}"
        );
        assert_eq!(tail("a\n\nb\nc\nd\n", 3), "b | c | d");
    }

    #[test]
    fn another_version_is_refused_first_and_a_wrong_binary_is_named() {
        let mut v = serde_json::to_value(doc(10)).unwrap();
        v["iogauge"] = "0.0.1".into();
        // Even a schema this version cannot read is refused for its version first.
        v["schema_version"] = 9.into();
        let line = serde_json::to_string(&v).unwrap();
        assert_eq!(
            parse_check_log(&line).unwrap_err(),
            format!(
                "the pod ran iogauge 0.0.1 but this is iogauge {VERSION}: update the image with \
                 `iogauge kube image push REGISTRY/REPO:{VERSION}` and pass --image \
                 REGISTRY/REPO:{VERSION} (or --image of an iogauge:{VERSION} image the cluster \
                 has)"
            )
        );
        assert!(is_other_version(&parse_check_log(&line).unwrap_err()));
        assert_eq!(
            parse_check_log("exec /iogauge: exec format error\n").unwrap_err(),
            "the image's /iogauge is not built for this node's architecture (exec format \
             error); use an image of the node's architecture (--image, with --node-selector \
             kubernetes.io/arch=ARCH for the nodes it runs on); the log ends with: exec \
             /iogauge: exec format error"
        );
    }

    #[test]
    fn a_log_without_a_document_says_how_it_ends() {
        let e = parse_check_log("iogauge check: note\n\nerror: --dir '/data': not a directory\n")
            .unwrap_err();
        assert_eq!(
            e,
            "no result in the pod's log; it ends with: iogauge check: note | error: --dir '/data': not a directory"
        );
        assert_eq!(
            parse_check_log("").unwrap_err(),
            "no result in the pod's log; it ends with: (an empty log)"
        );
        assert_eq!(
            parse_check_log("{\"schema_version\": 1}\n").unwrap_err(),
            "the pod's result is not a check document but a document iogauge does not know"
        );
        assert!(
            parse_check_log("{\"schema_version\": 1, \"profiles\": [], \"dir\": \"/d\"}\n")
                .unwrap_err()
                .starts_with("the pod's result does not parse as a check document: missing field")
        );
        assert_eq!(
            parse_check_log("{\"schema_version\": 2, \"profiles\": [], \"dir\": \"/d\"}\n")
                .unwrap_err(),
            format!(
                "the pod's result is a check document, but schema_version is 2; this iogauge \
                 ({}) reads schema_version 1; read it with the iogauge version that wrote it \
                 (its \"iogauge\" field); run the image of this iogauge version (--image)",
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}
