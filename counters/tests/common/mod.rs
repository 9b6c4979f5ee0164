//! Shared helpers of the counters tests: real llvmpipe contexts from `gpuheat-examples`,
//! `GlFns` loaded through the real `eglGetProcAddress`, and a rectangle drawer.

#![allow(dead_code)]

use std::ffi::c_void;

use gpuheat_counters::{Bracket, ContextCounters, GlFns};
use gpuheat_examples::gfx::{Api, Gfx, Quad, RectProgram};
use gpuheat_examples::gl::*;
use gpuheat_session::{CaptureMode, CounterValue};

/// A current context with the rectangle program and the unit quad bound.
pub struct Scene {
    pub gfx: Gfx,
    pub rp: RectProgram,
    pub quad: Quad,
    pub gl: GlFns,
}

/// The real GL entry points, as the agent would load them.
pub fn load_fns() -> GlFns {
    // SAFETY: eglGetProcAddress returns null or the named GL function with its C signature.
    unsafe {
        GlFns::load(|name| eglGetProcAddress(name.as_ptr()) as *const c_void)
            .expect("loading GL functions through eglGetProcAddress")
    }
}

impl Scene {
    /// A `w × h` context for `api` drawing with fragment shader body `fs` (`None`: solid).
    pub fn new(api: Api, w: u32, h: u32, fs: Option<&str>) -> Scene {
        let gfx = Gfx::new(api, w, h).expect("EGL context");
        let rp = match fs {
            Some(fs) => gfx.rect_program_with(fs),
            None => gfx.rect_program(),
        }
        .expect("rect program");
        let quad = gfx.unit_quad().expect("unit quad");
        let gl = load_fns();
        Scene { gfx, rp, quad, gl }
    }

    /// Draws the pixel rectangle (x, y, w, h) as a 4-vertex triangle strip.
    pub fn draw_rect(&self, x: u32, y: u32, w: u32, h: u32) {
        // SAFETY: this scene's EGL context is current on this thread, with the rectangle program in
        // use and the quad bound.
        unsafe {
            glUniform4f(self.rp.u_rect, x as f32, y as f32, w as f32, h as f32);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, Quad::VERTICES);
        }
    }

    /// Counters of this context, created as the agent would (context current).
    pub fn counters(&self) -> ContextCounters {
        // SAFETY: this scene's EGL context is current on this thread (it was made current when
        // created, and tests use one thread).
        unsafe { ContextCounters::new(&self.gl, self.gfx.context as u64) }
    }

    /// Brackets one rectangle draw like the agent brackets a work call, isolated.
    pub fn bracketed_rect(
        &self,
        cc: &mut ContextCounters,
        mode: CaptureMode,
        frame: u64,
        call: u32,
        rect: (u32, u32, u32, u32),
    ) -> Vec<CounterValue> {
        self.bracketed_rect_timed(cc, mode, false, frame, call, rect)
    }

    /// [`Scene::bracketed_rect`], timed `deferred` when asked (full mode): its values then
    /// come from `resolve`.
    pub fn bracketed_rect_timed(
        &self,
        cc: &mut ContextCounters,
        mode: CaptureMode,
        deferred: bool,
        frame: u64,
        call: u32,
        rect: (u32, u32, u32, u32),
    ) -> Vec<CounterValue> {
        self.bracketed_rect_idle(cc, mode, deferred, 0, (frame, call), rect)
    }

    /// [`Scene::bracketed_rect_timed`] leaving out the counters `idle` names (catalogue bits).
    pub fn bracketed_rect_idle(
        &self,
        cc: &mut ContextCounters,
        mode: CaptureMode,
        deferred: bool,
        idle: u32,
        (frame, call): (u64, u32),
        rect: (u32, u32, u32, u32),
    ) -> Vec<CounterValue> {
        // SAFETY: this scene's EGL context is current on this thread (it was made current when
        // created, and tests use one thread).
        unsafe {
            let b: Bracket = cc.begin(&self.gl, mode, deferred, idle);
            self.draw_rect(rect.0, rect.1, rect.2, rect.3);
            cc.end(&self.gl, b, frame, call)
        }
    }

    /// The program's view of the GL error flag (the test plays the program).
    pub fn gl_error(&self) -> GLenum {
        // SAFETY: this scene's EGL context is current on this thread (it was made current when
        // created, and tests use one thread).
        unsafe { glGetError() }
    }
}

/// The value of counter `index` among `values`, if reported.
pub fn value(values: &[CounterValue], index: u16) -> Option<u64> {
    values.iter().find(|v| v.counter == index).map(|v| v.value)
}
