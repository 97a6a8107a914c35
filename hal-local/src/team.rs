//! A team of cores for multi-core firmware (the `cores` feature): no std, no heap, atomics
//! and one spin lock. The core that submits leads each fork; the other cores run
//! [`Team::serve`] and take calls from it as they come.
//!
//! One fork at a time: a leader publishes the job and its call count, then bumps the epoch;
//! every worker that sees the new epoch claims calls from a shared counter until none are
//! left and then reports itself finished. The leader claims calls too and returns only once
//! every worker has finished the epoch, so the job (borrowed from the leader's stack) is
//! never used after the fork returns, and the next fork can rewrite it: no worker reads it
//! between finishing one epoch and seeing the next.

use crate::workers::Workers;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The job of a fork, its lifetime erased while it is published.
type Job = dyn Fn(usize) + Sync;

/// Cores that run the calls of one fork at once: the leader (whichever core forks) and
/// `workers` others, each in [`Team::serve`]. Firmware keeps it in a `static`.
pub struct Team {
    /// Cores serving besides the leader, when all are present.
    workers: usize,
    /// Held by the leader for a whole fork.
    lead: spin::Mutex<()>,
    /// Bumped once per fork, after `job` is written.
    epoch: AtomicUsize,
    /// The next call to claim.
    next: AtomicUsize,
    /// Workers done with the current epoch.
    finished: AtomicUsize,
    /// Workers now in `serve`.
    serving: AtomicUsize,
    /// Forks that ran on the workers too (not on the leader alone).
    shared_forks: AtomicUsize,
    /// A call unwound on a worker (std only), not yet reported by its leader.
    worker_panicked: AtomicBool,
    /// The current fork's job and call count: written by the leader only while every
    /// worker waits for the next epoch, read by a worker only between seeing an epoch and
    /// finishing it.
    job: UnsafeCell<Option<(*const Job, usize)>>,
}

// SAFETY: `job` is the only field that is not `Sync`. It is written only by the holder of
// `lead` before it bumps `epoch` (Release), at a point where every worker counted in the
// last fork has finished it; it is read only by workers that saw that bump (Acquire) and
// have not yet reported finished, and the leader waits for all of them (`Join`) before its
// fork returns or unwinds. A worker joins only while the team is short (so `finished` never
// counts a worker the leader did not) and leaves only while it holds `lead` (so never
// during a fork that counted it). The pointer it holds is to a `Sync` job, called from
// several threads only through `&`.
unsafe impl Sync for Team {}

impl Team {
    /// A team of the leader and `workers` other cores.
    pub const fn new(workers: usize) -> Self {
        Self {
            workers,
            lead: spin::Mutex::new(()),
            epoch: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            serving: AtomicUsize::new(0),
            shared_forks: AtomicUsize::new(0),
            worker_panicked: AtomicBool::new(false),
            job: UnsafeCell::new(None),
        }
    }

    /// Cores now serving besides the leader.
    pub fn serving(&self) -> usize {
        self.serving.load(Ordering::SeqCst)
    }

    /// Forks so far that ran on the workers too, not on their leader alone.
    pub fn shared_forks(&self) -> usize {
        self.shared_forks.load(Ordering::Relaxed)
    }

    /// Serves forks for ever: a worker core's main loop.
    pub fn serve(&self) -> ! {
        let never = AtomicBool::new(false);
        self.serve_until(&never);
        loop {
            core::hint::spin_loop();
        }
    }

