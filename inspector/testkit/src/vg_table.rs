//! OpenVG entry points as a capture's function table holds them: a leaf the builder (which
//! adds them on their first call) and the VG records both use.

use gpuheat_session::{CallClass, FunctionInfo, ParamInfo, ValueKind};

/// The VG entry points that do work (the rest set state), as the agent's generator classes them.
const WORK: [&str; 6] = [
    "vgClear",
    "vgDrawPath",
    "vgDrawImage",
    "vgReadPixels",
    "vgWritePixels",
    "vgGetPixels",
];

/// VG entry point `name` taking `params` integer parameters, for the function table.
pub(crate) fn entry_point(name: &str, params: usize) -> FunctionInfo {
    FunctionInfo {
        name: name.into(),
        params: (0..params)
            .map(|i| ParamInfo {
                name: format!("a{i}"),
                c_type: "VGint".into(),
                kind: ValueKind::Int,
                len: None,
                group: None,
            })
            .collect(),
        ret: None,
        class: if WORK.contains(&name) {
            CallClass::Work
        } else {
            CallClass::State
        },
    }
}
