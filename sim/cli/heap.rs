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
//! the heap's pad is advised `MADV_HUGEPAGE`. Each thread the library starts (`gpumemsim::host`) and
//! each of rayon's global pool has its heap advised too (glibc reserves another arena's heap as one
//! 64 MiB-aligned mapping; with `--threads N` the machine is built on the pool's threads). A main
//! heap that grows past the pad later gets ordinary pages: still correct. Sharing the main arena
//! among all threads (`M_ARENA_MAX` 1) instead measured 1.2–1.3× slower with two threads.

/// Sets the heap up as described in the module header; call first thing in `main`. Does nothing on
/// other systems, or when `GPUMEMSIM_PLAIN_HEAP` is set (to compare).
pub fn huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("GPUMEMSIM_PLAIN_HEAP").is_none() {
        glibc::huge_pages();
        // Every other thread's heap too: the library's pools, and rayon's global pool (litmus runs,
        // trace loading); only when the main heap's place is known (to tell its chunks apart).
        if glibc::main_heap_known() {
            gpumemsim::host::on_thread_start(glibc::thread_heap);
            let _ = rayon::ThreadPoolBuilder::new()
                .start_handler(|_| glibc::thread_heap())
                .build_global();
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::sync::atomic::{AtomicUsize, Ordering};

    const PAD: usize = 256 << 20;
    const HUGE: usize = 2 << 20;
    /// The size and alignment of the heaps of glibc's other arenas (`HEAP_MAX_SIZE`, twice the
    /// largest mmap threshold: 64 MiB on 64-bit targets); glibc finds a chunk's heap by this
    /// alignment.
    const ARENA_HEAP: usize = 64 << 20;

    /// Where the main heap starts (`[heap]` in `/proc/self/maps`), so that its chunks are told apart.
    static MAIN_HEAP: AtomicUsize = AtomicUsize::new(usize::MAX);

    /// Finds the main heap's start; whether it was found.
    pub fn main_heap_known() -> bool {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let start = (maps.lines())
            .find(|l| l.ends_with("[heap]"))
            .and_then(|l| l.split('-').next())
            .and_then(|a| usize::from_str_radix(a, 16).ok());
        match start {
            Some(a) => {
                MAIN_HEAP.store(a, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// A new thread's heap (its arena's, reserved by glibc in one aligned mapping) advised for huge
    /// pages; nothing when the thread allocates from the main heap.
    pub fn thread_heap() {
        // SAFETY: `malloc`/`free` of a small block and `sbrk(0)` are called as any C code would;
        // `madvise` advises the aligned range glibc keeps for the arena that holds the block (a chunk
        // outside the main heap lies in such a heap), and an advice the kernel refuses changes nothing.
        unsafe {
            let p = std::hint::black_box(libc::malloc(64));
            if p.is_null() {
                return;
            }
            let at = p as usize;
            libc::free(p);
            let brk = libc::sbrk(0) as usize;
            if (MAIN_HEAP.load(Ordering::Relaxed)..brk).contains(&at) {
                return;
            }
            let base = at & !(ARENA_HEAP - 1);
            libc::madvise(base as *mut libc::c_void, ARENA_HEAP, libc::MADV_HUGEPAGE);
        }
    }

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
