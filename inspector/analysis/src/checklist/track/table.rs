// The one hand-written table of the state tracker: what the Khronos registry cannot say about
// an entry point. The build script (`build.rs`) includes this file, matches every GL command
// of gl.xml against the `Set` entries (an entry's prefix, then a type suffix such as `1f`,
// `4fv`, `i`, `Iuiv`, then an optional vendor suffix) and generates each match's shape from
// the registry: which parameters are keys (they select a slot: targets, capabilities,
// parameter names, faces, attachments, indices, locations, units), which are values, which
// holds an array count, and whether a value is behind a pointer. The tracker (`mod.rs`)
// reads the same table for every other call, by longest prefix.
//
// No inner doc comments here: `build.rs` includes the file with `include!`.

/// Where a family's state lives: the object its paths hang under (the thesis's switch nodes:
/// a binding selects the object, and the setter's keys and values hang under it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The context itself.
    Context,
    /// The active texture unit (`glActiveTexture`).
    ActiveUnit,
    /// The texture bound to the active unit's target named by parameter 0.
    BoundTexture,
    /// The program in use (`glUseProgram`).
    CurrentProgram,
    /// The program named by parameter 0 (`glProgramUniform*`).
    NamedProgram,
    /// The bound vertex array object.
    VertexArray,
    /// The framebuffer bound at the target named by parameter 0.
    BoundFramebuffer,
    /// The sampler object named by parameter 0.
    NamedSampler,
}

/// What a setter does beyond writing its values at its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Special {
    /// Nothing.
    None,
    /// glEnable/glDisable and their kin: the value is on (true) or off (false), whichever
    /// entry point set it.
    Enable(bool),
    /// A `face` key of `GL_FRONT_AND_BACK` sets both `GL_FRONT` and `GL_BACK`.
    Face,
    /// An `attachment` key of `GL_DEPTH_STENCIL_ATTACHMENT` sets depth and stencil.
    Attachment,
    /// A target of `GL_FRAMEBUFFER` binds both the draw and the read framebuffer.
    FramebufferTargets,
    /// `GL_ELEMENT_ARRAY_BUFFER` is vertex array state: that binding hangs under the bound VAO.
    ElementArrayInVao,
    /// The attribute takes the buffer bound to `GL_ARRAY_BUFFER` (part of its value; the
    /// binding is read, so a bind before it is used).
    ReadsArrayBuffer,
}

/// What an entry point does to the tracked state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A setter of state `family` (entry points that set the same state share it) in `scope`.
    Set {
        /// The state it sets; aliases (glBlendFunc, glBlendFuncSeparate) name one family.
        family: &'static str,
        /// Where the state lives.
        scope: Scope,
        /// Anything more.
        special: Special,
    },
    /// Reads state (queries, uploads through a binding, draws) and changes none of it: a
    /// setter before it was used.
    Reads,
    /// Neither reads nor changes the tracked state.
    Neutral,
    /// Changes tracked state in ways not followed (deletes, links, attribute stacks, display
    /// lists, bindings of several objects through a pointer): the context's state is forgotten.
    /// Also every entry point this table does not know.
    Forgets,
}

const fn set(family: &'static str, scope: Scope) -> Role {
    Role::Set {
        family,
        scope,
        special: Special::None,
    }
}

const fn set_special(family: &'static str, scope: Scope, special: Special) -> Role {
    Role::Set {
        family,
        scope,
        special,
    }
}

