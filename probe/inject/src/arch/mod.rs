//! Everything that depends on the CPU: registers, the breakpoint instruction, the calling
//! convention of an injected call. Only x86_64 is implemented; another architecture
//! (aarch64: `brk #0`, PC not advanced, return address in x30) would add a sibling module
//! with the same items. On other architectures the injector reports
//! [`InjectError::UnsupportedArchitecture`](crate::InjectError::UnsupportedArchitecture).

#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
pub(crate) use self::x86_64::*;
