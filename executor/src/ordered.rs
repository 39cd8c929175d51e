//! Items worked on by every core, their results handed over in item order.
//!
//! The residual walk and the writing of games go through here: candidate games are cut into
//! work units, and the sink must see the units' games in order. Windows of units run with
//! `par_iter` ended at their slowest unit, with a core idle meanwhile, once per window; here
//! a worker takes the next unit as soon as it has finished one, and waits only when it is
//! `ahead` units in front of the one the consumer needs (which bounds the results held).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Runs `work` on every item on `workers` jobs of rayon's pool and calls `consume` with the
/// results in item order, on the calling thread. The first error (of `work` or of `consume`,
/// in item order) stops the run and is returned; items after it may have been worked on, but
/// their results are dropped. `ahead` (at least 1) bounds how far workers run in front of
/// `consume`.
///
/// The pool's threads, not threads of its own: a thread's allocator heap starts empty, and
/// with fresh threads for every run the bench's repeated in-process full scans measured
/// 0.7-0.8 of a single run's speed (1.0 on the pool's threads). Called
/// from inside the pool (where the calling thread waiting for results could hold up the very
/// jobs it waits for), it works through the items in order on the calling thread.
pub fn for_each_ordered<I, T, E>(
    items: &[I],
    workers: usize,
    ahead: usize,
    work: impl Fn(&I) -> Result<T, E> + Sync,
    mut consume: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E>
where
    I: Sync,
    T: Send,
    E: Send,
{
    if rayon::current_thread_index().is_some() {
        return items
            .iter()
            .try_for_each(|item| work(item).and_then(&mut consume));
    }
    let ahead = ahead.max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // How many results were consumed; workers wait on `moved` for it to grow.
    let consumed = Mutex::new(0usize);
    let moved = Condvar::new();
    let (tx, rx) = crossbeam_channel::unbounded::<(usize, Result<T, E>)>();
    rayon::in_place_scope(|scope| {
        for _ in 0..workers.max(1) {
            let tx = tx.clone();
            let (next, stop, consumed, moved, work) = (&next, &stop, &consumed, &moved, &work);
            scope.spawn(move |_| {
                // A panicking worker never sends its item: everyone must stop rather than wait
                // for it (the panic then reaches the caller when the scope ends).
                let _on_panic = StopOnPanic {
                    stop,
                    consumed,
                    moved,
                };
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let mut c = lock(consumed);
                    // The item the consumer needs is never the one waited for here (its taker
                    // is at most `ahead - 1` past it), so this always ends.
                    while i >= *c + ahead && !stop.load(Ordering::Relaxed) {
                        c = moved.wait(c).unwrap_or_else(|p| p.into_inner());
                    }
                    drop(c);
                    if stop.load(Ordering::Relaxed) || tx.send((i, work(item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut want = 0usize;
        let mut outcome = Ok(());
        'results: for (i, result) in &rx {
            pending.insert(i, result);
            while let Some(result) = pending.remove(&want) {
                want += 1;
                *lock(&consumed) = want;
                moved.notify_all();
                if let Err(e) = result.and_then(&mut consume) {
                    outcome = Err(e);
                    break 'results;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        // Wakes workers waiting for their turn, so that they see `stop` and end.
        drop(lock(&consumed));
        moved.notify_all();
        outcome
    })
}

/// Stops the run when dropped by a panicking thread.
struct StopOnPanic<'a> {
    stop: &'a AtomicBool,
    consumed: &'a Mutex<usize>,
    moved: &'a Condvar,
}

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.stop.store(true, Ordering::Relaxed);
            drop(lock(self.consumed));
            self.moved.notify_all();
        }
    }
}

/// The lock, even if a worker panicked while holding it (the count stays meaningful; the
/// panic itself reaches the caller when the scope ends).
fn lock(m: &Mutex<usize>) -> MutexGuard<'_, usize> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Each case hands results between threads many times; a few dozen cases cover the
        // orders that matter.
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Whatever the workers and look-ahead, `consume` sees `work`'s results in item order,
        /// and stops at the first error in that order.
        #[test]
        fn results_arrive_in_item_order(
            items in proptest::collection::vec(0u32..1000, 0..120),
            workers in 1usize..5,
            ahead in 0usize..8,
            fail_at in proptest::option::of(0u32..1000),
        ) {
            let mut seen = Vec::new();
            let work = |&x: &u32| -> Result<u32, u32> {
                // Uneven work, so that workers finish out of order.
                std::thread::sleep(std::time::Duration::from_micros(u64::from(x % 7) * 3));
                if Some(x) == fail_at { Err(x) } else { Ok(x * 2) }
            };
            let got = for_each_ordered(&items, workers, ahead, work, |y| {
                seen.push(y);
                Ok(())
            });
            let first_bad = items.iter().position(|&x| Some(x) == fail_at);
            let want: Vec<u32> = items[..first_bad.unwrap_or(items.len())].iter().map(|x| x * 2).collect();
            prop_assert_eq!(seen, want);
            prop_assert_eq!(got, first_bad.map_or(Ok(()), |i| Err(items[i])));
        }
    }

    #[test]
    fn a_panicking_worker_reaches_the_caller_without_a_hang() {
        let items: Vec<u32> = (0..500).collect();
        let run = std::panic::catch_unwind(|| {
            for_each_ordered(
                &items,
                2,
                2,
                |&x| {
                    assert!(x != 3, "planted");
                    Ok::<u32, u32>(x)
                },
                |_| Ok(()),
            )
        });
        assert!(run.is_err());
    }

    #[test]
    fn an_error_of_the_consumer_stops_the_run() {
        let items: Vec<u32> = (0..1000).collect();
        let mut n = 0;
        let got = for_each_ordered(
            &items,
            3,
            2,
            |&x| Ok::<u32, u32>(x),
            |x| {
                n += 1;
                if x == 10 { Err(x) } else { Ok(()) }
            },
        );
        assert_eq!(got, Err(10));
        assert_eq!(n, 11);
    }
}
