//! `cqldb shell` in a pseudo-terminal, as a person types into it: line editing's prompt,
//! multi-line statements, dot commands, history recall, and Ctrl-C stopping a running
//! statement while the shell stays.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// The terminal's side of the shell: what it printed so far, and the keyboard.
struct Terminal {
    screen: Arc<Mutex<Vec<u8>>>,
    keyboard: std::fs::File,
    child: std::process::Child,
    /// How much of the screen earlier expectations consumed.
    seen: usize,
}

impl Terminal {
    fn spawn(args: &[&str], home: &std::path::Path) -> Terminal {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty fills two descriptors; no name, termios or size given.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty");
        // SAFETY: both descriptors were just opened and are owned here.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cqldb"));
        cmd.args(args)
            .env("HOME", home)
            .env("TERM", "xterm")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: setsid and ioctl are async-signal-safe; the child takes the terminal as
        // its controlling terminal, so Ctrl-C reaches it as SIGINT.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn the shell");
        let keyboard = std::fs::File::from(master.try_clone().unwrap());
        let mut reader = std::fs::File::from(master);
        let screen = Arc::new(Mutex::new(Vec::new()));
        let sink = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO when the shell has gone: the end of the screen.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Terminal {
            screen,
            keyboard,
            child,
            seen: 0,
        }
    }

    fn screen_text(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    /// Waits until `text` appears after what was already seen.
    fn expect(&mut self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen_text();
            if let Some(i) = screen.get(self.seen..).and_then(|s| s.find(text)) {
                self.seen += i + text.len();
                return;
            }
            assert!(
                Instant::now() < deadline,
                "waited for {text:?}; the screen after what was seen:\n{}",
                screen.get(self.seen..).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn type_keys(&mut self, keys: &str) {
        self.keyboard.write_all(keys.as_bytes()).unwrap();
        self.keyboard.flush().unwrap();
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_shell_in_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let pgn = shared().join("conformance/cql/corpus/games.pgn");
    let out = Command::new(env!("CARGO_BIN_EXE_cqldb"))
        .args(["index", "--quiet", "--db"])
        .arg(&db)
        .arg(&pgn)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    let mut t = Terminal::spawn(&["shell", "--db", db.to_str().unwrap()], tmp.path());
    t.expect("cqldb> ");
    t.type_keys("SELECT 40 + 2 AS answer;\r");
    t.expect("42");
    t.expect("1 row");
    t.expect("cqldb> ");

    // A statement over two lines: the continuation prompt, then the answer.
    t.type_keys("SELECT count(*) AS n\r");
    t.expect("...> ");
    t.type_keys("FROM games WHERE result = '1-0';\r");
    t.expect("1 row");
    t.expect("cqldb> ");

    // History: the up arrow brings back the last statement.
    t.type_keys("\x1b[A");
    t.expect("result = '1-0'");
    t.type_keys("\r");
    t.expect("1 row");

    // One line at a time, as a person types: the editor discards what is typed ahead
    // while it sets the terminal up.
    t.expect("cqldb> ");
    t.type_keys(".timer on\r");
    t.expect("cqldb> ");
    t.type_keys(".mode csv\r");
    t.expect("cqldb> ");
    t.type_keys("SELECT 1 AS a, 'x,y' AS b;\r");
    t.expect("a,b");
    t.expect("1,\"x,y\"");
    t.expect(" ms");
    t.expect("cqldb> ");
    t.type_keys(".timer off\r");
    t.expect("cqldb> ");
    t.type_keys(".mode table\r");
    t.expect("cqldb> ");

    t.type_keys(".cql mate\r");
    t.expect("rows");
    t.expect("cqldb> ");
    t.type_keys(".explain SELECT count(*) FROM positions WHERE mate\r");
    t.expect("CqldbScan");
    t.expect("cqldb> ");

    // Ctrl-C stops a statement that would run for hours; the shell stays.
    t.type_keys(
        "SELECT count(*) FROM positions a, positions b, positions c WHERE a.ply + b.ply = c.ply;\r",
    );
    std::thread::sleep(Duration::from_millis(800));
    let before = Instant::now();
    t.type_keys("\x03");
    t.expect("stopped");
    t.expect("cqldb> ");
    assert!(
        before.elapsed() < Duration::from_secs(10),
        "Ctrl-C took {:?}",
        before.elapsed()
    );
    t.type_keys("SELECT 6 * 7 AS again;\r");
    t.expect("42");
    t.expect("cqldb> ");

    t.type_keys(".quit\r");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = t.child.try_wait().unwrap() {
            // The stopped statement counts as a failed one.
            assert_eq!(status.code(), Some(1), "{}", t.screen_text());
            break;
        }
        assert!(Instant::now() < deadline, "the shell did not leave");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(tmp.path().join(".cqldb_history").exists());
}
