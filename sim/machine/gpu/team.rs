//! The pool's threads kept at hand for a launch's windows: a team.
//!
//! A window's passes are short (tens of microseconds on a sample trace) and come hundreds of times
//! a launch, with a short serial step between them (delivering the messages, the far link, the
//! reports). Handing each pass to the pool as fresh tasks woke a sleeping thread every time, a few
//! microseconds each (about 3 ms of the 54 ms of `v70_distinct` on two threads). Here the loop's
//! thread publishes each pass, and the team's other threads — each one long-running task of the
//! pool, at most one per core — wait for it spinning, run the pool's other jobs meanwhile (a
//! streamed trace's blocks read ahead, `trace_blocks.rs`), offer their core to other threads after
//! [`YIELD_AFTER`] and park after [`PARK_AFTER`] without work (a loop thread held up), until the next
//! pass or until the loop's thread waits for one of those jobs ([`Team::wake`]).
//!
//! A pass's items are split into one range of consecutive items per thread; each thread claims
//! chunks from the front of its own range (half of what is left, so a domain tends to run on the
//! same thread window after window and keeps its data in that core's caches), then steals chunks
//! from the back of the others'. Every item is run exactly once, by whichever thread claims it:
//! which thread ran it does not show in the results. A pass of more than [`MAX_ITEMS`] items runs on
//! the loop's thread alone.

