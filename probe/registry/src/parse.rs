//! Reading one registry XML file into the model.

use crate::{CType, Command, EnumValue, Error, Family, Group, Param, Registry, Skipped};
use roxmltree::{Document, Node};

pub(crate) fn parse_into(reg: &mut Registry, xml: &[u8], family: Family) -> Result<(), Error> {
    let text =
        std::str::from_utf8(xml).map_err(|e| Error(format!("registry is not UTF-8: {e}")))?;
    let doc = Document::parse(text).map_err(|e| Error(format!("registry XML: {e}")))?;
    let root = doc.root_element();
    for section in root.children().filter(Node::is_element) {
        match section.tag_name().name() {
            "commands" => {
                for cmd in section.children().filter(|n| n.has_tag_name("command")) {
                    match command(cmd, family) {
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

fn command(node: Node, family: Family) -> Result<Command, Skipped> {
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
        params.push(Param {
            name: pname,
            c_type: decl,
            ty,
            len: p.attribute("len").map(str::to_string),
            group: p.attribute("group").map(str::to_string),
        });
    }
    Ok(Command {
        name,
        family,
        ret,
        params,
    })
}
