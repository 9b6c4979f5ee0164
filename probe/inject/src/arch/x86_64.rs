//! x86_64 (System V ABI): registers, breakpoints and the call frame.

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::unistd::Pid;

/// The ELF machine this module drives.
pub(crate) const ELF_MACHINE: u16 = object::elf::EM_X86_64;
/// Human name for messages.
pub(crate) const NAME: &str = "x86_64";

/// `int3`.
pub(crate) const BREAKPOINT: u8 = 0xCC;

/// Bytes below `rsp` a leaf function may use without moving `rsp`; never written.
pub(crate) const RED_ZONE: u64 = 128;

/// The return address pushed for an injected call. Returning there faults with
/// SIGSEGV and `rip == 0`, which the injector catches and never delivers.
pub(crate) const RETURN_ADDRESS: u64 = 0;

pub(crate) type Regs = libc::user_regs_struct;

/// `NT_X86_XSTATE` (linux/elf.h): the whole XSAVE area (x87, SSE, AVX, AVX-512, …).
const NT_X86_XSTATE: libc::c_int = 0x202;
/// Large enough for every XSAVE layout the kernel exposes today (AMX tiles included);
/// the kernel tells us the real size.
const XSTATE_BUFFER: usize = 64 * 1024;

/// Everything that makes up the thread's user-visible CPU state.
pub(crate) struct Saved {
    pub regs: Regs,
    fp: FpState,
}

enum FpState {
    /// The full XSAVE area, exactly as long as the kernel returned it.
    Xstate(Vec<u8>),
    /// CPUs without XSAVE: the FXSAVE area (x87 + SSE).
    Fx(Box<libc::user_fpregs_struct>),
}

pub(crate) fn get_regs(tid: i32) -> Result<Regs, Errno> {
    ptrace::getregs(Pid::from_raw(tid))
}

pub(crate) fn set_regs(tid: i32, regs: &Regs) -> Result<(), Errno> {
    ptrace::setregs(Pid::from_raw(tid), *regs)
}

pub(crate) fn pc(regs: &Regs) -> u64 {
    regs.rip
}

pub(crate) fn set_pc(regs: &mut Regs, pc: u64) {
    regs.rip = pc;
}

/// Whether a SIGTRAP with this `si_code` comes from a breakpoint instruction (`int3`
/// reports `SI_KERNEL`), not from kill/tgkill (`SI_USER`, `SI_TKILL`).
pub(crate) fn is_breakpoint_trap(si_code: i32) -> bool {
    si_code == libc::SI_KERNEL
}

/// After an `int3` trap, `rip` points past the breakpoint byte.
pub(crate) fn breakpoint_address_from_trap_pc(pc: u64) -> u64 {
    pc.wrapping_sub(1)
}

pub(crate) fn stack_pointer(regs: &Regs) -> u64 {
    regs.rsp
}

pub(crate) fn return_value(regs: &Regs) -> u64 {
    regs.rax
}

/// Whether a stop with `signal` and these registers is our injected call returning.
pub(crate) fn is_call_return(signal: i32, regs: &Regs) -> bool {
    signal == libc::SIGSEGV && regs.rip == RETURN_ADDRESS
}

/// Memory to write and registers to set to call `func(args…)` on a thread whose state is
/// `saved`, with the new frame at or below `frame_top` (already below the red zone and
/// anything else we keep on the stack).
pub(crate) struct CallSetup {
    pub regs: Regs,
    pub writes: Vec<(u64, Vec<u8>)>,
}

pub(crate) fn prepare_call(saved: &Regs, func: u64, args: &[u64], frame_top: u64) -> CallSetup {
    assert!(args.len() <= 6, "only register arguments are supported");
    let mut regs = *saved;
    // As right after a `call`: rsp ≡ 8 (mod 16), the return address at [rsp].
    let rsp = (frame_top & !0xf) - 8;
    regs.rsp = rsp;
    regs.rip = func;
    let slots = [
        &mut regs.rdi,
        &mut regs.rsi,
        &mut regs.rdx,
        &mut regs.rcx,
        &mut regs.r8,
        &mut regs.r9,
    ];
    for (slot, &v) in slots.into_iter().zip(args) {
        *slot = v;
    }
    // No vector registers used by a variadic call.
    regs.rax = 0;
    // Not inside a system call: keep the kernel from "restarting" one at our rip.
    regs.orig_rax = u64::MAX;
    // The ABI requires DF clear on function entry; never single-step.
    regs.eflags &= !(0x400 | 0x100);
    CallSetup {
        regs,
        writes: vec![(rsp, RETURN_ADDRESS.to_le_bytes().to_vec())],
    }
}

