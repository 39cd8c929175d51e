//! A reader that reads the next blocks of a file on its own thread while the caller parses the
//! current one: importing a log, copying the file out of the page cache was a sixth of the
//! parsing thread's time. Memory stays at a few blocks, whatever the file's size.

use std::io::{BufRead, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Bytes per block.
const BLOCK: usize = 1 << 20;
/// Blocks read ahead.
const AHEAD: usize = 3;

/// A [`BufRead`] over any reader, filled by a background thread.
///
/// ```
/// use std::io::BufRead;
/// let data = b"one\ntwo\n".to_vec();
/// let r = cqldb_storage::gtl::ReadAhead::new(std::io::Cursor::new(data));
/// let lines: Vec<String> = r.lines().map(|l| l.unwrap()).collect();
/// assert_eq!(lines, ["one", "two"]);
/// ```
pub struct ReadAhead {
    blocks: Receiver<std::io::Result<Vec<u8>>>,
    spare: SyncSender<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
    done: bool,
    thread: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts reading `inner` ahead.
    pub fn new<R: Read + Send + 'static>(mut inner: R) -> Self {
        let (to_reader, blocks) = sync_channel(AHEAD);
        let (spare, spares) = sync_channel::<Vec<u8>>(AHEAD + 2);
        let thread = std::thread::spawn(move || {
            loop {
                let mut block = spares.try_recv().unwrap_or_default();
                block.resize(BLOCK, 0);
                let mut filled = 0;
                let result = loop {
                    match inner.read(&mut block[filled..]) {
                        Ok(0) => break Ok(()),
                        Ok(k) => {
                            filled += k;
                            if filled == BLOCK {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                block.truncate(filled);
                let last = filled < BLOCK;
                let message = match result {
                    Ok(()) => Ok(block),
                    Err(e) => Err(e),
                };
                let failed = message.is_err();
                // The receiver is gone: the caller stopped reading.
                if to_reader.send(message).is_err() || last || failed {
                    return;
                }
            }
        });
        Self {
            blocks,
            spare,
            current: Vec::new(),
            at: 0,
            done: false,
            thread: Some(thread),
        }
    }
}

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let k = available.len().min(buf.len());
        buf[..k].copy_from_slice(&available[..k]);
        self.consume(k);
        Ok(k)
    }
}

impl BufRead for ReadAhead {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.at == self.current.len() && !self.done {
            match self.blocks.recv() {
                Ok(Ok(block)) => {
                    let used = std::mem::replace(&mut self.current, block);
                    self.at = 0;
                    // A full spare queue only means the thread has enough buffers.
                    let _ = self.spare.try_send(used);
                    if self.current.is_empty() {
                        self.done = true;
                    }
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                // The thread ended after its last block.
                Err(_) => self.done = true,
            }
        }
        Ok(&self.current[self.at..])
    }

    fn consume(&mut self, amt: usize) {
        self.at = (self.at + amt).min(self.current.len());
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Unblock the thread (its sends fail once the receiver is gone), then wait for it.
        let (_, dead) = sync_channel(0);
        drop(std::mem::replace(&mut self.blocks, dead));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{BLOCK, ReadAhead};
    use std::io::Read;

    #[test]
    fn reads_everything_in_order_across_blocks() {
        let data: Vec<u8> = (0..(3 * BLOCK + 12345)).map(|i| (i % 251) as u8).collect();
        let mut out = Vec::new();
        ReadAhead::new(std::io::Cursor::new(data.clone()))
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn stopping_early_does_not_hang() {
        let data = vec![7u8; 10 * BLOCK];
        let mut r = ReadAhead::new(std::io::Cursor::new(data));
        let mut first = [0u8; 10];
        r.read_exact(&mut first).unwrap();
        drop(r);
    }
}
