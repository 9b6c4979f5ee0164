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