/// The table: an entry point's name prefix and its role. `Set` prefixes are matched with a
/// type suffix by the build script; the others by prefix, the longest winning. Draws, work
/// calls (clears, blits, dispatches) and swaps are read from the session's call classes
/// first: they read the state (swaps are neutral).
pub const TABLE: &[(&str, Role)] = &[
    // Bindings.
    ("glActiveTexture", set("glActiveTexture", Scope::Context)),
    ("glUseProgram", set("glUseProgram", Scope::Context)),
    (
        "glBindVertexArray",
        set("glBindVertexArray", Scope::Context),
    ),
    (
        "glBindBuffer",
        set_special("glBindBuffer", Scope::Context, Special::ElementArrayInVao),
    ),
    ("glBindBufferBase", set("glBindBuffer", Scope::Context)),
    ("glBindBufferRange", set("glBindBuffer", Scope::Context)),
    ("glBindTexture", set("glBindTexture", Scope::ActiveUnit)),
    ("glBindSampler", set("glBindSampler", Scope::Context)),
    (
        "glBindFramebuffer",
        set_special(
            "glBindFramebuffer",
            Scope::Context,
            Special::FramebufferTargets,
        ),
    ),
    (
        "glBindRenderbuffer",
        set("glBindRenderbuffer", Scope::Context),
    ),
    // Object state under a binding.
    ("glTexParameter", set("glTexParameter", Scope::BoundTexture)),
    (
        "glSamplerParameter",
        set("glSamplerParameter", Scope::NamedSampler),
    ),
    ("glUniform", set("glUniform", Scope::CurrentProgram)),
    ("glProgramUniform", set("glUniform", Scope::NamedProgram)),
    (
        "glVertexAttribPointer",
        set_special(
            "glVertexAttribPointer",
            Scope::VertexArray,
            Special::ReadsArrayBuffer,
        ),
    ),
    (
        "glVertexAttribIPointer",
        set_special(
            "glVertexAttribPointer",
            Scope::VertexArray,
            Special::ReadsArrayBuffer,
        ),
    ),
    (
        "glEnableVertexAttribArray",
        set_special(
            "glEnableVertexAttribArray",
            Scope::VertexArray,
            Special::Enable(true),
        ),
    ),
    (
        "glDisableVertexAttribArray",
        set_special(
            "glEnableVertexAttribArray",
            Scope::VertexArray,
            Special::Enable(false),
        ),
    ),
    (
        "glVertexAttribDivisor",
        set("glVertexAttribDivisor", Scope::VertexArray),
    ),
    (
        "glFramebufferTexture",
        set_special(
            "glFramebufferAttachment",
            Scope::BoundFramebuffer,
            Special::Attachment,
        ),
    ),
    (
        "glFramebufferTexture2D",
        set_special(
            "glFramebufferAttachment",
            Scope::BoundFramebuffer,
            Special::Attachment,
        ),
    ),
    (
        "glFramebufferTextureLayer",
        set_special(
            "glFramebufferAttachment",
            Scope::BoundFramebuffer,
            Special::Attachment,
        ),
    ),
    (
        "glFramebufferRenderbuffer",
        set_special(
            "glFramebufferAttachment",
            Scope::BoundFramebuffer,
            Special::Attachment,
        ),
    ),
    // Context state.
    (
        "glEnable",
        set_special("glEnable", Scope::Context, Special::Enable(true)),
    ),
    (
        "glDisable",
        set_special("glEnable", Scope::Context, Special::Enable(false)),
    ),
    ("glBlendFunc", set("glBlendFunc", Scope::Context)),
    ("glBlendFuncSeparate", set("glBlendFunc", Scope::Context)),
    ("glBlendEquation", set("glBlendEquation", Scope::Context)),
    (
        "glBlendEquationSeparate",
        set("glBlendEquation", Scope::Context),
    ),
    ("glBlendColor", set("glBlendColor", Scope::Context)),
    ("glDepthFunc", set("glDepthFunc", Scope::Context)),
    ("glDepthMask", set("glDepthMask", Scope::Context)),
    ("glDepthRange", set("glDepthRange", Scope::Context)),
    ("glColorMask", set("glColorMask", Scope::Context)),
    (
        "glStencilFunc",
        set_special("glStencilFunc", Scope::Context, Special::Face),
    ),
    (
        "glStencilFuncSeparate",
        set_special("glStencilFunc", Scope::Context, Special::Face),
    ),
    (
        "glStencilOp",
        set_special("glStencilOp", Scope::Context, Special::Face),
    ),
    (
        "glStencilOpSeparate",
        set_special("glStencilOp", Scope::Context, Special::Face),
    ),
    (
        "glStencilMask",
        set_special("glStencilMask", Scope::Context, Special::Face),
    ),
    (
        "glStencilMaskSeparate",
        set_special("glStencilMask", Scope::Context, Special::Face),
    ),
    ("glCullFace", set("glCullFace", Scope::Context)),
    ("glFrontFace", set("glFrontFace", Scope::Context)),
    (
        "glPolygonMode",
        set_special("glPolygonMode", Scope::Context, Special::Face),
    ),
    ("glPolygonOffset", set("glPolygonOffset", Scope::Context)),
    ("glLineWidth", set("glLineWidth", Scope::Context)),
    ("glPointSize", set("glPointSize", Scope::Context)),
    ("glViewport", set("glViewport", Scope::Context)),
    ("glScissor", set("glScissor", Scope::Context)),
    ("glClearColor", set("glClearColor", Scope::Context)),
    ("glClearDepth", set("glClearDepth", Scope::Context)),
    ("glClearStencil", set("glClearStencil", Scope::Context)),
    ("glHint", set("glHint", Scope::Context)),
    ("glPixelStore", set("glPixelStore", Scope::Context)),
    ("glSampleCoverage", set("glSampleCoverage", Scope::Context)),
    (
        "glProvokingVertex",
        set("glProvokingVertex", Scope::Context),
    ),
    (
        "glPrimitiveRestartIndex",
        set("glPrimitiveRestartIndex", Scope::Context),
    ),
    ("glLogicOp", set("glLogicOp", Scope::Context)),
    ("glPatchParameter", set("glPatchParameter", Scope::Context)),
    (
        "glMinSampleShading",
        set("glMinSampleShading", Scope::Context),
    ),
    ("glVertexAttrib", set("glVertexAttrib", Scope::Context)),
    // Calls that leave the tracked state alone and read it (or may).
    ("glGet", Role::Reads),
    ("glIs", Role::Reads),
    ("glCheckFramebufferStatus", Role::Reads),
    ("glCheckNamedFramebufferStatus", Role::Reads),
    ("glRead", Role::Reads),
    ("glGen", Role::Reads),
    ("glCreate", Role::Reads),
    ("glBuffer", Role::Reads),
    ("glNamedBuffer", Role::Reads),
    ("glMapBuffer", Role::Reads),
    ("glMapNamedBuffer", Role::Reads),
    ("glUnmap", Role::Reads),
    ("glFlushMapped", Role::Reads),
    ("glTexImage", Role::Reads),
    ("glTexSubImage", Role::Reads),
    ("glTexStorage", Role::Reads),
    ("glTexBuffer", Role::Reads),
    ("glCompressedTex", Role::Reads),
    ("glCopy", Role::Reads),
    ("glDraw", Role::Reads),
    ("glMultiDraw", Role::Reads),
    ("glClear", Role::Reads),
    ("glBlit", Role::Reads),
    ("glDispatch", Role::Reads),
    ("glInvalidate", Role::Reads),
    ("glGenerateMipmap", Role::Reads),
    ("glRenderbufferStorage", Role::Reads),
    ("glShaderSource", Role::Reads),
    ("glShaderBinary", Role::Reads),
    ("glCompileShader", Role::Reads),
    ("glAttachShader", Role::Reads),
    ("glDetachShader", Role::Reads),
    ("glBindAttribLocation", Role::Reads),
    ("glBindFragDataLocation", Role::Reads),
    ("glUniformBlockBinding", Role::Reads),
    ("glShaderStorageBlockBinding", Role::Reads),
    ("glValidateProgram", Role::Reads),
    ("glReleaseShaderCompiler", Role::Reads),
    ("glBeginQuery", Role::Reads),
    ("glEndQuery", Role::Reads),
    ("glQueryCounter", Role::Reads),
    ("glFenceSync", Role::Reads),
    ("glClientWaitSync", Role::Reads),
    ("glWaitSync", Role::Reads),
    ("glMemoryBarrier", Role::Reads),
    ("glObjectLabel", Role::Reads),
    ("glObjectPtrLabel", Role::Reads),
    ("glPushDebugGroup", Role::Reads),
    ("glPopDebugGroup", Role::Reads),
    ("glDebugMessage", Role::Reads),
    ("glInsertEventMarker", Role::Reads),
    ("glPushGroupMarker", Role::Reads),
    ("glPopGroupMarker", Role::Reads),
    ("glDrawBuffer", Role::Reads),
    ("glReadBuffer", Role::Reads),
    // The VG API: its own state, and the GL calls a VG library makes are recorded apart.
    ("vg", Role::Reads),
    // Neither: the brief's "glFlush/glFinish do not count as readers".
    ("glFlush", Role::Neutral),
    ("glFinish", Role::Neutral),
    ("glGetError", Role::Neutral),
    ("egl", Role::Neutral),
    ("glX", Role::Neutral),
    // Written out for the reader: these are also what an unknown entry point does.
    ("glDelete", Role::Forgets),
    ("glLinkProgram", Role::Forgets),
    ("glProgramBinary", Role::Forgets),
    ("glPopAttrib", Role::Forgets),
    ("glPopClientAttrib", Role::Forgets),
    ("glCallList", Role::Forgets),
];
