//! The process's heap on Linux with glibc: grown in large steps and backed by transparent huge pages
//! where the system allows them (`/sys/kernel/mm/transparent_hugepage/enabled` set to `madvise` or
//! `always`), before anything large is allocated.
//!
//! Why: a run builds a machine of tens of megabytes (an H100's L1 lines, L2 tags, queues), which the
//! host first touches page by page; on a virtual machine each 4 KiB page fault costs about a
//! microsecond. On the development VM (whole processes, medians, against `GPUMEMSIM_PLAIN_HEAP=1`):
//! `run workloads/contention.kern` 27.2 → 7.6 ms, the sample trace `v70_same_i8` 39.9 → 28.7 ms,
//! `v70_distinct` 104.5 → 91.2 ms; `gpumemsim bench` `v70_distinct` 0.93× (paired rounds). Huge pages
//! also take fewer TLB entries for the caches' tag arrays, read at random addresses. Nothing simulated
//! depends on it.
//!
//! How: allocations up to 32 MiB come from the main heap (glibc's `M_MMAP_THRESHOLD`; a larger one
//! is still mapped on its own), the heap grows 256 MiB at a time (`M_TOP_PAD`: address space only;
//! pages are backed when touched) and is not given back below 512 MiB free (`M_TRIM_THRESHOLD`), and
//! the heap's pad is advised `MADV_HUGEPAGE`. A heap that grows past the pad later gets ordinary
//! pages, and so do the other threads' arenas (with `--threads N` the machine is built on the pool's
//! threads): still correct. Sharing the main arena among all threads (`M_ARENA_MAX` 1) would give
//! them huge pages too, but puts different threads' domains on shared cache lines; not done.

/// Sets the heap up as described in the module header; call first thing in `main`. Does nothing on
/// other systems, or when `GPUMEMSIM_PLAIN_HEAP` is set (to compare).
pub fn huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("GPUMEMSIM_PLAIN_HEAP").is_none() {
        glibc::huge_pages();
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    const PAD: usize = 256 << 20;
    const HUGE: usize = 2 << 20;

    pub fn huge_pages() {
        // SAFETY: `mallopt`, `malloc`, `free`, `sbrk(0)` and `madvise` are called with valid
        // arguments, on the main thread before any other thread exists; `madvise` only advises on
        // the heap's own range (between two `sbrk(0)` readings, which glibc has just mapped), and an
        // advice the kernel refuses changes nothing.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
            libc::mallopt(libc::M_TOP_PAD, PAD as libc::c_int);
            let before = libc::sbrk(0) as usize;
            // One allocation past the heap's top makes it grow by the pad; freed at once (kept).
            // (`black_box`: a malloc freed unused may be compiled away.)
            let p = std::hint::black_box(libc::malloc(HUGE));
            if p.is_null() {
                return;
            }
            libc::free(p);
            let after = libc::sbrk(0) as usize;
            if after <= before {
                return;
            }
            let start = before.next_multiple_of(HUGE);
            if start < after {
                libc::madvise(
                    start as *mut libc::c_void,
                    after - start,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
}
