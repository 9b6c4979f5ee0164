//! Symbolic names of GLenum and GLbitfield values, from the Khronos registry, and of OpenVG's
//! enums and bitfields (by their parameter's group only: VG values collide with GL's).

/// The GL enums the crate names, generated from gl.xml (`build.rs` lists them).
pub mod gl {
    include!(concat!(env!("OUT_DIR"), "/gl_consts.rs"));
}

/// The OpenVG enums the crate names, generated from the OpenVG table (`build.rs` lists them).
pub mod vg {
    include!(concat!(env!("OUT_DIR"), "/vg_consts.rs"));
}

mod tables {
    include!(concat!(env!("OUT_DIR"), "/enums.rs"));
}
use std::collections::HashMap;
use std::sync::OnceLock;
use tables::{BY_NAME, BY_VALUE, GROUPS};

fn value_of(name: &str) -> Option<u64> {
    BY_NAME
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| BY_NAME[i].1)
}

fn group(name: &str) -> Option<&'static [&'static str]> {
    GROUPS
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| GROUPS[i].1)
}

/// Per group, its members by value (the first member listed wins), built on first use: a
/// report names the enums of a million calls, and a scan of the group per call was a third
/// of its time.
fn group_values(name: &str) -> Option<&'static HashMap<u64, &'static str>> {
    static BY_GROUP: OnceLock<HashMap<&'static str, HashMap<u64, &'static str>>> = OnceLock::new();
    BY_GROUP
        .get_or_init(|| {
            GROUPS
                .iter()
                .map(|(g, members)| {
                    let mut by_value = HashMap::new();
                    for m in members.iter() {
                        if let Some(v) = value_of(m) {
                            by_value.entry(v).or_insert(*m);
                        }
                    }
                    (*g, by_value)
                })
                .collect()
        })
        .get(name)
}

/// The name of enum value `v`, using the parameter's group to pick among names sharing it.
pub fn enum_name(v: u64, group_name: Option<&str>) -> Option<&'static str> {
    if let Some(n) = group_name.and_then(group_values).and_then(|g| g.get(&v)) {
        return Some(n);
    }
    BY_VALUE
        .binary_search_by(|(x, _)| x.cmp(&v))
        .ok()
        .map(|i| BY_VALUE[i].1)
}

/// `A | B | 0x10` for a bitfield whose group names its bits.
pub fn bitfield(v: u64, group_name: Option<&str>) -> String {
    let Some(members) = group_name.and_then(group) else {
        return format!("{v:#x}");
    };
    let mut parts = Vec::new();
    let mut rest = v;
    for m in members {
        if let Some(bit) = value_of(m) {
            if bit != 0 && bit.count_ones() == 1 && rest & bit != 0 {
                parts.push(m.to_string());
                rest &= !bit;
            }
        }
    }
    if rest != 0 || parts.is_empty() {
        parts.push(format!("{rest:#x}"));
    }
    parts.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_the_registry() {
        assert_eq!(
            enum_name(5, Some("PrimitiveType")),
            Some("GL_TRIANGLE_STRIP")
        );
        assert_eq!(enum_name(0x0DE1, None), Some("GL_TEXTURE_2D"));
        assert_eq!(enum_name(0, Some("PrimitiveType")), Some("GL_POINTS"));
        assert_eq!(
            bitfield(0x4100, Some("ClearBufferMask")),
            "GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT"
        );
    }

    #[test]
    fn openvg_names_come_from_their_group_only() {
        assert_eq!(enum_name(0x1900, Some("VGFillRule")), Some("VG_EVEN_ODD"));
        assert_eq!(
            bitfield(3, Some("VGPaintMode")),
            "VG_STROKE_PATH | VG_FILL_PATH"
        );
        assert_eq!(enum_name(0x1101, Some("VGParamType")), Some("VG_FILL_RULE"));
        // Without a group a value is GL's, never VG's.
        assert!(enum_name(0x1900, None).is_none_or(|n| n.starts_with("GL_")));
    }
}
