//! The shadow program `S` of a program `P`: `P`'s vertex (and fragment) stage linked again
//! with `gl_Position` captured by transform feedback and `P`'s attribute locations, built
//! from the shaders attached to `P` or from the sources the agent saved when it saw `P`
//! link ([`ProgramLink`]), and cached per `P` with that link's generation. `P` itself is
//! never touched (relinking it would reset its uniforms).
//!
//! Draws with no program current (fixed-function vertex processing, compatibility contexts)
//! get one shadow of their own, built from [`FIXED_FUNCTION_VS`]: `ftransform()` applies the
//! current modelview and projection matrices to the position array as the fixed pipeline
//! does (the GLSL spec makes it invariant with it), reading every piece of state the fixed
//! transform reads, so nothing is copied at a replay.

use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::Arc;

use crate::gl::*;
use crate::state::drain_errors;

use super::uniforms::{
    active_uniform, indices, is_image, read_name, uniform_blocks, uniform_copies, UniformCopy,
};

/// What the agent learned about a program by watching it link: a generation that changes at
/// every link or deletion of that name, and the sources of the shaders attached at the link.
#[derive(Debug, Clone, Default)]
pub struct ProgramLink {
    /// Changes whenever the program is relinked or deleted; 0 when never seen.
    pub generation: u64,
    /// (stage, source) of each shader attached when it was linked, if they had sources.
    pub sources: Option<Arc<[(GLenum, CString)]>>,
}

/// Reads the stage and source of every shader attached to `program` (right after the
/// program linked, while they are still attached). `None` when it is not a program, has no
/// shaders attached or one of them has no source (a binary shader).
///
/// Only queries that cannot fail on a valid program are made, so no GL error is raised.
///
/// # Safety
/// A GL context must be current and `t`, `g` its real functions.
pub unsafe fn link_sources(
    t: &ThermalFns,
    g: &GeometryFns,
    program: GLuint,
) -> Option<Vec<(GLenum, CString)>> {
    // SAFETY: our caller's promise (context current, real functions); `program` is checked
    // to be a program first, and each buffer is as long as the length given with it.
    unsafe {
        if program == 0 || (g.is_program)(program) == 0 {
            return None;
        }
        let shaders = attached_shaders(t, g, program);
        if shaders.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(shaders.len());
        for sh in shaders {
            let mut stage = 0;
            (t.get_shaderiv)(sh, SHADER_TYPE, &mut stage);
            let mut len = 0;
            (t.get_shaderiv)(sh, SHADER_SOURCE_LENGTH, &mut len);
            if len <= 1 {
                return None;
            }
            let mut buf = vec![0u8; len as usize];
            let mut got = 0;
            (g.get_shader_source)(sh, len, &mut got, buf.as_mut_ptr().cast());
            buf.truncate(got.clamp(0, len) as usize);
            out.push((stage as GLenum, CString::new(buf).ok()?));
        }
        Some(out)
    }
}

/// The shaders attached to `program`.
///
/// # Safety
/// A GL context must be current, `t`, `g` its real functions and `program` a program.
unsafe fn attached_shaders(t: &ThermalFns, g: &GeometryFns, program: GLuint) -> Vec<GLuint> {
    // SAFETY: our caller's promise; `v` has room for the `n` names asked for.
    unsafe {
        let mut n = 0;
        (t.get_programiv)(program, ATTACHED_SHADERS, &mut n);
        if n <= 0 {
            return Vec::new();
        }
        let mut v = vec![0; n as usize];
        let mut got = 0;
        (g.get_attached_shaders)(program, n, &mut got, v.as_mut_ptr());
        v.truncate(got.clamp(0, n) as usize);
        v
    }
}

/// The vertex stage of the fixed-function shadow program. `ftransform()` is specified to
/// produce exactly the position fixed-function vertex processing produces (GLSL 1.10, 7.5),
/// from the same state: the conventional vertex array (or generic attribute 0), the
/// modelview and projection matrices current at the draw. GLSL 1.10 so that any
/// compatibility context compiles it.
pub(super) const FIXED_FUNCTION_VS: &std::ffi::CStr =
    c"#version 110\nvoid main() { gl_Position = ftransform(); }\n";

