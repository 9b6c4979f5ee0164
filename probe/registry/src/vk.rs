//! Reading the Vulkan registry (`vk.xml`) into the same model as the GL registries.
//!
//! Vulkan's registry declares its types in `<types>` (handles, enums, bitmasks, base types)
//! rather than by C spelling, so a parameter's calling-convention class comes from that
//! section: dispatchable handles are pointers, non-dispatchable ones 64-bit integers, enums
//! 32-bit, bitmasks 32 or 64 bits by their `VkFlags`/`VkFlags64` base. Only what Vulkan (not
//! Vulkan SC) defines is read: commands required by a `<feature api="vulkan">` or by an
//! extension `supported` for `vulkan`. Commands whose only extensions are for platforms gpuheat
//! does not run on (Windows, Android, Apple, ...) are left out with that reason; any other
//! command whose types are unknown is left out too, and `skipped` says why, so a generator can
//! refuse to build rather than guess a calling convention.

use crate::{CType, Command, Error, Family, Param, Registry, Skipped};
use roxmltree::{Document, Node};
use std::collections::{HashMap, HashSet};

/// The platforms (`<platform name>`) whose commands are wrapped: the ones of Linux desktops.
pub const PLATFORMS: [&str; 4] = ["xlib", "xlib_xrandr", "xcb", "wayland"];

/// The reason [`Skipped::why`] gives for a command only other platforms have.
pub const OTHER_PLATFORM: &str = "only defined for another platform";

/// The Vulkan types known by spelling rather than declared in `<types>`: the C types and
/// the Linux window-system types commands take by value.
fn c_type(name: &str) -> Option<CType> {
    use CType::*;
    Some(match name {
        "void" => Void,
        "uint8_t" | "char" => U8,
        "uint16_t" => U16,
        "int32_t" | "int" => I32,
        "uint32_t" | "xcb_window_t" | "xcb_visualid_t" => U32,
        "int64_t" => I64,
        // `unsigned long` XIDs on LP64.
        "uint64_t" | "size_t" | "Window" | "VisualID" | "RROutput" => U64,
        "float" => F32,
        "double" => F64,
        _ => return None,
    })
}

/// What `<types>` says of each type a command may take by value.
fn declared_types(root: Node) -> HashMap<String, CType> {
    let mut out = HashMap::new();
    let mut aliases = Vec::new();
    for t in root
        .children()
        .filter(|n| n.has_tag_name("types"))
        .flat_map(|types| types.children().filter(|n| n.has_tag_name("type")))
    {
        if t.attribute("api").is_some_and(|a| !has_token(a, "vulkan")) {
            continue;
        }
        let name = t
            .attribute("name")
            .or_else(|| child_text(t, "name"))
            .map(str::trim);
        let Some(name) = name else { continue };
        if let Some(alias) = t.attribute("alias") {
            aliases.push((name.to_string(), alias.to_string()));
            continue;
        }
        let base = child_text(t, "type").map(str::trim);
        let ty = match t.attribute("category") {
            Some("handle") => match base {
                Some("VK_DEFINE_HANDLE") => CType::Ptr,
                _ => CType::U64,
            },
            Some("enum") => CType::I32,
            Some("bitmask") => match base {
                Some("VkFlags64") => CType::U64,
                _ => CType::U32,
            },
            Some("basetype") => match base.and_then(c_type) {
                Some(ty) => ty,
                // `struct ANativeWindow;` and the like: only ever behind a pointer.
                None => continue,
            },
            Some("funcpointer") => CType::Ptr,
            _ => continue,
        };
        out.insert(name.to_string(), ty);
    }
    // `VkBool32` is a `uint32_t` basetype; recorded as a boolean.
    out.insert("VkBool32".into(), CType::Bool32);
    for (name, alias) in aliases {
        if let Some(&ty) = out.get(&alias) {
            out.insert(name, ty);
        }
    }
    out
}

/// Whether the comma-separated list `list` names `token`.
fn has_token(list: &str, token: &str) -> bool {
    list.split(',').any(|t| t.trim() == token)
}

fn child_text<'a>(node: Node<'a, '_>, tag: &str) -> Option<&'a str> {
    node.children()
        .find(|n| n.has_tag_name(tag))
        .and_then(|n| n.text())
}

