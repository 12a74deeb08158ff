//! Ids rho makes up for its own frames (UI requests, host tool calls and cancels): 16 lowercase
//! hex digits, as xcsh writes them.

/// A fresh id.
pub fn new_id() -> String {
    let mut id = uuid::Uuid::new_v4().simple().to_string();
    id.truncate(16);
    id
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_sixteen_hex_digits_and_differ() {
        let a = super::new_id();
        assert_eq!(a.len(), 16);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, super::new_id());
    }
}
