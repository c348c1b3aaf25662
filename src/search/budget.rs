//! The budget every search runs under, and the counters it keeps.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use super::{Cost, Stats, Stop};

/// Most expansions between real checks of the clock, the cancel flag and progress.
/// At millions of nodes per second this is well under a millisecond; domains with
/// costly expansions (Sokoban box moves) get checked more often, see [`CHECK_GAP`].
pub const CHECK_INTERVAL: u32 = 1024;

/// The time between checks the interval adapts to, halving when checks come further
/// apart than this and doubling when they come at under a quarter of it, so a
/// deadline or a cancel is noticed within a few milliseconds whatever a node costs.
pub const CHECK_GAP: Duration = Duration::from_millis(4);

/// A cancel flag shared with another thread (a job runner, a signal handler).
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn new() -> CancelFlag {
        CancelFlag::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Inner-loop steps (as callers count them) between the real checks of an
/// [`Interrupt`]: well under a millisecond of work in a release build, so a deadline or
/// a cancel is noticed within a few milliseconds even inside one long expansion.
pub const POLL_WORK: u32 = 1 << 16;

/// The deadline, cancel flag and memory cap of a search, for the long loops the
/// engine cannot see into: one expansion of a big Sokoban level (matchings over
/// hundreds of boxes, corral searches, box walks) or a table built per level. A domain
/// holds a clone (from [`Budget::interrupt`]) and [`Interrupt::poll`]s it in such
/// loops; when it trips, the loop gives up early and the first [`Stop`] seen is kept
/// where every clone, the budget's too, sees it, so the engine stops right after the
/// truncated expansion ([`Budget::cut_short`]) and never concludes from it.
#[derive(Clone, Debug, Default)]
pub struct Interrupt {
    cancel: CancelFlag,
    deadline: Option<Instant>,
    max_memory_bytes: Option<u64>,
    /// The first stop seen by any clone: 0 for none, else [`Stop::code`].
    tripped: Arc<AtomicU8>,
    /// Work left before the next real check; per clone (each thread polls its own).
    countdown: Cell<u32>,
}

impl Interrupt {
    pub fn new(
        cancel: CancelFlag,
        deadline: Option<Instant>,
        max_memory_bytes: Option<u64>,
    ) -> Interrupt {
        Interrupt {
            cancel,
            deadline,
            max_memory_bytes,
            ..Interrupt::default()
        }
    }

    /// One that never trips: for tests and tools that run without limits.
    pub fn never() -> Interrupt {
        Interrupt::default()
    }

    /// Counts `work` inner-loop steps; every [`POLL_WORK`] of them, a real check.
    #[inline]
    pub fn poll(&self, work: u32) -> Result<(), Stop> {
        self.poll_holding(work, || 0)
    }

    /// [`Interrupt::poll`] for a loop that keeps what it makes: at each real check,
    /// `held()` (bytes) is compared with the memory cap as well.
    #[inline]
    pub fn poll_holding(&self, work: u32, held: impl FnOnce() -> u64) -> Result<(), Stop> {
        match self.countdown.get().checked_sub(work) {
            Some(left) if left > 0 => {
                self.countdown.set(left);
                Ok(())
            }
            _ => {
                self.countdown.set(POLL_WORK);
                self.check_holding(held())
            }
        }
    }

    /// A real check now: the stop already seen, the cancel flag, the clock.
    pub fn check(&self) -> Result<(), Stop> {
        self.check_holding(0)
    }

    /// [`Interrupt::check`], and `held` bytes against the memory cap.
    pub fn check_holding(&self, held: u64) -> Result<(), Stop> {
        if let Some(stop) = self.tripped() {
            return Err(stop);
        }
        if self.cancel.is_cancelled() {
            return Err(self.trip(Stop::Cancelled));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(self.trip(Stop::TimeLimit));
        }
        if self.max_memory_bytes.is_some_and(|cap| held > cap) {
            return Err(self.trip(Stop::MemoryLimit));
        }
        Ok(())
    }

    /// The stop some clone has seen, if any. One relaxed load: cheap enough per node.
    #[inline]
    pub fn tripped(&self) -> Option<Stop> {
        Stop::from_code(self.tripped.load(Ordering::Relaxed))
    }

    /// Records `stop` unless another was recorded first; returns the one kept.
    pub fn trip(&self, stop: Stop) -> Stop {
        match self
            .tripped
            .compare_exchange(0, stop.code(), Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => stop,
            Err(first) => Stop::from_code(first).unwrap_or(stop),
        }
    }

    pub fn max_memory_bytes(&self) -> Option<u64> {
        self.max_memory_bytes
    }
}

/// Limits on one search. `None` means unlimited.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub max_nodes: Option<u64>,
    pub timeout: Option<Duration>,
    /// Cap on memory for stored states (graph searches), in bytes.
    pub max_memory_bytes: Option<u64>,
}

