//! Memory for the live hooks: page protections (from `/proc/self/maps`), writing a GOT slot
//! or a table entry through a read-only page, patching code, and executable pages within
//! ±2 GiB of a target.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The system page size.
pub(crate) fn page_size() -> usize {
    static P: OnceLock<usize> = OnceLock::new();
    *P.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            p as usize
        } else {
            4096
        }
    })
}

fn page_down(p: usize) -> usize {
    p & !(page_size() - 1)
}

/// One mapping of `/proc/self/maps`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    pub start: usize,
    pub end: usize,
    pub prot: i32,
}

/// A snapshot of the process's mappings, sorted by address.
pub(crate) struct Maps(pub Vec<Region>);

impl Maps {
    /// Reads `/proc/self/maps` (an empty map when it cannot be read).
    pub fn read() -> Maps {
        let mut v: Vec<Region> = gpuheat_procmaps::read_self()
            .unwrap_or_default()
            .into_iter()
            .map(|m| {
                let mut prot = 0;
                if m.perms.read {
                    prot |= libc::PROT_READ;
                }
                if m.perms.write {
                    prot |= libc::PROT_WRITE;
                }
                if m.perms.exec {
                    prot |= libc::PROT_EXEC;
                }
                Region {
                    start: m.start as usize,
                    end: m.end as usize,
                    prot,
                }
            })
            .collect();
        v.sort_by_key(|r| r.start);
        Maps(v)
    }

    /// The mapping containing `p`.
    pub fn region(&self, p: usize) -> Option<Region> {
        let i = self.0.partition_point(|r| r.start <= p);
        let r = *self.0.get(i.checked_sub(1)?)?;
        (p < r.end).then_some(r)
    }

    /// Bytes readable from `p` on, up to `max` (0 when `p` is not mapped readable).
    pub fn readable_len(&self, p: usize, max: usize) -> usize {
        let mut at = p;
        while at < p + max {
            match self.region(at) {
                Some(r) if r.prot & libc::PROT_READ != 0 => at = r.end,
                _ => break,
            }
        }
        at.saturating_sub(p).min(max)
    }
}

/// Stores `value` into the aligned word at `addr`, making its page writable for the store
/// when it is not (RELRO'd GOTs) and restoring the protection afterwards. The store itself is
/// one atomic 8-byte write, so a concurrent reader sees the old or the new value.
///
/// # Safety
/// `addr` must be an 8-byte aligned word the caller means to overwrite.
pub(crate) unsafe fn write_word(maps: &Maps, addr: usize, value: usize) -> bool {
    let Some(r) = maps.region(addr) else {
        return false;
    };
    let page = page_down(addr);
    let writable = r.prot & libc::PROT_WRITE != 0;
    // SAFETY: `page` is the mapped page holding `addr` (found in `maps`); only its
    // protection changes, and back afterwards.
    let unprotect = || unsafe {
        libc::mprotect(
            page as *mut libc::c_void,
            page_size(),
            r.prot | libc::PROT_READ | libc::PROT_WRITE,
        ) == 0
    };
    if !writable && !unprotect() {
        return false;
    }
    // SAFETY: the caller's aligned word, writable now.
    unsafe { (*(addr as *const AtomicUsize)).store(value, Ordering::SeqCst) };
    if !writable {
        // SAFETY: as above.
        unsafe { libc::mprotect(page as *mut libc::c_void, page_size(), r.prot) };
    }
    true
}

const MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE: libc::c_long = 32;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE: libc::c_long = 64;

/// Makes every thread of the process execute a core-serializing instruction, so none keeps
/// running stale decoded copies of code we just rewrote.
///
/// With `membarrier(PRIVATE_EXPEDITED_SYNC_CORE)` (Linux ≥ 4.16) once the process is
/// registered for it. Registering waits for an RCU grace period (about 10 ms here), which
/// `gpuheat attach` would spend on the render thread it holds: it runs on a thread of its own,
/// and until it is done the cores are serialized the way runtimes without membarrier do it
/// (.NET's FlushProcessWriteBuffers): taking write permission from a page of ours that every
/// thread's core may have cached makes the kernel interrupt each core running the process to
/// flush it, and an interrupt is serializing.
pub(crate) fn sync_cores() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    if REGISTERED.load(Ordering::Acquire) {
        // SAFETY: membarrier takes two integers.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE,
                0,
            );
        }
        return;
    }
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("gpuheat-membarrier".into())
            .spawn(|| {
                // SAFETY: membarrier takes two integers.
                let ok = unsafe {
                    libc::syscall(
                        libc::SYS_membarrier,
                        MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE,
                        0,
                    ) == 0
                };
                REGISTERED.store(ok, Ordering::Release);
            });
    });
    interrupt_cores();
}

