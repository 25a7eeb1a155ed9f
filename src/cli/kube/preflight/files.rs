//! `kube preflight`'s files on this machine: the spec read in, and the results directory with
//! every node's result files laid out as troubleshoot lays them out.

use super::*;

/// The spec as read and checked, and its text for the pod.
pub(super) fn spec(path: &Path) -> Result<(Preflight, String), String> {
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read spec '{name}': {e}"))?;
    let text = crate::input::read_capped(f, MAX_SPEC_BYTES, &format!("spec '{name}'"))?;
    let mut p = Preflight::default();
    load(&text, &name, &mut p)?;
    p.check_analyzers_have_collectors()?;
    Ok((p, text))
}

/// Creates the results directory, or takes an existing empty one.
pub(super) fn empty_output(out: &Path) -> Result<(), String> {
    let shown = out.display();
    match std::fs::read_dir(out) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(format!(
                    "--output '{shown}': not empty; the analyzers read every node's results in \
                     it, so an earlier run's would pass as this one's: name a new or empty \
                     directory"
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(out)
            .map_err(|e| format!("--output '{shown}': cannot create it: {e}")),
        Err(e) => Err(format!(
            "--output '{shown}': cannot use it as a directory: {e}"
        )),
    }
}

/// Writes each node's results (and the whole kube document, `kube.iogauge.json`) under `out`;
/// returns the collectors that produced nothing on some node, and why, as the analyzers take
/// them. Every node's failure is also on stderr.
pub(super) fn lay_out(doc: &KubeDocument, out: &Path) -> Result<Vec<(String, String)>, Error> {
    let write_err = |e: String| Error::new(Kind::Run, format!("iogauge kube preflight: {e}"));
    std::fs::create_dir_all(out)
        .map_err(|e| write_err(format!("cannot create '{}': {e}", out.display())))?;
    let mut errors = Vec::new();
    for t in &doc.targets {
        let (Some(node), Some(pd)) = (&t.node, &t.preflight) else {
            continue;
        };
        let files = match node_results(out, node, pd) {
            Ok(f) => f,
            Err(e) => {
                // One node's name that cannot be a file name does not cost the others theirs.
                eprintln!("iogauge kube preflight: {}", crate::untrusted::term(&e));
                continue;
            }
        };
        for (path, text) in files {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| write_err(format!("cannot create '{}': {e}", dir.display())))?;
            }
            crate::output_file::write_file(&path, text.as_bytes())
                .map_err(|e| write_err(e.to_string()))?;
        }
        for c in pd.collectors.iter().filter(|c| c.results.is_none()) {
            let why = c.reason.clone().unwrap_or_else(|| "not collected".into());
            // The pod's words: made safe for a terminal and cut.
            let said: String = format!("node {node}: collector '{}': {why}", c.name)
                .chars()
                .take(600)
                .collect();
            eprintln!("iogauge kube preflight: {}", crate::untrusted::term(&said));
            errors.push((c.name.clone(), format!("node {node}: {why}")));
        }
    }
    let text = serde_json::to_string_pretty(doc).unwrap_or_default() + "\n";
    crate::output_file::write_file(&out.join("kube.iogauge.json"), text.as_bytes())
        .map_err(|e| write_err(e.to_string()))?;
    Ok(errors)
}