/// The declaration text of a `<proto>` or `<param>` without its `<name>` (an array after
/// the name, `float blendConstants[4]`, is passed as a pointer and spelled `float *`), and
/// its base type (the `<type>` element).
fn declaration(node: Node) -> (String, String) {
    let mut decl = String::new();
    let mut base = String::new();
    let mut after_name = false;
    for child in node.children() {
        if child.has_tag_name("name") {
            after_name = true;
            continue;
        }
        let Some(text) = child.text() else { continue };
        if child.has_tag_name("type") {
            base = text.trim().to_string();
        }
        if after_name {
            if text.contains('[') {
                decl.push_str(" *");
            }
        } else {
            decl.push_str(text);
        }
    }
    let decl = decl.split_whitespace().collect::<Vec<_>>().join(" ");
    (decl.replace(" *", "*").replace('*', " *"), base)
}

/// The commands each Vulkan feature and extension requires; for each command, whether some
/// requirement is platform-neutral or for one of [`PLATFORMS`].
fn required(root: Node) -> HashMap<String, bool> {
    let mut out: HashMap<String, bool> = HashMap::new();
    let mut note = |node: Node, ours: bool| {
        for req in node.children().filter(|n| n.has_tag_name("require")) {
            if req
                .attribute("api")
                .is_some_and(|a| !has_token(a, "vulkan"))
            {
                continue;
            }
            for c in req.children().filter(|n| n.has_tag_name("command")) {
                if let Some(name) = c.attribute("name") {
                    *out.entry(name.to_string()).or_default() |= ours;
                }
            }
        }
    };
    for f in root.children().filter(|n| n.has_tag_name("feature")) {
        if f.attribute("api").is_some_and(|a| has_token(a, "vulkan")) {
            note(f, true);
        }
    }
    for e in root
        .children()
        .filter(|n| n.has_tag_name("extensions"))
        .flat_map(|x| x.children().filter(|n| n.has_tag_name("extension")))
    {
        if !e
            .attribute("supported")
            .is_some_and(|s| has_token(s, "vulkan"))
        {
            continue;
        }
        let ours = e
            .attribute("platform")
            .is_none_or(|p| PLATFORMS.contains(&p));
        note(e, ours);
    }
    out
}

/// Adds the commands of `vk.xml` (the text `xml`) to `reg`, as [`Family::Vk`].
pub(crate) fn parse_into(reg: &mut Registry, xml: &[u8]) -> Result<(), Error> {
    let text = std::str::from_utf8(xml).map_err(|e| Error(format!("vk.xml is not UTF-8: {e}")))?;
    let doc = Document::parse(text).map_err(|e| Error(format!("vk.xml: {e}")))?;
    let root = doc.root_element();
    let types = declared_types(root);
    let required = required(root);
    let mut found: HashMap<String, Command> = HashMap::new();
    let mut aliases = Vec::new();
    let commands = root
        .children()
        .filter(|n| n.has_tag_name("commands"))
        .flat_map(|c| c.children().filter(|n| n.has_tag_name("command")));
    for node in commands {
        if node
            .attribute("api")
            .is_some_and(|a| !has_token(a, "vulkan"))
        {
            continue;
        }
        if let (Some(name), Some(alias)) = (node.attribute("name"), node.attribute("alias")) {
            aliases.push((name.to_string(), alias.to_string()));
            continue;
        }
        match command(node, &types) {
            Ok(c) => {
                found.insert(c.name.clone(), c);
            }
            Err(s) => reg.skipped.push(s),
        }
    }
    for (name, alias) in aliases {
        if let Some(target) = found.get(&alias) {
            let c = Command {
                name: name.clone(),
                ..target.clone()
            };
            found.insert(name, c);
        } else if !reg.skipped.iter().any(|s| s.name == alias) {
            reg.skipped.push(Skipped {
                why: format!("an alias of `{alias}`, which vk.xml does not define"),
                name,
            });
        }
    }
    let mut known: HashSet<String> = HashSet::new();
    for (name, c) in found {
        match required.get(&name) {
            Some(true) => {
                known.insert(name);
                reg.commands.push(c);
            }
            Some(false) => reg.skipped.push(Skipped {
                name,
                why: OTHER_PLATFORM.into(),
            }),
            // Defined but required by nothing of Vulkan's (a Vulkan SC or disabled extension).
            None => {}
        }
    }
    // A skipped command's type may be one only another platform has: then it is skipped for
    // that reason (the generator accepts those) and not for the type.
    for s in &mut reg.skipped {
        if required.get(&s.name) == Some(&false) {
            s.why = OTHER_PLATFORM.into();
        }
    }
    reg.skipped
        .retain(|s| required.contains_key(&s.name) && !known.contains(&s.name));
    Ok(())
}

