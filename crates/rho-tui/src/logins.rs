//! `/login` and `/logout`: the subscription logins `rho login` makes, from the editor. `/login`
//! lists the logins rho has a flow for (or takes one by name), shows the URL to open in the
//! history (and opens the desktop's browser), and asks in a dialog for the address the browser
//! ends on, for when the browser cannot come back to rho; the browser's callback closes the
//! dialog. The login is saved to `auth.json` as pi saves it, and used at once. As in pi 1.6, the
//! list also offers an API key for every provider that takes one: asked in a dialog, saved in
//! `auth.json`.

use ratatui::text::{Line, Span};
use rho_ai::oauth::{self, providers};
use rho_rpc::UiMethod;
use tokio::sync::oneshot;

use super::app::{App, AppEvent, Picking};
use super::select::{Select, SelectItem};
use super::{blocks, style};
use rho_coding_agent::login::flow::{self, Paste, Prompt};
use rho_coding_agent::ui::UiAnswer;

/// The value of a `/login` entry that asks for an API key, before the provider's id.
const API_KEY_PREFIX: &str = "api-key:";

impl App {
    /// `/login [provider]`.
    pub fn login_command(&mut self, args: &str) {
        if !args.is_empty() {
            self.login(args);
            return;
        }
        let stored = oauth::store::read(&self.session.paths().auth_file()).unwrap_or_default();
        let is_key = |id: &str| stored.get(id).and_then(|e| e.get("type")).and_then(|t| t.as_str()) == Some("api_key");
        let mut items: Vec<SelectItem> = providers::PROVIDERS
            .iter()
            .filter(|p| flow::has_flow(p))
            .map(|p| SelectItem {
                label: p.name.to_owned(),
                detail: if stored.contains_key(p.id) && !is_key(p.id) {
                    "subscription · logged in".to_owned()
                } else {
                    "subscription".to_owned()
                },
                value: p.id.to_owned(),
            })
            .collect();
        items.extend(rho_ai::auth::key_providers().map(|id| SelectItem {
            label: id.to_owned(),
            detail: if is_key(id) { "API key · stored".to_owned() } else { "API key".to_owned() },
            value: format!("{API_KEY_PREFIX}{id}"),
        }));
        self.select = Some((Picking::Login, Select::new("Log in to", items, 0)));
    }

    /// A `/login` entry picked: a subscription's login, or an API key to ask for.
    pub fn login_picked(&mut self, value: &str) {
        match value.strip_prefix(API_KEY_PREFIX) {
            Some(provider) => self.ask_api_key(provider),
            None => self.login(value),
        }
    }

    /// Asks for `provider`'s API key in a dialog and saves it in `auth.json`, where it is used
    /// from the next request on.
    fn ask_api_key(&mut self, provider: &str) {
        let (tx, session, provider) = (self.tx.clone(), self.session.clone(), provider.to_owned());
        let (answer_tx, answer_rx) = oneshot::channel::<UiAnswer>();
        let title = format!("API key for {provider}");
        let _ = tx.send(AppEvent::Dialog(UiMethod::Input { title, placeholder: None, timeout: None }, answer_tx));
        tokio::spawn(async move {
            let key = match answer_rx.await {
                Ok(UiAnswer::Value(text)) if !text.trim().is_empty() => text.trim().to_owned(),
                _ => return,
            };
            let auth_file = session.paths().auth_file();
            let line = match oauth::save_api_key(&auth_file, &provider, &key).map_err(|e| e.to_string()) {
                Ok(()) => match session.reload_logins() {
                    Ok(()) => blocks::notice(&format!("Saved an API key for {provider} in {}", auth_file.display())),
                    Err(e) => blocks::error(&format!("Saved, but reading auth.json again failed: {e}")),
                },
                Err(e) => blocks::error(&format!("The API key was not saved: {e}")),
            };
            let _ = tx.send(AppEvent::Lines(vec![line]));
        });
    }

