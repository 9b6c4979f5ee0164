//! The registry model read from the real Khronos XML: counts, known commands, array lengths and enum groups.

use gpuheat_registry::{CType, Family, Registry};

#[test]
fn covers_gl_gles_egl_glx() {
    let reg = Registry::load().unwrap();
    let draw = reg.command("glDrawArrays").unwrap();
    assert_eq!(draw.family, Family::Gl);
    assert_eq!(draw.ret, CType::Void);
    let types: Vec<_> = draw.params.iter().map(|p| p.ty).collect();
    assert_eq!(types, [CType::Enum, CType::I32, CType::I32]);
    assert_eq!(draw.params[0].group.as_deref(), Some("PrimitiveType"));
    // GLES 1.1 fixed point, GL 4.6, EGL and GLX entry points are all there.
    for name in [
        "glAlphaFuncx",
        "glSpecializeShader",
        "glMultiDrawElementsIndirectCount",
        "glDrawElementsInstancedBaseVertexBaseInstance",
        "eglSwapBuffers",
        "eglGetPlatformDisplay",
        "glXSwapBuffers",
        "glXGetProcAddressARB",
        "glClearColor",
    ] {
        assert!(reg.command(name).is_some(), "{name} missing");
    }
    let uniform = reg.command("glUniform4f").unwrap();
    assert_eq!(uniform.params[1].ty, CType::F32);
    let src = reg.command("glShaderSource").unwrap();
    assert_eq!(src.params[2].ty, CType::Ptr);
    assert_eq!(src.params[2].len.as_deref(), Some("count"));
    assert!(reg.commands.len() > 3000, "{} commands", reg.commands.len());
    assert!(reg
        .enums
        .iter()
        .any(|e| e.name == "GL_TRIANGLE_STRIP" && e.value == 5));
}

#[test]
fn few_commands_are_skipped_and_only_for_exotic_types() {
    let reg = Registry::load().unwrap();
    for s in &reg.skipped {
        eprintln!("skipped {}: {}", s.name, s.why);
        assert!(
            !s.name.starts_with("glDraw") && !s.name.starts_with("egl"),
            "{}",
            s.name
        );
    }
    assert!(reg.skipped.len() < 20, "{} skipped", reg.skipped.len());
}

#[test]
fn load_stays_gl_egl_glx() {
    // The agent's wrappers and the enum-name tables come from `load()`: VG is separate.
    let reg = Registry::load().unwrap();
    assert!(reg
        .commands
        .iter()
        .all(|c| matches!(c.family, Family::Gl | Family::Egl | Family::Glx)));
    assert!(reg.commands.iter().all(|c| !c.name.starts_with("vg")));
    assert!(reg.enums.iter().all(|e| !e.name.starts_with("VG")));
    assert_eq!(reg.command("eglSwapBuffers").unwrap().family, Family::Egl);
    assert_eq!(reg.command("glXSwapBuffers").unwrap().family, Family::Glx);
    assert_eq!(reg.command("glClear").unwrap().family, Family::Gl);
    // No Khronos GL registry declares handle types.
    assert!(reg
        .commands
        .iter()
        .flat_map(|c| &c.params)
        .all(|p| p.handle.is_none()));
    let string = reg.command("glGetString").unwrap();
    assert_eq!(
        (string.ret, string.ret_c_type.as_str()),
        (CType::Ptr, "const GLubyte *")
    );
}
