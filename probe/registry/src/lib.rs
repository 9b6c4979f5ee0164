//! The Khronos XML API registry (gl.xml, egl.xml, glx.xml from the `khronos_api` crate) as a
//! small model that gpuheat's code generators consume: every command with its parameter
//! types, array lengths and enum groups, and every enum value with its name.
//!
//! gl.xml describes GL 1.0–4.6, GLES 1.1–3.2 and all their extensions in one list of commands,
//! so generating from it covers every entry point a GL or GLES program can call.

mod ctype;
mod parse;

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
    /// Every command of gl.xml, egl.xml and glx.xml whose types are known, sorted by name.
    pub commands: Vec<Command>,
    /// GL and EGL enum values.
    pub enums: Vec<EnumValue>,
    /// The enum groups of gl.xml.
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

impl Registry {
    /// Parses the registries bundled in `khronos_api`.
    pub fn load() -> Result<Registry, Error> {
        let mut reg = Registry::default();
        parse::parse_into(&mut reg, khronos_api::GL_XML, Family::Gl)?;
        parse::parse_into(&mut reg, khronos_api::EGL_XML, Family::Egl)?;
        parse::parse_into(&mut reg, khronos_api::GLX_XML, Family::Glx)?;
        reg.commands.sort_by(|a, b| a.name.cmp(&b.name));
        reg.commands.dedup_by(|a, b| a.name == b.name);
        Ok(reg)
    }

    /// Finds a command by name.
    pub fn command(&self, name: &str) -> Option<&Command> {
        self.commands
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.commands[i])
    }
}
