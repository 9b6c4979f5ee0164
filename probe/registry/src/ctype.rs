//! C types of the registries reduced to what decides the calling convention and how a value
//! is recorded: width, signedness, float or integer register, pointer.

/// A parameter or return type, by calling-convention class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CType {
    /// No value (a `void` return).
    Void,
    /// 8-bit signed integer.
    I8,
    /// 8-bit unsigned integer.
    U8,
    /// 16-bit signed integer.
    I16,
    /// 16-bit unsigned integer.
    U16,
    /// 32-bit signed integer.
    I32,
    /// 32-bit unsigned integer.
    U32,
    /// 64-bit signed integer.
    I64,
    /// 64-bit unsigned integer.
    U64,
    /// 32-bit float (passed in a vector register).
    F32,
    /// 64-bit float (passed in a vector register).
    F64,
    /// Pointers, handles and function pointers: one pointer-sized integer register.
    Ptr,
    /// An OpenVG object handle (`VGHandle`, `VGPath`, ...): an integer value, recorded as one
    /// (not a pointer to data), passed as a whole pointer-sized register. Khronos' openvg.h
    /// makes it a `VGuint`, but real 64-bit libraries make it a pointer (ShivaVG's
    /// `typedef void *VGHandle`): a 32-bit wrapper cut their handles in half, so every
    /// object call of such a library failed with `VG_BAD_HANDLE_ERROR`. Passing the whole
    /// register is exact for both: a 32-bit callee reads only the lower half.
    Handle,
    /// GLenum / EGLenum: a 32-bit unsigned integer with a symbolic name.
    Enum,
    /// GLbitfield.
    Bitfield,
    /// GLboolean (8 bits).
    Bool8,
    /// EGLBoolean / Bool (32 bits).
    Bool32,
}

impl CType {
    /// Classifies a registry type spelled as `base` (the `<ptype>` or plain C word) with the
    /// full declaration text `decl` (which tells whether it is a pointer).
    pub fn classify(base: &str, decl: &str) -> Option<CType> {
        if decl.contains('*') {
            return Some(CType::Ptr);
        }
        use CType::*;
        let ty = match base {
            "void" => Void,
            "GLenum" | "EGLenum" => Enum,
            // OpenVG's enums are C enums (int-sized; every value fits 31 bits, the headers
            // force the size with VG_MAX_ENUM), passed like GLenum.
            "VGErrorCode"
            | "VGParamType"
            | "VGRenderingQuality"
            | "VGPixelLayout"
            | "VGMatrixMode"
            | "VGMaskOperation"
            | "VGPathDatatype"
            | "VGPathAbsRel"
            | "VGPathSegment"
            | "VGPathCommand"
            | "VGPathCapabilities"
            | "VGPathParamType"
            | "VGCapStyle"
            | "VGJoinStyle"
            | "VGFillRule"
            | "VGPaintMode"
            | "VGPaintParamType"
            | "VGPaintType"
            | "VGColorRampSpreadMode"
            | "VGTilingMode"
            | "VGImageFormat"
            | "VGImageQuality"
            | "VGImageParamType"
            | "VGImageMode"
            | "VGImageChannel"
            | "VGBlendMode"
            | "VGFontParamType"
            | "VGHardwareQueryType"
            | "VGHardwareQueryResult"
            | "VGStringID"
            | "VGUErrorCode"
            | "VGUArcType" => Enum,
            "GLbitfield" | "VGbitfield" => Bitfield,
            "GLboolean" => Bool8,
            // VGboolean is a VGuint (1.1 reference header) or an int-sized C enum (later
            // headers): 32 bits either way, unlike GLboolean.
            "EGLBoolean" | "Bool" | "VGboolean" => Bool32,
            "GLbyte" | "VGbyte" => I8,
            "GLubyte" | "GLchar" | "GLcharARB" | "VGubyte" => U8,
            "GLshort" | "VGshort" => I16,
            "GLushort" | "GLhalf" | "GLhalfARB" | "GLhalfNV" => U16,
            "GLint"
            | "GLsizei"
            | "GLfixed"
            | "GLclampx"
            | "EGLint"
            | "VGint"
            | "int"
            | "int32_t"
            | "Status"
            | "EGLNativeFileDescriptorKHR" => I32,
            // GLhandleARB is `unsigned int` everywhere but Apple.
            "GLuint" | "GLhandleARB" | "unsigned int" | "GLXVideoDeviceNV" | "VGuint" => U32,
            "VGHandle" | "VGPath" | "VGImage" | "VGMaskLayer" | "VGFont" | "VGPaint" => Handle,
            "GLint64" | "GLint64EXT" | "int64_t" | "EGLnsecsANDROID" | "GLintptr"
            | "GLintptrARB" | "GLsizeiptr" | "GLsizeiptrARB" | "GLvdpauSurfaceNV" | "EGLAttrib"
            | "EGLAttribKHR" => I64,
            "GLuint64" | "GLuint64EXT" | "EGLuint64KHR" | "EGLuint64NV" | "EGLTime"
            | "EGLTimeKHR" | "EGLTimeNV" | "unsigned long" => U64,
            // VGfloat is a float: passed in a vector register, like GLfloat.
            "GLfloat" | "GLclampf" | "float" | "VGfloat" => F32,
            "GLdouble" | "GLclampd" | "double" => F64,
            // Opaque handles and X11 XIDs (unsigned long): all pointer-sized integers.
            "GLsync"
            | "GLeglImageOES"
            | "GLeglClientBufferEXT"
            | "GLDEBUGPROC"
            | "GLDEBUGPROCARB"
            | "GLDEBUGPROCKHR"
            | "GLDEBUGPROCAMD"
            | "GLVULKANPROCNV"
            | "EGLDisplay"
            | "EGLSurface"
            | "EGLContext"
            | "EGLConfig"
            | "EGLSync"
            | "EGLSyncKHR"
            | "EGLSyncNV"
            | "EGLImage"
            | "EGLImageKHR"
            | "EGLClientBuffer"
            | "EGLStreamKHR"
            | "EGLDeviceEXT"
            | "EGLOutputLayerEXT"
            | "EGLOutputPortEXT"
            | "EGLNativeDisplayType"
            | "EGLNativeWindowType"
            | "EGLNativePixmapType"
            | "EGLObjectKHR"
            | "EGLLabelKHR"
            | "EGLDEBUGPROCKHR"
            | "EGLSetBlobFuncANDROID"
            | "EGLGetBlobFuncANDROID"
            | "__eglMustCastToProperFunctionPointerType"
            | "GLXContext"
            | "GLXFBConfig"
            | "GLXFBConfigSGIX"
            | "GLXDrawable"
            | "GLXPixmap"
            | "GLXWindow"
            | "GLXPbuffer"
            | "GLXPbufferSGIX"
            | "GLXContextID"
            | "GLXVideoCaptureDeviceNV"
            | "GLXVideoSourceSGIX"
            | "Window"
            | "Pixmap"
            | "Font"
            | "Colormap"
            | "__GLXextFuncPtr" => Ptr,
            _ => return None,
        };
        Some(ty)
    }

