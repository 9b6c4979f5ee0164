//! `gpuheat checklist`: the checklist's findings on real captures, filtered by rule, with its
//! exit statuses for CI, and one-line errors.

mod common;

use common::*;
use serde_json::Value;
use std::path::PathBuf;

/// The released hot_spot capture (format version 2): its hot draw is an error-level
/// dominant draw and an expensive-fragment warning in each of its 4 frames.
fn fixture() -> PathBuf {
    gpuheat_testkit::fixture("v2-hot_spot")
}

fn json(args: &[&str]) -> Value {
    let out = run_gpuheat(args);
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("checklist --json")
}

#[test]
fn state_churn_redundant_calls_with_their_evidence() {
    // 6 redundant calls per draw (examples/README.md), 200 draws: 1200 of 1400 state calls
    // from the second captured frame on; nothing is set and reset before a draw uses it, so
    // no eclipsed calls.
    let dir = scratch("checklist-state-churn");
    let d = 200;
    let s = capture(
        &dir,
        "state_churn",
        &["--frames", "3"],
        &["--draws", &d.to_string()],
    );
    let s = s.to_str().unwrap();
    let r = json(&["checklist", s, "--json", "--rule", "redundant-state"]);
    let found = r["findings"].as_array().unwrap();
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(r["rules"], serde_json::json!(["redundant-state"]));
    for f in &found[1..] {
        assert_eq!(f["rule"], "redundant-state");
        assert!(
            f["title"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{} of {} ", 6 * d, 7 * d)),
            "{f}"
        );
        assert_eq!(f["evidence"]["count"], 6 * d);
        assert_eq!(f["evidence"]["calls"].as_array().unwrap().len(), 32);
        for name in [
            "glUseProgram",
            "glBindVertexArray",
            "glEnable",
            "glBlendFunc",
            "glDisable",
            "glUniform4f",
        ] {
            let v = evidence_value(f, name).unwrap_or_else(|| panic!("{name} in {f}"));
            assert!(v.starts_with(&format!("{d} calls, ")), "{name}: {v}");
        }
        assert!(f["cost"]["ns"].as_u64().unwrap() > 0, "{f}");
    }
    let r = json(&["checklist", s, "--json", "--rule", "eclipsed-state"]);
    assert_eq!(r["findings"], serde_json::json!([]));
    // The same findings in the report.
    let report = report(std::path::Path::new(s));
    let in_report: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "redundant-state")
        .collect();
    assert_eq!(in_report.len(), 3);
    assert_eq!(in_report[2]["evidence"], found[2]["evidence"]);
    // Text: one line for the rule over the three frames, with its cost.
    let out = run_gpuheat(&["checklist", s, "--rule", "redundant-state"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(and 2 more frames)"), "{text}");
    assert!(text.contains("cost: "), "{text}");
    // Info findings do not fail --fail-on warning.
    let out = run_gpuheat(&[
        "checklist",
        s,
        "--rule",
        "redundant-state",
        "--fail-on",
        "warning",
    ]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn fail_on_is_the_exit_status() {
    let f = fixture();
    let f = f.to_str().unwrap();
    for (args, code) in [
        (&["--fail-on", "error"][..], 1),
        (&["--fail-on", "warning"], 1),
        (&["--fail-on", "error", "--rule", "expensive-fragments"], 0),
        (
            &["--fail-on", "warning", "--rule", "expensive-fragments"],
            1,
        ),
        (&["--fail-on", "warning", "--rule", "pipeline-stall"], 0),
        (&[], 0),
    ] {
        let mut a = vec!["checklist", f];
        a.extend_from_slice(args);
        let out = run_gpuheat(&a);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
    }
    let r = json(&["checklist", f, "--json", "--fail-on", "error"]);
    assert_eq!(r["failed"], true);
    assert_eq!(r["counts"]["error"], 1);
    // The dominant draw and its expensive fragments once, judged over the four frames; the
    // overdraw of each frame; from the second frame on, the frame repeating the one before
    // (hot_spot draws the same frames).
    assert_eq!(r["findings"].as_array().unwrap().len(), 2 + 4 + 3);
}

#[test]
fn unknown_rules_and_bad_sessions_are_one_line_errors() {
    let f = fixture();
    let out = run_gpuheat(&["checklist", f.to_str().unwrap(), "--rule", "no-such-rule"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no-such-rule") && err.contains("redundant-state, eclipsed-state"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let dir = scratch("checklist-bad");
    let bytes = std::fs::read(&f).unwrap();
    let truncated = dir.join("truncated.gpuheat");
    std::fs::write(&truncated, &bytes[..bytes.len() - 7]).unwrap();
    let garbage = dir.join("garbage.gpuheat");
    std::fs::write(&garbage, b"not a session at all").unwrap();
    for bad in [&truncated, &garbage, &dir.join("missing.gpuheat")] {
        let out = run_gpuheat(&["checklist", bad.to_str().unwrap()]);
        assert!(!out.status.success(), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err}");
        assert!(err.starts_with("gpuheat: error: "), "{err}");
    }
    // --partial reads what the truncated one holds.
    let out = run_gpuheat(&["checklist", "--partial", truncated.to_str().unwrap()]);
    assert!(out.status.success());
}

/// The eight rules that read the state a draw runs in, which `--rule` and `--json` once
/// lacked although the checklist reported them.
const STATE_RULES: [&str; 8] = [
    "depth-not-cleared",
    "client-arrays",
    "mipmaps-unused",
    "texture-modified",
    "colormask-heavy",
    "discard-heavy",
    "blend-opaque",
    "no-multisampling",
];

#[test]
fn every_rule_of_the_catalogue_filters_alone() {
    let f = fixture();
    let f = f.to_str().unwrap();
    let all = json(&["checklist", f, "--json"]);
    let ids: Vec<String> = all["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    for id in STATE_RULES {
        assert!(ids.iter().any(|i| i == id), "{id} missing from {ids:?}");
    }
    let mut kept = 0;
    for id in &ids {
        let r = json(&["checklist", f, "--json", "--rule", id]);
        assert_eq!(r["rules"], serde_json::json!([id]), "--rule {id}");
        let found = r["findings"].as_array().unwrap();
        assert!(
            found.iter().all(|x| x["rule"] == id.as_str()),
            "--rule {id}"
        );
        kept += found.len();
        let out = run_gpuheat(&["checklist", f, "--rule", id]);
        assert!(out.status.success(), "--rule {id}");
    }
    // Filtering rule by rule loses nothing, and every finding's rule is in the catalogue.
    let found = all["findings"].as_array().unwrap();
    assert_eq!(kept, found.len());
    assert!(found
        .iter()
        .all(|x| ids.iter().any(|i| x["rule"] == i.as_str())));
}
