//! Reading a zstd-compressed input with a decompression context kept from the previous input.
//!
//! Why: inputs made with `zstd --long=27` need a window of up to 128 MiB, and a fresh context
//! allocates it anew for every file; the kernel then faults in and zeroes its pages one by one as
//! the window fills. On the three large files that was 84 % of a build's page faults. A context
//! handed back when its input is dropped keeps its window for the next file (zstd keeps its
//! buffers across sessions and grows them only when a frame needs more).

use std::io::{self, BufRead, Read};
use std::sync::Mutex;

use zstd::zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer, ResetDirective};

/// Contexts of dropped inputs, ready for the next ones. Two: an ingest reads one input at a
/// time, and a benchmark's baseline reads beside it at most once.
static POOL: Mutex<Vec<DCtx<'static>>> = Mutex::new(Vec::new());
const POOL_SIZE: usize = 2;

/// Windows up to 2^31 bytes: files made with `zstd --long=27` (or more) need more than zstd's
/// default limit.
const WINDOW_LOG_MAX: u32 = 31;

/// Decompresses the zstd frames of `input` (concatenated frames and skippable frames included).
pub struct ZstdInput<R> {
    /// Always `Some` until dropped (taken back into the pool then).
    ctx: Option<DCtx<'static>>,
    input: R,
    /// A frame has started and not ended: the input ending now is a truncated stream.
    in_frame: bool,
}

impl<R: BufRead> ZstdInput<R> {
    /// Wraps `input`, with a pooled context if one is free.
    pub fn new(input: R) -> io::Result<Self> {
        let pooled = POOL.lock().ok().and_then(|mut pool| pool.pop());
        let mut ctx = match pooled {
            Some(ctx) => ctx,
            None => DCtx::try_create()
                .ok_or_else(|| io::Error::other("cannot create a zstd decompression context"))?,
        };
        ctx.set_parameter(DParameter::WindowLogMax(WINDOW_LOG_MAX))
            .map_err(zstd_error)?;
        Ok(Self {
            ctx: Some(ctx),
            input,
            in_frame: false,
        })
    }
}

impl<R: BufRead> Read for ZstdInput<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        // Only `drop` takes the context; an end of input here would be a silent truncation.
        let Some(ctx) = self.ctx.as_mut() else {
            return Err(io::Error::other(
                "zstd input read after its context was taken",
            ));
        };
        loop {
            let data = self.input.fill_buf()?;
            let at_end = data.is_empty();
            if at_end && !self.in_frame {
                return Ok(0);
            }
            let mut src = InBuffer::around(data);
            let mut dst = OutBuffer::around(&mut *buf);
            let hint = ctx
                .decompress_stream(&mut dst, &mut src)
                .map_err(zstd_error)?;
            let (consumed, produced) = (src.pos(), dst.pos());
            self.input.consume(consumed);
            self.in_frame = hint != 0;
            if produced > 0 {
                return Ok(produced);
            }
            if at_end {
                if !self.in_frame {
                    return Ok(0);
                }
                // Nothing more to read and nothing held back: the frame is cut short.
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "incomplete zstd frame",
                ));
            }
        }
    }
}

impl<R> Drop for ZstdInput<R> {
    fn drop(&mut self) {
        let Some(mut ctx) = self.ctx.take() else {
            return;
        };
        // A context left mid-frame (an input read in part) starts clean for the next one.
        if ctx.reset(ResetDirective::SessionOnly).is_err() {
            return;
        }
        if let Ok(mut pool) = POOL.lock()
            && pool.len() < POOL_SIZE
        {
            pool.push(ctx);
        }
    }
}

fn zstd_error(code: usize) -> io::Error {
    io::Error::other(zstd::zstd_safe::get_error_name(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(data: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        ZstdInput::new(data)?.read_to_end(&mut out)?;
        Ok(out)
    }

    fn sample(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn pooled_contexts_read_every_input_whole() {
        // More inputs than the pool holds, some open at once, some dropped part-read.
        let inputs: Vec<Vec<u8>> = (0..6).map(|i| sample(1000 + i * 70_000)).collect();
        let frames: Vec<Vec<u8>> = inputs
            .iter()
            .map(|d| zstd::encode_all(&d[..], 3).expect("compress"))
            .collect();
        let mut part = ZstdInput::new(&frames[5][..]).expect("open");
        let mut some = [0u8; 10];
        part.read_exact(&mut some).expect("read");
        assert_eq!(some[..], inputs[5][..10]);
        drop(part);
        let open: Vec<_> = (0..3)
            .map(|_| ZstdInput::new(&frames[0][..]).expect("open"))
            .collect();
        for (input, frame) in inputs.iter().zip(&frames) {
            assert_eq!(&read_all(frame).expect("read"), input);
        }
        drop(open);
    }

    #[test]
    fn concatenated_frames_read_as_one_stream() {
        let (a, b) = (sample(5000), sample(300));
        let mut both = zstd::encode_all(&a[..], 1).expect("compress");
        both.extend(zstd::encode_all(&b[..], 19).expect("compress"));
        let mut want = a.clone();
        want.extend(&b);
        assert_eq!(read_all(&both).expect("read"), want);
    }

    #[test]
    fn a_cut_or_damaged_stream_is_an_error() {
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), 3).expect("encoder");
        encoder.include_checksum(true).expect("checksum");
        io::Write::write_all(&mut encoder, &sample(200_000)).expect("compress");
        let frame = encoder.finish().expect("compress");
        for cut in [5, frame.len() / 2, frame.len() - 1] {
            let err = read_all(&frame[..cut]).expect_err("cut stream");
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "cut at {cut}");
        }
        let mut damaged = frame.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 0x55;
        damaged[middle + 1] ^= 0xaa;
        assert!(read_all(&damaged).is_err());
        // The pool still gives sound contexts afterwards.
        let data = sample(70_000);
        let again = zstd::encode_all(&data[..], 3).expect("compress");
        assert_eq!(read_all(&again).expect("read"), data);
    }

    #[test]
    fn empty_input_is_empty() {
        assert_eq!(read_all(&[]).expect("read"), Vec::<u8>::new());
    }
}
