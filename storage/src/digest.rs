//! Checksums of a segment's parts, so that reading verifies exactly what it reads.
//!
//! A segment file's header checksum covers the whole payload, but checking it at every open
//! costs a pass over every byte (tens of milliseconds and the whole file's pages for a query
//! that reads a few kilobytes). Instead each blob — a position block, a text chunk, a bitmap —
//! carries its own CRC-32, checked when it is read, and everything else the reader trusts (the
//! game columns, the block table, the bitmap keys, file names, issues) is covered by one CRC
//! checked at open. The writer and the reader feed the same values in the same order, as
//! little-endian bytes; the header checksum stays for a full check.

use std::borrow::Cow;

/// A CRC-32 over length-prefixed little-endian columns.
///
/// Numbers are gathered and hashed in runs: a CRC update per 8-byte number was most of the
/// cost of opening a segment with thousands of blocks and bitmaps (the checksum of a byte
/// string does not depend on how it is cut).
#[derive(Default)]
pub struct Digest {
    crc: crc32fast::Hasher,
    pending: Vec<u8>,
}

/// Bytes gathered before they are hashed.
const RUN: usize = 4096;

impl Digest {
    /// An empty digest.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one column's bytes, prefixed with its length (so that columns cannot shift into one
    /// another).
    pub fn column(&mut self, bytes: &[u8]) {
        self.value(bytes.len() as u64);
        if bytes.len() < RUN {
            self.pending.extend_from_slice(bytes);
            self.flush_full();
        } else {
            self.flush();
            self.crc.update(bytes);
        }
    }

    /// Adds one number.
    pub fn value(&mut self, v: u64) {
        self.pending.extend_from_slice(&v.to_le_bytes());
        self.flush_full();
    }

    fn flush_full(&mut self) {
        if self.pending.len() >= RUN {
            self.flush();
        }
    }

    fn flush(&mut self) {
        self.crc.update(&self.pending);
        self.pending.clear();
    }

    /// The checksum.
    pub fn finish(mut self) -> u32 {
        self.flush();
        self.crc.finalize()
    }
}

/// The CRC-32 of one blob.
pub fn blob_crc(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// A number, native or archived, as a `u64`.
pub trait Native {
    /// The value.
    fn native(self) -> u64;
}

macro_rules! native {
    ($($t:ty => $conv:expr),*) => {$(
        impl Native for $t {
            fn native(self) -> u64 {
                #[allow(clippy::redundant_closure_call)]
                ($conv)(self)
            }
        }
    )*};
}

native!(
    u32 => u64::from,
    u64 => |v| v,
    rkyv::rend::u32_le => |v: rkyv::rend::u32_le| u64::from(v.to_native()),
    rkyv::rend::u64_le => |v: rkyv::rend::u64_le| v.to_native()
);

/// A column of numbers as little-endian bytes (the writer's native values).
pub trait LeColumn {
    /// The bytes, borrowed when the memory already is little-endian.
    fn le_bytes(&self) -> Cow<'_, [u8]>;
}

macro_rules! native_column {
    ($($t:ty),*) => {$(
        impl LeColumn for [$t] {
            fn le_bytes(&self) -> Cow<'_, [u8]> {
                Cow::Owned(self.iter().flat_map(|v| v.to_le_bytes()).collect())
            }
        }
    )*};
}

native_column!(u8, u16, u32, u64);

macro_rules! archived_column {
    ($($t:ty),*) => {$(
        impl LeColumn for [$t] {
            fn le_bytes(&self) -> Cow<'_, [u8]> {
                // SAFETY: the archived little-endian integers are plain bytes in memory (no
                // padding, any bit pattern valid), so the slice can be viewed as its bytes.
                Cow::Borrowed(unsafe {
                    std::slice::from_raw_parts(self.as_ptr().cast::<u8>(), std::mem::size_of_val(self))
                })
            }
        }
    )*};
}

archived_column!(rkyv::rend::u16_le, rkyv::rend::u32_le, rkyv::rend::u64_le);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_and_archived_columns_give_the_same_bytes() {
        let native: Vec<u32> = vec![1, 0xdead_beef, 7];
        let archived: Vec<rkyv::rend::u32_le> = native
            .iter()
            .map(|&v| rkyv::rend::u32_le::from_native(v))
            .collect();
        assert_eq!(native.le_bytes(), archived.le_bytes());
        let native: Vec<u16> = vec![3, 0xffff];
        let archived: Vec<rkyv::rend::u16_le> = native
            .iter()
            .map(|&v| rkyv::rend::u16_le::from_native(v))
            .collect();
        assert_eq!(native.le_bytes(), archived.le_bytes());
        let native: Vec<u64> = vec![u64::MAX - 5];
        let archived: Vec<rkyv::rend::u64_le> = native
            .iter()
            .map(|&v| rkyv::rend::u64_le::from_native(v))
            .collect();
        assert_eq!(native.le_bytes(), archived.le_bytes());
    }

    #[test]
    fn columns_do_not_shift_into_one_another() {
        let mut a = Digest::new();
        a.column(&[1, 2]);
        a.column(&[3]);
        let mut b = Digest::new();
        b.column(&[1]);
        b.column(&[2, 3]);
        assert_ne!(a.finish(), b.finish());
    }
}

#[cfg(test)]
mod digest_tests {
    use super::*;

    #[test]
    fn gathering_numbers_keeps_the_checksum_of_the_bytes() {
        let mut d = Digest::new();
        let mut bytes = Vec::new();
        for i in 0..3000u64 {
            d.value(i);
            bytes.extend_from_slice(&i.to_le_bytes());
            let col = vec![i as u8; (i as usize * 7) % 5000];
            d.column(&col);
            bytes.extend_from_slice(&(col.len() as u64).to_le_bytes());
            bytes.extend_from_slice(&col);
        }
        assert_eq!(d.finish(), crc32fast::hash(&bytes));
    }
}
