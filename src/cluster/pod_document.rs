//! A pod's result out of its log, read the same way for every kind (check, fio, preflight): its
//! frames (`report::frames`), then the writer's version, then the kind and its schema. Each
//! reader keeps its own words for a log without a document, damaged frames and bad JSON.

use crate::report::document::DocumentKind;
use crate::report::frames::{read_frames, FramesError};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::log::{cap, same_version};

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
