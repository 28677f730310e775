//! Giving memory back to the system after large transient work.

/// Returns freed heap memory to the operating system. Loading a provider or building an index
/// allocates far more, briefly, than the result keeps; glibc holds such memory in per-thread
/// arenas, so without this the process would look as large as its peak for good. Elsewhere the
/// allocator decides on its own.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A trim of one thread's own is under way or about to start.
static TRIM_PENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// [`release_free_memory`] on a thread of its own, so the caller does not wait for it (a trim
/// of a large heap takes tens of milliseconds); requests made while one is pending share it.
pub fn release_free_memory_later() {
    use std::sync::atomic::Ordering;
    if TRIM_PENDING.swap(true, Ordering::AcqRel) {
        return;
    }
    let trim = || {
        // Cleared first: memory freed during this trim asks for one more.
        TRIM_PENDING.store(false, Ordering::Release);
        release_free_memory();
    };
    let spawned = std::thread::Builder::new()
        .name("cg-trim".into())
        .spawn(trim);
    if spawned.is_err() {
        trim();
    }
}