fn command(node: Node, types: &HashMap<String, CType>) -> Result<Command, Skipped> {
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
    let classify = |decl: &str, base: &str| -> Option<CType> {
        if decl.contains('*') {
            Some(CType::Ptr)
        } else {
            types.get(base).copied().or_else(|| c_type(base))
        }
    };
    let (ret_decl, ret_base) = declaration(proto);
    let ret = classify(&ret_decl, &ret_base)
        .ok_or_else(|| skip(format!("unknown return type `{ret_decl}`")))?;
    let mut params = Vec::new();
    for p in node.children().filter(|n| n.has_tag_name("param")) {
        if p.attribute("api").is_some_and(|a| !has_token(a, "vulkan")) {
            continue;
        }
        let pname = child_text(p, "name").unwrap_or("arg").to_string();
        let (decl, base) = declaration(p);
        let ty = classify(&decl, &base)
            .ok_or_else(|| skip(format!("unknown type `{decl}` of parameter `{pname}`")))?;
        params.push(Param {
            name: pname,
            c_type: decl,
            ty,
            len: p.attribute("len").map(str::to_string),
            group: None,
            handle: None,
        });
    }
    Ok(Command {
        name,
        family: Family::Vk,
        ret,
        ret_c_type: ret_decl,
        ret_group: None,
        ret_handle: None,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<registry>
        <types>
            <type category="handle" parent="VkInstance" objtypeenum="X"><type>VK_DEFINE_HANDLE</type>(<name>VkDevice</name>)</type>
            <type category="handle" parent="VkDevice" objtypeenum="Y"><type>VK_DEFINE_NON_DISPATCHABLE_HANDLE</type>(<name>VkBuffer</name>)</type>
            <type category="basetype">typedef <type>uint64_t</type> <name>VkDeviceSize</name>;</type>
            <type category="basetype">typedef <type>uint32_t</type> <name>VkBool32</name>;</type>
            <type category="bitmask">typedef <type>VkFlags64</type> <name>VkPipelineStageFlags2</name>;</type>
            <type category="bitmask" name="VkPipelineStageFlags2KHR" alias="VkPipelineStageFlags2"/>
            <type name="VkIndexType" category="enum"/>
        </types>
        <commands>
            <command>
                <proto><type>void</type> <name>vkCmdThing</name></proto>
                <param><type>VkDevice</type> <name>device</name></param>
                <param><type>VkBuffer</type> <name>buffer</name></param>
                <param><type>VkDeviceSize</type> <name>offset</name></param>
                <param><type>VkIndexType</type> <name>indexType</name></param>
                <param><type>VkPipelineStageFlags2KHR</type> <name>stage</name></param>
                <param>const <type>float</type> <name>blendConstants</name>[4]</param>
                <param api="vulkansc"><type>uint32_t</type> <name>scOnly</name></param>
            </command>
            <command name="vkCmdThingKHR" alias="vkCmdThing"/>
            <command>
                <proto><type>VkResult</type> <name>vkMakeWin32</name></proto>
                <param><type>HANDLE</type> <name>h</name></param>
            </command>
            <command>
                <proto><type>VkBool32</type> <name>vkUnrequired</name></proto>
            </command>
        </commands>
        <feature api="vulkan" name="VK_VERSION_1_0"><require><command name="vkCmdThing"/></require></feature>
        <extensions>
            <extension name="VK_KHR_thing" supported="vulkan"><require><command name="vkCmdThingKHR"/></require></extension>
            <extension name="VK_KHR_win32" supported="vulkan" platform="win32"><require><command name="vkMakeWin32"/></require></extension>
        </extensions>
    </registry>"#;

    #[test]
    fn types_come_from_the_types_section_and_aliases_share_their_target() {
        let mut reg = Registry::default();
        parse_into(&mut reg, XML.as_bytes()).unwrap();
        reg.commands.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<&str> = reg.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["vkCmdThing", "vkCmdThingKHR"]);
        let c = &reg.commands[0];
        let tys: Vec<CType> = c.params.iter().map(|p| p.ty).collect();
        use CType::*;
        assert_eq!(tys, [Ptr, U64, U64, I32, U64, Ptr]);
        assert_eq!(c.params[5].c_type, "const float *");
        assert_eq!(c.ret, Void);
        assert_eq!(reg.commands[1].params, c.params);
        assert_eq!(
            reg.skipped,
            [Skipped {
                name: "vkMakeWin32".into(),
                why: OTHER_PLATFORM.into()
            }]
        );
    }
}
