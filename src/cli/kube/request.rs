//! From `kube check` and `kube fio`'s flags to a `KubeRequest`: what the pods run, the
//! targets, the pod's options and identity; every problem is a line for exit 2.

use super::*;
use crate::cluster::request::default_image;

/// What the pods run, given the volume mode and the run's files: check's profiles and
/// options, or a fio job.
type Work = (Vec<String>, CheckArgs, Option<FioJob>);

impl KubeCheckArgs {
    /// The request, or what is wrong with the arguments (exit 2).
    pub(super) fn request(&self) -> Result<KubeRequest, String> {
        self.run.request(|mode, files| {
            let c = &self.checks;
            let check = CheckArgs {
                scale: c.scale,
                duration: c.duration,
                file_size: c.size,
                strict: c.strict,
                intervals: c.intervals,
                full: c.full,
            };
            Ok((pod_profiles(&self.profiles, mode, files)?, check, None))
        })
    }
}

impl KubeFioArgs {
    /// The request, or what is wrong with the arguments or the job (exit 2).
    pub(super) fn request(&self) -> Result<KubeRequest, String> {
        self.run.request(|mode, files| {
            // iogauge's own caps go first: the pod's fio reads them wherever they stand.
            let mut options: Vec<String> = Vec::new();
            if let Some(b) = self.max_size {
                options.push(format!("--iogauge-max-size={b}"));
            }
            if let Some(d) = self.max_runtime {
                options.push(format!("--iogauge-max-runtime={}ms", d.as_millis()));
            }
            options.extend(self.options.iter().cloned());
            let job = fio_job(&self.job_files, &options, mode == VolumeMode::Block, files)?;
            check_claim_size(job.footprint, self.run.claim_size)?;
            Ok((Vec::new(), CheckArgs::default(), Some(job)))
        })
    }
}

impl KubeRunArgs {
    /// The request around what the pods run (`work`), or what is wrong (exit 2).
    fn request(
        &self,
        work: impl FnOnce(VolumeMode, &mut PodFiles) -> Result<Work, String>,
    ) -> Result<KubeRequest, String> {
        let mode = if self.volume_mode == Mode::Block {
            VolumeMode::Block
        } else {
            VolumeMode::Filesystem
        };
        let targets = TargetRequest {
            storage_classes: self.storage_classes.clone(),
            all_storage_classes: self.all_storage_classes,
            claims: self.claims.clone(),
            nodes: self.nodes.clone(),
            node_names: self.node_names.clone(),
            host_path: self.host_path.clone(),
        };
        targets.validate(mode)?;
        validate_names(
            self.connection.namespace.as_deref(),
            self.pod.service_account.as_deref(),
            &self.pod.image_pull_secrets,
        )?;
        let mut files = PodFiles::default();
        let (profiles, check, fio) = work(mode, &mut files)?;
        Ok(KubeRequest {
            profiles,
            files,
            preflight: None,
            check,
            fio,
            targets,
            pod: self.pod.options(mode, self.claim_size, &self.access_mode)?,
            namespace: self.connection.namespace.clone(),
            timeout: self.limits.timeout,
            pending_timeout: self.limits.pending_timeout,
            target_timeout: self.limits.target_timeout,
            parallel: self.limits.parallel.map_or(0, usize::from),
            kubeconfig: self.connection.kubeconfig.clone(),
            context: self.connection.context.clone(),
        })
    }
}

impl PodFlags {
    /// How every pod is built, from these flags; claims are built with `claim_size` and
    /// `access_mode`. Err: what is wrong (exit 2).
    pub(super) fn options(
        &self,
        mode: VolumeMode,
        claim_size: Option<u64>,
        access_mode: &str,
    ) -> Result<PodOptions, String> {
        let given = self.image.clone().filter(|i| !i.is_empty());
        let image_is_default = given.is_none();
        let image = given.unwrap_or_else(default_image);
        Ok(PodOptions {
            image,
            image_is_default,
            image_pull_policy: self.image_pull_policy.clone(),
            image_pull_secrets: self.image_pull_secrets.clone(),
            node_selector: self.node_selector.iter().cloned().collect(),
            tolerations: self.tolerations.clone(),
            tolerate_control_plane: self.tolerate_control_plane,
            requests: quantities([
                ("cpu-request", "cpu", &self.cpu_request),
                ("memory-request", "memory", &self.memory_request),
            ])?,
            limits: quantities([
                ("cpu-limit", "cpu", &self.cpu_limit),
                ("memory-limit", "memory", &self.memory_limit),
            ])?,
            service_account: self.service_account.clone(),
            claim_size,
            access_mode: access_mode.to_string(),
            volume_mode: mode,
            labels: BTreeMap::new(),
            identity: self.identity()?,
        })
    }
}
