//! Listing the images inside a fatbin (what `cuobjdump --list-elf --list-ptx` shows), without
//! the CUDA toolkit.
//!
//! # Layout
//!
//! Worked out from `fatbinary` 13.0.88 output (1–3 images, compressed and not); all fields
//! little-endian. A fatbin is one or more containers back to back (zero padding between them
//! is allowed):
//!
//! ```text
//! container header, 16 bytes
//!   0x00 u32  magic 0xBA55ED50
//!   0x04 u16  version (1)
//!   0x06 u16  header size (16)
//!   0x08 u64  size of the entries that follow
//! entry header, `header size` bytes (64 for ELF, 80 for PTX), then the payload
//!   0x00 u16  kind: 1 = PTX, 2 = ELF (SASS cubin); others exist (e.g. LTO IR)
//!   0x02 u16  unknown (0x0101)
//!   0x04 u32  header size (the payload starts here)
//!   0x08 u64  payload size, padded (the next entry starts after it)
//!   0x10 u32  compressed size (unpadded) when compressed, else 0
//!   0x14 u32  unknown (0 for ELF, 0x40 for PTX)
//!   0x18 u16  minor version, 0x1a u16 major version (for PTX: the PTX ISA, e.g. 9.0)
//!   0x1c u32  arch (sm), e.g. 75, 80, 90
//!   0x20 u32  offset of an object name, 0x24 u32 its length (0 here)
//!   0x28 u64  flags: 0x1 64-bit, 0x10 Linux host, 0x2000 compressed (LZ4, older
//!             toolkits), 0x8000 compressed (zstd, CUDA 12.8+: payload starts 28 b5 2f fd)
//!   0x30 u64  0
//!   0x38 u64  uncompressed size when compressed, else 0
//!   0x40 ...  (PTX only) 16 more bytes, unknown (0x48 at 0x40)
//! ```
//!
//! `fatbinary` compresses PTX by default (`--compress=false` turns that off) and ELF only with
//! `--compress-all`. An uncompressed PTX payload is the PTX text, NUL-padded.

use std::fmt;

/// The container magic, `0xBA55ED50` (bytes `50 ed 55 ba` on disk).
pub const MAGIC: u32 = 0xBA55_ED50;

const CONTAINER_HEADER: usize = 16;
const MIN_ENTRY_HEADER: usize = 64;
const FLAG_COMPRESSED_LZ4: u64 = 0x2000;
const FLAG_COMPRESSED_ZSTD: u64 = 0x8000;

/// What an image holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// PTX text for a virtual arch (JIT-compiled by the driver).
    Ptx,
    /// A cubin: SASS for one real arch.
    Elf,
    /// A kind this parser does not know (the raw value).
    Other(u16),
}

/// One image inside a fatbin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// PTX, ELF or other.
    pub kind: ImageKind,
    /// The arch it was built for (`sm=` of `fatbinary --image3`), e.g. 90.
    pub sm: u32,
    /// Offset of the payload from the start of the parsed slice.
    pub offset: usize,
    /// Bytes of payload as stored (compressed size when compressed, without padding).
    pub size: usize,
    /// Whether the payload is compressed.
    pub compressed: bool,
    /// Size after decompression (equal to `size` when not compressed).
    pub uncompressed_size: u64,
    /// (major, minor) version of the entry; for PTX the PTX ISA version.
    pub version: (u16, u16),
    /// The raw flags word.
    pub flags: u64,
}

impl Image {
    /// The payload (as stored: compressed when [`Image::compressed`]).
    pub fn data<'a>(&self, fatbin: &'a [u8]) -> Option<&'a [u8]> {
        fatbin.get(self.offset..self.offset.checked_add(self.size)?)
    }

    /// `"elf sm_90"`, `"ptx sm_75"`: the spelling used in fatbuild manifests.
    pub fn describe(&self) -> String {
        match self.kind {
            ImageKind::Ptx => format!("ptx sm_{}", self.sm),
            ImageKind::Elf => format!("elf sm_{}", self.sm),
            ImageKind::Other(k) => format!("kind{k} sm_{}", self.sm),
        }
    }
}

