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
