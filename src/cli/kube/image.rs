//! `iogauge kube image export|push`: the pod's image made from this very binary (src/image),
//! written as an OCI archive or pushed to a registry, without Docker.

use crate::cli::{stdout, Ended, Error, Kind, Outcome, Stop};
use crate::image::push::PushError;
use crate::image::{self, elf, manifest, Image, Meta};
use std::path::PathBuf;

/// The pod's image, made from this binary (which must be static)
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The image holds only this iogauge binary, as /iogauge, run as 65532:65532, like
scripts/build-image's. The binary must be statically linked, as a FROM-scratch image has no
libc; 'cargo install' builds a dynamic one: build the static one as scripts/build-image does.
The same binary always gives the same image, byte for byte, so the same digest.")]
pub(crate) struct ImageArgs {
    #[command(subcommand)]
    command: ImageCommand,
}

#[derive(clap::Subcommand, Debug)]
enum ImageCommand {
    /// Write the image as an OCI archive, for skopeo, ctr, kind, or a registry reached later
    Export(ExportArgs),
    /// Push the image to a registry; prints REGISTRY/REPO@sha256:… for --image
    Push(PushArgs),
}

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Load it with: skopeo copy oci-archive:FILE docker://REGISTRY/REPO:TAG, ctr -n k8s.io images
import FILE (on a node), kind load image-archive FILE, or skopeo copy oci-archive:FILE
docker-daemon:NAME.")]
struct ExportArgs {
    /// The archive to write [default: iogauge-VERSION.oci.tar]
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The image's name in the archive (its tag and, for ctr and kind, its full name)
    /// [default: iogauge:VERSION]
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
}

#[derive(clap::Args, Debug)]
struct PushArgs {
    /// Where to push, e.g. registry.example.com/team/iogauge:0.1.0; credentials come from
    /// `docker login` ($DOCKER_CONFIG/config.json or ~/.docker/config.json)
    #[arg(value_name = "REGISTRY/REPO:TAG")]
    target: String,
    /// The registry speaks plain HTTP, not HTTPS (a local or test registry)
    #[arg(long)]
    insecure: bool,
}

pub(crate) fn main(a: ImageArgs, stop: &Stop) -> Ended {
    match a.command {
        ImageCommand::Export(e) => export(e),
        ImageCommand::Push(p) => push(p, stop),
    }
}

fn fail(kind: Kind, command: &str, message: impl std::fmt::Display) -> Error {
    Error::whole(kind, format!("iogauge kube image {command}: {message}"))
}

/// This binary's image, or why it cannot be one (a dynamic binary is bad input: exit 2).
fn this_image(command: &str) -> Result<(Image, Meta), Error> {
    let meta = Meta::of_this_build().map_err(|e| fail(Kind::BadInput, command, e))?;
    let exe = "/proc/self/exe";
    let binary = std::fs::read(exe).map_err(|e| {
        fail(
            Kind::Run,
            command,
            format!("cannot read this iogauge binary ({exe}): {e}"),
        )
    })?;
    elf::check_static(&binary, &meta.architecture).map_err(|e| {
        let path = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| exe.to_string());
        fail(
            Kind::BadInput,
            command,
            format!("{path} cannot run in the image: {e}"),
        )
    })?;
    let image = image::build(&binary, &meta).map_err(|e| fail(Kind::Run, command, e))?;
    Ok((image, meta))
}

fn export(a: ExportArgs) -> Ended {
    let version = env!("CARGO_PKG_VERSION");
    let name = a.name.unwrap_or_else(|| format!("iogauge:{version}"));
    manifest::validate_name(&name).map_err(|e| fail(Kind::BadInput, "export", e))?;
    let path = a
        .output
        .unwrap_or_else(|| PathBuf::from(format!("iogauge-{version}.oci.tar")));
    crate::output_file::check_destination(&path)
        .map_err(|e| fail(Kind::of_output(&e), "export", e))?;
    let (image, _) = this_image("export")?;
    let bytes = image::archive::archive(&image, &name).map_err(|e| {
        fail(
            Kind::Run,
            "export",
            format!("cannot build the archive: {e}"),
        )
    })?;
    crate::output_file::write_file(&path, &bytes)
        .map_err(|e| fail(Kind::of_output(&e), "export", e))?;
    eprintln!(
        "iogauge kube image export: wrote {} ({name}, {} for {}/linux, {:.1} MiB): load it with \
         skopeo copy oci-archive:{} docker://REGISTRY/REPO:TAG, or kind load image-archive {}",
        path.display(),
        image.manifest.digest,
        image.architecture,
        bytes.len() as f64 / (1024.0 * 1024.0),
        path.display(),
        path.display()
    );
    Ok(Outcome::Pass)
}

fn push(a: PushArgs, stop: &Stop) -> Ended {
    let said = |e| match e {
        PushError::Input(e) | PushError::Refused(e) => fail(Kind::BadInput, "push", e),
        PushError::Registry(e) => fail(Kind::Run, "push", e),
        PushError::Interrupted(tagging) => fail(
            Kind::Interrupted,
            "push",
            format!(
                "interrupted by {} {}; blobs already uploaded may be left, and the \
                 registry's garbage collection removes them",
                stop.reason(),
                if tagging {
                    "while the manifest was being sent, so the tag may or may not exist"
                } else {
                    "before the manifest was sent: nothing is tagged"
                }
            ),
        ),
    };
    // The target and its credentials first: said at once, not after the image is built.
    let target = image::push::target(&a.target).map_err(said)?;
    let (image, _) = this_image("push")?;
    eprintln!(
        "iogauge kube image push: pushing {} ({:.1} MiB) to {}",
        image.manifest.digest,
        image.layer.bytes.len() as f64 / (1024.0 * 1024.0),
        crate::untrusted::term(&a.target)
    );
    let pinned = image::push::push(&image, &target, a.insecure, stop.flag()).map_err(said)?;
    stdout::println(&pinned);
    Ok(Outcome::Pass)
}
