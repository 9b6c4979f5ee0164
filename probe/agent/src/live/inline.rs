//! Inline hooks: the first bytes of a function become a jump to our wrapper, and the
//! instructions they held move into a trampoline that the wrapper calls as the real function.
//!
//! Layout (chosen over a 14-byte absolute patch): one page mapped within ±2 GiB of the
//! function holds a 14-byte relay `jmp [rip+0]; dq wrapper` and, after it, the trampoline:
//! the relocated prologue (iced-x86's `BlockEncoder` rewrites RIP-relative operands and
//! branches for the new address) followed by `jmp function+n` back to the first byte not
//! moved. The function's entry gets a 5-byte `jmp rel32` to the relay. Five bytes touch
//! fewer instructions than fourteen (fewer prologues to refuse, a smaller window for a
//! thread already inside them) and usually fit in one aligned 8-byte word, so the patch is a
//! single atomic store (see [`super::mem::patch_code`]). RIP-relative prologue instructions
//! need the trampoline near the code anyway. Only when no page can be had within reach does
//! it fall back to a 14-byte `jmp [rip+0]; dq wrapper` patch with the trampoline anywhere
//! (then RIP-relative prologue instructions are refused).
//!
//! A leading `endbr64` stays in place (the patch goes after it) and is repeated at the
//! trampoline's start, so both remain valid indirect-branch targets under CET.
//!
//! Refused, with the reason, rather than patched: undecodable bytes; a function too short
//! for the patch (unless the rest is padding after a `jmp`/`ret`); a `call` whose return
//! address would fall inside the patched bytes; `int`/`ud2`/transactional instructions; and
//! any branch, in the prologue or elsewhere in the function (its size from the symbol table;
//! 128 bytes when unknown), to a byte inside the moved range other than its first.

use super::mem::{self, Maps};
use iced_x86::{
    BlockEncoder, BlockEncoderOptions, Code, Decoder, DecoderOptions, FlowControl, Instruction,
    InstructionBlock, Mnemonic,
};

/// A hook in place.
#[derive(Clone, Debug)]
pub(crate) struct Hook {
    /// The function's address (the symbol).
    pub func: usize,
    /// Where the patch starts (`func`, or `func + 4` after an `endbr64`).
    pub start: usize,
    /// The trampoline: call it to run the original function.
    pub tramp: usize,
    /// Bytes the patch overwrote (5, or 14 for the fallback).
    #[allow(dead_code)] // read by the tests
    pub patch_len: usize,
}

/// The relay occupies the first 16 bytes of the page, the trampoline follows.
const TRAMP_OFFSET: usize = 16;
/// Bytes decoded from the function's entry at most.
const WINDOW: usize = 64;

/// Hooks `func` so that calls to it jump to `target`.
///
/// `size` is the function's size from its symbol (0 if unknown). `far` forces the 14-byte
/// fallback (for tests). `before_patch` runs with the trampoline address after it is ready
/// and before the function's entry is rewritten: the caller records it as the real function
/// there, so the very first redirected call already finds it.
///
/// # Safety
/// `func` must be the entry of a function with the usual x86-64 ABI.
pub(crate) unsafe fn hook(
    maps: &Maps,
    func: usize,
    size: usize,
    target: usize,
    far: bool,
    before_patch: impl FnOnce(usize),
) -> Result<Hook, String> {
    let avail = maps.readable_len(func, WINDOW);
    if avail < 16 {
        return Err(format!("{func:#x}: not readable code"));
    }
    // SAFETY: `avail` bytes from `func` are mapped readable (`maps`).
    let bytes = unsafe { std::slice::from_raw_parts(func as *const u8, avail) };
    let mut d = Decoder::with_ip(64, bytes, func as u64, DecoderOptions::NONE);
    let first = d.decode();
    let (start, endbr) = if first.code() == Code::Endbr64 {
        (func + 4, Some(first))
    } else {
        (func, None)
    };

    let near_page = if far {
        None
    } else {
        mem::alloc_page(maps, start)
    };
    let (page, near) = match near_page {
        Some(p) => (p, true),
        None => (
            mem::alloc_page(maps, 0).ok_or("no page for the trampoline")?,
            false,
        ),
    };
    // SAFETY: `page` is the fresh writable page just mapped for this hook.
    let result = unsafe {
        build(
            maps,
            bytes,
            func,
            start,
            size,
            if near { 5 } else { 14 },
            page,
            target,
            endbr,
        )
    };
    let patch = match result {
        Ok(p) => p,
        Err(e) => {
            mem::free_page(page);
            return Err(e);
        }
    };
    if !mem::seal(page) {
        mem::free_page(page);
        return Err("mprotect of the trampoline page failed".into());
    }
    let tramp = page + TRAMP_OFFSET;
    before_patch(tramp);
    // SAFETY: `build` decoded and relocated the bytes the patch covers; the caller vouches
    // that `func` is a function entry.
    unsafe { mem::patch_code(maps, start, &patch) }?;
    Ok(Hook {
        func,
        start,
        tramp,
        patch_len: patch.len(),
    })
}

