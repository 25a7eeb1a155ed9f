//! The checks `iogauge canary` makes of its profiles, shared with `kube canary install` (which
//! must refuse what the pod's canary would refuse, before anything is applied).

use super::Profile;

/// Each profile named once, and judged by the sequential statistics the canary's window uses;
/// Err with the canary's own words.
pub(crate) fn canary_checks(profiles: &[Profile]) -> Result<(), String> {
    for (i, p) in profiles.iter().enumerate() {
        if profiles[..i].iter().any(|q| q.name == p.name) {
            return Err(format!(
                "profile '{}' is named twice; each profile is watched once (its series would \
                 repeat)",
                p.name
            ));
        }
        if let Err(why) = crate::verdict::sequential::spec_of(p) {
            return Err(format!(
                "{}: cannot be a canary profile: {why}; choose etcd, etcd-large, sync-iops, \
                 gitlab or a profile judged on sync_p99, write_iops or read_iops",
                p.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::profiles::get;

    #[test]
    fn twice_named_and_unjudgeable_profiles_are_refused() {
        let etcd = get("etcd").unwrap_or_else(|e| panic!("{e}"));
        let gitlab = get("gitlab").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(canary_checks(&[etcd.clone(), gitlab.clone()]), Ok(()));
        let twice = canary_checks(&[etcd.clone(), gitlab, etcd.clone()]);
        assert!(twice.is_err_and(|e| e.contains("profile 'etcd' is named twice")));
        let small = get("small-files").unwrap_or_else(|e| panic!("{e}"));
        let Err(e) = canary_checks(&[etcd, small]) else {
            panic!("small-files passed")
        };
        assert!(
            e.starts_with("small-files: cannot be a canary profile: "),
            "{e}"
        );
    }
}
