//! `gpuheat checklist SESSION`: the performance checklist's findings alone, filtered by rule,
//! as text or JSON, with an exit status for CI (`--fail-on`).

use crate::open::open;
use crate::report::findings_text;
use anyhow::Result;
use clap::{Args, ValueEnum};
use gpuheat_analysis::analyse;
use gpuheat_analysis::checklist::{self, rules, Finding, Severity};
use serde::Serialize;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ChecklistArgs {
    /// The session file.
    session: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Only the findings of this rule (repeat for several); an unknown id lists the valid ones.
    #[arg(long = "rule", value_name = "ID")]
    rules: Vec<String>,
    /// Exit with status 1 when a finding (of the rules kept) is at least this severe.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    fail_on: Option<FailOn>,
    /// Check what a damaged (truncated or corrupted) session still holds instead of failing.
    #[arg(long)]
    partial: bool,
}

/// The severities `--fail-on` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FailOn {
    /// Warnings and errors fail.
    Warning,
    /// Errors fail.
    Error,
}

impl FailOn {
    fn severity(self) -> Severity {
        match self {
            FailOn::Warning => Severity::Warning,
            FailOn::Error => Severity::Error,
        }
    }
}

#[derive(Serialize)]
struct JsonChecklist<'a> {
    /// The rules kept (all when `--rule` was not given).
    rules: Vec<&'a str>,
    /// Findings per severity.
    counts: Counts,
    /// Whether `--fail-on` failed the check.
    failed: bool,
    findings: &'a [Finding],
}

#[derive(Serialize, Default)]
struct Counts {
    error: usize,
    warning: usize,
    info: usize,
}

/// Exit status for an unknown `--rule` (usage error), as clap's own usage errors.
const USAGE: u8 = 2;

pub fn checklist(args: ChecklistArgs) -> Result<ExitCode> {
    if let Some(bad) = args.rules.iter().find(|r| checklist::rule(r).is_none()) {
        let ids: Vec<&str> = rules().map(|r| r.id).collect();
        eprintln!(
            "gpuheat: error: unknown rule '{bad}'; the rules are: {}",
            ids.join(", ")
        );
        return Ok(ExitCode::from(USAGE));
    }
    let session = open(&args.session, args.partial)?.session;
    let analysis = analyse(&session);
    let mut found = checklist::check(&session, &analysis);
    if !args.rules.is_empty() {
        found.retain(|f| args.rules.iter().any(|r| r == f.rule));
    }
    let failed = args
        .fail_on
        .is_some_and(|s| found.iter().any(|f| f.severity >= s.severity()));
    let kept: Vec<&str> = rules()
        .map(|r| r.id)
        .filter(|id| args.rules.is_empty() || args.rules.iter().any(|r| r == id))
        .collect();
    let mut counts = Counts::default();
    for f in &found {
        match f.severity {
            Severity::Error => counts.error += 1,
            Severity::Warning => counts.warning += 1,
            Severity::Info => counts.info += 1,
        }
    }
    let out = if args.json {
        serde_json::to_string_pretty(&JsonChecklist {
            rules: kept,
            counts,
            failed,
            findings: &found,
        })? + "\n"
    } else {
        let mut o = format!(
            "checklist of {} ({} frames): {} errors, {} warnings, {} info{}\n",
            crate::shown(&args.session),
            session.frames.len(),
            counts.error,
            counts.warning,
            counts.info,
            if args.rules.is_empty() {
                String::new()
            } else {
                format!(" (rules: {})", kept.join(", "))
            }
        );
        findings_text(&found, &mut o);
        if let Some(f) = args.fail_on {
            let word = if failed { "FAILED" } else { "passed" };
            o.push_str(&format!(
                "\n{word}: --fail-on {}\n",
                f.to_possible_value().unwrap().get_name()
            ));
        }
        o
    };
    // A closed pipe (`| head`) is not an error worth a message.
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
