//! Lookups over the generated tables.

use crate::generated::{CLASSES, FUNCTION_COUNT, NAMES, PARAMS, RETURNS};
use gpuheat_session::{FunctionInfo, FunctionTable, ParamInfo};

/// Index of the wrapped entry point called `name` (without NUL).
pub fn index_of(name: &[u8]) -> Option<usize> {
    NAMES
        .binary_search_by(|n| n.as_bytes()[..n.len() - 1].cmp(name))
        .ok()
}

/// The function table stored at the start of every session.
pub fn function_table() -> FunctionTable {
    let functions = (0..FUNCTION_COUNT)
        .map(|i| FunctionInfo {
            name: NAMES[i].trim_end_matches('\0').to_string(),
            params: PARAMS[i]
                .iter()
                .map(|&(name, c_type, kind, len, group)| ParamInfo {
                    name: name.to_string(),
                    c_type: c_type.to_string(),
                    kind,
                    len: len.map(str::to_string),
                    group: group.map(str::to_string),
                })
                .collect(),
            ret: RETURNS[i],
            class: CLASSES[i],
        })
        .collect();
    FunctionTable { functions }
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
