//! Keeps the service's resident size flat. glibc keeps freed memory in per-thread
//! arenas (by default up to eight per core), and the worker pool's searches run on
//! whichever blocking thread is free, so over a long run every arena creeps up to the
//! largest node table it ever held (docs/reliability.md: 20 → 64 MiB resident over
//! 600 s at a flat heap). Two arenas, and `malloc_trim` after searches to give their
//! free pages back, held it at 23–30 MiB.

use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

/// Trims at most this often: a trim walks and locks every arena in turn, and a busy
/// service finishes searches far more often than its tables grow.
const MIN_INTERVAL: Duration = Duration::from_millis(250);

#[derive(Default)]
pub struct Trimmer {
    last: Mutex<Option<Instant>>,
}

impl Trimmer {
    /// Called when a search has ended and dropped its tables; says whether it trimmed.
    pub fn search_ended(&self) -> bool {
        let now = Instant::now();
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|at| now.duration_since(at) < MIN_INTERVAL) {
                return false;
            }
            *last = Some(now);
        }
        release_free_pages();
        true
    }
}

/// Drops `value` on the reclaimer thread. Freeing a table of hundreds of megabytes takes
/// a while (page tables, `munmap`); a job stopped at its deadline reports first and lets
/// that thread free what it held.
pub fn drop_in_background<T: Send + 'static>(value: T) {
    off_path(move || drop(value));
}

/// Runs `work` on the reclaimer thread, in the order given: freeing, then trimming.
pub fn off_path(work: impl FnOnce() + Send + 'static) {
    type Work = Box<dyn FnOnce() + Send>;
    static RECLAIMER: Mutex<Option<Sender<Work>>> = Mutex::new(None);
    let mut reclaimer = RECLAIMER.lock().unwrap_or_else(|e| e.into_inner());
    let sender = reclaimer.get_or_insert_with(|| {
        let (sender, receiver) = channel::<Work>();
        let spawned = std::thread::Builder::new()
            .name("reclaimer".into())
            .spawn(move || {
                for work in receiver {
                    work();
                }
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "no reclaimer thread; freeing in place");
        }
        sender
    });
    // Without the thread the send fails and hands the work back, dropped undone: a
    // value is freed here, a trim skipped.
    let _ = sender.send(Box::new(work));
}

/// How many arenas the service's allocator may use.
const ARENAS: i32 = 2;

/// Caps glibc's arenas for a long-running process, unless `MALLOC_ARENA_MAX` already
/// says how many. Call before threads start: arenas already made stay.
pub fn limit_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        set_arena_max(ARENAS);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn set_arena_max(arenas: i32) {
    // SAFETY: mallopt takes no pointers; glibc reads the setting when it makes an arena.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_arena_max(_arenas: i32) {}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_free_pages() {
    // SAFETY: malloc_trim takes no pointers; glibc locks each arena while it trims it.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators (musl, macOS, Windows) give large freed blocks back themselves and
/// have no such calls.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_pages() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_ending_close_together_share_one_trim() {
        let trimmer = Trimmer::default();
        assert!(trimmer.search_ended());
        assert!(!trimmer.search_ended());
        // As if the last trim were one interval ago.
        *trimmer.last.lock().expect("lock") = Instant::now().checked_sub(MIN_INTERVAL);
        assert!(trimmer.search_ended());
    }

    #[test]
    fn big_things_are_freed_off_the_callers_path_in_order() {
        struct SlowToFree(std::sync::mpsc::Sender<&'static str>);
        impl Drop for SlowToFree {
            fn drop(&mut self) {
                std::thread::sleep(Duration::from_millis(300));
                let _ = self.0.send("freed");
            }
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        let started = Instant::now();
        drop_in_background(SlowToFree(sender.clone()));
        off_path(move || {
            let _ = sender.send("then trimmed");
        });
        assert!(started.elapsed() < Duration::from_millis(100));
        let order: Vec<&str> = receiver.iter().take(2).collect();
        assert_eq!(order, ["freed", "then trimmed"]);
    }
}
