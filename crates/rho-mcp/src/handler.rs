//! rho's side of a connection: what it tells the server about itself, and what it does with the
//! server's notifications. `tools/list_changed` and `prompts/list_changed` re-list that server
//! (on a task of their own: the handler runs on the connection's task, which must stay free to
//! carry the answer).

use std::future::Future;
use std::sync::Weak;

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{MaybeSendFuture, NotificationContext, RoleClient};

use crate::server::Server;

pub(crate) struct ClientEvents {
    server: Weak<Server>,
    /// The connection this handler belongs to: a notification from a replaced one is ignored.
    generation: u64,
    info: ClientConfig,
}

impl ClientEvents {
    pub(crate) fn new(server: Weak<Server>, generation: u64, client_version: &str) -> Self {
        let info = ClientConfig::new(ClientCapabilities::default(), Implementation::new("rho", client_version));
        Self { server, generation, info }
    }

    fn refresh(&self, what: Refresh) {
        let Some(server) = self.server.upgrade() else { return };
        let generation = self.generation;
        tokio::spawn(async move {
            match what {
                Refresh::Tools => server.refresh_tools(generation).await,
                Refresh::Prompts => server.refresh_prompts(generation).await,
            }
        });
    }
}

enum Refresh {
    Tools,
    Prompts,
}

impl ClientHandler for ClientEvents {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.refresh(Refresh::Tools);
        std::future::ready(())
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.refresh(Refresh::Prompts);
        std::future::ready(())
    }
}
