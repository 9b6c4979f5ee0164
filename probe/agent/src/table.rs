//! Lookups over the generated tables.

use crate::generated::vk::{VK_CLASSES, VK_COUNT, VK_FIRST, VK_NAMES, VK_PARAMS, VK_RETURNS};
use crate::generated::{ParamDesc, CLASSES, FUNCTION_COUNT, NAMES, PARAMS, RETURNS};
use gpuheat_session::{CallClass, FunctionInfo, FunctionTable, ParamInfo, ValueKind};

/// Index of the wrapped entry point called `name` (without NUL).
pub fn index_of(name: &[u8]) -> Option<usize> {
    NAMES
        .binary_search_by(|n| n.as_bytes()[..n.len() - 1].cmp(name))
        .ok()
}

/// The function table stored at the start of every session: every GL, EGL, GLX and VG
/// entry point, then (from `VK_FIRST`) every Vulkan command the layer wraps.
pub fn function_table() -> FunctionTable {
    debug_assert_eq!(VK_FIRST, FUNCTION_COUNT);
    let gl = (0..FUNCTION_COUNT).map(|i| {
        info(
            NAMES[i].trim_end_matches('\0'),
            PARAMS[i],
            RETURNS[i],
            CLASSES[i],
        )
    });
    let vk = (0..VK_COUNT).map(|j| info(VK_NAMES[j], VK_PARAMS[j], VK_RETURNS[j], VK_CLASSES[j]));
    FunctionTable {
        functions: gl.chain(vk).collect(),
    }
}

fn info(
    name: &str,
    params: &[ParamDesc],
    ret: Option<ValueKind>,
    class: CallClass,
) -> FunctionInfo {
    FunctionInfo {
        name: name.to_string(),
        params: params
            .iter()
            .map(|&(name, c_type, kind, len, group)| ParamInfo {
                name: name.to_string(),
                c_type: c_type.to_string(),
                kind,
                len: len.map(str::to_string),
                group: group.map(str::to_string),
            })
            .collect(),
        ret,
        class,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generated::PLAIN;

    #[test]
    fn state_setters_are_plain_and_calls_others_refer_to_are_not() {
        let plain = |name: &str| PLAIN[index_of(name.as_bytes()).unwrap()];
        for name in [
            "glUniform1f",
            "glUniform4f",
            "glBindTexture",
            "glEnable",
            "glGetError",
        ] {
            assert!(plain(name), "{name} should be plain");
        }
        // Draws and clears (counters), glUseProgram (programs used), uploads (hashed), waits
        // (CPU clock), hooks (queries, MakeCurrent), swaps, OpenVG.
        for name in [
            "glDrawArrays",
            "glClear",
            "glUseProgram",
            "glTexImage2D",
            "glBufferData",
            "glFinish",
            "glGetIntegerv",
            "eglMakeCurrent",
            "eglSwapBuffers",
            "vgSetf",
        ] {
            assert!(!plain(name), "{name} should not be plain");
        }
    }
}
