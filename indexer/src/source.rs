//! Opening inputs: plain PGN, `.zst`, `.gz`, `.bz2` (detected by magic bytes), or `-` for stdin.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where games come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A file, compressed or not.
    Path(PathBuf),
    /// Standard input.
    Stdin,
    /// Bytes already in memory (e.g. the sample compiled into the binary), with a display name.
    Static {
        /// Name recorded as the source file.
        name: String,
        /// The (possibly compressed) PGN bytes.
        data: &'static [u8],
    },
}

impl Input {
    /// `-` means stdin, anything else a path.
    pub fn parse(arg: &str) -> Self {
        if arg == "-" {
            Self::Stdin
        } else {
            Self::Path(PathBuf::from(arg))
        }
    }

    /// Name recorded with each game's provenance.
    pub fn name(&self) -> String {
        match self {
            Self::Path(p) => p.display().to_string(),
            Self::Stdin => "<stdin>".to_owned(),
            Self::Static { name, .. } => name.clone(),
        }
    }

    /// Size on disk, if known (for progress).
    pub fn size(&self) -> Option<u64> {
        match self {
            Self::Path(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            Self::Stdin => None,
            Self::Static { data, .. } => Some(data.len() as u64),
        }
    }

    /// Opens the input, decompressing as needed; raw bytes consumed are added to `counter`.
    pub fn open(&self, counter: Arc<AtomicU64>) -> io::Result<Box<dyn Read + Send>> {
        let raw: Box<dyn Read + Send> = match self {
            Self::Path(p) => Box::new(File::open(p).map_err(|e| with_path(p, e))?),
            Self::Stdin => Box::new(io::stdin()),
            Self::Static { data, .. } => Box::new(*data),
        };
        let mut reader = BufReader::with_capacity(
            1 << 16,
            Counting {
                inner: raw,
                counter,
            },
        );
        let magic = reader
            .fill_buf()?
            .get(..4)
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        Ok(match magic.as_slice() {
            [0x28, 0xb5, 0x2f, 0xfd] => {
                Box::new(Decompressing(crate::zstd_input::ZstdInput::new(reader)?))
            }
            [0x1f, 0x8b, ..] => {
                Box::new(Decompressing(flate2::bufread::MultiGzDecoder::new(reader)))
            }
            [b'B', b'Z', b'h', _] => {
                Box::new(Decompressing(bzip2::bufread::MultiBzDecoder::new(reader)))
            }
            _ => Box::new(reader),
        })
    }
}

/// A decompressor whose every error (a damaged stream, a failed checksum) is a
/// [`DamagedCompression`]: bytes it returned before the error may already be wrong (gzip checks
/// its CRC only at the end of a member), so a reader must not keep what came from it.
struct Decompressing<D>(D);

impl<D: Read> Read for Decompressing<D> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::Interrupted {
                e
            } else {
                io::Error::new(e.kind(), DamagedCompression(e.to_string()))
            }
        })
    }
}

/// The error of a damaged compressed input.
#[derive(Debug)]
pub struct DamagedCompression(pub String);

impl std::fmt::Display for DamagedCompression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "damaged compressed data: {}", self.0)
    }
}

impl std::error::Error for DamagedCompression {}

impl DamagedCompression {
    /// Whether `e` is (or wraps) one.
    pub fn is(e: &io::Error) -> bool {
        e.get_ref()
            .is_some_and(|inner| inner.is::<DamagedCompression>())
    }
}

fn with_path(p: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", p.display()))
}

struct Counting<R> {
    inner: R,
    counter: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
