//! Keeping a build on a number of cores ([`CoreBudget`]): `--threads N` means the cores it may
//! use, as a database's thread setting does, not only its parser threads.
//!
//! Why: the pipeline has a reading thread, parser threads, the writer and a segment finisher;
//! with one parser thread the others still ran beside it on a second core, so "one thread"
//! used about one and a half cores and "two" could not be twice as fast. The calling thread is
//! held to the first N cores it may run on while the build's threads start from it (threads
//! take their creator's cores), and gets its cores back after.

/// The calling thread held to some of its cores until dropped (then given all of them back).
pub struct CoreBudget {
    /// The cores the thread had, if they were narrowed.
    before: Option<libc::cpu_set_t>,
}

impl CoreBudget {
    /// Holds the calling thread to `cores` of the cores it may run on (nothing changes when it
    /// has no more than that, or the system does not say which it has).
    pub fn hold(cores: usize) -> Self {
        let unchanged = Self { before: None };
        let Some(before) = current() else {
            return unchanged;
        };
        let allowed = members(&before);
        if cores == 0 || allowed.len() <= cores {
            return unchanged;
        }
        // SAFETY: an all-zero `cpu_set_t` is the empty set; `CPU_SET` writes within it.
        let mut narrowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in &allowed[..cores] {
            unsafe { libc::CPU_SET(c, &mut narrowed) };
        }
        if set(&narrowed) {
            Self {
                before: Some(before),
            }
        } else {
            unchanged
        }
    }
}

impl Drop for CoreBudget {
    fn drop(&mut self) {
        if let Some(before) = &self.before {
            // Nothing to do if it fails: the thread keeps the narrower set.
            set(before);
        }
    }
}

/// The cores in `set`.
fn members(set: &libc::cpu_set_t) -> Vec<usize> {
    // SAFETY: `CPU_ISSET` reads within the set it is given.
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, set) })
        .collect()
}

/// The calling thread's cores.
fn current() -> Option<libc::cpu_set_t> {
    // SAFETY: the set is written by the call, whose size argument is the set's size.
    unsafe {
        let mut s: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut s) == 0)
            .then_some(s)
    }
}

/// Sets the calling thread's cores; whether it worked.
fn set(s: &libc::cpu_set_t) -> bool {
    // SAFETY: the set is read by the call, whose size argument is the set's size.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), s) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count() -> Option<usize> {
        Some(members(&current()?).len())
    }

    /// A thread started under the budget runs on that many cores; the caller gets its cores
    /// back when the budget ends.
    #[test]
    fn threads_started_under_a_budget_keep_it() {
        std::thread::spawn(|| {
            let Some(all) = count() else { return };
            {
                let _budget = CoreBudget::hold(1);
                assert_eq!(count(), Some(1));
                let inner = std::thread::spawn(count).join().unwrap();
                assert_eq!(inner, Some(1), "a thread takes its creator's cores");
            }
            assert_eq!(count(), Some(all));
            let _wide = CoreBudget::hold(all + 1);
            assert_eq!(count(), Some(all), "more cores than there are: unchanged");
        })
        .join()
        .unwrap();
    }
}
