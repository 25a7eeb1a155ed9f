//! A text file a job writes line by line as it runs (fio's logs for plotting, the iolog): each
//! line is formatted on the stack ([`Line`]), written through one fixed 128 KiB buffer (so a
//! flush never splits a line, and nothing is allocated or written per line until the buffer is
//! full), and the first write error is kept to name the file that is incomplete.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

/// Bytes buffered per file before a write.
pub(crate) const BUF: usize = 128 << 10;

/// The file and its buffer; after a write error it writes nothing more.
pub(crate) struct Sink {
    out: Option<BufWriter<File>>,
    path: PathBuf,
    /// What the file is, for the error ("log file", "write_iolog file").
    what: &'static str,
    error: Option<String>,
}

impl Sink {
    pub(crate) fn new(file: File, path: PathBuf, what: &'static str) -> Self {
        Sink {
            out: Some(BufWriter::with_capacity(BUF, file)),
            path,
            what,
            error: None,
        }
    }

    #[inline]
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.write_all(bytes) {
                self.fail(e);
            }
        }
    }

    #[cold]
    fn fail(&mut self, e: io::Error) {
        self.error = Some(format!(
            "{} '{}' is incomplete: {e}",
            self.what,
            self.path.display()
        ));
        self.out = None;
    }

    /// Writes what is buffered; the error names the file that is incomplete.
    pub(crate) fn finish(mut self) -> Result<(), String> {
        if let Some(mut out) = self.out.take() {
            if let Err(e) = out.flush() {
                self.fail(e);
            }
        }
        self.error.map_or(Ok(()), Err)
    }
}

/// One line of at most `N` bytes on the stack. The callers size `N` for the longest line they
/// write (a file name they refused beyond it, numbers of at most 20 digits).
pub(crate) struct Line<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Line<N> {
    pub(crate) fn new() -> Self {
        Line {
            buf: [0; N],
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        self
    }

    /// An unsigned integer in decimal.
    #[inline]
    pub(crate) fn num(&mut self, mut v: u64) -> &mut Self {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.bytes(&tmp[i..])
    }

    /// fio's field separator in its logs.
    #[inline]
    pub(crate) fn sep(&mut self) -> &mut Self {
        self.bytes(b", ")
    }

    /// `0x` and four lower-case hex digits of `v`.
    pub(crate) fn hex4(&mut self, v: u64) -> &mut Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.bytes(b"0x");
        for shift in [12, 8, 4, 0] {
            self.bytes(&[HEX[((v >> shift) & 0xf) as usize]]);
        }
        self
    }

    /// The line so far.
    #[inline]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lines_format_numbers_and_the_sink_writes_them_and_names_a_failure() {
        let mut l = Line::<64>::new();
        l.num(0)
            .sep()
            .num(18_446_744_073_709_551_615)
            .sep()
            .hex4(0x2001);
        assert_eq!(l.as_bytes(), b"0, 18446744073709551615, 0x2001");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut s = Sink::new(File::create(&path).unwrap(), path.clone(), "log file");
        s.write(b"a\n");
        s.write(l.as_bytes());
        s.finish().unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"a\n0, 18446744073709551615, 0x2001"
        );

        // /dev/full takes the buffer's flush and fails it with ENOSPC.
        let full = PathBuf::from("/dev/full");
        let f = std::fs::OpenOptions::new().write(true).open(&full).unwrap();
        let mut s = Sink::new(f, full, "write_iolog file");
        s.write(b"x\n");
        assert_eq!(
            s.finish().unwrap_err(),
            "write_iolog file '/dev/full' is incomplete: No space left on device (os error 28)"
        );
    }
}