    /// Runs `id`'s login beside the editor.
    pub fn login(&mut self, id: &str) {
        let Some(provider) = providers::find(id).filter(|p| flow::has_flow(p)) else {
            let line = match providers::find(id).and_then(|p| p.unusable) {
                Some(why) => format!("rho cannot use the {id} login yet: {why}"),
                None => format!("rho has no login for {id} (/login lists the ones it has)"),
            };
            self.push([blocks::error(&line)]);
            return;
        };
        let (tx, session) = (self.tx.clone(), self.session.clone());
        tokio::spawn(async move {
            let (answer_tx, answer_rx) = oneshot::channel::<UiAnswer>();
            let shown = tx.clone();
            let show = move |prompt: Prompt| {
                flow::open_browser(&prompt.url);
                let _ = shown.send(AppEvent::Lines(prompt_lines(&prompt)));
                if prompt.user_code.is_some() {
                    // A device login takes no paste: GitHub is polled until the code is entered.
                    return;
                }
                let title = match prompt.callback {
                    Some(_) => "Or paste the address the browser ends on",
                    None => "Paste the address the browser ends on",
                };
                let method = UiMethod::Input { title: title.to_owned(), placeholder: None, timeout: None };
                let _ = shown.send(AppEvent::Dialog(method, answer_tx));
            };
            let paste: Paste = Box::pin(async move {
                match answer_rx.await {
                    Ok(UiAnswer::Value(text)) if !text.trim().is_empty() => Some(text),
                    _ => None,
                }
            });
            let line = match flow::run(provider, show, paste).await {
                Ok(creds) => {
                    let auth_file = session.paths().auth_file();
                    match oauth::save_login(&auth_file, provider.id, &creds).map_err(|e| e.to_string()) {
                        Ok(()) => {
                            let reloaded = session.reload_logins();
                            match reloaded {
                                Ok(()) => blocks::notice(&format!(
                                    "Logged in to {}. Credentials saved in {}",
                                    provider.name,
                                    auth_file.display()
                                )),
                                Err(e) => blocks::error(&format!("Logged in, but reading auth.json again failed: {e}")),
                            }
                        }
                        Err(e) => blocks::error(&format!("Login failed: {e}")),
                    }
                }
                Err(e) => blocks::error(&format!("Login failed: {e}")),
            };
            let _ = tx.send(AppEvent::Lines(vec![line]));
        });
    }

    /// `/logout [provider]`: the login removed from `auth.json`.
    pub fn logout_command(&mut self, args: &str) {
        let auth_file = self.session.paths().auth_file();
        if args.is_empty() {
            let stored = oauth::store::read(&auth_file).unwrap_or_default();
            let items: Vec<SelectItem> = providers::PROVIDERS
                .iter()
                .filter(|p| stored.get(p.id).and_then(oauth::OAuthCredentials::from_entry).is_some())
                .map(|p| SelectItem { label: p.name.to_owned(), detail: String::new(), value: p.id.to_owned() })
                .collect();
            if items.is_empty() {
                self.push([blocks::notice("No logins to log out of")]);
            } else {
                self.select = Some((Picking::Logout, Select::new("Log out of", items, 0)));
            }
            return;
        }
        let line = match oauth::remove_login(&auth_file, args) {
            Ok(oauth::Removed::Login) => {
                let _ = self.session.reload_logins();
                blocks::notice(&format!("Logged out of {args}"))
            }
            Ok(oauth::Removed::Nothing) => blocks::error(&format!("There is no login for {args}")),
            Ok(oauth::Removed::ApiKey) => {
                blocks::error(&format!("auth.json holds an API key for {args}, not a login: nothing was removed"))
            }
            Err(e) => blocks::error(&format!("Error: {e}")),
        };
        self.push([line]);
    }
}

/// The history's lines for a login under way: what to open, and where the browser comes back.
fn prompt_lines(prompt: &Prompt) -> Vec<Line<'static>> {
    if let Some(code) = &prompt.user_code {
        return vec![
            Line::default(),
            blocks::notice(&format!("Log in to {}: open {} and enter the code", prompt.provider, prompt.url)),
            Line::from(Span::styled(code.clone(), style::accent())),
            blocks::notice(&format!("Waiting for {} to confirm the code…", prompt.provider)),
        ];
    }
    let waiting = match (&prompt.callback, &prompt.problem) {
        (Some(callback), _) => format!("Waiting for the browser to come back to {callback}"),
        (None, problem) => format!("{}: paste the address the browser ends on", problem.as_deref().unwrap_or("")),
    };
    vec![
        Line::default(),
        blocks::notice(&format!("Log in to {}: open this URL in a browser", prompt.provider)),
        Line::from(Span::styled(prompt.url.clone(), style::accent())),
        blocks::notice(&waiting),
    ]
}
