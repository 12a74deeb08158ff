//! `/reload`: what pi's reload reads again — the settings, the context files (AGENTS.md), the
//! skills and prompt templates (the session's [`reload`](rho_coding_agent::AgentSession::reload)), then
//! this screen's keybindings, themes and settings — reported in one line, with a warning line
//! per problem found; and the extensions, loaded again from their files.

use super::app::App;
use super::{blocks, keybindings, theme};

impl App {
    pub fn reload(&mut self) {
        let reloaded = match self.session.reload() {
            Ok(r) => r,
            Err(e) => {
                self.push([blocks::warning(&e.to_string())]);
                return;
            }
        };
        let mut problems = reloaded.problems;
        problems.extend(keybindings::load(&self.session.paths().agent_dir));
        let theme_problem = {
            let settings = self.session.settings();
            theme::init(self.session.paths(), &settings)
        };
        problems.extend(theme_problem);
        self.apply_screen_settings();
        let line = format!(
            "Reloaded settings, {}, {}, {}, keybindings and themes",
            count(reloaded.context_files, "context file"),
            count(reloaded.skills, "skill"),
            count(reloaded.templates, "prompt template"),
        );
        self.push([blocks::notice(&line)]);
        self.push(problems.iter().map(|p| blocks::warning(p)));
        if self.session.has_extensions() {
            // The extensions are loaded again from their files, as pi's /reload does.
            let session = self.session.clone();
            tokio::spawn(async move { session.reload_extensions().await });
        }
    }
}

fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}
