//! What comes back from a login's browser page, whichever provider's: the `code` and `state` a
//! loopback callback receives, or what the person pastes instead (the address the browser ended
//! on, `code#state`, a `code=…&state=…` query, or the bare code).

/// What the user pasted, or the callback received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeAndState {
    pub code: Option<String>,
    pub state: Option<String>,
    /// The client id the server issued (Sign in with ChatGPT names it in the callback).
    pub client_id: Option<String>,
}

/// Reads a pasted answer: a URL with `code` and `state`, `code#state`, a `code=…&state=…`
/// query, or the bare code.
pub fn parse_answer(input: &str) -> CodeAndState {
    let value = input.trim();
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    if value.is_empty() {
        return CodeAndState::default();
    }
    if let Ok(url) = reqwest::Url::parse(value)
        && url.has_host()
    {
        return from_query(url.query_pairs());
    }
    if let Some((code, state)) = value.split_once('#') {
        return CodeAndState { code: non_empty(code), state: non_empty(state), client_id: None };
    }
    if value.contains("code=")
        && let Ok(url) = reqwest::Url::parse(&format!("http://localhost/?{value}"))
    {
        return from_query(url.query_pairs());
    }
    CodeAndState { code: Some(value.to_owned()), state: None, client_id: None }
}

/// The `code` and `state` of a request's target when it is the callback at `path` (any login's).
pub fn parse_callback_at(target: &str, path: &str) -> Option<CodeAndState> {
    let url = reqwest::Url::parse(&format!("http://localhost{target}")).ok()?;
    (url.path() == path).then(|| from_query(url.query_pairs()))
}

fn from_query<'a>(pairs: impl Iterator<Item = (std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>) -> CodeAndState {
    let mut answer = CodeAndState::default();
    for (key, value) in pairs {
        match key.as_ref() {
            "code" if !value.is_empty() => answer.code = Some(value.into_owned()),
            "state" if !value.is_empty() => answer.state = Some(value.into_owned()),
            "client_id" if !value.trim().is_empty() => answer.client_id = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_answers_in_every_form() {
        let both = CodeAndState { code: Some("c".into()), state: Some("s".into()), client_id: None };
        assert_eq!(parse_answer(" c#s \n"), both);
        assert_eq!(parse_answer("http://localhost:53692/callback?code=c&state=s"), both);
        assert_eq!(parse_answer("code=c&state=s"), both);
        assert_eq!(parse_answer("c"), CodeAndState { code: Some("c".into()), state: None, client_id: None });
        assert_eq!(parse_answer(""), CodeAndState::default());
        assert_eq!(parse_callback_at("/callback?code=c&state=s", "/callback"), Some(both));
        assert_eq!(parse_callback_at("/favicon.ico", "/callback"), None);
    }
}
