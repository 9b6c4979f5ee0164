//! The program's call site of a wrapper: the wrapper's return address, read through the frame
//! pointer (the workspace builds with `force-frame-pointers`, so every wrapper sets one up).

/// Return address of the function this expands in.
macro_rules! caller {
    () => {{
        let ra: u64;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: with frame pointers forced, [rbp + 8] is this frame's return address.
        unsafe {
            ::core::arch::asm!("mov {}, [rbp + 8]", out(reg) ra,
                options(nostack, readonly, preserves_flags));
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: with frame pointers forced, [x29 + 8] holds this frame's saved link register.
        unsafe {
            ::core::arch::asm!("ldr {}, [x29, #8]", out(reg) ra,
                options(nostack, readonly, preserves_flags));
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            ra = 0;
        }
        ra
    }};
}
pub(crate) use caller;