/// The process is registered for `membarrier(PRIVATE_EXPEDITED_SYNC_CORE)`.
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// Interrupts every core running a thread of the process (see [`sync_cores`]).
fn interrupt_cores() {
    static PAGE: OnceLock<usize> = OnceLock::new();
    let page = *PAGE.get_or_init(|| alloc_page_anywhere().unwrap_or(0));
    if page == 0 {
        return;
    }
    // SAFETY: our own page, mapped read-write: written so its mapping is present (and may
    // be cached by any core), then made read-only (the shootdown) and writable again.
    unsafe {
        std::ptr::write_volatile(page as *mut u8, 1);
        libc::mprotect(page as *mut libc::c_void, page_size(), libc::PROT_READ);
        libc::mprotect(
            page as *mut libc::c_void,
            page_size(),
            libc::PROT_READ | libc::PROT_WRITE,
        );
    }
}

/// One private read-write page anywhere.
fn alloc_page_anywhere() -> Option<usize> {
    // SAFETY: anonymous private mapping at an address of the kernel's choosing.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            page_size(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as usize)
}

/// Overwrites the first bytes of a function with `patch` while other threads may run it.
///
/// - A patch inside one aligned 8-byte word (the 5-byte `jmp rel32` at an entry with
///   `entry % 8 <= 3`, the usual case since functions start 16-byte aligned) is one atomic
///   8-byte store: a thread sees the old or the new instruction, never half of one.
/// - A longer or straddling patch is written as: (1) one atomic store putting `jmp $`
///   (`EB FE`, a 2-byte self-loop) at the entry, (2) stores of the patch's later words,
///   (3) one atomic store of the first word with the patch's head. A thread arriving during
///   the window spins at the entry until (3) lands, then takes the hook. This needs the
///   entry's first two bytes in one word (`entry % 8 <= 6`).
///
/// The pages are made RWX (never RW without X, other threads may be executing there) only
/// around the stores, and every thread is core-serialized after each step.
///
/// Not covered by any scheme: a thread that was already past the entry and inside the
/// patched bytes (it resumes in the middle of the new instruction). Keeping the patch at 5
/// bytes keeps that window to the first instruction or two of the function.
///
/// # Safety
/// `entry..entry+patch.len()` must be code the caller has decoded and relocated.
pub(crate) unsafe fn patch_code(maps: &Maps, entry: usize, patch: &[u8]) -> Result<(), String> {
    let n = patch.len();
    if n == 0 || n > 16 {
        return Err("bad patch length".into());
    }
    let first_word = entry & !7;
    let last_word = (entry + n - 1) & !7;
    if first_word != last_word && entry % 8 == 7 {
        return Err("entry at offset 7 of a word: no atomic guard possible".into());
    }
    // Make the covering pages writable, remembering their protections.
    let mut pages: Vec<(usize, i32)> = Vec::new();
    let mut p = page_down(entry);
    while p <= page_down(entry + n - 1) {
        let prot = maps
            .region(p)
            .map(|r| r.prot)
            .ok_or_else(|| format!("{p:#x} not mapped"))?;
        pages.push((p, prot));
        p += page_size();
    }
    // SAFETY: the pages covering the caller's code, mapped (found in `maps`); only their
    // protections change, and back at the end.
    let protect = |page: usize, prot: i32| unsafe {
        libc::mprotect(page as *mut libc::c_void, page_size(), prot) == 0
    };
    for (i, &(page, prot)) in pages.iter().enumerate() {
        if !protect(
            page,
            prot | libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC,
        ) {
            for &(pg, pr) in &pages[..i] {
                protect(pg, pr);
            }
            return Err(format!(
                "mprotect RWX refused: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    // The new value of the word at `w`: `patch` spliced over the current bytes.
    let spliced = |w: usize, bytes: &[u8]| -> u64 {
        // SAFETY: an aligned word of the pages made writable above.
        let word = unsafe { &*(w as *const AtomicU64) };
        let mut b = word.load(Ordering::SeqCst).to_le_bytes();
        for (k, byte) in b.iter_mut().enumerate() {
            let a = w + k;
            if a >= entry && a < entry + bytes.len() {
                *byte = bytes[a - entry];
            }
        }
        u64::from_le_bytes(b)
    };
    // SAFETY: as in `spliced`.
    let store = |w: usize, v: u64| unsafe { (*(w as *const AtomicU64)).store(v, Ordering::SeqCst) };
    if first_word == last_word {
        store(first_word, spliced(first_word, patch));
        sync_cores();
    } else {
        store(first_word, spliced(first_word, &[0xEB, 0xFE]));
        sync_cores();
        let mut w = first_word + 8;
        while w <= last_word {
            store(w, spliced(w, patch));
            w += 8;
        }
        sync_cores();
        store(first_word, spliced(first_word, patch));
        sync_cores();
    }
    for &(page, prot) in &pages {
        protect(page, prot);
    }
    Ok(())
}

/// Farthest a `rel32` displacement reaches, with a margin for the code inside the page.
const REACH: usize = (1 << 31) - (1 << 24);

/// Maps one private read-write page within `rel32` reach of `near` (or anywhere when `near`
/// is 0). The caller fills it and then calls [`seal`]. Returns the page address.
pub(crate) fn alloc_page(maps: &Maps, near: usize) -> Option<usize> {
    let size = page_size();
    let map = |addr: usize, flags: i32| -> Option<usize> {
        // SAFETY: anonymous private mapping; MAP_FIXED_NOREPLACE never replaces a mapping.
        let p = unsafe {
            libc::mmap(
                addr as *mut libc::c_void,
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(p as usize)
    };
    if near == 0 {
        return map(0, 0);
    }
    let lo = page_down(near.saturating_sub(REACH).max(0x10000) + size - 1);
    let hi = page_down(near.saturating_add(REACH).min(0x7fff_ffff_0000));
    // Gaps between mappings, as candidate addresses closest to `near` first.
    let mut candidates = Vec::new();
    let mut prev_end = 0x10000usize;
    for r in maps.0.iter().chain(std::iter::once(&Region {
        start: 0x7fff_ffff_0000,
        end: 0x7fff_ffff_0000,
        prot: 0,
    })) {
        let (gap_lo, gap_hi) = (prev_end.max(lo), r.start.min(hi));
        if gap_hi >= gap_lo + size {
            // Valid page starts are [first, last]; keep a page away from the neighbours
            // where the gap allows (a neighbouring heap may grow).
            let (first, last) = (gap_lo, gap_hi - size);
            let (a, b) = if last >= first + 2 * size {
                (first + size, last - size)
            } else {
                (first, last)
            };
            candidates.push(page_down(near.clamp(a, b)).max(a));
        }
        prev_end = prev_end.max(page_down(r.end + size - 1));
    }
    candidates.sort_by_key(|&a| a.abs_diff(near));
    for at in candidates.into_iter().take(16) {
        if let Some(p) = map(at, libc::MAP_FIXED_NOREPLACE) {
            if p == at && p.abs_diff(near) < REACH {
                return Some(p);
            }
            // An old kernel took the flag as a hint and put the page elsewhere.
            // SAFETY: we just mapped it.
            unsafe { libc::munmap(p as *mut libc::c_void, size) };
        }
    }
    None
}

/// Makes a page filled by the hooks read+execute (it is never written again).
pub(crate) fn seal(page: usize) -> bool {
    // SAFETY: a page from `alloc_page`.
    unsafe {
        libc::mprotect(
            page as *mut libc::c_void,
            page_size(),
            libc::PROT_READ | libc::PROT_EXEC,
        ) == 0
    }
}

/// Returns a page from `alloc_page` that ended up unused.
pub(crate) fn free_page(page: usize) {
    // SAFETY: a page from `alloc_page`, never handed out.
    unsafe { libc::munmap(page as *mut libc::c_void, page_size()) };
}