/// Decodes and checks the prologue, fills the page (relay + trampoline), returns the patch.
///
/// # Safety
/// `page` must be a writable page of ours; `bytes` the code at `func`.
#[allow(clippy::too_many_arguments)]
unsafe fn build(
    maps: &Maps,
    bytes: &[u8],
    func: usize,
    start: usize,
    size: usize,
    patch_len: usize,
    page: usize,
    target: usize,
    endbr: Option<Instruction>,
) -> Result<Vec<u8>, String> {
    let off = start - func;
    let mut d = Decoder::with_ip(64, &bytes[off..], start as u64, DecoderOptions::NONE);
    let mut moved: Vec<Instruction> = Vec::new();
    let mut covered = 0usize;
    let mut terminated = false;
    while covered < patch_len {
        if !d.can_decode() {
            return Err("function too short to patch".into());
        }
        let ins = d.decode();
        if ins.is_invalid() {
            return Err(format!("undecodable byte at +{}", covered + off));
        }
        let end = ins.next_ip() as usize - start;
        if terminated {
            // After an unconditional jump or return only padding may be overwritten.
            if !matches!(ins.mnemonic(), Mnemonic::Nop | Mnemonic::Int3) {
                return Err("function shorter than the patch".into());
            }
            covered = end;
            continue;
        }
        match ins.flow_control() {
            FlowControl::Next | FlowControl::ConditionalBranch => {}
            FlowControl::Call | FlowControl::IndirectCall => {
                if end < patch_len {
                    return Err(format!(
                        "call at +{} returns inside the patched bytes",
                        covered + off
                    ));
                }
            }
            FlowControl::UnconditionalBranch
            | FlowControl::IndirectBranch
            | FlowControl::Return => terminated = true,
            other => return Err(format!("cannot relocate {:?} ({other:?})", ins.mnemonic())),
        }
        moved.push(ins);
        covered = end;
    }
    let moved_end = moved.last().map_or(start, |i| i.next_ip() as usize);
    let inside = |t: u64, include_first: bool| {
        let t = t as usize;
        (t > start || (include_first && t == start)) && t < start + covered
    };
    for ins in &moved {
        if is_near_branch(ins) && inside(ins.near_branch_target(), true) {
            return Err("a prologue branch targets the patched bytes".into());
        }
    }
    // Branches from the rest of the function into the moved bytes.
    let body_end = if size > off { func + size } else { start + 128 };
    let body_len = body_end.saturating_sub(moved_end);
    // The caller's snapshot of the mappings: the function's own pages do not change while
    // it is hooked, and reading /proc/self/maps again per hook cost 2-5 ms each (mpv, 1,400
    // mappings, on a machine whose cores the program keeps busy).
    let avail = maps.readable_len(moved_end, body_len);
    if avail > 0 {
        // SAFETY: `avail` bytes from `moved_end` are mapped readable.
        let body = unsafe { std::slice::from_raw_parts(moved_end as *const u8, avail) };
        let mut bd = Decoder::with_ip(64, body, moved_end as u64, DecoderOptions::NONE);
        while bd.can_decode() {
            let ins = bd.decode();
            if !ins.is_invalid() && is_near_branch(&ins) && inside(ins.near_branch_target(), false)
            {
                return Err(format!(
                    "the function branches into the patched bytes from {:#x}",
                    ins.ip()
                ));
            }
        }
    }

    // Trampoline: [endbr64] + moved instructions + jump back.
    let mut block: Vec<Instruction> = Vec::new();
    if let Some(e) = endbr {
        block.push(e);
    }
    block.extend_from_slice(&moved);
    if !terminated {
        let back = Instruction::with_branch(Code::Jmp_rel32_64, moved_end as u64)
            .map_err(|e| e.to_string())?;
        block.push(back);
    }
    let tramp = page + TRAMP_OFFSET;
    let encoded = BlockEncoder::encode(
        64,
        InstructionBlock::new(&block, tramp as u64),
        BlockEncoderOptions::NONE,
    )
    .map_err(|e| format!("cannot relocate the prologue: {e}"))?;
    let code = encoded.code_buffer;
    if TRAMP_OFFSET + code.len() > mem::page_size() {
        return Err("trampoline too large".into());
    }
    // Relay: jmp qword ptr [rip+0]; dq target.
    let relay = page as *mut u8;
    // SAFETY: the caller's writable page; the relay (14 bytes) and the trampoline (checked
    // to fit above) do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping([0xFFu8, 0x25, 0, 0, 0, 0].as_ptr(), relay, 6);
        std::ptr::copy_nonoverlapping(target.to_le_bytes().as_ptr(), relay.add(6), 8);
        std::ptr::copy_nonoverlapping(code.as_ptr(), (page + TRAMP_OFFSET) as *mut u8, code.len());
    }

    let mut patch = Vec::with_capacity(patch_len);
    if patch_len == 5 {
        let rel = page as i64 - (start as i64 + 5);
        let rel = i32::try_from(rel).map_err(|_| "relay out of rel32 reach")?;
        patch.push(0xE9);
        patch.extend_from_slice(&rel.to_le_bytes());
    } else {
        patch.extend_from_slice(&[0xFF, 0x25, 0, 0, 0, 0]);
        patch.extend_from_slice(&(target as u64).to_le_bytes());
    }
    Ok(patch)
}

