//! Random and mangled bytes: readers must answer with an error, never panic, and never ask
//! for absurd amounts of memory because a damaged header says so.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use gpuheat_session::*;
use gpuheat_testkit::sample::*;
use gpuheat_testkit::{Scratch, XorShift};

/// Records the largest single allocation the test binary makes.
struct Tracking;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System`, which upholds GlobalAlloc's contract; the
// size is only recorded.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// No input here is over 64 KiB, so nothing legitimate needs more than a few MiB (the
/// decoders' own up-front reservations are capped at 1 MiB).
const ALLOCATION_LIMIT: usize = 8 << 20;

/// Feeds `bytes` to every reader; only panics (which fail the test) and results matter.
fn read_everything(bytes: &[u8]) {
    let _ = decode(bytes);
    let mut reader = ChunkReader::new(bytes);
    while let Some(Ok(_)) = reader.next() {}
    let _ = Session::from_reader(bytes);
    let lenient = Session::from_reader_lenient(bytes);
    if let Ok(s) = &lenient {
        if let Some(at) = s.truncated_at {
            assert!(at <= bytes.len() as u64);
        }
    }
}

/// A chunk of a known kind with a correct checksum over random payload bytes, so that the
/// payload decoders (JSON, postcard, columns, LZ4, zstd) see garbage rather than the checksum
/// catching it.
fn checksummed_garbage(rng: &mut XorShift) -> Vec<u8> {
    let kind = ChunkKind::KNOWN[rng.below(8) as usize];
    let payload_len = rng.below(512) as usize;
    let mut payload = rng.bytes(payload_len);
    let flags = match rng.below(5) {
        0 => 0,
        3 => rng.next_u64() as u32,
        4 => FLAG_ZSTD,
        _ => FLAG_LZ4,
    };
    // Random bytes in a real zstd frame reach the payload decoders behind it.
    let zstd_of = (flags == FLAG_ZSTD && rng.below(2) == 0).then_some(payload.len() as u32);
    if zstd_of.is_some() {
        payload = zstd::bulk::compress(&payload, 1).unwrap();
    }
    let stored_len = payload.len() as u32;
    let raw_len = match rng.below(4) {
        // Uncompressed payloads with consistent lengths reach the JSON and postcard decoders.
        _ if flags == 0 && rng.below(4) > 0 => stored_len,
        _ if zstd_of.is_some() && rng.below(4) > 0 => zstd_of.unwrap_or(0),
        0 => stored_len,
        1 => rng.below(u64::from(stored_len) * 4 + 1) as u32,
        2 => rng.below(u64::from(MAX_CHUNK_LEN) + 1) as u32,
        _ => rng.next_u64() as u32,
    };
    let header = ChunkHeader {
        kind,
        flags,
        raw_len,
        stored_len,
        crc32: crc32fast::hash(&payload),
    };
    let mut out = header.to_bytes().to_vec();
    out.extend_from_slice(&payload);
    out
}

#[test]
fn random_bytes_never_panic_nor_allocate_absurdly() {
    let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15);
    let file_header = FileHeader::current().to_bytes();
    let valid = file_bytes(&[
        Record::Info(info()),
        Record::Functions(functions()),
        Record::Context(context()),
        Record::Frame(frame(0, 30)),
        Record::Pipelined(pipelined(0)),
        Record::End(end()),
    ]);
    let dir = Scratch::new("gpuheat-session-test", "fuzz");
    let path = dir.join("random.gpuheat");

    for case in 0..10_000u32 {
        let len = match rng.below(8) {
            0 => rng.below(24),
            1..=5 => rng.below(2048),
            _ => rng.below(64 << 10),
        } as usize;
        let bytes = match case % 5 {
            // Anything at all.
            0 => rng.bytes(len),
            // A valid file header, then random chunks.
            1 => [&file_header[..], &rng.bytes(len)].concat(),
            // Valid header, then chunks whose checksums are right but whose payloads are not.
            2 => {
                let mut out = file_header.to_vec();
                for _ in 0..1 + rng.below(3) {
                    out.extend(checksummed_garbage(&mut rng));
                }
                out
            }
            // A real session with a few bytes changed, and maybe cut short.
            3 => {
                let mut out = valid.clone();
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(out.len() as u64) as usize;
                    out[i] = rng.next_u64() as u8;
                }
                if rng.below(2) == 0 {
                    out.truncate(rng.below(out.len() as u64 + 1) as usize);
                }
                out
            }
            // A real session cut anywhere, then random bytes.
            _ => {
                let cut = rng.below(valid.len() as u64) as usize;
                [&valid[..cut], &rng.bytes(len.min(4096))].concat()
            }
        };
        read_everything(&bytes);
        read_everything(bytes.get(FILE_HEADER_LEN..).unwrap_or(&[]));
        if case % 10 == 0 {
            std::fs::write(&path, &bytes).unwrap();
            let _ = Session::open(&path);
            let _ = Session::open_lenient(&path);
        }
    }

    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest < ALLOCATION_LIMIT,
        "largest single allocation was {largest} bytes"
    );
}
