//! Every checklist rule on the `checklist` example (examples/README.md): `--bad RULE` makes
//! the rule fire, with the calls and counts the example documents, and nothing else fires;
//! the clean program raises no finding at all. Captured from the program's start (frame 0
//! holds its set-up, so textures, framebuffers and vertex arrays are seen being made), in
//! full mode with heat (fragment counts come from the heat maps on GLES).

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// The documented evidence of one rule in frame 2 (frame 0 for set-up findings, the frame
/// named for one-off findings): the finding's frame, its calls, and named values.
struct Expect {
    rule: &'static str,
    frame: u64,
    calls: &'static [u32],
    values: &'static [(&'static str, &'static str)],
}

const EXPECTED: &[Expect] = &[
    Expect {
        rule: "mipmaps-unused",
        frame: 2,
        calls: &[7],
        // 256² texels on the 32² badge.
        values: &[("texels", "65536"), ("fragments", "1024")],
    },
    Expect {
        rule: "sync-calls",
        frame: 2,
        calls: &[15, 16],
        values: &[("glGetError", "1"), ("glGetIntegerv", "1")],
    },
    Expect {
        rule: "depth-not-cleared",
        frame: 2,
        // Card, floor and glass, all depth-tested into F.
        calls: &[5, 7, 10],
        values: &[],
    },
    Expect {
        rule: "client-arrays",
        frame: 2,
        calls: &[8],
        values: &[
            ("client_attributes", "0, 1"),
            ("draws_with_client_indices", "1"),
        ],
    },
    Expect {
        rule: "renderer-unchecked",
        frame: 0,
        calls: &[],
        values: &[],
    },
    Expect {
        rule: "texture-modified",
        frame: 2,
        calls: &[8],
        values: &[("earlier_draw", "7")],
    },
    Expect {
        rule: "texture-upload-in-frame",
        frame: 2,
        calls: &[7],
        // 128² RGBA8.
        values: &[("bytes", "65536")],
    },
    Expect {
        rule: "uncompressed-textures",
        frame: 0,
        calls: &[],
        values: &[
            ("internalformat", "GL_RGBA8"),
            ("width", "512"),
            ("height", "512"),
            ("bytes", "1048576"),
        ],
    },
    Expect {
        rule: "no-strips-or-indices",
        frame: 2,
        calls: &[7],
        values: &[("vertices", "144")],
    },
    Expect {
        rule: "no-multisampling",
        frame: 1,
        calls: &[],
        values: &[],
    },
    Expect {
        rule: "redundant-state",
        frame: 2,
        calls: &[5, 6, 7, 8, 11, 12, 13, 14, 18, 19, 20, 21],
        values: &[],
    },
    Expect {
        rule: "eclipsed-state",
        frame: 2,
        // The ten unused angles, the first blend function and colour, and the read
        // framebuffer the clean frame unbinds at its end (rebound by the next frame's call 0).
        calls: &[3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 20, 22, 28],
        values: &[],
    },
    Expect {
        rule: "same-upload",
        frame: 2,
        calls: &[4, 8],
        // 480 bytes of vertices and a 32² RGBA8 sub-image.
        values: &[("bytes", "4576")],
    },
    Expect {
        rule: "objects-per-frame",
        frame: 2,
        calls: &[2, 5, 8, 9],
        values: &[
            ("buffers", "1 created, 1 deleted"),
            ("textures", "1 created, 1 deleted"),
        ],
    },
    Expect {
        rule: "compile-in-frame",
        frame: 2,
        calls: &[8, 11, 15],
        values: &[("glCompileShader", "2"), ("glLinkProgram", "1")],
    },
    Expect {
        rule: "first-use-compile",
        frame: 5,
        calls: &[7],
        values: &[],
    },
    Expect {
        rule: "readback-rtt",
        frame: 2,
        calls: &[8, 13],
        values: &[("width", "32"), ("height", "32")],
    },
    Expect {
        rule: "identical-frames",
        frame: 2,
        calls: &[],
        values: &[("previous_frame", "1"), ("calls", "15")],
    },
    Expect {
        rule: "colormask-heavy",
        frame: 2,
        calls: &[5, 6],
        // The card (128²) and the floor (the whole 384×256 surface, as rasterized: the heat
        // map counts fragments before the depth test).
        values: &[("masked_fragments", "114688")],
    },
    Expect {
        rule: "discard-heavy",
        frame: 2,
        calls: &[13],
        // A quarter of the surface kept.
        values: &[("fragments", "24576"), ("surface_pixels", "98304")],
    },
    Expect {
        rule: "blend-opaque",
        frame: 2,
        calls: &[6],
        values: &[],
    },
    Expect {
        rule: "overdraw",
        frame: 2,
        calls: &[],
        // Floor, card, glass and 8 layers, as rasterized.
        values: &[("fragments", "909312"), ("max", "11")],
    },
    Expect {
        rule: "stall",
        frame: 2,
        calls: &[15],
        values: &[],
    },
];

