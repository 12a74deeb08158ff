//! URLs as rho shows them (errors, notices, logs): a password or token in the user-info or the
//! query string (`https://user:key@host/…`, `…?key=…`, a `${TOKEN}` expanded into an MCP URL)
//! is replaced by `***`, so a shown URL never carries a secret.

/// `raw` with its user-info and query replaced by `***` (unchanged when it is not a URL).
pub fn url(raw: &str) -> String {
    let Ok(mut shown) = reqwest::Url::parse(raw) else {
        // Not a URL a parser takes: everything from a query or fragment on is left out.
        return match raw.find(['?', '#']) {
            Some(at) => format!("{}?***", &raw[..at]),
            None => raw.to_owned(),
        };
    };
    if !shown.username().is_empty() || shown.password().is_some() {
        let _ = shown.set_password(None);
        let _ = shown.set_username("***");
    }
    if shown.query().is_some() {
        shown.set_query(Some("***"));
    }
    shown.to_string()
}

/// `text` with `raw_url` in it (as written, or as a URL library prints it) redacted.
pub fn url_in(text: &str, raw_url: &str) -> String {
    let shown = url(raw_url);
    let mut out = text.replace(raw_url, &shown);
    if let Ok(parsed) = reqwest::Url::parse(raw_url) {
        out = out.replace(parsed.as_str(), &shown);
    }
    out
}

/// A request error and its causes, one after the other, with the URL in it redacted.
pub fn reqwest_error(e: &reqwest::Error) -> String {
    let mut chain = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        chain.push(s.to_string());
        source = s.source();
    }
    // reqwest and hyper wrap the cause in generic layers ("error sending request for url (…)",
    // "client error (Connect)"): the cause is what a person needs, with the address once.
    let cause: Vec<&str> = chain
        .iter()
        .map(String::as_str)
        .filter(|part| !part.starts_with("error sending request for url") && !part.starts_with("client error ("))
        .collect();
    let cause = if cause.is_empty() { chain.join(": ") } else { cause.join(": ") };
    match e.url() {
        Some(address) => {
            let shown = url(address.as_str());
            let cause = cause.replace(address.as_str(), &shown);
            if e.is_connect() {
                // The innermost cause says it ("Connection refused"), without the OS's number.
                let last = chain.last().map_or(cause.as_str(), String::as_str);
                let last = last.split(" (os error").next().unwrap_or(last);
                format!("cannot connect to {shown}: {last}")
            } else if e.is_timeout() {
                format!("no answer from {shown}: {cause}")
            } else if e.is_request() {
                format!("request to {shown} failed: {cause}")
            } else {
                cause
            }
        }
        None => cause,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refused_connection_names_the_address_once_and_the_cause() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let address = format!("http://127.0.0.1:{port}/v1/chat?key=secret");
        let e = crate::http::client(|builder| builder).unwrap().get(&address).send().await.unwrap_err();
        let text = reqwest_error(&e);
        assert_eq!(text.matches("127.0.0.1").count(), 1, "{text}");
        assert!(text.starts_with(&format!("cannot connect to http://127.0.0.1:{port}/v1/chat?***: ")), "{text}");
        assert!(text.ends_with(": Connection refused"), "{text}");
        assert!(!text.contains("client error") && !text.contains("secret"), "{text}");
    }

    #[test]
    fn credentials_in_a_url_are_hidden() {
        assert_eq!(
            url("https://user:sk-secret@example.com/v1/x?key=AIza123&alt=sse"),
            "https://***@example.com/v1/x?***"
        );
        assert_eq!(url("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
        assert_eq!(url("not a url"), "not a url");
        assert_eq!(url("ftp://host/mcp?token=SECRET"), "ftp://host/mcp?***", "any scheme");
        assert_eq!(url("host:port/mcp?token=SECRET"), "host:port/mcp?***", "not parsed: cut at the query");
        assert_eq!(
            url_in("error sending request for url (https://h/mcp?token=t1)", "https://h/mcp?token=t1"),
            "error sending request for url (https://h/mcp?***)"
        );
    }

    #[tokio::test]
    async fn a_request_error_shows_the_url_without_its_key() {
        let client = crate::http::client(|builder| builder).unwrap();
        // Port 9 (discard) on the loopback: refused at once.
        let error = client.get("http://u:pw@127.0.0.1:9/v1?key=AIza-secret").send().await.unwrap_err();
        let text = reqwest_error(&error);
        assert!(!text.contains("AIza-secret") && !text.contains("pw"), "{text}");
        // reqwest moves the user-info into a header; the query stays in the URL it reports.
        assert!(text.contains("http://127.0.0.1:9/v1?***"), "{text}");
    }
}
