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
