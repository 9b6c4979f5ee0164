//! The tracker on small call sequences, with a function table made for each (the testing
//! builder's table lacks most setters; the tracker reads only names, classes and parameter
//! counts).

use super::*;

use crate::enums::gl::{
    ALWAYS, ARRAY_BUFFER, BACK, BLEND, COLOR_BUFFER_BIT, DRAW_FRAMEBUFFER, ELEMENT_ARRAY_BUFFER,
    FLOAT, FRAMEBUFFER, FRONT, FRONT_AND_BACK, LINEAR, TEXTURE0, TEXTURE1, TEXTURE_2D,
    TEXTURE_MIN_FILTER as MIN_FILTER, VIEWPORT,
};
const F1: u64 = 0x3F80_0000; // 1.0f
const F2: u64 = 0x4000_0000; // 2.0f

use gpuheat_testkit::{session, Seq, CONTEXT};

fn run(frames: &[Seq], program: Option<u32>) -> Vec<FrameState> {
    let s = session(frames, program, 1);
    track(&s, &Nested::default())
}

#[test]
fn shapes_come_from_the_registry() {
    let tp = setter("glTexParameteri").unwrap();
    assert_eq!(
        (tp.scope, tp.keys, tp.values),
        (Scope::BoundTexture, &[1u8][..], &[2u8][..])
    );
    let u = setter("glUniform4fv").unwrap();
    assert_eq!(
        (u.keys, u.count, u.pointer_values),
        (&[0u8][..], Some(1), true)
    );
    assert!(!setter("glUniform4f").unwrap().pointer_values);
    assert_eq!(setter("glBindBuffer").unwrap().keys, &[0]);
    assert_eq!(setter("glEnablei").unwrap().keys, &[0, 1]);
    assert_eq!(setter("glDisable").unwrap().special, Special::Enable(false));
    // A vertex attribute's pointer is an offset: a value.
    assert!(!setter("glVertexAttribPointer").unwrap().pointer_values);
    assert_eq!(
        setter("glBlendFuncSeparate").unwrap().family,
        setter("glBlendFunc").unwrap().family
    );
    assert_eq!(
        setter("glProgramUniform1f").unwrap().scope,
        Scope::NamedProgram
    );
    assert_eq!(setter("glProgramUniform1f").unwrap().keys, &[1]);
    assert!(setter("glBindVertexArrayOES").is_some());
    for not in [
        "glDrawArrays",
        "glViewportIndexedf",
        "glUniformBlockBinding",
        "glGetIntegerv",
    ] {
        assert!(setter(not).is_none(), "{not}");
    }
    assert_eq!(role("glGetIntegerv"), Role::Reads);
    assert_eq!(role("glGetError"), Role::Neutral);
    assert_eq!(role("glFlush"), Role::Neutral);
    assert_eq!(role("glDeleteTextures"), Role::Forgets);
    assert_eq!(role("glSomethingNew"), Role::Forgets);
    assert!(SETTERS.windows(2).all(|w| w[0].name < w[1].name));
}

#[test]
fn first_set_is_unknown_then_repeats_are_redundant() {
    let r = run(
        &[&[
            ("glUseProgram", &[3]),
            ("glUseProgram", &[3]),
            ("glDrawArrays", &[4, 0, 3]),
            ("glUseProgram", &[3]),
        ]],
        None,
    );
    assert_eq!(r[0].state_calls, 3);
    assert_eq!(r[0].redundant, vec![1, 3]);
    assert!(r[0].eclipsed.is_empty());
}

#[test]
fn start_state_seeds_the_program() {
    let r = run(
        &[&[("glUseProgram", &[7]), ("glUseProgram", &[8])]],
        Some(7),
    );
    assert_eq!(r[0].redundant, vec![0]);
}

#[test]
fn texture_parameters_follow_the_unit_and_binding() {
    let r = run(
        &[&[
            ("glActiveTexture", &[TEXTURE0]),
            ("glBindTexture", &[TEXTURE_2D, 5]),
            ("glTexParameteri", &[TEXTURE_2D, MIN_FILTER, LINEAR]), // 2: unknown
            ("glBindTexture", &[TEXTURE_2D, 6]),
            ("glTexParameteri", &[TEXTURE_2D, MIN_FILTER, LINEAR]), // 4: another texture
            ("glBindTexture", &[TEXTURE_2D, 5]),
            ("glTexParameteri", &[TEXTURE_2D, MIN_FILTER, LINEAR]), // 6: redundant
            ("glActiveTexture", &[TEXTURE1]),
            ("glBindTexture", &[TEXTURE_2D, 5]), // 8: unit 1 not seen
            ("glActiveTexture", &[TEXTURE0]),
            ("glBindTexture", &[TEXTURE_2D, 5]), // 10: redundant
            ("glDrawArrays", &[4, 0, 3]),
        ]],
        None,
    );
    assert_eq!(r[0].redundant, vec![6, 10]);
    // Each bind was followed by a parameter set through it: used, not eclipsed; the unit
    // switch to 1 was used by the bind on it.
    assert!(r[0].eclipsed.is_empty(), "{:?}", r[0].eclipsed);
}