/// The rule id a `--bad` flag's findings carry (the example's `stall` is the checklist's
/// `pipeline-stall`).
fn rule_id(flag: &str) -> &str {
    if flag == "stall" {
        "pipeline-stall"
    } else {
        flag
    }
}

/// Captures `checklist [--bad FLAG]` from its first frame (8 frames: first-use-compile's
/// program is first used in frame 5) and returns `gpuheat checklist --json`'s findings, with
/// the renderer's name.
fn findings(dir: &Path, flag: Option<&str>) -> (Vec<Value>, String) {
    let sub = dir.join(flag.unwrap_or("clean"));
    std::fs::create_dir_all(&sub).expect("scratch");
    let mut args = vec!["--frames", "10"];
    if let Some(f) = flag {
        args.extend(["--bad", f]);
    }
    // Without Mesa's on-disk shader cache: a variant compiled by an earlier run would load
    // from it, and the first-use compile the rule looks for may then cost too little to see.
    let s = capture_with_env(
        &sub,
        "checklist",
        &["--mode", "full", "--heat", "--skip", "0", "--frames", "8"],
        &args,
        &[("MESA_SHADER_CACHE_DISABLE", "true")],
    );
    let out = run_gpuheat(&["checklist", s.to_str().unwrap(), "--json"]);
    assert!(
        out.status.success(),
        "{flag:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("checklist --json");
    let r = report(&s);
    let renderer = r["contexts"][0]["renderer"]
        .as_str()
        .unwrap_or("")
        .to_string();
    (
        v["findings"].as_array().expect("findings").clone(),
        renderer,
    )
}

#[test]
fn the_clean_program_raises_no_finding() {
    let dir = scratch("checklist-rules-clean");
    let (found, _) = findings(&dir, None);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn each_rule_fires_on_its_trigger_with_its_evidence_and_nothing_else_fires() {
    let dir = scratch("checklist-rules");
    for e in EXPECTED {
        let (found, renderer) = findings(&dir, Some(e.rule));
        if e.rule == "first-use-compile" && found.is_empty() && !renderer.contains("llvmpipe") {
            // Drivers that compile at link time (NVIDIA's) have no first-use hitch to find.
            eprintln!("--bad first-use-compile: no hitch on {renderer}");
            continue;
        }
        let id = rule_id(e.rule);
        let others: Vec<&Value> = found.iter().filter(|f| f["rule"] != id).collect();
        assert!(
            others.is_empty(),
            "--bad {}: other rules fired: {others:#?}",
            e.rule
        );
        let f = found
            .iter()
            .find(|f| f["frame"] == e.frame)
            .unwrap_or_else(|| {
                panic!(
                    "--bad {}: no finding in frame {}: {found:#?}",
                    e.rule, e.frame
                )
            });
        if !e.calls.is_empty() {
            let calls = evidence_calls(f);
            let want: Vec<u64> = e.calls.iter().map(|&c| u64::from(c)).collect();
            assert_eq!(calls, want, "--bad {}: {f:#}", e.rule);
            assert_eq!(f["evidence"]["count"], want.len(), "--bad {}", e.rule);
        }
        for (name, want) in e.values {
            assert_eq!(
                evidence_value(f, name),
                Some(*want),
                "--bad {} {name}: {f:#}",
                e.rule
            );
        }
        assert!(
            !f["fix"].as_str().unwrap_or("").is_empty(),
            "--bad {}",
            e.rule
        );
    }
}