use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The most items a pass shares among the threads (a range's bounds are 20-bit fields).
const MAX_ITEMS: usize = (1 << 20) - 1;

/// How long a helper waits for the next pass spinning before it parks, and before it offers its
/// core to other threads between looks (longer than a window's serial step, a few microseconds).
const PARK_AFTER: Duration = Duration::from_micros(200);
const YIELD_AFTER: Duration = Duration::from_micros(20);

/// A pass's work as the helpers see it: run item `i` (each claimed index exactly once).
type Job<'a> = dyn Fn(usize) + Sync + 'a;

/// The published pass: its generation and the job. The job's lifetime is erased; see [`Team::run`]
/// for why no helper calls it after the pass.
#[derive(Clone, Copy)]
struct Pass {
    generation: u32,
    job: *const Job<'static>,
}

// SAFETY: `job` points to a `Sync` closure, called from other threads only while `Team::run`, which
// owns the borrow, waits for every claimed item to finish and every copy of the pass to be dropped.
unsafe impl Send for Pass {}

/// The loop's thread and the helpers, for one launch.
pub(super) struct Team {
    threads: usize,
    /// The current pass's generation (24 bits; 0: none yet).
    generation: AtomicU32,
    /// Per thread, its range of the current pass: `generation << 40 | front << 20 | back`.
    ranges: Box<[Padded]>,
    /// Items of the current pass finished.
    done: AtomicUsize,
    /// Helpers holding a copy of a pass (see [`Team::run`]).
    active: AtomicUsize,
    pass: Mutex<Option<Pass>>,
    /// A helper's panic, resumed on the loop's thread at the end of the pass.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    /// Helpers that have started (each then serves alone on its thread, numbered from 1).
    started: AtomicUsize,
    /// Helpers parked, woken by the next pass, a [`Team::wake`] or the end.
    parked: AtomicUsize,
    /// Calls of [`Team::wake`].
    wakes: AtomicU64,
    wake: Condvar,
    wake_lock: Mutex<()>,
    stop: AtomicBool,
    /// A pass is running (checked in debug builds: passes do not nest).
    in_pass: AtomicBool,
}

/// A range on a cache line of its own, so that claims from two ranges do not contend.
#[repr(align(128))]
struct Padded(AtomicU64);

const FIELD: u32 = 20;
const MASK: u64 = (1 << FIELD) - 1;
const GENERATIONS: u32 = 1 << 24;

fn pack(generation: u32, front: usize, back: usize) -> u64 {
    u64::from(generation) << (2 * FIELD) | (front as u64) << FIELD | back as u64
}

/// (generation, front, back) of a packed range.
fn unpack(s: u64) -> (u32, usize, usize) {
    (
        (s >> (2 * FIELD)) as u32,
        ((s >> FIELD) & MASK) as usize,
        (s & MASK) as usize,
    )
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Team {
    /// A team of `threads` threads: the loop's and `threads - 1` helpers, each started with
    /// [`Team::serve`] as one task of the pool.
    fn new(threads: usize) -> Team {
        let threads = threads.max(1);
        Team {
            threads,
            generation: AtomicU32::new(0),
            ranges: (0..threads).map(|_| Padded(AtomicU64::new(0))).collect(),
            done: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            pass: Mutex::new(None),
            panic: Mutex::new(None),
            started: AtomicUsize::new(0),
            parked: AtomicUsize::new(0),
            wakes: AtomicU64::new(0),
            wake: Condvar::new(),
            wake_lock: Mutex::new(()),
            stop: AtomicBool::new(false),
            in_pass: AtomicBool::new(false),
        }
    }

    /// Whether every helper has started serving on its own thread (from then on a helper may run
    /// the pool's other jobs without starting another helper's task inside its own).
    fn serving(&self) -> bool {
        self.started.load(Ordering::Acquire) + 1 >= self.threads
    }

    /// Runs `f` on every item of `items`, each exactly once, on the team's threads; returns when all
    /// have finished. A panic in `f` is resumed here. Called by the loop's thread only, one pass at
    /// a time (never from inside a pass: a job does not start passes of its own).
    pub(super) fn for_each_mut<T: Send>(&self, items: &mut [T], f: &(impl Fn(&mut T) + Sync)) {
        let base = Items(items.as_mut_ptr());
        let job = move |i: usize| {
            // SAFETY: `run` hands out every index below `items.len()` exactly once, and returns only
            // after every call has finished, while `items` is still borrowed mutably here: no two
            // references to one item exist, and none outlives the borrow.
            let item = unsafe { &mut *base.at(i) };
            f(item)
        };
        self.run(items.len(), &job);
    }

    /// Publishes a pass of `len` items, takes part in it and waits for its end.
    fn run(&self, len: usize, job: &Job<'_>) {
        if len == 0 {
            return;
        }
        if len > MAX_ITEMS || self.threads == 1 {
            (0..len).for_each(job);
            return;
        }
        debug_assert!(
            !self.in_pass.swap(true, Ordering::Relaxed),
            "one pass at a time, from the loop's thread"
        );
        let generation = self.generation.load(Ordering::Relaxed) % (GENERATIONS - 1) + 1;
        // SAFETY: the lifetime is erased only for the helpers' copy; a helper calls the job only for
        // an item it claimed in this generation, and this function returns only once every item of
        // the generation is done (`done == len`) and no helper holds a copy of the pass any more
        // (`active == 0`), so no call outlives `job`'s borrow, and no helper can claim with a stale
        // copy once the 24-bit generation comes round again.
        let job: *const Job<'static> =
            unsafe { std::mem::transmute::<&Job<'_>, &'static Job<'static>>(job) };
        let pass = Pass { generation, job };
        *lock(&self.pass) = Some(pass);
        self.done.store(0, Ordering::Relaxed);
        let t = self.threads;
        for (i, r) in self.ranges.iter().enumerate() {
            r.0.store(
                pack(generation, i * len / t, (i + 1) * len / t),
                Ordering::Relaxed,
            );
        }
        self.generation.store(generation, Ordering::SeqCst);
        if self.parked.load(Ordering::SeqCst) > 0 {
            let _g = lock(&self.wake_lock);
            self.wake.notify_all();
        }
        self.work(0, pass);
        let mut spins = 0u32;
        while self.done.load(Ordering::Acquire) < len || self.active.load(Ordering::SeqCst) > 0 {
            spins = spins.saturating_add(1);
            if spins < 1 << 12 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        self.in_pass.store(false, Ordering::Relaxed);
        if let Some(p) = lock(&self.panic).take() {
            resume_unwind(p);
        }
    }

    /// The next chunk of `pass` for thread `me`: from the front of its own range, else from the back
    /// of another's; `None` when every item is claimed or the pass is over.
    fn claim(&self, me: usize, pass: &Pass) -> Option<Range<usize>> {
        for k in 0..self.threads {
            let own = k == 0;
            let r = &self.ranges[(me + k) % self.threads].0;
            let mut s = r.load(Ordering::Acquire);
            loop {
                let (g, front, back) = unpack(s);
                if g != pass.generation {
                    return None;
                }
                if front >= back {
                    break;
                }
                let n = ((back - front) / 2).max(1);
                let (next, chunk) = if own {
                    (pack(g, front + n, back), front..front + n)
                } else {
                    (pack(g, front, back - n), back - n..back)
                };
                match r.compare_exchange_weak(s, next, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => return Some(chunk),
                    Err(now) => s = now,
                }
            }
        }
        None
    }

    /// Thread `me` runs chunks of `pass` until none is left.
    fn work(&self, me: usize, pass: Pass) {
        while let Some(r) = self.claim(me, &pass) {
            let n = r.len();
            // SAFETY: see `run`: the chunk was claimed in `pass.generation`, which is not over
            // before `done` counts it.
            let job = unsafe { &*pass.job };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| r.for_each(job))) {
                lock(&self.panic).get_or_insert(p);
            }
            self.done.fetch_add(n, Ordering::Release);
        }
    }

    /// A helper: serves the passes until [`Team::stop`], running the pool's other jobs while it
    /// waits and parking after [`PARK_AFTER`] without work.
    fn serve(&self) {
        let me = (self.started.fetch_add(1, Ordering::SeqCst) + 1).min(self.threads - 1);
        let mut seen = 0u32;
        let mut idle_since: Option<Instant> = None;
        let mut spins = 0u32;
        loop {
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            if self.generation.load(Ordering::Acquire) != seen {
                // Registered before the copy is taken: `run` does not return while it is held.
                self.active.fetch_add(1, Ordering::SeqCst);
                let pass = *lock(&self.pass);
                if let Some(pass) = pass {
                    seen = pass.generation;
                    self.work(me, pass);
                }
                self.active.fetch_sub(1, Ordering::SeqCst);
                idle_since = None;
                continue;
            }
            spins = spins.wrapping_add(1);
            if spins % 64 != 0 {
                std::hint::spin_loop();
                continue;
            }
            // Read before looking for jobs: a job spawned after the look is announced by a wake.
            let wakes = self.wakes.load(Ordering::SeqCst);
            // Another helper task not yet started would start here, nested in this one: wait
            // until every helper serves on its own thread before taking the pool's jobs.
            if self.serving() && matches!(rayon::yield_now(), Some(rayon::Yield::Executed)) {
                idle_since = None;
                continue;
            }
            let idle = idle_since.get_or_insert_with(Instant::now).elapsed();
            if idle >= PARK_AFTER {
                self.park(seen, wakes);
                idle_since = None;
            } else if idle >= YIELD_AFTER {
                // Leave the core to a thread that needs it (the loop's, on a busy machine).
                std::thread::yield_now();
            }
        }
    }

    /// Sleeps until a pass newer than `seen`, a wake after the `wakes`-th, or the end.
    fn park(&self, seen: u32, wakes: u64) {
        let mut g = lock(&self.wake_lock);
        self.parked.fetch_add(1, Ordering::SeqCst);
        while !self.stop.load(Ordering::SeqCst)
            && self.generation.load(Ordering::SeqCst) == seen
            && self.wakes.load(Ordering::SeqCst) == wakes
        {
            g = self.wake.wait(g).unwrap_or_else(PoisonError::into_inner);
        }
        self.parked.fetch_sub(1, Ordering::SeqCst);
    }

    /// Wakes the parked helpers to run the pool's pending jobs (the loop's thread is about to wait
    /// for one).
    pub(super) fn wake(&self) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        if self.parked.load(Ordering::SeqCst) > 0 {
            let _g = lock(&self.wake_lock);
            self.wake.notify_all();
        }
    }

    /// Ends the helpers' service (they return from [`Team::serve`]).
    fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _g = lock(&self.wake_lock);
        self.wake.notify_all();
    }
}

