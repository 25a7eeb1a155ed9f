//! A pod's result out of its log, read the same way for every kind (check, fio, preflight): its
//! frames (`report::frames`), then the writer's version, then the kind and its schema. Each
//! reader keeps its own words for a log without a document, damaged frames and bad JSON.

use crate::report::document::DocumentKind;
use crate::report::frames::{read_frames, FramesError};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A reader's words for what is not a sound document.
pub(crate) struct Words<'a> {
    /// A log without frames: the document's text found another way, or the error.
    pub no_frames: &'a dyn Fn(&str) -> Result<String, String>,
    /// Frames lost or damaged on the way.
    pub damaged: &'a dyn Fn(&FramesError) -> String,
    /// The text is not JSON, or not the kind's schema.
    pub bad: &'a dyn Fn(serde_json::Error) -> String,
}

/// The pod's document as JSON. Another version's document is refused first, before its kind
/// and schema, whatever it holds: the image, not the document, is what to fix.
pub(crate) fn value(log: &str, words: &Words) -> Result<Value, String> {
    let text = match read_frames(log) {
        Ok(Some(text)) => text,
        Ok(None) => (words.no_frames)(log)?,
        Err(e) => return Err((words.damaged)(&e)),
    };
    let v: Value = serde_json::from_str(&text).map_err(words.bad)?;
    same_version(&v)?;
    Ok(v)
}

/// The pod's document of `kind` (called `name` in messages): [`value`], then its kind and the
/// schema this iogauge reads.
pub(crate) fn document<T: DeserializeOwned>(
    log: &str,
    kind: DocumentKind,
    name: &str,
    words: &Words,
) -> Result<T, String> {
    let v = value(log, words)?;
    match DocumentKind::sniff(&v) {
        Some(k) if k == kind => {}
        other => {
            return Err(format!(
                "the pod's result is not a {name} document but {}",
                other.map_or("a document iogauge does not know", DocumentKind::what)
            ))
        }
    }
    if let Some(p) = kind.problem(&v) {
        return Err(cap(&format!(
            "the pod's result is a {name} document, but {p}; run the image of this iogauge \
             version (--image)"
        )));
    }
    T::deserialize(&v).map_err(words.bad)
}

/// What of a pod's log goes into a message at most, in characters: a cut line must never put
/// tens of KB into a reason, a terminal or a report.
pub(crate) const TAIL_CHARS: usize = 500;

/// `text` at most [`TAIL_CHARS`] characters (a parse error quotes what it read).
pub(crate) fn cap(text: &str) -> String {
    if text.chars().count() <= TAIL_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(TAIL_CHARS).collect();
    format!("{head}…")
}

/// This CLI's version; the pod's document must carry exactly it.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The pod ran another iogauge than this one. Any difference, a patch level too, fails the
/// target: profiles and their verdicts change between releases, and a result must be the one
/// this version describes.
fn other_version(theirs: &str) -> String {
    let theirs = cap(theirs);
    format!(
        "the pod ran iogauge {theirs} but this is iogauge {VERSION}: update the image with \
         `iogauge kube image push REGISTRY/REPO:{VERSION}` and pass --image \
         REGISTRY/REPO:{VERSION} (or --image of an iogauge:{VERSION} image the cluster has)"
    )
}

/// Err when the pod's document says it was written by another iogauge version than this one
/// (every pod document, check, fio or preflight, carries its writer's in `iogauge`).
pub(crate) fn same_version(v: &serde_json::Value) -> Result<(), String> {
    match v.get("iogauge").and_then(serde_json::Value::as_str) {
        Some(theirs) if theirs != VERSION => Err(other_version(theirs)),
        _ => Ok(()),
    }
}

/// Whether `parse_check_log`'s error is [`other_version`]'s: the pod did print its result.
pub(crate) fn is_other_version(e: &str) -> bool {
    e.starts_with("the pod ran iogauge ") && e.contains(" but this is iogauge ")
}
