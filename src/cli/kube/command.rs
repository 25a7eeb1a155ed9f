//! Running `iogauge kube check|cleanup`: the cluster run with its notes on stderr, the
//! document as a table or JSON, and the exit code (the arguments are the parent's).

use super::*;
use crate::cli::{stdout, with_output, Ended, Error, Kind, Outcome};
use crate::cluster::dry_run::default_image_note;
use crate::report::document::KubeDocument;

/// `kube cleanup` without `--run` or `--all`: a run younger than this may still be going.
const CLEANUP_OLDER_THAN: Duration = Duration::from_secs(3600);

pub(crate) fn main(a: KubeArgs, stop: &Stop) -> Ended {
    match a.command {
        KubeCommand::Check(c) => check(*c, stop),
        KubeCommand::Preflight(c) => super::preflight::main(*c, stop),
        KubeCommand::Fio(c) => fio(*c, stop),
        KubeCommand::Cleanup(c) => clean(c, stop),
        KubeCommand::Image(i) => super::image::main(i, stop),
        KubeCommand::Canary(c) => super::canary::main(c, stop),
    }
}

fn check(a: KubeCheckArgs, stop: &Stop) -> Ended {
    let req = a
        .request()
        .map_err(|e| Error::whole(Kind::BadInput, format!("iogauge kube check: {e}")))?;
    execute(&req, &a.run, &[], stop)
}

fn fio(a: KubeFioArgs, stop: &Stop) -> Ended {
    let req = a
        .request()
        .map_err(|e| Error::whole(Kind::BadInput, format!("iogauge kube fio: {e}")))?;
    execute(&req, &a.run, &a.job_files, stop)
}

/// Runs the request (or prints its manifests) and prints the result as asked; `job_files` are
/// `kube fio`'s, as given.
fn execute(req: &KubeRequest, a: &KubeRunArgs, job_files: &[String], stop: &Stop) -> Ended {
    let at = Invocation::now();
    if a.dry_run {
        let printed = match a.format {
            Format::Json => Printed::Json,
            Format::Text => Printed::Yaml,
        };
        return match dry_run(req, printed) {
            Ok((plan, text)) => {
                if printed == Printed::Json {
                    stdout::println(&text);
                    if let Some(note) = default_image_note(req) {
                        eprintln!("iogauge kube: dry run: {note}");
                    }
                } else {
                    stdout::print(&text);
                }
                // The classes a real run would leave out, and the warnings it would give.
                for note in plan.notes() {
                    eprintln!("iogauge kube: {note}");
                }
                eprintln!(
                    "iogauge kube: dry run: {} target(s) in namespace {}, nothing created. A \
                     real run also gives each fresh claim an ownerReference to its Job (the \
                     Job's uid exists only once it is created), so that deleting the Job deletes \
                     the claim",
                    plan.targets.len(),
                    plan.namespace
                );
                Ok(Outcome::Pass)
            }
            Err(e) => Err(failed(e)),
        };
    }
    let doc = run::check(req, stop, &mut Notes).map_err(failed)?;
    if a.format == Format::Json {
        stdout::println(&serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        stdout::print(&if req.fio.is_some() {
            crate::report::kube_fio_text::render_kube_fio_text(&doc)
        } else {
            render_kube_text(&doc, crate::cli::color())
        });
    }
    let report = a.report.as_ref().map_or(Ok(()), |path| {
        write_report("iogauge kube", path, &render_kube_html(&doc))
    });
    if req.fio.is_none() {
        save(&a.history, || NewRun::kube(&doc, &at));
    } else {
        save_fio_targets(&doc, &a.history, job_files, &at);
    }
    let outcome = overall_of(&doc.summary, req.check.strict);
    if outcome == Outcome::Interrupted {
        eprintln!("iogauge kube: interrupted by {}", stop.reason());
    }
    with_output(Ok(outcome), report)
}

/// `kube fio`: each target's fio document as a run of its own, as `iogauge fio` saves one, so
/// that `iogauge compare` compares a target of two runs. The host is the target's node (the
/// pod's hostname is the pod's name, new each run), and the target says which volume.
fn save_fio_targets(
    doc: &KubeDocument,
    flags: &HistoryFlags,
    job_files: &[String],
    at: &Invocation,
) {
    for t in &doc.targets {
        let Some(fio) = &t.fio else { continue };
        save(flags, || {
            let mut run = NewRun::fio(fio.clone(), job_files, at);
            run.host = t.node.clone().unwrap_or_else(|| doc.cluster.clone());
            run.target = t.target.clone();
            Ok(run)
        });
    }
}

fn clean(a: CleanupArgs, stop: &Stop) -> Ended {
    let c = &a.connection;
    if let Err(e) = validate_names(c.namespace.as_deref(), None, &[]) {
        return Err(Error::whole(
            Kind::BadInput,
            format!("iogauge kube cleanup: {e}"),
        ));
    }
    let scope = match (&a.run, a.all) {
        (Some(r), _) => Scope::Run(r.clone()),
        (None, true) => Scope::All,
        (None, false) => Scope::OlderThan(a.older_than.unwrap_or(CLEANUP_OLDER_THAN)),
    };
    match cleanup(
        c.kubeconfig.as_deref(),
        c.context.as_deref(),
        c.namespace.as_deref(),
        &scope,
        stop,
    ) {
        Ok(done) => {
            for d in &done.deleted {
                stdout::println(&format!("deleted {d}"));
            }
            for k in done.kept.iter().chain(&done.volumes) {
                eprintln!("iogauge kube cleanup: {k}");
            }
            for f in &done.failed {
                eprintln!("iogauge kube cleanup: {f}");
            }
            let kept = match done.kept.len() {
                0 => String::new(),
                n => format!(", {n} run(s) left alone"),
            };
            eprintln!(
                "iogauge kube cleanup: namespace {}: {} deleted, {} failed{kept}",
                done.namespace,
                done.deleted.len(),
                done.failed.len()
            );
            if done.failed.is_empty() {
                Ok(Outcome::Pass)
            } else {
                Err(Error::said(Kind::Run))
            }
        }
        Err(e) => Err(failed(e)),
    }
}
