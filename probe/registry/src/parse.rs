//! Reading one registry XML file into the model.

use crate::{CType, Command, EnumValue, Error, Family, Group, Param, Registry, Skipped};
use roxmltree::{Document, Node};
use std::collections::HashSet;

/// Adds one registry file's commands, enums and groups to `reg`. Commands take the family
/// their `<commands namespace>` names (openvg.xml holds VG and VGU), else `family`.
pub(crate) fn parse_into(reg: &mut Registry, xml: &[u8], family: Family) -> Result<(), Error> {
    let text =
        std::str::from_utf8(xml).map_err(|e| Error(format!("registry is not UTF-8: {e}")))?;
    let doc = Document::parse(text).map_err(|e| Error(format!("registry XML: {e}")))?;
    let root = doc.root_element();
    let handles = handle_types(root);
    for section in root.children().filter(Node::is_element) {
        match section.tag_name().name() {
            "commands" => {
                let family = section
                    .attribute("namespace")
                    .and_then(Family::from_namespace)
                    .unwrap_or(family);
                for cmd in section.children().filter(|n| n.has_tag_name("command")) {
                    match command(cmd, family, &handles) {
                        Ok(c) => reg.commands.push(c),
                        Err(s) => reg.skipped.push(s),
                    }
                }
            }
            "enums" => {
                let bitmask = section.attribute("type") == Some("bitmask");
                for e in section.children().filter(|n| n.has_tag_name("enum")) {
                    let (Some(name), Some(value)) = (e.attribute("name"), e.attribute("value"))
                    else {
                        continue;
                    };
                    if let Some(value) = parse_value(value) {
                        reg.enums.push(EnumValue {
                            name: name.to_string(),
                            value,
                            bitmask,
                        });
                    }
                }
            }
            "groups" => {
                for g in section.children().filter(|n| n.has_tag_name("group")) {
                    let members = g
                        .children()
                        .filter(|n| n.has_tag_name("enum"))
                        .filter_map(|n| n.attribute("name").map(str::to_string))
                        .collect();
                    if let Some(name) = g.attribute("name") {
                        reg.groups.push(Group {
                            name: name.to_string(),
                            members,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The names of the `<types>` the registry declares with `category="handle"` (typed object
/// handles such as `VGPath`), whose values a recorder can follow from creation to deletion.
fn handle_types(root: Node) -> HashSet<String> {
    root.children()
        .filter(|n| n.has_tag_name("types"))
        .flat_map(|types| types.children().filter(|n| n.has_tag_name("type")))
        .filter(|t| t.attribute("category") == Some("handle"))
        .filter_map(|t| t.attribute("name").or_else(|| child_text(t, "name")))
        .map(|name| name.trim().to_string())
        .collect()
}

fn parse_value(v: &str) -> Option<u64> {
    let v = v
        .trim()
        .trim_end_matches("ull")
        .trim_end_matches('u')
        .trim_end_matches('U');
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if let Some(neg) = v.strip_prefix('-') {
        // EGL_DONT_CARE and friends are ((EGLint)-1): keep their 32-bit pattern.
        neg.parse::<i64>().ok().map(|n| (-n) as i32 as u32 as u64)
    } else if v.starts_with("((") {
        None
    } else {
        v.parse().ok()
    }
}

/// The declaration text of a `<proto>` or `<param>` without its `<name>`, and its base type.
fn declaration(node: Node) -> (String, String) {
    let mut decl = String::new();
    let mut base = None;
    for child in node.children() {
        if child.has_tag_name("name") {
            continue;
        }
        let Some(text) = child.text() else { continue };
        if child.has_tag_name("ptype") {
            base = Some(text.trim().to_string());
        }
        decl.push_str(text);
    }
    let decl = decl.split_whitespace().collect::<Vec<_>>().join(" ");
    let base = base.unwrap_or_else(|| {
        decl.split_whitespace()
            .filter(|w| *w != "const" && *w != "struct")
            .collect::<Vec<_>>()
            .join(" ")
            .trim_end_matches('*')
            .trim()
            .to_string()
    });
    (decl, base)
}

fn child_text<'a>(node: Node<'a, '_>, tag: &str) -> Option<&'a str> {
    node.children()
        .find(|n| n.has_tag_name(tag))
        .and_then(|n| n.text())
}

fn command(node: Node, family: Family, handles: &HashSet<String>) -> Result<Command, Skipped> {
    let proto = node.children().find(|n| n.has_tag_name("proto"));
    let name = proto
        .and_then(|p| child_text(p, "name"))
        .unwrap_or_default()
        .to_string();
    let skip = |why: String| Skipped {
        name: name.clone(),
        why,
    };
    let proto = proto.ok_or_else(|| skip("no <proto>".into()))?;
    let (ret_decl, ret_base) = declaration(proto);
    let ret = CType::classify(&ret_base, &ret_decl)
        .ok_or_else(|| skip(format!("unknown return type `{ret_decl}`")))?;
    let handle_of = |base: &str, decl: &str| {
        // A pointer to handles is an array, not a handle.
        (!decl.contains('*') && handles.contains(base)).then(|| base.to_string())
    };
    let ret_handle = handle_of(&ret_base, &ret_decl);
    let mut params = Vec::new();
    for p in node.children().filter(|n| n.has_tag_name("param")) {
        let pname = child_text(p, "name").unwrap_or("arg").to_string();
        let (decl, base) = declaration(p);
        let ty = CType::classify(&base, &decl)
            .ok_or_else(|| skip(format!("unknown type `{decl}` of parameter `{pname}`")))?;
        if ty == CType::Void {
            // `(void)` parameter lists spelled as a parameter.
            continue;
        }
        let handle = handle_of(&base, &decl);
        params.push(Param {
            name: pname,
            c_type: decl,
            ty,
            len: p.attribute("len").map(str::to_string),
            group: p.attribute("group").map(str::to_string),
            handle,
        });
    }
    Ok(Command {
        name,
        family,
        ret,
        ret_group: proto.attribute("group").map(str::to_string),
        ret_c_type: ret_decl,
        ret_handle,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<registry>
        <types>
            <type category="handle">typedef unsigned int <name>VGPath</name>;</type>
            <type category="handle" name="Thing"/>
        </types>
        <groups><group name="Mode"><enum name="X_A"/></group></groups>
        <enums namespace="VGU" group="Mode"><enum value="0xF100" name="X_A"/></enums>
        <commands namespace="VGU">
            <command>
                <proto group="Mode"><ptype>VGUErrorCode</ptype> <name>vguMake</name></proto>
                <param><ptype>VGPath</ptype> <name>h</name></param>
                <param len="n">const <ptype>VGPath</ptype> *<name>hs</name></param>
                <param group="Mode"><ptype>VGint</ptype> <name>n</name></param>
            </command>
        </commands>
        <commands>
            <command>
                <proto><ptype>Thing</ptype> <name>make</name></proto>
            </command>
            <command>
                <proto>void <name>plain</name></proto>
                <param><ptype>VGfloat</ptype> <name>f</name></param>
            </command>
        </commands>
    </registry>"#;

    #[test]
    fn namespaces_handles_and_return_groups() {
        let mut reg = Registry::default();
        parse_into(&mut reg, XML.as_bytes(), Family::Gl).unwrap();
        assert!(reg.skipped.iter().all(|s| s.name != "vguMake"));
        assert_eq!(reg.commands.len(), 2);
        let make = &reg.commands[0];
        assert_eq!(make.name, "vguMake");
        assert_eq!(make.family, Family::Vgu);
        assert_eq!(make.ret, CType::Enum);
        assert_eq!(make.ret_c_type, "VGUErrorCode");
        assert_eq!(make.ret_group.as_deref(), Some("Mode"));
        assert_eq!(make.ret_handle, None);
        let handles: Vec<_> = make.params.iter().map(|p| p.handle.as_deref()).collect();
        // A pointer to handles is an array of them, not a handle.
        assert_eq!(handles, [Some("VGPath"), None, None]);
        assert_eq!(make.params[2].group.as_deref(), Some("Mode"));
        assert_eq!(make.params[1].len.as_deref(), Some("n"));
        assert_eq!(reg.enums[0].value, 0xF100);
        assert_eq!(reg.groups[0].members, ["X_A"]);
        // No namespace: the family the caller gave.
        let plain = &reg.commands[1];
        assert_eq!(plain.family, Family::Gl);
        assert_eq!(
            (plain.ret, plain.ret_c_type.as_str()),
            (CType::Void, "void")
        );
        assert_eq!(plain.params[0].ty, CType::F32);
        // `Thing` is a handle without a known C type: left out, not guessed.
        assert_eq!(reg.skipped.len(), 1);
        assert_eq!(reg.skipped[0].name, "make");
    }
}