    /// The Rust type that has this type's calling convention.
    pub fn rust(self) -> &'static str {
        match self {
            CType::Void => "()",
            CType::I8 => "i8",
            CType::U8 | CType::Bool8 => "u8",
            CType::I16 => "i16",
            CType::U16 => "u16",
            CType::I32 => "i32",
            CType::U32 | CType::Enum | CType::Bitfield | CType::Bool32 => "u32",
            CType::I64 => "i64",
            CType::U64 => "u64",
            CType::F32 => "f32",
            CType::F64 => "f64",
            CType::Ptr | CType::Handle => "usize",
        }
    }

    /// A Rust expression turning `v` (of [`CType::rust`] type) into the u64 recorded for it:
    /// signed values sign-extended, floats as their bit pattern.
    pub fn to_u64(self, v: &str) -> String {
        match self {
            CType::Void => "0u64".to_string(),
            CType::I8 | CType::I16 | CType::I32 | CType::I64 => format!("({v} as i64 as u64)"),
            CType::F32 => format!("(({v}).to_bits() as u64)"),
            CType::F64 => format!("({v}).to_bits()"),
            _ => format!("({v} as u64)"),
        }
    }

    /// The name of the session's `ValueKind` variant that describes this type.
    pub fn value_kind(self) -> &'static str {
        match self {
            CType::I8 | CType::I16 | CType::I32 | CType::I64 => "Int",
            CType::U8 | CType::U16 | CType::U32 | CType::U64 | CType::Handle | CType::Void => {
                "Uint"
            }
            CType::Enum => "Enum",
            CType::Bitfield => "Bitfield",
            CType::Bool8 | CType::Bool32 => "Bool",
            CType::F32 => "F32",
            CType::F64 => "F64",
            CType::Ptr => "Ptr",
        }
    }
}