#[test]
fn texture_binds_before_any_active_texture_go_to_one_unseen_unit() {
    let r = run(
        &[&[
            ("glBindTexture", &[TEXTURE_2D, 5]),
            ("glBindTexture", &[TEXTURE_2D, 5]), // 1: redundant, whichever unit it is
            ("glActiveTexture", &[TEXTURE1]),
            ("glBindTexture", &[TEXTURE_2D, 5]), // 3: unit 1 may or may not be that unit
            ("glBindTexture", &[TEXTURE_2D, 5]), // 4: redundant
        ]],
        None,
    );
    assert_eq!(r[0].redundant, vec![1, 4]);
}

#[test]
fn uniforms_belong_to_their_program() {
    let r = run(
        &[&[
            ("glUseProgram", &[1]),
            ("glUniform1f", &[0, F1]),
            ("glUseProgram", &[2]),
            ("glUniform1f", &[0, F1]), // 3: program 2 not seen
            ("glUseProgram", &[1]),
            ("glUniform1f", &[0, F1]),           // 5: redundant
            ("glProgramUniform1f", &[2, 0, F1]), // 6: another entry point: not comparable
            ("glProgramUniform1f", &[2, 0, F1]), // 7: redundant
            ("glUniform4fv", &[1, 1, 0xdead]),   // 8: a pointer: unknown
            ("glUniform4fv", &[1, 1, 0xdead]),   // 9: never redundant
            ("glDrawArrays", &[4, 0, 3]),
        ]],
        None,
    );
    assert_eq!(r[0].redundant, vec![5, 7]);
}

#[test]
fn an_array_write_forgets_the_programs_uniforms() {
    let r = run(
        &[&[
            ("glUseProgram", &[1]),
            ("glUniform1f", &[1, F1]),
            ("glUniform1fv", &[0, 3, 0xbeef]), // may set location 1
            ("glUniform1f", &[1, F1]),
            ("glDrawArrays", &[4, 0, 3]),
        ]],
        None,
    );
    assert!(r[0].redundant.is_empty());
}

#[test]
fn vertex_array_state_follows_the_bound_vao() {
    let r = run(
        &[&[
            ("glBindVertexArray", &[1]),
            ("glEnableVertexAttribArray", &[0]),
            ("glBindVertexArray", &[2]),
            ("glEnableVertexAttribArray", &[0]), // 3: VAO 2 not seen
            ("glBindVertexArray", &[1]),
            ("glEnableVertexAttribArray", &[0]),  // 5: redundant
            ("glDisableVertexAttribArray", &[0]), // 6: changes
            ("glDisableVertexAttribArray", &[0]), // 7: redundant
            ("glBindBuffer", &[ELEMENT_ARRAY_BUFFER, 9]), // 8: element array, VAO 1
            ("glBindVertexArray", &[2]),
            ("glBindBuffer", &[ELEMENT_ARRAY_BUFFER, 9]), // 10: VAO 2's own
            ("glBindVertexArray", &[1]),
            ("glBindBuffer", &[ELEMENT_ARRAY_BUFFER, 9]), // 12: redundant
            ("glDrawArrays", &[4, 0, 3]),
        ]],
        None,
    );
    assert_eq!(r[0].redundant, vec![5, 7, 12]);
}

#[test]
fn attribute_pointers_take_the_array_buffer() {
    let vap = |off: u64| [0, 4, FLOAT, 0, 16, off];
    let (a, b) = (vap(0), vap(0));
    let r = run(
        &[&[
            ("glBindVertexArray", &[1]),
            ("glBindBuffer", &[ARRAY_BUFFER, 1]),
            ("glVertexAttribPointer", &a),
            ("glBindBuffer", &[ARRAY_BUFFER, 2]),
            ("glVertexAttribPointer", &b), // 4: another buffer
            ("glVertexAttribPointer", &b), // 5: redundant
            ("glDrawArrays", &[4, 0, 3]),
        ]],
        None,
    );
    assert_eq!(r[0].redundant, vec![5]);
    // The first bind was used by the pointer set through it; that pointer was replaced
    // before any draw.
    assert_eq!(r[0].eclipsed, vec![2]);
}