/// A built shadow program and what each replay copies into it.
#[derive(Debug)]
pub(super) struct Shadow {
    /// The shadow program `S`.
    pub(super) program: GLuint,
    /// How `P`'s default-block uniforms are copied to `S`.
    pub(super) uniforms: Vec<UniformCopy>,
    /// (block index in `P`, block index in `S`).
    pub(super) blocks: Vec<(GLuint, GLuint)>,
}

/// A shadow program, or why `P` has none, and the generation of `P`'s link it is of.
#[derive(Debug)]
struct CacheEntry {
    generation: u64,
    shadow: Result<Shadow, String>,
}

/// The shadow programs of one context, by program name, each with the generation of the
/// program's link it was built from.
#[derive(Debug)]
pub(super) struct Shadows {
    /// GLES 3.1+ or GL 4.3+ (program resources: storage blocks, images).
    resources: bool,
    /// GL 4.0+ (subroutines).
    subroutines: bool,
    cache: HashMap<GLuint, CacheEntry>,
    /// The fixed-function shadow, built at the first draw with no program current.
    fixed: Option<Result<Shadow, String>>,
}

impl Shadows {
    /// No shadow program yet, for a context with (or without) program resources and
    /// subroutines.
    pub(super) fn new(resources: bool, subroutines: bool) -> Shadows {
        Shadows {
            resources,
            subroutines,
            cache: HashMap::new(),
            fixed: None,
        }
    }

    /// Shadow programs built (or found impossible) so far.
    pub(super) fn len(&self) -> usize {
        self.cache.len()
    }

    /// The shadow program of `program` (current, linked, not flagged for deletion), built
    /// the first time and again after each link the agent saw (`link`).
    ///
    /// # Safety
    /// The context these shadows belong to must be current, and `t`, `g` its real functions.
    pub(super) unsafe fn get(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
        program: GLuint,
        link: &dyn Fn(GLuint) -> ProgramLink,
    ) -> Result<&Shadow, String> {
        // SAFETY: our caller's promise; the programs deleted are our own shadows.
        unsafe {
            let generation = link(program).generation;
            let stale = self
                .cache
                .get(&program)
                .is_some_and(|c| c.generation != generation);
            if stale {
                if let Some(CacheEntry { shadow: Ok(s), .. }) = self.cache.remove(&program) {
                    (g.delete_program)(s.program);
                }
            }
            if !self.cache.contains_key(&program) {
                let shadow = self.build(t, g, program, &link(program));
                let e = drain_errors(t);
                let shadow = match (shadow, e) {
                    (Ok(s), NO_ERROR) => Ok(s),
                    (Ok(s), e) => {
                        (g.delete_program)(s.program);
                        Err(format!("GL error 0x{e:04X} building the shadow program"))
                    }
                    (Err(why), _) => Err(why),
                };
                self.cache
                    .insert(program, CacheEntry { generation, shadow });
            }
            self.cache[&program].shadow.as_ref().map_err(Clone::clone)
        }
    }

    /// The shadow program of fixed-function vertex processing ([`FIXED_FUNCTION_VS`]),
    /// built the first time; `Err` (kept) where the context cannot build it (a core
    /// profile has no fixed function and no `ftransform()`).
    ///
    /// # Safety
    /// As [`Shadows::get`].
    pub(super) unsafe fn fixed_function(
        &mut self,
        t: &ThermalFns,
        g: &GeometryFns,
    ) -> Result<&Shadow, String> {
        if self.fixed.is_none() {
            // SAFETY: our caller's promise.
            let built = unsafe { build_fixed_function(t, g) };
            // SAFETY: as above.
            let e = unsafe { drain_errors(t) };
            self.fixed = Some(match (built, e) {
                (Ok(s), NO_ERROR) => Ok(s),
                (Ok(s), e) => {
                    // SAFETY: as above; the program is our own.
                    unsafe { (g.delete_program)(s.program) };
                    Err(format!(
                        "GL error 0x{e:04X} building the fixed-function shadow program"
                    ))
                }
                (Err(why), _) => Err(why),
            });
        }
        match &self.fixed {
            Some(Ok(s)) => Ok(s),
            Some(Err(why)) => Err(why.clone()),
            None => Err("no fixed-function shadow program".into()),
        }
    }

