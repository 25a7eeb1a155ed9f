//! Which files a job instance uses and their I/O regions, as fio 3.33's `setup_files` resolves
//! them: `filename` lists, fio's names, size/filesize (ranges), offset and offset_increment,
//! file_append's start at the file's end, offset_align, fill_device's whole-filesystem region.

use super::error::io_err;
use super::space::{fs_bytes, parent_dir};
use super::{FilePlan, LayoutError};
use crate::model::{JobSpec, SizeSpec};
use crate::workload::rng::Rng;
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Split fio's `filename` list: ':' separates names, '\:' is a literal colon.
pub(crate) fn split_filenames(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.retain(|n| !n.is_empty());
    out
}

fn block_device_size(path: &Path) -> std::io::Result<u64> {
    device_size(&File::open(path)?)
}

/// The size of the open block device `f`, bytes.
pub(crate) fn device_size(f: &File) -> std::io::Result<u64> {
    let mut size: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: the ioctl writes one u64 into `size`.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if r == 0 {
        Ok(size)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Size of an existing file or block device (and whether it is a device), None when it does
/// not exist.
fn existing_size(path: &Path) -> Result<Option<(u64, bool)>, LayoutError> {
    let Ok(md) = std::fs::metadata(path) else {
        return Ok(None);
    };
    if md.file_type().is_block_device() {
        let size = block_device_size(path).map_err(io_err("cannot open block device", path))?;
        Ok(Some((size, true)))
    } else {
        Ok(Some((md.len(), false)))
    }
}

/// fio's start offset of instance `jobnum` in a file of `real_size` bytes (0 when it does not
/// exist yet): offset= plus offset_increment per instance. A percentage is rounded up to a
/// whole block as fio does; iogauge also rounds an absolute offset down to a block.
/// With file_append the offset is the file's size (fio's get_start_offset); offset_align
/// replaces the block size a percentage is rounded up to.
fn start_offset(job: &JobSpec, real_size: u64, jobnum: u32, min_bs: u64) -> u64 {
    if job.files.file_append {
        return real_size;
    }
    let inc = job.blocks.offset_increment * jobnum as u64;
    match job.offset {
        SizeSpec::Bytes(b) => {
            let o = b + inc;
            o - o % min_bs
        }
        SizeSpec::Percent(p) => {
            let o = (real_size as f64 * p / 100.0) as u64 + inc;
            let align = job.files.offset_align.unwrap_or(min_bs);
            o.div_ceil(align) * align
        }
    }
}

/// The paths of instance `jobnum`'s files, from the options alone (nothing is looked at):
/// what the cleanup needs, where a whole plan would stat every file again.
pub(crate) fn plan_paths(job: &JobSpec, jobnum: u32) -> Vec<PathBuf> {
    let dir = job.directory.as_ref();
    match &job.filename {
        Some(list) => split_filenames(list)
            .into_iter()
            .map(|n| {
                let p = PathBuf::from(&n);
                match dir {
                    Some(d) if p.is_relative() => d.join(p),
                    _ => p,
                }
            })
            .collect(),
        None => (0..job.nrfiles.max(1))
            .map(|i| {
                let n = job.files.file_name(&job.name, jobnum, i);
                dir.map(|d| d.join(&n)).unwrap_or_else(|| PathBuf::from(n))
            })
            .collect(),
    }
}

/// The files of instance `jobnum` of `job`, with regions and sizes resolved.
pub(crate) fn plan_files(job: &JobSpec, jobnum: u32) -> Result<Vec<FilePlan>, LayoutError> {
    let dir = job.directory.clone();
    let names = plan_paths(job, jobnum);
    if let Some(d) = &dir {
        if !d.is_dir() {
            return Err(LayoutError::NoDirectory { dir: d.clone() });
        }
    }
    let nfiles = names.len() as u64;
    let min_bs = job.min_bs();
    // fio 3.33 (filesetup.c, setup_files): without filesize=, each file's region is
    // size/nrfiles, and when that leaves a whole block or more over, the first files get one
    // more block each. A size= percentage sets no bytes here: it scales each file below.
    // fill_device without a size: fio writes until ENOSPC, so the region is more than the
    // filesystem can hold (its whole size), shared by the files in whole blocks.
    let size = match (job.size, job.filesize, names.first()) {
        (None, None, Some(first))
            if job.files.fill_device && !matches!(existing_size(first)?, Some((_, true))) =>
        {
            let all = fs_bytes(&parent_dir(first))?;
            Some(SizeSpec::Bytes(
                (all / nfiles.max(1) / min_bs * min_bs * nfiles).max(min_bs),
            ))
        }
        (s, _, _) => s,
    };
    let per_size = match (job.filesize, size) {
        (None, Some(SizeSpec::Bytes(b))) => b / nfiles,
        _ => 0,
    };
    let mut extra = match (job.filesize, size) {
        (None, Some(SizeSpec::Bytes(b))) => (b - per_size * nfiles) / min_bs,
        _ => 0,
    };
    let size_pct = match job.size {
        Some(SizeSpec::Percent(p)) if p < 100.0 => Some(p),
        _ => None,
    };
    // filesize=LOW-HIGH: sizes drawn per file from a generator seeded by the job and instance
    // (the same on every call, so planning twice gives the same files).
    let mut size_rng = Rng::new(job.randseed ^ 0xF11E ^ ((jobnum as u64) << 32));
    let mut plans = Vec::with_capacity(names.len());
    for path in names {
        let existing = existing_size(&path)?;
        let ex_size = existing.map(|(s, _)| s);
        // fio: the start offset is taken against the file's real size, which is 0 for a file
        // that does not exist yet (so offset=N% of a new file is 0).
        let offset = start_offset(job, ex_size.unwrap_or(0), jobnum, min_bs);
        let bad_offset = |size: u64| LayoutError::OffsetBeyondFile {
            job: job.name.clone(),
            path: path.clone(),
            offset,
            size,
        };
        // The region (fio's io_size): with filesize= the file is that size and the region is
        // what follows the offset in it; without, the region is size=/nrfiles after the offset.
        let mut region = match job.filesize {
            None => {
                let bonus = if extra > 0 && per_size > 0 {
                    extra -= 1;
                    min_bs
                } else {
                    0
                };
                match (per_size + bonus, ex_size) {
                    // file_append: the size after the file's end, or nothing to do.
                    (0, Some(_)) if job.files.file_append => {
                        return Err(LayoutError::NoSize {
                            job: job.name.clone(),
                            path,
                        })
                    }
                    (0, Some(s)) if offset > s => return Err(bad_offset(s)),
                    // No size= in bytes: the existing file after the offset.
                    (0, Some(s)) => s - offset,
                    (0, None) => {
                        return Err(match job.size {
                            Some(SizeSpec::Percent(pct)) => LayoutError::PercentOfMissing {
                                job: job.name.clone(),
                                pct,
                                path,
                            },
                            _ => LayoutError::NoSize {
                                job: job.name.clone(),
                                path,
                            },
                        })
                    }
                    (b, _) => b,
                }
            }
            // file_append: filesize= is what is written after the file's end.
            Some(SizeSpec::Bytes(low)) if job.files.file_append => low,
            Some(SizeSpec::Bytes(low)) => {
                let high = job.files.filesize_high.unwrap_or(low);
                // fio: an existing file already inside the range keeps its size.
                let file_size = match ex_size {
                    Some(s) if (low..=high).contains(&s) => s,
                    _ if high > low => {
                        let r = size_rng.unit_f64();
                        let s = low + ((high - low) as f64 * r) as u64;
                        s - s % min_bs
                    }
                    _ => low,
                };
                // fio checks the offset against the range's low end (or the kept size).
                let limit = match ex_size {
                    Some(s) if (low..=high).contains(&s) => s,
                    _ => low,
                };
                if offset > limit || offset > file_size {
                    return Err(bad_offset(file_size));
                }
                file_size - offset
            }
            Some(SizeSpec::Percent(pct)) => match ex_size {
                Some(s) => {
                    let file_size = (s as f64 * pct / 100.0) as u64;
                    if offset > file_size {
                        return Err(bad_offset(file_size));
                    }
                    file_size - offset
                }
                None => {
                    return Err(LayoutError::PercentOfMissing {
                        job: job.name.clone(),
                        pct,
                        path,
                    })
                }
            },
        };
        // fio: size=N% takes N% of the whole file (offset included), at most what follows
        // the offset, in whole blocks.
        if let Some(pct) = size_pct {
            let share = (((region + offset) as f64 * pct / 100.0) as u64).min(region);
            region = share - share % min_bs;
        }
        if region < min_bs {
            return Err(LayoutError::RegionTooSmall {
                job: job.name.clone(),
                path,
                region,
                offset,
                bs: min_bs,
            });
        }
        plans.push(FilePlan {
            size: offset + region,
            offset,
            region,
            existed: existing.is_some(),
            is_block: existing.map(|(_, b)| b).unwrap_or(false),
            path,
        });
    }
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::super::job;
    use super::*;

    #[test]
    fn regions_follow_fio_setup_files() {
        let d = tempfile::tempdir().unwrap();
        let k = 1024u64;
        let plan = |f: &dyn Fn(&mut JobSpec)| {
            let mut j = job("t", d.path());
            j.size = None;
            j.bs = [16 * k; 3];
            f(&mut j);
            let p = &plan_files(&j, 0).unwrap()[0];
            (p.offset, p.region, p.size)
        };
        // filesize=256k offset=128k: the file is 256 KiB, the region its second half.
        assert_eq!(
            plan(&|j| {
                j.filesize = Some(SizeSpec::Bytes(256 * k));
                j.offset = SizeSpec::Bytes(128 * k);
            }),
            (128 * k, 128 * k, 256 * k)
        );
        // size= without filesize=: the region follows the offset.
        assert_eq!(
            plan(&|j| {
                j.size = Some(SizeSpec::Bytes(256 * k));
                j.offset = SizeSpec::Bytes(128 * k);
            }),
            (128 * k, 256 * k, 384 * k)
        );
        // offset=N% of a file that does not exist yet is 0 (fio takes it of the real size).
        assert_eq!(
            plan(&|j| {
                j.size = Some(SizeSpec::Bytes(256 * k));
                j.offset = SizeSpec::Percent(50.0);
            }),
            (0, 256 * k, 256 * k)
        );
        // size=50% with filesize=: half the whole file, at most what follows the offset.
        assert_eq!(
            plan(&|j| {
                j.filesize = Some(SizeSpec::Bytes(256 * k));
                j.size = Some(SizeSpec::Percent(50.0));
                j.offset = SizeSpec::Bytes(64 * k);
            }),
            (64 * k, 128 * k, 192 * k)
        );
        // An offset past filesize is refused as fio does.
        let mut j = job("t", d.path());
        j.filesize = Some(SizeSpec::Bytes(256 * k));
        j.offset = SizeSpec::Bytes(512 * k);
        assert!(matches!(
            plan_files(&j, 0),
            Err(LayoutError::OffsetBeyondFile { .. })
        ));
        // On an existing file, offset=N% is of its size, rounded up to a block.
        let path = d.path().join("t.0.0");
        std::fs::write(&path, vec![1u8; (100 * k) as usize]).unwrap();
        let (o, r, _) = plan(&|j| j.offset = SizeSpec::Percent(30.0));
        assert_eq!((o, r), (32 * k, 68 * k));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn names_follow_fio() {
        let d = tempfile::tempdir().unwrap();
        let mut j = job("mytest", d.path());
        j.nrfiles = 2;
        let p = plan_files(&j, 3).unwrap();
        assert_eq!(p[0].path, d.path().join("mytest.3.0"));
        assert_eq!(p[1].path, d.path().join("mytest.3.1"));
        assert_eq!(p[0].region, 512 * 1024);
    }

    #[test]
    fn filename_list_with_escaped_colon() {
        assert_eq!(split_filenames("a:b\\:c"), vec!["a", "b:c"]);
    }

    #[test]
    fn missing_size_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let mut j = job("nosize", d.path());
        j.size = None;
        let e = plan_files(&j, 0).unwrap_err();
        assert!(matches!(e, LayoutError::NoSize { .. }));
    }
}