/// A snapshot of a running search, sent to a [`ProgressSink`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub nodes_expanded: u64,
    pub nodes_generated: u64,
    /// Current IDA* threshold, A* f-value or BFS depth.
    pub bound: Option<Cost>,
    pub elapsed: Duration,
}

/// Receives progress at a bounded rate (see [`Budget::with_progress`]).
pub trait ProgressSink: Sync {
    fn progress(&self, progress: &Progress);
}

/// Node limit, deadline, memory cap and cancel flag, checked cheaply: [`Budget::expand`]
/// only decrements a counter, and every [`CHECK_INTERVAL`] expansions (or exactly at the
/// node limit) it reads the clock and the flag.
pub struct Budget<'a> {
    limits: Limits,
    cancel: CancelFlag,
    started: Instant,
    deadline: Option<Instant>,
    /// Shared with the domain: see [`Interrupt`].
    interrupt: Interrupt,
    countdown: u32,
    interval: u32,
    last_check: Instant,
    sink: Option<(&'a dyn ProgressSink, Duration)>,
    next_progress: Instant,
    /// Bytes other searches of the same job hold, counted against the memory cap.
    held_elsewhere: u64,
    pub stats: Stats,
}

impl<'a> Budget<'a> {
    pub fn new(limits: Limits, cancel: CancelFlag) -> Budget<'a> {
        let started = Instant::now();
        let deadline = limits.timeout.map(|t| started + t);
        let mut budget = Budget {
            limits,
            interrupt: Interrupt::new(cancel.clone(), deadline, limits.max_memory_bytes),
            cancel,
            started,
            deadline,
            countdown: 0,
            // Grows to CHECK_INTERVAL within a few checks when nodes are cheap.
            interval: 1,
            last_check: started,
            sink: None,
            next_progress: started,
            held_elsewhere: 0,
            stats: Stats::default(),
        };
        budget.countdown = budget.next_countdown();
        budget
    }

    pub fn unlimited() -> Budget<'a> {
        Budget::new(Limits::default(), CancelFlag::new())
    }

    /// Sends progress to `sink` at most once per `interval`.
    pub fn with_progress(mut self, sink: &'a dyn ProgressSink, interval: Duration) -> Budget<'a> {
        self.next_progress = self.started + interval;
        self.sink = Some((sink, interval));
        self
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// A clone of this search's [`Interrupt`], for the domain's long loops.
    pub fn interrupt(&self) -> Interrupt {
        self.interrupt.clone()
    }

    /// `Err` when the domain's [`Interrupt`] tripped: its last expansion (or start
    /// state) may be truncated, so the search must stop before using it. The engines
    /// call this after every expansion; it is one relaxed load.
    #[inline]
    pub fn cut_short(&self) -> Result<(), Stop> {
        match self.interrupt.tripped() {
            Some(stop) => Err(stop),
            None => Ok(()),
        }
    }

    /// Counts one expansion; `Err` when the search must stop now.
    #[inline]
    pub fn expand(&mut self) -> Result<(), Stop> {
        self.stats.nodes_expanded += 1;
        self.countdown -= 1;
        if self.countdown == 0 {
            self.check()
        } else {
            Ok(())
        }
    }

    #[inline]
    pub fn generated(&mut self, n: usize) {
        self.stats.nodes_generated += n as u64;
    }

    pub fn set_bound(&mut self, bound: Cost) {
        self.stats.bound = Some(bound);
    }

    /// `Err(MemoryLimit)` when holding `bytes`, beside what other searches of the job
    /// hold ([`Budget::set_held_elsewhere`]), would exceed the cap.
    #[inline]
    pub fn check_memory(&self, bytes: u64) -> Result<(), Stop> {
        match self.limits.max_memory_bytes {
            Some(cap) if bytes + self.held_elsewhere > cap => Err(Stop::MemoryLimit),
            _ => Ok(()),
        }
    }

    /// Makes this budget go on from an earlier search's `spent` statistics: its counts,
    /// its node limit and the elapsed time it reports (progress too) continue from
    /// theirs, so a job that runs one search after another reports one rising total.
    /// The deadline stays the one its limits gave.
    pub fn carry_on(&mut self, spent: &Stats) {
        self.stats.nodes_expanded = spent.nodes_expanded;
        self.stats.nodes_generated = spent.nodes_generated;
        self.started = self
            .started
            .checked_sub(spent.elapsed)
            .unwrap_or(self.started);
        self.countdown = self.next_countdown();
    }

    /// Searches that take turns under one budget say, before each turn, what the
    /// others hold, so that together they stay under the memory cap.
    pub fn set_held_elsewhere(&mut self, bytes: u64) {
        self.held_elsewhere = bytes;
    }

    /// `Err(TimeLimit)` when `work` more would end after the deadline: a search asks
    /// before a step it cannot interrupt (a big table growing), so as not to overrun.
    #[cold]
    pub fn check_time_for(&self, work: Duration) -> Result<(), Stop> {
        if self.deadline.is_some_and(|d| Instant::now() + work >= d) {
            return Err(Stop::TimeLimit);
        }
        Ok(())
    }

    #[cold]
    fn check(&mut self) -> Result<(), Stop> {
        let now = Instant::now();
        let gap = now - self.last_check;
        self.last_check = now;
        if gap > CHECK_GAP {
            self.interval = (self.interval / 2).max(1);
        } else if gap < CHECK_GAP / 4 {
            self.interval = (self.interval * 2).min(CHECK_INTERVAL);
        }
        self.countdown = self.next_countdown();
        if let Some(stop) = self.interrupt.tripped() {
            return Err(stop);
        }
        if self.cancel.is_cancelled() {
            return Err(Stop::Cancelled);
        }
        if self
            .limits
            .max_nodes
            .is_some_and(|max| self.stats.nodes_expanded >= max)
        {
            return Err(Stop::NodeLimit);
        }
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(Stop::TimeLimit);
        }
        if let Some((sink, interval)) = self.sink
            && now >= self.next_progress
        {
            self.next_progress = now + interval;
            sink.progress(&Progress {
                nodes_expanded: self.stats.nodes_expanded,
                nodes_generated: self.stats.nodes_generated,
                bound: self.stats.bound,
                elapsed: now - self.started,
            });
        }
        Ok(())
    }

    /// Expansions until the next real check: the interval, or fewer so the node
    /// limit is hit exactly.
    fn next_countdown(&self) -> u32 {
        match self.limits.max_nodes {
            Some(max) => {
                let left = max.saturating_sub(self.stats.nodes_expanded);
                left.clamp(1, u64::from(self.interval)) as u32
            }
            None => self.interval,
        }
    }

    /// Stamps the elapsed time and returns the statistics.
    pub fn finish(&mut self) -> Stats {
        self.stats.elapsed = self.started.elapsed();
        self.stats
    }
}