    /// Serves forks until `stop` is set, then leaves at a moment no fork is running (one in
    /// progress is served first; later forks run on their leader alone). A thread beyond
    /// the team's `workers` returns at once without serving.
    pub fn serve_until(&self, stop: &AtomicBool) {
        // Read the epoch before counting in: a leader that counts this worker has not yet
        // bumped past `seen`, so this worker sees that fork.
        let mut seen = self.epoch.load(Ordering::SeqCst);
        if self
            .serving
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.workers).then_some(n + 1)
            })
            .is_err()
        {
            return;
        }
        loop {
            let epoch = self.epoch.load(Ordering::Acquire);
            if epoch != seen {
                seen = epoch;
                self.serve_epoch();
                continue;
            }
            if stop.load(Ordering::Relaxed) {
                // A leader holds `lead` from before it publishes until every worker has
                // finished, so holding it here means no fork is waiting for this worker,
                // and none counts it while it leaves.
                if let Some(_lead) = self.lead.try_lock() {
                    self.serving.fetch_sub(1, Ordering::SeqCst);
                    return;
                }
            }
            core::hint::spin_loop();
        }
    }

    /// One epoch on a worker: the calls it claims of the published job, then reports itself
    /// finished. If a call unwinds (std only; firmware aborts on panic), the worker leaves
    /// the team first and marks it, so its leader neither waits for ever nor returns as if
    /// every call had run.
    fn serve_epoch(&self) {
        /// Reports the worker finished when dropped, after its last call, returned or not.
        struct Finished<'t> {
            team: &'t Team,
            returned: bool,
        }
        impl Drop for Finished<'_> {
            fn drop(&mut self) {
                if !self.returned {
                    self.team.serving.fetch_sub(1, Ordering::SeqCst);
                    self.team.worker_panicked.store(true, Ordering::SeqCst);
                }
                self.team.finished.fetch_add(1, Ordering::Release);
            }
        }
        let mut finished = Finished {
            team: self,
            returned: false,
        };
        // SAFETY: the leader wrote `job` before bumping the epoch this worker saw (Acquire)
        // and rewrites it only after this worker reports finished (on drop, below).
        if let Some((job, count)) = unsafe { *self.job.get() } {
            self.claim(job, count);
        }
        finished.returned = true;
    }

    /// Claims and runs calls of `job` until none are left.
    fn claim(&self, job: *const Job, count: usize) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                return;
            }
            // SAFETY: `job` points to the current fork's job, which its leader keeps alive
            // until every worker has finished this epoch (see `Team`).
            unsafe { (*job)(i) };
        }
    }
}

/// Waits, when dropped, until every worker counted in a fork has finished it: the leader's
/// return, and its unwinding if one of its own calls panics, both wait for the workers.
struct Join<'t>(&'t Team);

impl Drop for Join<'_> {
    fn drop(&mut self) {
        while self.0.finished.load(Ordering::Acquire) != self.0.workers {
            core::hint::spin_loop();
        }
    }
}

// SAFETY: `fork` calls `job(i)` once for each `i < count`: the leader and the workers take
// each `i` from one shared counter (`claim`), and every worker counted in the fork runs
// the epoch before it reports finished; `Join` keeps the fork from returning (or unwinding)
// before every worker has finished, so every call has returned by then.
unsafe impl Workers for Team {
    fn width(&self) -> usize {
        self.workers + 1
    }

    fn fork(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
        let Some(_lead) = self.lead.try_lock() else {
            // Another core is leading a fork (or this one, from inside a call): run here.
            (0..count).for_each(job);
            return;
        };
        if count <= 1 || self.workers == 0 || self.serving() != self.workers {
            (0..count).for_each(job);
            return;
        }
        // SAFETY: only the lifetime is erased. The pointer is published below and used only
        // until every worker has finished this epoch, which `Join` waits for before this
        // call returns or unwinds and `job`'s borrow ends.
        let erased: *const Job =
            unsafe { core::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const Job>(job) };
        // SAFETY: `lead` is held and every worker finished the last epoch (its leader
        // waited), so none reads `job` until the bump below (see `Team`).
        unsafe { *self.job.get() = Some((erased, count)) };
        self.next.store(0, Ordering::Relaxed);
        self.finished.store(0, Ordering::Relaxed);
        self.shared_forks.fetch_add(1, Ordering::Relaxed);
        let join = Join(self);
        self.epoch.fetch_add(1, Ordering::Release);
        self.claim(erased, count);
        drop(join);
        if self.worker_panicked.swap(false, Ordering::SeqCst) {
            worker_panicked();
        }
    }
}

