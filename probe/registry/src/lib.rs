//! The Khronos XML API registry (gl.xml, egl.xml, glx.xml from the `khronos_api` crate) as a
//! small model that gpuheat's code generators consume: every command with its parameter
//! types, array lengths and enum groups, and every enum value with its name.
//!
//! gl.xml describes GL 1.0–4.6, GLES 1.1–3.2 and all their extensions in one list of commands,
//! so generating from it covers every entry point a GL or GLES program can call.
//!
//! OpenVG 1.1 and VGU 1.1 have no Khronos XML: `openvg.xml` in this crate describes them in
//! the same shape, and [`Registry::load_vg`] reads it with the same parser. [`Registry::load`]
//! stays GL/EGL/GLX only, so a generator takes VG only when it asks for it.

mod ctype;
mod parse;
pub mod vk;

pub use ctype::CType;

/// The registry a command comes from, which is also the family of its symbol name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// gl* (desktop GL and GLES share one registry).
    Gl,
    /// egl*
    Egl,
    /// glX*
    Glx,
    /// vg* (OpenVG 1.1, openvg.h).
    Vg,
    /// vgu* (the VGU 1.1 utility library, vgu.h, usually in the same libOpenVG).
    Vgu,
    /// vk* (Vulkan, from the system's `vk.xml`: [`Registry::load_vk`]).
    Vk,
}

impl Family {
    /// The family a registry's `<commands namespace="...">` names, if it is one of ours.
    fn from_namespace(namespace: &str) -> Option<Family> {
        Some(match namespace {
            "GL" => Family::Gl,
            "EGL" => Family::Egl,
            "GLX" => Family::Glx,
            "VG" => Family::Vg,
            "VGU" => Family::Vgu,
            _ => return None,
        })
    }
}

/// One parameter of a command.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The parameter's name in the registry.
    pub name: String,
    /// The C type as written in the registry, e.g. `const GLchar *`.
    pub c_type: String,
    /// Its calling-convention class.
    pub ty: CType,
    /// The `len` attribute of array parameters.
    pub len: Option<String>,
    /// The `group` attribute of enum parameters.
    pub group: Option<String>,
    /// The handle type (`VGPath`, `VGHandle`, ...) when the parameter's type is one the
    /// registry declares with `category="handle"`; only openvg.xml declares any.
    pub handle: Option<String>,
}

/// One entry point.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The symbol name, e.g. `glDrawArrays`.
    pub name: String,
    /// The registry it comes from.
    pub family: Family,
    /// The return type; [`CType::Void`] for none.
    pub ret: CType,
    /// The return type as written in the registry, e.g. `VGPath` or `const GLubyte *`.
    pub ret_c_type: String,
    /// The `group` attribute of the `<proto>`, for enum-valued returns.
    pub ret_group: Option<String>,
    /// The handle type a command returns (`vgCreatePath` returns a `VGPath`), as for
    /// [`Param::handle`].
    pub ret_handle: Option<String>,
    /// The parameters, in order.
    pub params: Vec<Param>,
}

/// One named enum value.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumValue {
    /// The enum's name, e.g. `GL_TRIANGLES`.
    pub name: String,
    /// Its value.
    pub value: u64,
    /// True for `<enums type="bitmask">` blocks.
    pub bitmask: bool,
}

/// A named group of enums (`<groups>` in gl.xml), used to print a GLenum argument with the
/// right one of the several names that share its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The group's name, as parameters' `group` attributes name it.
    pub name: String,
    /// The names of the enums in the group.
    pub members: Vec<String>,
}

/// A command the model could not describe faithfully (its C types are unknown), left out so
/// that no generated wrapper can get the calling convention wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// The command's name.
    pub name: String,
    /// Why it was left out.
    pub why: String,
}

/// The whole registry.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    /// Every command of the loaded registries whose types are known, sorted by name.
    pub commands: Vec<Command>,
    /// The loaded registries' enum values.
    pub enums: Vec<EnumValue>,
    /// The loaded registries' enum groups.
    pub groups: Vec<Group>,
    /// Commands left out, with the reason.
    pub skipped: Vec<Skipped>,
}

/// Errors reading the registry XML.
#[derive(Debug)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// The OpenVG 1.1 and VGU 1.1 table (`openvg.xml`), in the shape of the Khronos registries.
pub const OPENVG_XML: &[u8] = include_bytes!("../openvg.xml");

impl Registry {
    /// Parses the registries bundled in `khronos_api`: GL, GLES, EGL and GLX, never VG (the
    /// agent's wrappers and the enum-name tables are generated from exactly these).
    pub fn load() -> Result<Registry, Error> {
        let mut reg = Registry::default();
        parse::parse_into(&mut reg, khronos_api::GL_XML, Family::Gl)?;
        parse::parse_into(&mut reg, khronos_api::EGL_XML, Family::Egl)?;
        parse::parse_into(&mut reg, khronos_api::GLX_XML, Family::Glx)?;
        reg.sort();
        Ok(reg)
    }

    /// Parses [`OPENVG_XML`]: every function of OpenVG 1.1's openvg.h ([`Family::Vg`]) and
    /// vgu.h ([`Family::Vgu`]), with the VG and VGU enums and their groups.
    pub fn load_vg() -> Result<Registry, Error> {
        let mut reg = Registry::default();
        parse::parse_into(&mut reg, OPENVG_XML, Family::Vg)?;
        reg.sort();
        Ok(reg)
    }

    /// Where [`Registry::load_vk`] reads `vk.xml`: `$GPUHEAT_VK_XML`, else the file Debian's
    /// `libvulkan-dev` installs.
    pub fn vk_xml_path() -> std::path::PathBuf {
        std::env::var_os("GPUHEAT_VK_XML")
            .map(Into::into)
            .unwrap_or_else(|| "/usr/share/vulkan/registry/vk.xml".into())
    }

    /// Parses the Vulkan registry at [`Registry::vk_xml_path`]: every Vulkan command (not
    /// Vulkan SC) of the core versions and of the extensions for Linux's window systems
    /// ([`vk::PLATFORMS`]), as [`Family::Vk`]. Commands of other platforms are in `skipped`
    /// with [`vk::OTHER_PLATFORM`]; any other entry there is a type this model does not know.
    pub fn load_vk() -> Result<Registry, Error> {
        let path = Registry::vk_xml_path();
        let xml = std::fs::read(&path).map_err(|e| {
            Error(format!(
                "cannot read the Vulkan registry {}: {e} (install Debian's libvulkan-dev, or set GPUHEAT_VK_XML to a vk.xml)",
                path.display()
            ))
        })?;
        let mut reg = Registry::default();
        vk::parse_into(&mut reg, &xml)?;
        reg.sort();
        Ok(reg)
    }

    /// Sorts the commands by name (for [`Registry::command`]), keeping the first of each name.
    fn sort(&mut self) {
        self.commands.sort_by(|a, b| a.name.cmp(&b.name));
        self.commands.dedup_by(|a, b| a.name == b.name);
    }

    /// Finds a command by name.
    pub fn command(&self, name: &str) -> Option<&Command> {
        self.commands
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.commands[i])
    }
}
