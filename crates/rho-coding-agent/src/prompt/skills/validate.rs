//! The Agent Skills naming rules. Breaking them is a warning, not a reason to drop the skill;
//! only a missing description drops it.

/// The longest name the rules allow.
pub const MAX_NAME_LEN: usize = 64;
/// The longest description the rules allow.
pub const MAX_DESCRIPTION_LEN: usize = 1024;

/// Warnings for `name`; `expected` is the directory name (for `SKILL.md`) or the file stem.
pub(crate) fn name_warnings(name: &str, expected: &str, is_skill_md: bool) -> Vec<String> {
    let mut warnings = Vec::new();
    if name != expected {
        let what = if is_skill_md { "its directory" } else { "its file" };
        warnings.push(format!("name \"{name}\" does not match {what} \"{expected}\""));
    }
    let len = name.chars().count();
    if len > MAX_NAME_LEN {
        warnings.push(format!("name is {len} characters long, more than {MAX_NAME_LEN}"));
    }
    if !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') || name.is_empty() {
        warnings.push("name may only contain lowercase letters a-z, digits 0-9 and hyphens".to_owned());
    }
    if name.starts_with('-') || name.ends_with('-') {
        warnings.push("name must not start or end with a hyphen".to_owned());
    }
    if name.contains("--") {
        warnings.push("name must not contain two hyphens in a row".to_owned());
    }
    warnings
}

/// Warnings for a present description.
pub(crate) fn description_warnings(description: &str) -> Vec<String> {
    let len = description.chars().count();
    if len > MAX_DESCRIPTION_LEN {
        vec![format!("description is {len} characters long, more than {MAX_DESCRIPTION_LEN}")]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_name_has_no_warnings() {
        assert!(name_warnings("pdf-tools2", "pdf-tools2", true).is_empty());
    }

    #[test]
    fn each_rule() {
        assert_eq!(name_warnings("other", "dir", true), ["name \"other\" does not match its directory \"dir\""]);
        assert_eq!(name_warnings("other", "file", false), ["name \"other\" does not match its file \"file\""]);
        let long = "a".repeat(65);
        assert_eq!(name_warnings(&long, &long, true), ["name is 65 characters long, more than 64"]);
        assert_eq!(
            name_warnings("My_Skill", "My_Skill", true),
            ["name may only contain lowercase letters a-z, digits 0-9 and hyphens"]
        );
        assert_eq!(name_warnings("-a-", "-a-", true), ["name must not start or end with a hyphen"]);
        assert_eq!(name_warnings("a--b", "a--b", true), ["name must not contain two hyphens in a row"]);
        assert!(description_warnings(&"d".repeat(1024)).is_empty());
        assert_eq!(description_warnings(&"d".repeat(1025)), ["description is 1025 characters long, more than 1024"]);
    }
}