/// A call panicked on a worker (std only): re-raised on the core that forked, as a panic in
/// any of its own calls would be. The worker has left the team.
#[cold]
#[allow(clippy::panic)]
fn worker_panicked() -> ! {
    panic!("a call of a team fork panicked on a worker")
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;
    use std::vec::Vec;

    /// Forks from the test thread while `workers` threads serve; `body` gets the team.
    fn with_team(workers: usize, body: impl FnOnce(&Team)) {
        let team = Team::new(workers);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| team.serve_until(&stop));
            }
            while team.serving() != workers {
                std::thread::yield_now();
            }
            body(&team);
            stop.store(true, Ordering::Relaxed);
        });
        assert_eq!(team.serving(), 0);
    }

    #[test]
    fn every_call_runs_once_across_forks() {
        let rounds = if cfg!(miri) { 4 } else { 200 };
        with_team(2, |team| {
            for round in 0..rounds {
                let count = round % 13;
                let hits: Vec<AtomicU32> = (0..count).map(|_| AtomicU32::new(0)).collect();
                team.fork(count, &|i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
                assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            }
            // Forks of 0 or 1 calls run on the leader alone.
            let alone = (0..rounds).filter(|r| r % 13 <= 1).count();
            assert_eq!(team.shared_forks(), rounds - alone);
        });
    }

    #[cfg(feature = "exclusive")]
    #[test]
    fn a_forks_writes_are_seen_by_its_leader() {
        with_team(1, |team| {
            let mut out = [0u64; 64];
            crate::workers::tiles::<u64, ()>(team, &mut out, 16, 4, &|rows, tile| {
                for (row, chunk) in rows.zip(tile.chunks_mut(4)) {
                    chunk.fill(row as u64 * 10);
                }
                Ok(())
            })
            .unwrap();
            for (k, v) in out.iter().enumerate() {
                assert_eq!(*v, (k / 4) as u64 * 10);
            }
        });
    }

    #[test]
    fn a_fork_from_inside_a_call_runs_on_its_caller() {
        with_team(1, |team| {
            let inner = AtomicU32::new(0);
            team.fork(4, &|_| {
                team.fork(3, &|_| {
                    inner.fetch_add(1, Ordering::Relaxed);
                })
            });
            assert_eq!(inner.load(Ordering::Relaxed), 12);
        });
    }

    #[test]
    fn a_team_short_of_workers_runs_on_the_leader() {
        let team = Team::new(3);
        let ran = AtomicU32::new(0);
        team.fork(5, &|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(ran.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn a_thread_beyond_the_team_does_not_join() {
        with_team(1, |team| {
            let stop = AtomicBool::new(false);
            team.serve_until(&stop);
            assert_eq!(team.serving(), 1);
        });
    }

    #[test]
    fn a_worker_that_leaves_mid_run_leaves_its_leader_going() {
        let team = Team::new(1);
        let stop = AtomicBool::new(false);
        let rounds = if cfg!(miri) { 6 } else { 400 };
        std::thread::scope(|s| {
            s.spawn(|| team.serve_until(&stop));
            for round in 0..rounds {
                if round == rounds / 2 {
                    stop.store(true, Ordering::Relaxed);
                }
                let hits: Vec<AtomicU32> = (0..7).map(|_| AtomicU32::new(0)).collect();
                team.fork(7, &|i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
                assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            }
        });
        assert_eq!(team.serving(), 0);
    }

    /// Runs `f`, expecting it to panic.
    fn panics(f: impl FnOnce()) -> bool {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err()
    }

    #[test]
    fn a_panic_on_the_leader_waits_for_the_workers_first() {
        with_team(1, |team| {
            let leader = std::thread::current().id();
            let done = AtomicU32::new(0);
            assert!(panics(|| team.fork(16, &|_| {
                if std::thread::current().id() == leader {
                    panic!("the leader's call");
                }
                done.fetch_add(1, Ordering::Relaxed);
            })));
            // The worker is still in the team and the next fork runs every call.
            let after = AtomicU32::new(0);
            team.fork(9, &|_| {
                after.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(after.load(Ordering::Relaxed), 9);
        });
    }

    #[test]
    fn a_panic_on_a_worker_reaches_its_leader_and_the_worker_leaves() {
        let team = Team::new(1);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let worker = s.spawn(|| team.serve_until(&stop));
            while team.serving() != 1 {
                std::thread::yield_now();
            }
            let leader = std::thread::current().id();
            // The leader's call waits until the worker has taken the other one, which
            // panics.
            let taken = AtomicBool::new(false);
            assert!(panics(|| team.fork(2, &|_| {
                if std::thread::current().id() == leader {
                    while !taken.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                } else {
                    taken.store(true, Ordering::SeqCst);
                    panic!("a worker's call");
                }
            })));
            assert!(worker.join().is_err());
        });
        assert_eq!(team.serving(), 0);
        let ran = AtomicU32::new(0);
        team.fork(5, &|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(ran.load(Ordering::Relaxed), 5);
    }
}
