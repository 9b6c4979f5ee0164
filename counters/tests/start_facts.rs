//! `facts::start_facts` on real llvmpipe contexts (GLES 3.2 and GL 4.5 core): the default
//! framebuffer's samples, depth and stencil bits match what EGL says of the surface's
//! config, the capabilities and texture bindings match what was set, and the program sees
//! its own GL error and bindings unchanged afterwards.

mod common;

use common::Scene;
use gpuheat_counters::facts::start_facts;
use gpuheat_examples::gfx::Api;
use gpuheat_examples::gl::*;

const GL_INVALID_ENUM: GLenum = 0x0500;

fn config_attrib(scene: &Scene, attrib: EGLint) -> u32 {
    let mut v = 0;
    // SAFETY: the display and config the scene's context was made with; `v` is a local.
    let ok = unsafe { eglGetConfigAttrib(scene.gfx.display, scene.gfx.config, attrib, &mut v) };
    assert_eq!(ok, EGL_TRUE);
    v as u32
}

fn check(api: Api) {
    let scene = Scene::new(api, 32, 32, None);
    let thermal = scene.gl.thermal.as_ref().expect("thermal functions");
    let rt = scene.gfx.render_texture(8, 8, GL_NEAREST as GLint).unwrap();
    let (mut a, mut b) = (0, 0);
    // SAFETY: the scene's context is current on this thread; out-pointers are locals.
    unsafe {
        glGenTextures(1, &mut a);
        glGenTextures(1, &mut b);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D, a);
        glActiveTexture(GL_TEXTURE0 + 3);
        glBindTexture(GL_TEXTURE_2D, b);
        glEnable(GL_DEPTH_TEST);
        glEnable(GL_BLEND);
        glDisable(GL_CULL_FACE);
        // A framebuffer object bound: the facts are still the default framebuffer's.
        glBindFramebuffer(GL_FRAMEBUFFER, rt.framebuffer);
        // The program's pending error, which it must still find afterwards.
        glEnable(0);
    }
    // SAFETY: the scene's context is current on this thread.
    let facts = unsafe { start_facts(thermal) };
    // SAFETY: as above.
    let (error, next, fb, active) = unsafe {
        let (mut fb, mut active) = (0, 0);
        glGetIntegerv(gpuheat_counters::gl::DRAW_FRAMEBUFFER_BINDING, &mut fb);
        glGetIntegerv(gpuheat_counters::gl::ACTIVE_TEXTURE, &mut active);
        (glGetError(), glGetError(), fb as u32, active as u32)
    };
    assert_eq!((error, next), (GL_INVALID_ENUM, GL_NO_ERROR), "{api}");
    assert_eq!((fb, active), (rt.framebuffer, GL_TEXTURE0 + 3), "{api}");

    assert_eq!(
        facts.samples,
        Some(config_attrib(&scene, EGL_SAMPLES)),
        "{api}"
    );
    assert_eq!(facts.sample_buffers, Some(0), "{api}");
    assert_eq!(
        facts.depth_bits,
        Some(config_attrib(&scene, EGL_DEPTH_SIZE)),
        "{api}"
    );
    assert_eq!(
        facts.stencil_bits,
        Some(config_attrib(&scene, EGL_STENCIL_SIZE)),
        "{api}"
    );
    assert_eq!(
        (facts.depth_test, facts.blend, facts.cull_face),
        (Some(true), Some(true), Some(false)),
        "{api}"
    );
    assert_eq!(facts.active_texture, Some(GL_TEXTURE0 + 3), "{api}");
    let units = facts.texture_2d.expect("texture bindings");
    assert_eq!(units.len(), 16, "{api}: llvmpipe has more than 16 units");
    assert_eq!(&units[..4], &[a, 0, 0, b], "{api}");
    assert!(units[4..].iter().all(|&t| t == 0), "{api}");
}

#[test]
fn start_facts_on_gles() {
    check(Api::Gles);
}

#[test]
fn start_facts_on_core_gl() {
    check(Api::Gl);
}