#[test]
fn enable_and_disable_share_a_slot_and_indexed_forms_overlap() {
    let r = run(
        &[&[
            ("glEnable", &[BLEND]),
            ("glDisable", &[BLEND]),
            ("glEnable", &[BLEND]), // 2: changes
            ("glEnable", &[BLEND]), // 3: redundant
            ("glDisablei", &[BLEND, 0]),
            ("glEnable", &[BLEND]), // 5: draw buffer 0 was off
            ("glDrawArrays", &[4, 0, 3]),
        ]],
        None,
    );
    assert_eq!(r[0].redundant, vec![3]);
    // glEnable(BLEND) at 0 was overwritten by glDisable before any draw; so was 1 by 2.
    assert_eq!(r[0].eclipsed, vec![0, 1]);
}

#[test]
fn front_and_back_is_both_faces() {
    let r = run(
        &[&[
            ("glStencilFuncSeparate", &[FRONT, ALWAYS, 1, 0xff]),
            ("glStencilFuncSeparate", &[FRONT_AND_BACK, ALWAYS, 2, 0xff]),
            ("glStencilFuncSeparate", &[FRONT, ALWAYS, 1, 0xff]), // 2: front changed
            ("glStencilFuncSeparate", &[BACK, ALWAYS, 2, 0xff]),  // 3: redundant
            ("glDrawArrays", &[4, 0, 3]),
        ]],
        None,
    );
    assert_eq!(r[0].redundant, vec![3]);
    // 0 was overwritten (front) by 1; 1 kept its back path until the draw.
    assert_eq!(r[0].eclipsed, vec![0]);
}

#[test]
fn framebuffer_binds_both_targets() {
    let r = run(
        &[&[
            ("glBindFramebuffer", &[FRAMEBUFFER, 3]),
            ("glBindFramebuffer", &[DRAW_FRAMEBUFFER, 3]), // redundant: draw is 3
            ("glBindFramebuffer", &[DRAW_FRAMEBUFFER, 4]), // overwrites draw only
            ("glClear", &[COLOR_BUFFER_BIT]),
        ]],
        None,
    );
    assert_eq!(r[0].redundant, vec![1]);
    assert!(r[0].eclipsed.is_empty(), "{:?}", r[0].eclipsed);
}

#[test]
fn eclipsed_until_something_reads_the_state() {
    let r = run(
        &[
            &[
                ("glClearColor", &[F1, 0, 0, F1]),
                ("glFlush", &[]),
                ("glClearColor", &[F2, 0, 0, F1]), // eclipses 0 (glFlush reads nothing)
                ("glGetIntegerv", &[VIEWPORT, 0xcafe]),
                ("glClearColor", &[F1, 0, 0, F1]), // 4: 2 was read by the query
                ("glClear", &[COLOR_BUFFER_BIT]),
                ("glViewport", &[0, 0, 10, 10]),
            ],
            // Overwritten in the next frame, across the swap: frame 1's call 6 is eclipsed.
            &[
                ("glViewport", &[0, 0, 20, 20]),
                ("glClear", &[COLOR_BUFFER_BIT]),
            ],
        ],
        None,
    );
    assert_eq!(r[0].eclipsed, vec![0, 6]);
    assert!(r[1].eclipsed.is_empty());
}

#[test]
fn unknown_calls_forget_the_context() {
    let r = run(
        &[&[
            ("glUseProgram", &[1]),
            ("glDeleteProgram", &[1]),
            ("glUseProgram", &[1]),
            ("glSomethingNew", &[]),
            ("glUseProgram", &[1]),
        ]],
        None,
    );
    assert!(r[0].redundant.is_empty());
    assert!(r[0].eclipsed.is_empty());
}

#[test]
fn nested_calls_change_state_but_are_not_counted() {
    let mut s = session(
        &[&[
            ("glUseProgram", &[1]),
            ("vgDrawPath", &[1, 2]),
            ("glUseProgram", &[1]), // the VG library's: not counted
            ("glUseProgram", &[1]), // the program's: redundant
        ]],
        None,
        1,
    );
    s.vg_calls.push(gpuheat_session::vg::VgCall {
        frame: 1,
        context: CONTEXT,
        call: 1,
        children: vec![2],
        draw: None,
        upload: None,
        values: Vec::new(),
    });
    let r = track(&s, &Nested::of(&s.vg_calls));
    assert_eq!(r[0].state_calls, 2);
    assert_eq!(r[0].redundant, vec![3]);
}