/// Why a slice is not a well-formed fatbin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The data ends inside a header or payload.
    Truncated {
        /// Where the cut-off structure starts.
        offset: usize,
        /// What was being read.
        what: &'static str,
        /// Bytes it needs from `offset`.
        needed: u64,
        /// Bytes left from `offset`.
        available: usize,
    },
    /// No fatbin magic where a container should start.
    BadMagic {
        /// Where.
        offset: usize,
        /// The 32-bit value found there.
        found: u32,
    },
    /// A header field is impossible (e.g. a header smaller than its own fields).
    BadHeader {
        /// Where the header starts.
        offset: usize,
        /// What is wrong.
        what: String,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Truncated {
                offset,
                what,
                needed,
                available,
            } => write!(
                f,
                "fatbin truncated: {what} at offset {offset} needs {needed} bytes, {available} left"
            ),
            ParseError::BadMagic { offset, found } => write!(
                f,
                "not a fatbin: expected magic 0x{MAGIC:08X} at offset {offset}, found 0x{found:08X}"
            ),
            ParseError::BadHeader { offset, what } => {
                write!(f, "bad fatbin header at offset {offset}: {what}")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// Lists the images of a fatbin (every container in `data`, in order). Never panics.
pub fn parse(data: &[u8]) -> Result<Vec<Image>, ParseError> {
    let mut images = Vec::new();
    let mut pos = 0;
    loop {
        pos = parse_container(data, pos, &mut images)?;
        // Containers may be followed by zero padding, then possibly another container.
        while pos < data.len() && data[pos] == 0 {
            pos += 1;
        }
        if pos >= data.len() {
            return Ok(images);
        }
    }
}

/// Parses the container at `start`; returns where it ends.
fn parse_container(
    data: &[u8],
    start: usize,
    images: &mut Vec<Image>,
) -> Result<usize, ParseError> {
    let header = slice(data, start, CONTAINER_HEADER as u64, "container header")?;
    let magic = u32_at(header, 0);
    if magic != MAGIC {
        return Err(ParseError::BadMagic {
            offset: start,
            found: magic,
        });
    }
    let header_size = u16_at(header, 6) as u64;
    if header_size < CONTAINER_HEADER as u64 {
        return Err(ParseError::BadHeader {
            offset: start,
            what: format!("container header size {header_size} < {CONTAINER_HEADER}"),
        });
    }
    let body_size = u64_at(header, 8);
    let body_start = start as u64 + header_size;
    slice(
        data,
        start,
        header_size.saturating_add(body_size),
        "container",
    )?;
    let end = body_start + body_size; // In range: checked by `slice` above.
    let mut pos = body_start;
    while pos < end {
        let at = pos as usize;
        let h = slice(data, at, MIN_ENTRY_HEADER as u64, "entry header")?;
        let kind = u16_at(h, 0);
        let hsize = u32_at(h, 4) as u64;
        let psize = u64_at(h, 8);
        if hsize < MIN_ENTRY_HEADER as u64 {
            return Err(ParseError::BadHeader {
                offset: at,
                what: format!("entry header size {hsize} < {MIN_ENTRY_HEADER}"),
            });
        }
        let entry_len = hsize.saturating_add(psize);
        if entry_len > end - pos {
            return Err(ParseError::Truncated {
                offset: at,
                what: "entry",
                needed: entry_len,
                available: (end - pos) as usize,
            });
        }
        let flags = u64_at(h, 0x28);
        let compressed = flags & (FLAG_COMPRESSED_LZ4 | FLAG_COMPRESSED_ZSTD) != 0;
        let compressed_size = u32_at(h, 0x10) as u64;
        let size = if compressed && compressed_size > 0 && compressed_size <= psize {
            compressed_size
        } else {
            psize
        };
        images.push(Image {
            kind: match kind {
                1 => ImageKind::Ptx,
                2 => ImageKind::Elf,
                k => ImageKind::Other(k),
            },
            sm: u32_at(h, 0x1c),
            offset: (pos + hsize) as usize,
            size: size as usize,
            compressed,
            uncompressed_size: if compressed { u64_at(h, 0x38) } else { size },
            version: (u16_at(h, 0x1a), u16_at(h, 0x18)),
            flags,
        });
        pos += entry_len;
    }
    Ok(end as usize)
}

/// `data[offset..offset + len]`, or a `Truncated` error.
fn slice<'a>(
    data: &'a [u8],
    offset: usize,
    len: u64,
    what: &'static str,
) -> Result<&'a [u8], ParseError> {
    let available = data.len().saturating_sub(offset);
    if len > available as u64 {
        return Err(ParseError::Truncated {
            offset,
            what,
            needed: len,
            available,
        });
    }
    Ok(&data[offset..offset + len as usize])
}