/// The base of a pass's items, shared with the helpers.
struct Items<T>(*mut T);

impl<T> Clone for Items<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Items<T> {}

impl<T> Items<T> {
    /// Item `i`'s address (a method, so that closures capture the whole `Items`, which is `Sync`).
    fn at(self, i: usize) -> *mut T {
        self.0.wrapping_add(i)
    }
}

// SAFETY: each item is reached by exactly one thread at a time (see `Team::for_each_mut`), and the
// items are `Send`.
unsafe impl<T: Send> Sync for Items<T> {}
unsafe impl<T: Send> Send for Items<T> {}

/// Runs `f` on the current thread of `pool` with a team of `threads` (the pool's threads: `f`'s and
/// `threads - 1` helpers serving on others); the helpers stop when `f` returns, also by a panic.
pub(super) fn with_team<R: Send>(
    pool: &rayon::ThreadPool,
    threads: usize,
    f: impl FnOnce(&Arc<Team>) -> R + Send,
) -> R {
    let team = Arc::new(Team::new(threads));
    pool.install(|| {
        rayon::scope(|s| {
            for _ in 1..team.threads {
                let helper = team.clone();
                s.spawn(move |_| helper.serve());
            }
            let _stop = StopOnDrop(&team);
            f(&team)
        })
    })
}