fn is_near_branch(ins: &Instruction) -> bool {
    matches!(
        ins.flow_control(),
        FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch | FlowControl::Call
    ) && ins.near_branch_target() != 0
}

/// Where a chain of jumps starting at `p` ends: follows `jmp rel32`, `jmp rel8` and
/// `jmp [rip+x]` (PLT entries, our relays), at most `depth` hops. Used to recognise code
/// that already leads to one of our wrappers.
///
/// # Safety
/// `p` must be mapped code.
pub(crate) unsafe fn follow_jumps(maps: &Maps, mut p: usize, depth: usize) -> usize {
    for _ in 0..depth {
        let avail = maps.readable_len(p, 16);
        if avail < 16 {
            break;
        }
        // SAFETY: `avail` bytes from `p` are mapped readable.
        let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, avail) };
        let mut d = Decoder::with_ip(64, bytes, p as u64, DecoderOptions::NONE);
        let mut ins = d.decode();
        if ins.code() == Code::Endbr64 {
            ins = d.decode();
        }
        match ins.code() {
            Code::Jmp_rel32_64 | Code::Jmp_rel8_64 => p = ins.near_branch_target() as usize,
            Code::Jmp_rm64 if ins.is_ip_rel_memory_operand() => {
                let slot = ins.ip_rel_memory_address() as usize;
                if maps.readable_len(slot, 8) < 8 {
                    break;
                }
                // SAFETY: 8 readable bytes at `slot` (checked above).
                p = unsafe { std::ptr::read_unaligned(slot as *const usize) };
            }
            _ => break,
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    // Test functions with the prologues the hooker must handle or refuse.
    std::arch::global_asm!(
        ".pushsection .text.gpuheat_live_tests,\"ax\",@progbits",
        ".p2align 4",
        // 3*x with an ordinary frame set-up.
        "gpuheat_t_plain:",
        "push rbp",
        "mov rbp, rsp",
        "lea rax, [rdi + rdi*2]",
        "pop rbp",
        "ret",
        ".p2align 4",
        // x + 42, the 42 read RIP-relative in the first instruction.
        "gpuheat_t_riprel:",
        "mov rax, qword ptr [rip + gpuheat_t_data]",
        "add rax, rdi",
        "ret",
        ".p2align 4",
        // x == 0 ? 7 : x + 1, a short conditional branch inside the first 5 bytes.
        "gpuheat_t_jcc:",
        "test rdi, rdi",
        "je 2f",
        "lea rax, [rdi + 1]",
        "ret",
        "2:",
        "mov eax, 7",
        "ret",
        ".p2align 4",
        // A loop back into its own first bytes: must be refused.
        "gpuheat_t_loop:",
        "dec rdi",
        "jnz gpuheat_t_loop",
        "mov rax, rdi",
        "ret",
        ".p2align 4",
        // Calls through rsi after one byte: the return address is inside the patch.
        "gpuheat_t_call:",
        "push rbx",
        "call rsi",
        "pop rbx",
        "ret",
        ".p2align 4",
        // Returns 5: 4 bytes, shorter than the patch, then padding.
        "gpuheat_t_short:",
        "push 5",
        "pop rax",
        "ret",
        "int3",
        "int3",
        "int3",
        "int3",
        "int3",
        "int3",
        "int3",
        "int3",
        "int3",
        "int3",
        ".p2align 4",
        // endbr64 then 2*x, long enough for the 14-byte fallback.
        "gpuheat_t_endbr:",
        "endbr64",
        "push rbx",
        "mov rbx, rdi",
        "lea rax, [rbx + rbx]",
        "add rax, 0",
        "add rax, 0",
        "pop rbx",
        "ret",
        ".p2align 4",
        // A branch from later in the function into the moved bytes: must be refused.
        "gpuheat_t_back:",
        "xor eax, eax",
        "3:",
        "add rax, 1",
        "add rax, 1",
        "cmp rax, rdi",
        "jb 3b",
        "ret",
        ".popsection",
        ".pushsection .rodata.gpuheat_live_tests,\"a\",@progbits",
        ".p2align 3",
        "gpuheat_t_data:",
        ".quad 42",
        ".popsection",
    );

    extern "C" {
        fn gpuheat_t_plain(x: u64) -> u64;
        fn gpuheat_t_riprel(x: u64) -> u64;
        fn gpuheat_t_jcc(x: u64) -> u64;
        fn gpuheat_t_loop(x: u64) -> u64;
        fn gpuheat_t_call(x: u64, f: extern "C" fn() -> u64) -> u64;
        fn gpuheat_t_short() -> u64;
        fn gpuheat_t_endbr(x: u64) -> u64;
        fn gpuheat_t_back(x: u64) -> u64;
    }

    static TRAMP_PLAIN: AtomicUsize = AtomicUsize::new(0);
    static TRAMP_RIPREL: AtomicUsize = AtomicUsize::new(0);
    static TRAMP_JCC: AtomicUsize = AtomicUsize::new(0);
    static TRAMP_SHORT: AtomicUsize = AtomicUsize::new(0);
    static TRAMP_ENDBR: AtomicUsize = AtomicUsize::new(0);

    fn via(t: &AtomicUsize, x: u64) -> u64 {
        // SAFETY: the slot holds a trampoline of a `fn(u64) -> u64` test function.
        let f: extern "C" fn(u64) -> u64 = unsafe { std::mem::transmute(t.load(SeqCst)) };
        f(x)
    }
    extern "C" fn on_plain(x: u64) -> u64 {
        1000 + via(&TRAMP_PLAIN, x)
    }
    extern "C" fn on_riprel(x: u64) -> u64 {
        1000 + via(&TRAMP_RIPREL, x)
    }
    extern "C" fn on_jcc(x: u64) -> u64 {
        1000 + via(&TRAMP_JCC, x)
    }
    extern "C" fn on_short() -> u64 {
        1000 + via(&TRAMP_SHORT, 0)
    }
    extern "C" fn on_endbr(x: u64) -> u64 {
        1000 + via(&TRAMP_ENDBR, x)
    }
    extern "C" fn never() -> u64 {
        0
    }

    unsafe fn try_hook(
        f: usize,
        target: usize,
        far: bool,
        slot: &AtomicUsize,
    ) -> Result<Hook, String> {
        // SAFETY: the caller passes one of the test functions above.
        unsafe { hook(&Maps::read(), f, 0, target, far, |t| slot.store(t, SeqCst)) }
    }

    #[test]
    fn hooks_relocate_and_call_through() {
        // SAFETY: hooks the test functions of this module, which nothing else calls.
        unsafe {
            // Each call goes through std::hint::black_box so the compiler cannot fold it.
            let call = |f: unsafe extern "C" fn(u64) -> u64, x: u64| std::hint::black_box(f)(x);
            assert_eq!(call(gpuheat_t_plain, 5), 15);
            let h = try_hook(
                gpuheat_t_plain as *const () as usize,
                on_plain as *const () as usize,
                false,
                &TRAMP_PLAIN,
            )
            .unwrap();
            assert_eq!(h.patch_len, 5);
            assert_eq!(call(gpuheat_t_plain, 5), 1015);

            assert_eq!(call(gpuheat_t_riprel, 1), 43);
            try_hook(
                gpuheat_t_riprel as *const () as usize,
                on_riprel as *const () as usize,
                false,
                &TRAMP_RIPREL,
            )
            .unwrap();
            assert_eq!(call(gpuheat_t_riprel, 1), 1043);

            assert_eq!(call(gpuheat_t_jcc, 0), 7);
            try_hook(
                gpuheat_t_jcc as *const () as usize,
                on_jcc as *const () as usize,
                false,
                &TRAMP_JCC,
            )
            .unwrap();
            assert_eq!(call(gpuheat_t_jcc, 0), 1007);
            assert_eq!(call(gpuheat_t_jcc, 4), 1005);

            let short: unsafe extern "C" fn() -> u64 = gpuheat_t_short;
            try_hook(
                short as *const () as usize,
                on_short as *const () as usize,
                false,
                &TRAMP_SHORT,
            )
            .unwrap();
            assert_eq!(std::hint::black_box(short)(), 1005);

            // The 14-byte fallback, after an endbr64 that stays in place.
            assert_eq!(call(gpuheat_t_endbr, 21), 42);
            let h = try_hook(
                gpuheat_t_endbr as *const () as usize,
                on_endbr as *const () as usize,
                true,
                &TRAMP_ENDBR,
            )
            .unwrap();
            assert_eq!((h.start - h.func, h.patch_len), (4, 14));
            assert_eq!(
                *(gpuheat_t_endbr as *const () as usize as *const [u8; 4]),
                [0xF3, 0x0F, 0x1E, 0xFA]
            );
            assert_eq!(call(gpuheat_t_endbr, 21), 1042);
            // The trampoline starts with endbr64 too.
            assert_eq!(*(h.tramp as *const [u8; 4]), [0xF3, 0x0F, 0x1E, 0xFA]);
        }
    }

    #[test]
    fn unsafe_prologues_are_refused_and_left_alone() {
        let dummy = AtomicUsize::new(0);
        // SAFETY: as in `hooks_relocate_and_call_through`.
        unsafe {
            for (f, what) in [
                (gpuheat_t_loop as *const () as usize, "patched bytes"),
                (gpuheat_t_call as *const () as usize, "returns inside"),
                (gpuheat_t_back as *const () as usize, "branches into"),
            ] {
                let before = *(f as *const [u8; 16]);
                let e = try_hook(f, never as *const () as usize, false, &dummy).unwrap_err();
                assert!(e.contains(what), "{e}");
                assert_eq!(*(f as *const [u8; 16]), before);
            }
            assert_eq!(dummy.load(SeqCst), 0);
            assert_eq!(std::hint::black_box(gpuheat_t_loop)(3), 0);
            assert_eq!(std::hint::black_box(gpuheat_t_call)(0, never), 0);
            assert_eq!(std::hint::black_box(gpuheat_t_back)(5), 6);
        }
    }

    #[test]
    fn follows_jump_chains() {
        // SAFETY: writes only the page it maps, reads mapped code.
        unsafe {
            let maps = Maps::read();
            let page = mem::alloc_page(&maps, 0).unwrap();
            // jmp rel32 -> jmp [rip+0]; dq 0x1234
            let code: [u8; 5] = [0xE9, 11, 0, 0, 0];
            std::ptr::copy_nonoverlapping(code.as_ptr(), page as *mut u8, 5);
            let relay = [0xFFu8, 0x25, 0, 0, 0, 0, 0x34, 0x12, 0, 0, 0, 0, 0, 0];
            std::ptr::copy_nonoverlapping(relay.as_ptr(), (page + 16) as *mut u8, 14);
            std::ptr::write_bytes((page + 30) as *mut u8, 0xCC, 16);
            assert_eq!(follow_jumps(&Maps::read(), page, 4), 0x1234);
            mem::free_page(page);
        }
    }
}
