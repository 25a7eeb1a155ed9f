//! What install checks of the live objects before applying anything: an object of the same
//! name that this canary did not make is not taken over (uninstall would delete it later), and
//! a StatefulSet's claim template, which the API server refuses to change, is not changed.

use super::{CanaryRequest, CANARY_LABEL};
use crate::cluster::client::failed;
use crate::cluster::labels::MANAGED_BY;
use crate::cluster::quantity::{format_bytes, parse_bytes};
use crate::cluster::KubeError;
use kube::api::{Api, DynamicObject};
use serde_json::Value;

/// Whether `obj` (`what`, through its kind's API `a`) exists already in namespace `ns` (then it
/// is updated); Err (bad input) when it may not be.
pub(super) async fn check(
    (a, what): &(Api<DynamicObject>, String),
    ns: &str,
    obj: &Value,
    req: &CanaryRequest,
) -> Result<bool, KubeError> {
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let Some(live) = a
        .get_opt(name)
        .await
        .map_err(|e| KubeError::Cluster(failed(&format!("reading {what}"), e)))?
    else {
        return Ok(false);
    };
    let labels = live.metadata.labels.unwrap_or_default();
    let ours = labels.get(CANARY_LABEL) == Some(&req.name)
        && labels.get(MANAGED_BY.0).map(String::as_str) == Some(MANAGED_BY.1);
    if !ours {
        return Err(KubeError::Usage(format!(
            "{what} exists in namespace {} and is not canary {}'s (it lacks the labels {}={} \
             and {CANARY_LABEL}={}): install does not take it over (uninstall would delete it); \
             remove or rename it, or install with another --name",
            ns, req.name, MANAGED_BY.0, MANAGED_BY.1, req.name
        )));
    }
    if let Some(had) = claim_change(&live.data, obj) {
        return Err(KubeError::Usage(format!(
            "{what}: its claims are {had}, and a StatefulSet's claim template cannot change; \
             uninstall first (claims are kept without --delete-claims), or keep {}",
            keep_flags(&live.data)
        )));
    }
    Ok(true)
}

/// A claim template in words: "1Gi ReadWriteOnce of class fast".
fn claim_words(t: &Value) -> String {
    let s = &t["spec"];
    let modes: Vec<&str> = s["accessModes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    format!(
        "{} {} of class {}",
        s["resources"]["requests"]["storage"]
            .as_str()
            .unwrap_or("?"),
        modes.join(","),
        s["storageClassName"].as_str().unwrap_or("?")
    )
}

/// What of a claim template install sets, comparable (sizes as bytes: the server may write
/// "1Gi" as it was given, or otherwise).
fn claim_key(t: &Value) -> (String, Option<u64>, Vec<String>, String) {
    let s = &t["spec"];
    let size = s["resources"]["requests"]["storage"]
        .as_str()
        .and_then(|q| parse_bytes(q).ok());
    let modes = s["accessModes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str().map(String::from))
        .collect();
    (
        t["metadata"]["name"].as_str().unwrap_or_default().into(),
        size,
        modes,
        s["storageClassName"].as_str().unwrap_or_default().into(),
    )
}

/// The live StatefulSet's claims in words, when the new one's templates differ from them.
pub(super) fn claim_change(live: &Value, new: &Value) -> Option<String> {
    let templates = |v: &Value| -> Vec<Value> {
        v["spec"]["volumeClaimTemplates"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let (old, new) = (templates(live), templates(new));
    let key = |ts: &[Value]| ts.iter().map(claim_key).collect::<Vec<_>>();
    if old.is_empty() || key(&old) == key(&new) {
        return None;
    }
    Some(old.iter().map(claim_words).collect::<Vec<_>>().join(", "))
}

/// The flags that keep the live claim template: "--claim-size 1Gi --access-mode ReadWriteOnce".
fn keep_flags(live: &Value) -> String {
    let t = &live["spec"]["volumeClaimTemplates"][0];
    let (_, size, modes, _) = claim_key(t);
    format!(
        "--claim-size {} --access-mode {}",
        size.map_or("?".into(), format_bytes),
        modes.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sts(size: &str, mode: &str) -> Value {
        json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"},
            "spec": {"accessModes": [mode], "storageClassName": "fast", "volumeMode": "Filesystem",
                "resources": {"requests": {"storage": size}}}}]}})
    }

    #[test]
    fn a_changed_claim_size_or_access_mode_is_told_from_the_same_template() {
        let live = sts("1Gi", "ReadWriteOnce");
        assert_eq!(
            claim_change(&live, &sts("1073741824", "ReadWriteOnce")),
            None
        );
        assert_eq!(
            claim_change(&live, &sts("2Gi", "ReadWriteOnce")).as_deref(),
            Some("1Gi ReadWriteOnce of class fast")
        );
        assert!(claim_change(&live, &sts("1Gi", "ReadWriteOncePod")).is_some());
        assert_eq!(
            keep_flags(&live),
            "--claim-size 1Gi --access-mode ReadWriteOnce"
        );
    }
}