    /// Builds the shadow program of `program`.
    ///
    /// # Safety
    /// As [`Shadows::get`], with `program` a live program.
    unsafe fn build(
        &self,
        t: &ThermalFns,
        g: &GeometryFns,
        program: GLuint,
        link: &ProgramLink,
    ) -> Result<Shadow, String> {
        // SAFETY: our caller's promise; `program` and its shaders are live names, the
        // sources are NUL-terminated and outlive the calls that copy them.
        unsafe {
            let mut linked = 0;
            (t.get_programiv)(program, LINK_STATUS, &mut linked);
            if linked == 0 {
                return Err(format!("program {program} is not linked"));
            }
            let attached = attached_shaders(t, g, program);
            let mut stages = Vec::new();
            for &sh in &attached {
                let mut stage = 0;
                (t.get_shaderiv)(sh, SHADER_TYPE, &mut stage);
                stages.push(stage as GLenum);
            }
            let sources = if attached.is_empty() {
                match &link.sources {
                    Some(s) => {
                        stages = s.iter().map(|(stage, _)| *stage).collect();
                        Some(s.clone())
                    }
                    None => {
                        return Err(format!(
                            "program {program} has no shaders attached and gpuheat did not \
                             see it link (its shaders were detached before the agent was \
                             loaded, or it came from a binary)"
                        ))
                    }
                }
            } else {
                None
            };
            if let Some(&s) = stages.iter().find(|&&s| {
                matches!(
                    s,
                    GEOMETRY_SHADER | TESS_CONTROL_SHADER | TESS_EVALUATION_SHADER
                )
            }) {
                let what = if s == GEOMETRY_SHADER {
                    "a geometry"
                } else {
                    "a tessellation"
                };
                return Err(format!(
                    "program {program} has {what} stage (only vertex-stage positions are \
                     recorded)"
                ));
            }
            if stages.contains(&COMPUTE_SHADER) || !stages.contains(&VERTEX_SHADER) {
                return Err(format!("program {program} has no vertex stage"));
            }
            self.check_side_effects(t, g, program)?;

            let shadow = (t.create_program)();
            if shadow == 0 {
                return Err("glCreateProgram failed for the shadow program".into());
            }
            let fail = |why: String| -> Result<Shadow, String> {
                (g.delete_program)(shadow);
                Err(why)
            };
            match &sources {
                None => {
                    for &sh in &attached {
                        (t.attach_shader)(shadow, sh);
                    }
                }
                Some(sources) => {
                    for (stage, src) in sources.iter() {
                        let sh = (t.create_shader)(*stage);
                        (t.shader_source)(sh, 1, &src.as_ptr(), std::ptr::null());
                        (t.compile_shader)(sh);
                        let mut ok = 0;
                        (t.get_shaderiv)(sh, COMPILE_STATUS, &mut ok);
                        let log = shader_log(t, g, sh);
                        (t.attach_shader)(shadow, sh);
                        // Flagged now, freed with the shadow program.
                        (t.delete_shader)(sh);
                        if ok == 0 {
                            return fail(format!(
                                "the shader source saved at program {program}'s link does \
                                 not compile again: {log}"
                            ));
                        }
                    }
                }
            }
            for (name, location) in active_attributes(t, g, program) {
                (g.bind_attrib_location)(shadow, location as GLuint, name.as_ptr());
            }
            let varying = c"gl_Position";
            (g.transform_feedback_varyings)(shadow, 1, &varying.as_ptr(), INTERLEAVED_ATTRIBS);
            (t.link_program)(shadow);
            let mut ok = 0;
            (t.get_programiv)(shadow, LINK_STATUS, &mut ok);
            if ok == 0 {
                let log = program_log(t, g, shadow);
                return fail(format!(
                    "the shadow program of program {program} does not link: {log}"
                ));
            }
            let uniforms = match uniform_copies(t, g, program, shadow) {
                Ok(u) => u,
                Err(why) => return fail(why),
            };
            let blocks = uniform_blocks(t, g, program, shadow);
            Ok(Shadow {
                program: shadow,
                uniforms,
                blocks,
            })
        }
    }

