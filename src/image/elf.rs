//! Whether a binary can run in a scratch image: an ELF executable for the image's
//! architecture with no program interpreter (PT_INTERP), i.e. statically linked. A dynamic
//! one would fail only when the pod starts, with "no such file or directory" for its loader.

/// The command that builds the static binary (as scripts/build-image does).
pub const STATIC_BUILD: &str = "RUSTFLAGS='-C target-feature=+crt-static' cargo build --release \
     --target x86_64-unknown-linux-gnu --target-dir target/static --bin iogauge, then run \
     target/static/x86_64-unknown-linux-gnu/release/iogauge kube image …";

const PT_INTERP: u32 = 3;

/// Ok when `elf` is a static little-endian 64-bit ELF executable for `architecture` (amd64 or
/// arm64); else what it is and the fix.
pub fn check_static(elf: &[u8], architecture: &str) -> Result<(), String> {
    let u16_at = |o: usize| elf.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| {
        elf.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        elf.get(o..o + 8).map(|b| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_le_bytes(a)
        })
    };
    if elf.get(..4) != Some(b"\x7fELF") || elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return Err("it is not a 64-bit little-endian ELF executable".into());
    }
    let machine = u16_at(0x12).unwrap_or(0);
    let expected = match architecture {
        "amd64" => 0x3e,
        "arm64" => 0xb7,
        _ => 0,
    };
    if machine != expected {
        return Err(format!(
            "its ELF machine is {machine:#x}, not {architecture}'s"
        ));
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return Err("its ELF header is cut short".into());
    };
    for i in 0..usize::from(phnum) {
        let at = usize::try_from(phoff)
            .ok()
            .and_then(|o| o.checked_add(i * usize::from(phentsize)));
        let Some(p_type) = at.and_then(u32_at) else {
            return Err("its program headers are cut short".into());
        };
        if p_type == PT_INTERP {
            return Err(format!(
                "it is dynamically linked (it asks for a program interpreter, the dynamic \
                 loader, which a FROM-scratch image does not have). Build a static one: {STATIC_BUILD}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 header for x86_64 with one program header of type `p_type`.
    fn elf(p_type: u32) -> Vec<u8> {
        let mut e = vec![0u8; 64 + 56];
        e[..4].copy_from_slice(b"\x7fELF");
        e[4] = 2;
        e[5] = 1;
        e[0x12..0x14].copy_from_slice(&0x3eu16.to_le_bytes());
        e[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        e[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        e[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
        e[64..68].copy_from_slice(&p_type.to_le_bytes());
        e
    }

    #[test]
    fn an_interpreter_means_dynamic() {
        assert!(check_static(&elf(1), "amd64").is_ok());
        let e = check_static(&elf(PT_INTERP), "amd64").unwrap_err();
        assert!(e.contains("dynamically linked"), "{e}");
        assert!(e.contains("+crt-static"), "{e}");
    }

    #[test]
    fn other_files_and_machines_are_refused() {
        assert!(check_static(b"#!/bin/sh", "amd64").is_err());
        assert!(check_static(&elf(1), "arm64")
            .unwrap_err()
            .contains("arm64"));
        assert!(check_static(&elf(1)[..66], "amd64").is_err());
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn this_test_binary_is_dynamic_unless_built_static() {
        let me = std::fs::read("/proc/self/exe").unwrap();
        let r = check_static(&me, "amd64");
        assert_eq!(r.is_ok(), cfg!(target_feature = "crt-static"), "{r:?}");
    }
}