/// Stops the team when the loop ends, also by a panic (so that the pool's scope can end).
struct StopOnDrop<'a>(&'a Team);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::with_team;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool")
    }

    /// Runs `passes` passes on a team of `threads`, each adding its pass number to every item.
    fn sums(threads: usize, items: usize, passes: usize) -> Vec<u64> {
        let mut v = vec![0u64; items];
        with_team(&pool(threads), threads, |team| {
            for p in 0..passes {
                team.for_each_mut(&mut v, &|x: &mut u64| *x += p as u64 + 1);
            }
        });
        v
    }

    #[test]
    fn every_item_runs_exactly_once_per_pass_with_any_number_of_threads() {
        for threads in [1, 2, 3, 8] {
            for items in [0, 1, 2, 5, 64, 1000] {
                let v = sums(threads, items, 500);
                assert!(
                    v.iter().all(|&x| x == 500 * 501 / 2),
                    "{threads} threads, {items} items"
                );
            }
        }
    }

    #[test]
    fn a_panic_in_a_pass_reaches_the_loop_and_ends_the_team() {
        let r = std::panic::catch_unwind(|| {
            with_team(&pool(2), 2, |team| {
                let mut v = vec![0u32; 100];
                team.for_each_mut(&mut v, &|x: &mut u32| {
                    *x += 1;
                    assert!(*x < 1, "boom");
                });
            })
        });
        assert!(r.is_err(), "the pass's panic is resumed");
    }

    #[test]
    fn a_parked_helper_is_woken_for_a_job_the_loop_waits_for() {
        let got = with_team(&pool(2), 2, |team| {
            // A pass, so that the helper serves; then long enough without one that it parks.
            team.for_each_mut(&mut [0u8; 4], &|x: &mut u8| *x += 1);
            std::thread::sleep(super::PARK_AFTER * 20);
            let (tx, rx) = std::sync::mpsc::channel();
            rayon::spawn(move || {
                let _ = tx.send(7);
            });
            team.wake();
            // Only the helper can run the job (this thread waits without running any).
            rx.recv_timeout(std::time::Duration::from_secs(10))
        });
        assert_eq!(got, Ok(7), "the woken helper ran the job");
    }

    #[test]
    fn the_pools_other_jobs_run_while_the_helpers_wait() {
        let got = with_team(&pool(2), 2, |_| {
            let (tx, rx) = std::sync::mpsc::channel();
            rayon::spawn(move || {
                let _ = tx.send(42);
            });
            // The loop's thread blocks; only the helper can run the job.
            rx.recv().expect("job ran")
        });
        assert_eq!(got, 42);
    }
}
