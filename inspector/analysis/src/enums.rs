//! Symbolic names of GLenum and GLbitfield values, from the Khronos registry.

mod tables {
    include!(concat!(env!("OUT_DIR"), "/enums.rs"));
}
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

/// The name of enum value `v`, using the parameter's group to pick among names sharing it.
pub fn enum_name(v: u64, group_name: Option<&str>) -> Option<&'static str> {
    if let Some(members) = group_name.and_then(group) {
        if let Some(n) = members.iter().find(|m| value_of(m) == Some(v)) {
            return Some(n);
        }
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
}