    /// A replay runs `P`'s vertex shader again: one that writes memory (storage blocks,
    /// images, atomic counters) would write twice, and switching programs resets
    /// subroutine selections.
    ///
    /// # Safety
    /// As [`Shadows::build`].
    unsafe fn check_side_effects(
        &self,
        t: &ThermalFns,
        g: &GeometryFns,
        program: GLuint,
    ) -> Result<(), String> {
        // SAFETY: our caller's promise; the stage and resource queries are only made where
        // the context has them (`subroutines`, `resources`), with `program` a live program.
        unsafe {
            if self.subroutines {
                if let Some(stage_iv) = g.get_program_stageiv {
                    for stage in [VERTEX_SHADER, FRAGMENT_SHADER] {
                        let mut n = 0;
                        stage_iv(program, stage, ACTIVE_SUBROUTINE_UNIFORM_LOCATIONS, &mut n);
                        if n > 0 {
                            return Err(format!(
                                "program {program} uses subroutines (switching programs for \
                                 the replay would reset the program's selection)"
                            ));
                        }
                    }
                }
            }
            if !self.resources {
                return Ok(());
            }
            let (Some(interface_iv), Some(resource_iv)) =
                (g.get_program_interfaceiv, g.get_program_resourceiv)
            else {
                return Ok(());
            };
            let by_vertex = |interface: GLenum, index: GLuint| {
                let mut v = 0;
                resource_iv(
                    program,
                    interface,
                    index,
                    1,
                    &REFERENCED_BY_VERTEX_SHADER,
                    1,
                    std::ptr::null_mut(),
                    &mut v,
                );
                v != 0
            };
            let mut blocks = 0;
            interface_iv(program, SHADER_STORAGE_BLOCK, ACTIVE_RESOURCES, &mut blocks);
            if (0..blocks.max(0) as GLuint).any(|i| by_vertex(SHADER_STORAGE_BLOCK, i)) {
                return Err(format!(
                    "program {program}'s vertex shader uses a shader storage block (a replay \
                     could write to it a second time)"
                ));
            }
            for i in indices(t, program, ACTIVE_UNIFORMS) {
                let (_, _, ty) = active_uniform(t, program, i);
                if is_image(ty) && by_vertex(UNIFORM, i) {
                    return Err(format!(
                        "program {program}'s vertex shader uses an image or atomic counter (a \
                         replay could write to it a second time)"
                    ));
                }
            }
            Ok(())
        }
    }
}

/// Builds the fixed-function shadow program: [`FIXED_FUNCTION_VS`] alone (a compatibility
/// context runs fixed-function fragment processing after it, and rasterization is discarded
/// anyway), `gl_Position` captured.
///
/// # Safety
/// A GL context must be current, and `t`, `g` its real functions.
unsafe fn build_fixed_function(t: &ThermalFns, g: &GeometryFns) -> Result<Shadow, String> {
    // SAFETY: our caller's promise; the source is NUL-terminated and static, and every name
    // used is one created here.
    unsafe {
        let sh = (t.create_shader)(VERTEX_SHADER);
        if sh == 0 {
            return Err("glCreateShader failed for the fixed-function shadow".into());
        }
        (t.shader_source)(sh, 1, &FIXED_FUNCTION_VS.as_ptr(), std::ptr::null());
        (t.compile_shader)(sh);
        let mut ok = 0;
        (t.get_shaderiv)(sh, COMPILE_STATUS, &mut ok);
        if ok == 0 {
            let log = shader_log(t, g, sh);
            (t.delete_shader)(sh);
            return Err(format!(
                "no program is current and ftransform() does not compile here (a context \
                 without fixed-function vertex processing?): {log}"
            ));
        }
        let program = (t.create_program)();
        if program == 0 {
            (t.delete_shader)(sh);
            return Err("glCreateProgram failed for the fixed-function shadow".into());
        }
        (t.attach_shader)(program, sh);
        // Flagged now, freed with the program.
        (t.delete_shader)(sh);
        let varying = c"gl_Position";
        (g.transform_feedback_varyings)(program, 1, &varying.as_ptr(), INTERLEAVED_ATTRIBS);
        (t.link_program)(program);
        (t.get_programiv)(program, LINK_STATUS, &mut ok);
        if ok == 0 {
            let log = program_log(t, g, program);
            (g.delete_program)(program);
            return Err(format!(
                "the fixed-function shadow program does not link: {log}"
            ));
        }
        Ok(Shadow {
            program,
            uniforms: Vec::new(),
            blocks: Vec::new(),
        })
    }
}