/// Saves the general-purpose registers and the full FP/vector state.
pub(crate) fn save(tid: i32) -> Result<Saved, (&'static str, Errno)> {
    let regs = get_regs(tid).map_err(|e| ("GETREGS", e))?;
    let fp = match get_xstate(tid) {
        Ok(x) => FpState::Xstate(x),
        Err(Errno::EINVAL) | Err(Errno::ENODEV) | Err(Errno::EIO) => {
            FpState::Fx(Box::new(get_fpregs(tid).map_err(|e| ("GETFPREGS", e))?))
        }
        Err(e) => return Err(("GETREGSET(NT_X86_XSTATE)", e)),
    };
    Ok(Saved { regs, fp })
}

/// Restores exactly what [`save`] saved.
pub(crate) fn restore(tid: i32, saved: &Saved) -> Result<(), (&'static str, Errno)> {
    match &saved.fp {
        FpState::Xstate(x) => set_xstate(tid, x).map_err(|e| ("SETREGSET(NT_X86_XSTATE)", e))?,
        FpState::Fx(f) => set_fpregs(tid, f).map_err(|e| ("SETFPREGS", e))?,
    }
    set_regs(tid, &saved.regs).map_err(|e| ("SETREGS", e))
}

// nix 0.29 has no regset for XSTATE nor GETFPREGS, so these four use libc::ptrace directly.

fn get_xstate(tid: i32) -> Result<Vec<u8>, Errno> {
    let mut buf = vec![0u8; XSTATE_BUFFER];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: iov describes a live buffer of iov_len bytes; the kernel shrinks iov_len to
    // what it wrote.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETREGSET,
            tid,
            NT_X86_XSTATE as usize as *mut libc::c_void,
            &mut iov as *mut libc::iovec,
        )
    };
    Errno::result(r)?;
    buf.truncate(iov.iov_len);
    Ok(buf)
}

fn set_xstate(tid: i32, state: &[u8]) -> Result<(), Errno> {
    let mut copy = state.to_vec();
    let mut iov = libc::iovec {
        iov_base: copy.as_mut_ptr().cast(),
        iov_len: copy.len(),
    };
    // SAFETY: iov describes a live buffer; the kernel only reads it.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_SETREGSET,
            tid,
            NT_X86_XSTATE as usize as *mut libc::c_void,
            &mut iov as *mut libc::iovec,
        )
    };
    Errno::result(r).map(drop)
}

fn get_fpregs(tid: i32) -> Result<libc::user_fpregs_struct, Errno> {
    let mut fp = std::mem::MaybeUninit::<libc::user_fpregs_struct>::zeroed();
    // SAFETY: the kernel writes one user_fpregs_struct.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETFPREGS,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            fp.as_mut_ptr(),
        )
    };
    Errno::result(r)?;
    // SAFETY: zero-initialised and then filled by the kernel; plain integers.
    Ok(unsafe { fp.assume_init() })
}

fn set_fpregs(tid: i32, fp: &libc::user_fpregs_struct) -> Result<(), Errno> {
    // SAFETY: the kernel reads one user_fpregs_struct.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_SETFPREGS,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            fp as *const libc::user_fpregs_struct,
        )
    };
    Errno::result(r).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_frame_is_aligned_like_after_a_call() {
        // SAFETY: user_regs_struct is plain integers.
        let mut saved: Regs = unsafe { std::mem::zeroed() };
        saved.rsp = 0x7fff_0000_1238;
        saved.eflags = 0x746;
        let setup = prepare_call(&saved, 0x1000, &[1, 2], 0x7fff_0000_1100 - 3);
        assert_eq!(setup.regs.rsp % 16, 8);
        assert!(setup.regs.rsp < 0x7fff_0000_1100 - 3);
        assert_eq!(setup.regs.rip, 0x1000);
        assert_eq!((setup.regs.rdi, setup.regs.rsi), (1, 2));
        assert_eq!(setup.regs.eflags & 0x400, 0);
        assert_eq!(setup.regs.orig_rax, u64::MAX);
        assert_eq!(setup.writes, vec![(setup.regs.rsp, vec![0u8; 8])]);
    }
}
