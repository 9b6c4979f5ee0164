//! The agent as a Vulkan layer, from the CLI's side: the layer's manifest (written next to
//! nothing of the program's: in the user's data folder, one per agent library), the loader's
//! version, and `gpuheat vulkan-env`, which prints the environment that starts a program with
//! the layer present and dormant, for a later `gpuheat attach`.

use anyhow::{Context, Result};
use clap::Args;
use gpuheat_session::control::vulkan;
use std::ffi::c_void;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The folder holding the layer manifest for the agent library `agent`, written (or
/// rewritten) now: `$XDG_DATA_HOME/gpuheat/vulkan/<agent path hash>/`, else under
/// `~/.local/share`, else the temporary folder. One folder per agent library, so programs
/// started by two builds each load their own.
pub fn manifest_dir(agent: &Path) -> Result<PathBuf> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    agent.hash(&mut h);
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(std::env::temp_dir);
    let candidates = [
        base.join("gpuheat/vulkan"),
        std::env::temp_dir().join(format!("gpuheat-vulkan-{}", uid())),
    ];
    let text = vulkan::manifest(&agent.to_string_lossy());
    let mut last = None;
    for c in candidates {
        let dir = c.join(format!("{:016x}", h.finish()));
        let file = dir.join(vulkan::MANIFEST_FILE);
        if std::fs::read_to_string(&file).is_ok_and(|t| t == text) {
            return Ok(dir);
        }
        let written = std::fs::create_dir_all(&dir).and_then(|()| {
            // Written whole then renamed, so a program starting meanwhile never reads half.
            let tmp = dir.join(format!(".{}.{}", vulkan::MANIFEST_FILE, std::process::id()));
            std::fs::write(&tmp, &text)?;
            std::fs::rename(&tmp, &file)
        });
        match written {
            Ok(()) => return Ok(dir),
            Err(e) => last = Some((file, e)),
        }
    }
    let (file, e) = last.expect("two candidates");
    Err(e).with_context(|| format!("cannot write the Vulkan layer manifest {}", file.display()))
}

/// This process's user id (the wake-up folder and the temporary manifest folder are the
/// user's own).
pub fn uid() -> u32 {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() }
}

/// The Vulkan loader a program started from here would load (`libvulkan.so.1`).
enum Loader {
    /// None is installed.
    Missing,
    /// A Vulkan 1.0 loader (no `vkEnumerateInstanceVersion`).
    Old,
    /// The version it answers (the loader's own header version).
    Version((u32, u32, u32)),
}

fn loader() -> Loader {
    // SAFETY: dlopen/dlsym with NUL-terminated names; the function is called with its
    // Vulkan signature (a pointer to a u32 it writes); the handle is closed after.
    unsafe {
        let lib = libc::dlopen(
            c"libvulkan.so.1".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_LOCAL,
        );
        if lib.is_null() {
            return Loader::Missing;
        }
        let f = libc::dlsym(lib, c"vkEnumerateInstanceVersion".as_ptr());
        let mut v = 0u32;
        let ok = !f.is_null() && {
            let f: unsafe extern "system" fn(*mut u32) -> i32 =
                std::mem::transmute(f as *const c_void);
            f(&mut v) == 0
        };
        libc::dlclose(lib);
        if ok {
            Loader::Version(((v >> 22) & 0x7f, (v >> 12) & 0x3ff, v & 0xfff))
        } else {
            Loader::Old
        }
    }
}

/// The loader's version (its header version, as `vkEnumerateInstanceVersion` answers), where
/// it says one.
pub fn loader_version() -> Option<(u32, u32, u32)> {
    match loader() {
        Loader::Version(v) => Some(v),
        _ => None,
    }
}

/// The variables that insert the layer into a program started with them.
pub fn layer_env(agent: &Path) -> Result<Vec<(String, String)>> {
    let dir = manifest_dir(agent)?;
    Ok(vulkan::layer_env(&dir.to_string_lossy(), loader_version()))
}

/// The files /proc/PID/maps maps.
fn mapped(pid: i32) -> Vec<String> {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5).map(str::to_string))
        .collect()
}

/// Whether `pid` maps a Vulkan loader.
pub fn maps_vulkan(pid: i32) -> bool {
    mapped(pid).iter().any(|f| f.contains("/libvulkan.so"))
}

/// Whether `pid` was started with gpuheat's layer in its `VK_INSTANCE_LAYERS` (or
/// `VK_LOADER_LAYERS_ENABLE`).
pub fn asked_for_layer(pid: i32) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter_map(|v| std::str::from_utf8(v).ok())
        .any(|v| {
            (v.starts_with("VK_INSTANCE_LAYERS=") || v.starts_with("VK_LOADER_LAYERS_ENABLE="))
                && v.contains(vulkan::LAYER_NAME)
        })
}

/// Whether `pid` holds `agent` as its Vulkan layer: it maps a Vulkan loader and this very
/// agent library (a dormant layer is woken, not injected again).
pub fn dormant_layer(pid: i32, agent: &Path) -> bool {
    let files = mapped(pid);
    let agent = agent.to_string_lossy();
    files.iter().any(|f| f.contains("/libvulkan.so")) && files.iter().any(|f| *f == agent)
}

#[derive(Args)]
pub struct VulkanEnvArgs {}

/// The oldest loader the layer works with: Vulkan 1.1's (`vkEnumerateInstanceVersion`), which
/// negotiates layer interface 2.
const OLDEST_LOADER: &str = "1.1";

/// `gpuheat vulkan-env`: prints `export` lines for a shell (`eval "$(gpuheat vulkan-env)"`)
/// that start Vulkan programs with the layer in, dormant until `gpuheat attach PID`.
pub fn vulkan_env(_: VulkanEnvArgs) -> Result<ExitCode> {
    let agent = crate::agent::agent_library()?;
    match loader() {
        Loader::Missing => anyhow::bail!(
            "no Vulkan loader (libvulkan.so.1) on this machine: install it (Debian: apt install libvulkan1)"
        ),
        Loader::Old => anyhow::bail!(
            "the Vulkan loader (libvulkan.so.1) is a Vulkan 1.0 loader, older than the {OLDEST_LOADER} gpuheat's layer needs: upgrade it (Debian: apt install libvulkan1)"
        ),
        Loader::Version(_) => {}
    }
    for (k, v) in layer_env(&agent)? {
        println!("export {k}={}", shell_quote(&v));
    }
    Ok(ExitCode::SUCCESS)
}

fn shell_quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
