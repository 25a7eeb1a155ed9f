//! What `iogauge canary` does with each cycle's document: the served copy, the textfile, stdout
//! (JSON lines or kube frames), and the history with its pruning.

use super::Format;
use crate::canary::serve::Shared;
use crate::canary::Observer;
use crate::history::{rfc3339, History, Invocation, NewRun, RunKind};
use crate::report::document::{CanaryDocument, CheckDocument};
use crate::report::frames::{compact, render_canary_frames};
use crate::report::openmetrics::{render_openmetrics, Flavour};
use crate::workload::identity::{self, FileId};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Publishes each cycle: the served document, the textfile, frames, the history.
pub(super) struct Publisher {
    pub latest: Option<Shared>,
    pub textfile: Option<PathBuf>,
    pub format: Format,
    pub history: Option<History>,
    pub keep: Duration,
    pub at: Invocation,
    /// A textfile or history failure is said once, not every cycle.
    pub said: Vec<String>,
    /// The textfile as written last, so that only that very file is removed at the end.
    pub textfile_id: Option<FileId>,
}

/// The textfile's name in `--textfile DIR`.
const TEXTFILE: &str = "iogauge_canary.prom";

impl Publisher {
    fn once(&mut self, line: String) {
        if !self.said.contains(&line) {
            eprintln!("{line}");
            self.said.push(line);
        }
    }
}

impl Publisher {
    /// At the end: the textfile goes, so that node_exporter stops serving a stopped canary's
    /// series; only if it is still the file written last (a name proves nothing).
    pub(super) fn finish(&mut self) {
        let (Some(dir), Some(made)) = (&self.textfile, &self.textfile_id) else {
            return;
        };
        let removed = identity::open_dir(dir)
            .map_err(identity::Remove::Io)
            .and_then(|d| identity::remove_verified(d.as_fd(), TEXTFILE.as_ref(), made));
        if let Err(e) = removed {
            eprintln!(
                "iogauge canary: --textfile: {} not removed: {e}",
                dir.join(TEXTFILE).display()
            );
        }
    }
}

impl crate::observer::Observer for Publisher {
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
}

impl Observer for Publisher {
    fn cycle(&mut self, doc: &CanaryDocument, probes: &[CheckDocument]) {
        if let Some(l) = &self.latest {
            let mut l = l.lock().unwrap_or_else(|e| e.into_inner());
            l.doc = Some(doc.clone());
            l.at = Instant::now();
            l.interval = Duration::from_secs_f64(doc.interval_s);
        }
        if let Some(dir) = &self.textfile {
            let text = render_openmetrics(doc, Flavour::Text);
            match crate::output_file::write_file(&dir.join(TEXTFILE), text.as_bytes()) {
                Ok(()) => {
                    self.textfile_id = identity::open_dir(dir)
                        .ok()
                        .and_then(|d| identity::seen_at(d.as_fd(), TEXTFILE.as_ref()).ok())
                        .flatten()
                        .map(|s| s.id);
                }
                Err(e) => self.once(format!(
                    "iogauge canary: --textfile: {e}; the metrics are still served"
                )),
            }
        }
        match self.format {
            Format::None => {}
            Format::Json => {
                crate::cli::stdout::println(&serde_json::to_string(doc).unwrap_or_default())
            }
            Format::KubeFrames => crate::cli::stdout::print(&render_canary_frames(doc)),
        }
        if let Some(h) = &self.history {
            let mut failed = None;
            for p in probes {
                if let Err(e) = NewRun::check(p, &self.at).and_then(|mut r| {
                    r.kind = RunKind::Canary;
                    // Each probe is a run of its own: `--keep` prunes by this time.
                    r.started = rfc3339(std::time::SystemTime::now());
                    // Without the per-interval histograms, as a kube pod sends them: a probe
                    // every few minutes for a week must not make a database of gigabytes.
                    compact(&mut r.document);
                    h.save(&r)
                }) {
                    failed = Some(e);
                }
            }
            if let Err(e) = h.prune_kind(RunKind::Canary, self.keep) {
                failed = Some(e);
            }
            if let Some(e) = failed {
                self.once(format!(
                    "iogauge canary: history not saved: {e} (--no-history to skip saving)"
                ));
            }
        }
    }
}