/// The first line of `program`'s info log.
///
/// # Safety
/// A GL context must be current, `t`, `g` its real functions and `program` a program.
unsafe fn program_log(t: &ThermalFns, g: &GeometryFns, program: GLuint) -> String {
    let mut len = 0;
    // SAFETY: our caller's promise; `len` receives the one value, the log buffer holds the
    // capacity given.
    unsafe {
        (t.get_programiv)(program, INFO_LOG_LENGTH, &mut len);
        log_line(len, |capacity, buf| {
            (g.get_program_info_log)(program, capacity, std::ptr::null_mut(), buf)
        })
    }
}

/// The first line of `shader`'s info log.
///
/// # Safety
/// A GL context must be current, `t`, `g` its real functions and `shader` a shader.
unsafe fn shader_log(t: &ThermalFns, g: &GeometryFns, shader: GLuint) -> String {
    let mut len = 0;
    // SAFETY: as in `program_log`.
    unsafe {
        (t.get_shaderiv)(shader, INFO_LOG_LENGTH, &mut len);
        log_line(len, |capacity, buf| {
            (g.get_shader_info_log)(shader, capacity, std::ptr::null_mut(), buf)
        })
    }
}

/// The first line of an info log of `len` bytes (at most 4096 read) that `write(capacity,
/// buffer)` copies.
fn log_line(len: GLint, write: impl FnOnce(GLsizei, *mut c_char)) -> String {
    let mut buf = vec![0u8; len.clamp(1, 4096) as usize];
    write(buf.len() as GLsizei, buf.as_mut_ptr().cast());
    first_line(&buf)
}

/// The first non-empty line of a NUL-terminated log (reasons are one line).
fn first_line(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end])
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no log")
        .to_string()
}

/// Active vertex attributes of `program` with their locations (built-ins left out).
///
/// # Safety
/// A GL context must be current, `t`, `g` its real functions and `program` a linked program.
unsafe fn active_attributes(
    t: &ThermalFns,
    g: &GeometryFns,
    program: GLuint,
) -> Vec<(CString, GLint)> {
    let mut out = Vec::new();
    // SAFETY: our caller's promise; every index asked about is below the active count, each
    // name buffer holds the capacity given, and each name passed is NUL-terminated.
    unsafe {
        for i in indices(t, program, ACTIVE_ATTRIBUTES) {
            let (mut size, mut ty) = (0, 0);
            let name = read_name(|capacity, len, buf| {
                (g.get_active_attrib)(program, i, capacity, len, &mut size, &mut ty, buf)
            });
            let Some(name) = name else {
                continue;
            };
            if name.as_bytes().starts_with(b"gl_") || name.as_bytes().is_empty() {
                continue;
            }
            let location = (g.get_attrib_location)(program, name.as_ptr());
            if location >= 0 {
                out.push((name, location));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_are_one_line() {
        assert_eq!(
            first_line(b"\n  0:1(1): error: x\nmore\0junk"),
            "0:1(1): error: x"
        );
        assert_eq!(first_line(b"\0"), "no log");
    }
}
