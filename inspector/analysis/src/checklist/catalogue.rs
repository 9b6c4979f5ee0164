//! The catalogue: every rule of the checklist, assembled from the families' declarations, in
//! the order `gpuheat checklist` lists and runs them (measured frame rules, state, calls,
//! VG, Vulkan). `--rule` and `--json` take every rule here, and nothing else can be reported: the
//! checklist stamps each finding with the rule that ran.

use super::rule::Rule;
use super::{calls, frame, state, vg, vulkan};

/// The families' rules, in catalogue order.
const FAMILIES: [&[&Rule]; 5] = [
    frame::RULES,
    state::RULES,
    calls::RULES,
    vg::RULES,
    vulkan::RULES,
];

/// Every rule of the checklist, GL, VG and Vulkan, in the order `gpuheat checklist` lists them.
pub fn rules() -> impl Iterator<Item = &'static Rule> {
    FAMILIES.iter().flat_map(|f| f.iter().copied())
}

/// The rule with id `id`.
pub fn rule(id: &str) -> Option<&'static Rule> {
    rules().find(|r| r.id == id)
}

/// Rules whose findings name a cause more precisely than a more general rule's: where every
/// call a general finding lists is one a specific finding of the same frame lists, only the
/// specific one is kept (a read-back that feeds a texture is render-to-texture, not also a
/// stall and an upload).
pub(super) const SUBSUMES: [(&Rule, &[&Rule]); 3] = [
    (
        &calls::READBACK_RTT,
        &[&calls::PIPELINE_STALL, &calls::TEXTURE_UPLOAD_IN_FRAME],
    ),
    (&calls::SAME_UPLOAD, &[&calls::TEXTURE_UPLOAD_IN_FRAME]),
    (&state::TEXTURE_MODIFIED, &[&calls::TEXTURE_UPLOAD_IN_FRAME]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checklist::rule::Family;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_kebab_case() {
        let mut seen = HashSet::new();
        for r in rules() {
            assert!(seen.insert(r.id), "{} twice", r.id);
            assert!(
                !r.id.is_empty()
                    && r.id
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                r.id
            );
            assert!(!r.summary.is_empty(), "{}", r.id);
            assert_eq!(rule(r.id).map(|x| x.id), Some(r.id));
        }
        assert_eq!(seen.len(), 39);
    }

    #[test]
    fn each_family_lists_only_its_own_rules() {
        let families = [
            Family::Frame,
            Family::State,
            Family::Calls,
            Family::Vg,
            Family::Vulkan,
        ];
        for (list, family) in FAMILIES.iter().zip(families) {
            assert!(!list.is_empty());
            for r in list.iter() {
                assert_eq!(r.family, family, "{}", r.id);
            }
        }
        // VG rules are named for it, and only they.
        for r in rules() {
            assert_eq!(r.id.starts_with("vg-"), r.family == Family::Vg, "{}", r.id);
            assert_eq!(
                r.id.starts_with("vk-"),
                r.family == Family::Vulkan,
                "{}",
                r.id
            );
        }
    }

    #[test]
    fn subsumed_rules_are_in_the_catalogue() {
        for (specific, general) in SUBSUMES {
            assert!(rule(specific.id).is_some());
            for g in general {
                assert!(rule(g.id).is_some(), "{}", g.id);
                assert_ne!(g.id, specific.id);
            }
        }
    }
}