// The readers below are only used on slices `slice` has checked to hold the field.
fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic container with the layout documented above.
    fn synth(entries: &[(u16, u32, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for &(kind, sm, payload) in entries {
            let hsize: u32 = if kind == 1 { 80 } else { 64 };
            let padded = (payload.len() + 7) / 8 * 8;
            let mut h = vec![0u8; hsize as usize];
            h[0..2].copy_from_slice(&kind.to_le_bytes());
            h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
            h[4..8].copy_from_slice(&hsize.to_le_bytes());
            h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
            h[0x1c..0x20].copy_from_slice(&sm.to_le_bytes());
            h[0x28..0x30].copy_from_slice(&0x11u64.to_le_bytes());
            body.extend(h);
            body.extend(payload);
            body.resize(body.len() + padded - payload.len(), 0);
        }
        let mut out = Vec::new();
        out.extend(MAGIC.to_le_bytes());
        out.extend(1u16.to_le_bytes());
        out.extend(16u16.to_le_bytes());
        out.extend((body.len() as u64).to_le_bytes());
        out.extend(body);
        out
    }

    #[test]
    fn synthetic_images_are_listed() {
        let fb = synth(&[
            (2, 80, b"\x7fELF-80"),
            (2, 90, b"\x7fELF-90!"),
            (1, 75, b".version 9.0"),
        ]);
        let imgs = parse(&fb).unwrap();
        let d: Vec<String> = imgs.iter().map(Image::describe).collect();
        assert_eq!(d, ["elf sm_80", "elf sm_90", "ptx sm_75"]);
        assert_eq!(imgs[1].data(&fb).unwrap(), b"\x7fELF-90!");
        assert_eq!(imgs[2].data(&fb).unwrap(), b".version 9.0\0\0\0\0");
        assert!(imgs.iter().all(|i| !i.compressed));
        // Two containers with padding between them.
        let mut two = fb.clone();
        two.extend([0; 8]);
        two.extend(synth(&[(2, 100, b"x")]));
        assert_eq!(parse(&two).unwrap().len(), 4);
    }

    #[test]
    fn garbage_and_truncation_are_errors_not_panics() {
        let fb = synth(&[(2, 80, &[7u8; 100]), (1, 75, b"ptx")]);
        for cut in 0..fb.len() {
            let r = parse(&fb[..cut]);
            assert!(
                r.is_err() || fb[cut..].iter().all(|&b| b == 0),
                "cut at {cut}"
            );
        }
        assert!(matches!(
            parse(b"\x7fELF............"),
            Err(ParseError::BadMagic { .. })
        ));
        assert!(matches!(parse(&[]), Err(ParseError::Truncated { .. })));
        // Mutate every byte of the headers to a few extreme values.
        for i in 0..fb.len().min(200) {
            for v in [0u8, 1, 0x3f, 0x80, 0xff] {
                let mut m = fb.clone();
                m[i] = v;
                let _ = parse(&m);
            }
        }
        // Sizes near u64::MAX must not overflow.
        let mut m = fb.clone();
        m[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse(&m).is_err());
        let mut m = fb.clone();
        m[16 + 8..16 + 16].copy_from_slice(&(u64::MAX - 10).to_le_bytes());
        assert!(parse(&m).is_err());
        let mut m = fb;
        m[16 + 4..16 + 8].copy_from_slice(&8u32.to_le_bytes());
        assert!(matches!(parse(&m), Err(ParseError::BadHeader { .. })));
    }

    #[test]
    fn pseudo_random_inputs_never_panic() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let base = synth(&[(2, 80, &[1u8; 40]), (1, 75, b"abc")]);
        for _ in 0..2000 {
            let mut m = base.clone();
            for _ in 0..4 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x as usize) % m.len();
                m[i] = (x >> 32) as u8;
            }
            let _ = parse(&m);
            let _ = parse(&m[..(x as usize) % m.len()]);
        }
    }
}
