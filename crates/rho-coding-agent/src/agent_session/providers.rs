//! The session's model registry, which extensions change (pi's `registerProvider`,
//! `unregisterProvider` and `registerVirtualModel`): the registry the session started with, plus
//! the providers registered since, in order, plus the virtual models. Every change rebuilds it from the start, so unregistering a provider brings
//! back the built-in models it had replaced. Readers take the registry as it is now (an `Arc`),
//! so a request already on its way keeps the one it started with.

use parking_lot::{Mutex, RwLock};
use std::sync::Arc;

use rho_ai::ModelRegistry;
use rho_types::Model;
use serde_json::Value;

use super::{AgentSession, SessionCommandError};

/// The registry as it is now, and how it came to be.
pub(crate) struct Registries {
    /// The registry the session started with (its keys and logins read again after a login).
    base: RwLock<Arc<ModelRegistry>>,
    current: RwLock<Arc<ModelRegistry>>,
    registered: Mutex<Vec<Registered>>,
    /// Virtual models, listed after every provider's registration.
    virtual_models: Mutex<Vec<Model>>,
}

struct Registered {
    name: String,
    config: Value,
    /// The API this provider streams itself (`streamSimple`), as pi keys it.
    stream_api: Option<String>,
}

impl Registries {
    pub(crate) fn new(base: ModelRegistry) -> Self {
        let base = Arc::new(base);
        Self {
            current: RwLock::new(base.clone()),
            base: RwLock::new(base),
            registered: Mutex::default(),
            virtual_models: Mutex::default(),
        }
    }

    pub(crate) fn base(&self) -> Arc<ModelRegistry> {
        self.base.read().clone()
    }

    /// Reads the keys and logins of `auth.json` again, into the base and what is built on it.
    fn reload_auth(&self, agent_dir: &std::path::Path) -> Result<(), String> {
        let mut base = (*self.base()).clone();
        base.reload_auth(agent_dir).map_err(|e| e.to_string())?;
        *self.base.write() = Arc::new(base);
        let registered = self.registered.lock();
        let rebuilt = self.rebuild(&registered).unwrap_or_else(|_| (*self.base()).clone());
        *self.current.write() = Arc::new(rebuilt);
        Ok(())
    }

    pub(crate) fn current(&self) -> Arc<ModelRegistry> {
        self.current.read().clone()
    }

    /// Whether an extension streams `api` itself.
    pub(crate) fn streams_itself(&self, api: &str) -> bool {
        self.registered.lock().iter().any(|r| r.stream_api.as_deref() == Some(api))
    }

    /// Registers `name`. Registered again, the new config merges over the earlier one, as pi's
    /// registry merges it (the keys it gives replace theirs, the others stay: `{baseUrl}` alone
    /// moves the provider and keeps its models). The registry is unchanged when the config is
    /// refused.
    fn register(&self, name: &str, config: Value, streams: bool) -> Result<(), String> {
        let mut registered = self.registered.lock();
        let previous = registered.iter().find(|r| r.name == name);
        let config = match (previous.map(|r| &r.config), config) {
            (Some(Value::Object(earlier)), Value::Object(given)) => {
                let mut merged = earlier.clone();
                merged.extend(given.into_iter().filter(|(_, v)| !v.is_null()));
                Value::Object(merged)
            }
            (_, config) => config,
        };
        let stream_api = if streams || previous.is_some_and(|r| r.stream_api.is_some()) {
            let api = config.get("api").and_then(Value::as_str).filter(|api| !api.trim().is_empty());
            Some(api.ok_or("\"api\" is required with \"streamSimple\"")?.to_owned())
        } else {
            None
        };
        let mut next: Vec<Registered> = registered
            .iter()
            .filter(|r| r.name != name)
            .map(|r| Registered { name: r.name.clone(), config: r.config.clone(), stream_api: r.stream_api.clone() })
            .collect();
        next.push(Registered { name: name.to_owned(), config, stream_api });
        let rebuilt = self.rebuild(&next)?;
        *registered = next;
        *self.current.write() = Arc::new(rebuilt);
        Ok(())
    }

    /// Removes what registering `name` did; nothing when it was not registered.
    fn unregister(&self, name: &str) -> bool {
        let mut registered = self.registered.lock();
        let before = registered.len();
        registered.retain(|r| r.name != name);
        if registered.len() == before {
            return false;
        }
        // Every remaining registration was accepted on a registry with more in it.
        let rebuilt = self.rebuild(&registered).unwrap_or_else(|_| (*self.base()).clone());
        *self.current.write() = Arc::new(rebuilt);
        true
    }

    /// Lists `model` as a virtual model; registered again (same provider and id), it replaces
    /// the earlier one. Refused when a physical model has its provider and id.
    fn register_virtual(&self, model: Model) -> Result<(), String> {
        let registered = self.registered.lock();
        if self.current().find(&model.provider, &model.id).is_some_and(|m| !m.is_virtual()) {
            return Err(format!("Virtual model {} conflicts with a physical model.", model.selector()));
        }
        let mut virtual_models = self.virtual_models.lock();
        virtual_models.retain(|m| !(m.provider == model.provider && m.id == model.id));
        virtual_models.push(model);
        drop(virtual_models);
        let rebuilt = self.rebuild(&registered)?;
        *self.current.write() = Arc::new(rebuilt);
        Ok(())
    }

    fn unregister_virtual(&self, provider: &str, id: &str) -> bool {
        let registered = self.registered.lock();
        let mut virtual_models = self.virtual_models.lock();
        let before = virtual_models.len();
        virtual_models.retain(|m| !(m.provider == provider && m.id == id));
        if virtual_models.len() == before {
            return false;
        }
        drop(virtual_models);
        let rebuilt = self.rebuild(&registered).unwrap_or_else(|_| (*self.base()).clone());
        *self.current.write() = Arc::new(rebuilt);
        true
    }

    /// Drops every registration (the extensions are loaded again).
    fn clear(&self) {
        let mut registered = self.registered.lock();
        let mut virtual_models = self.virtual_models.lock();
        if registered.is_empty() && virtual_models.is_empty() {
            return;
        }
        registered.clear();
        virtual_models.clear();
        *self.current.write() = self.base();
    }

    fn rebuild(&self, registered: &[Registered]) -> Result<ModelRegistry, String> {
        let mut registry = (*self.base()).clone();
        for r in registered {
            registry
                .register_provider(&r.name, r.config.clone())
                .map_err(|e| format!("provider \"{}\": {e}", r.name))?;
        }
        for model in self.virtual_models.lock().iter() {
            registry.add_virtual_model(model.clone());
        }
        Ok(registry)
    }
}

impl AgentSession {
    /// The model registry as it is now.
    pub(crate) fn registry(&self) -> Arc<ModelRegistry> {
        self.inner.registry.current()
    }

    /// The registry the session started with, without what extensions registered.
    pub(crate) fn registry_at_start(&self) -> Arc<ModelRegistry> {
        self.inner.registry.base()
    }

    /// A login was made or removed (`/login`, `/logout`): the keys and logins of `auth.json` are
    /// read again.
    pub fn reload_logins(&self) -> Result<(), String> {
        self.inner.registry.reload_auth(&self.inner.paths.agent_dir)
    }

    /// `pi.registerProvider(name, config)`: its models can be listed and chosen from now on;
    /// with `streams`, requests to models of its `api` go to the extension's `streamSimple`.
    /// The current model, when it belongs to the provider, takes its new definition.
    pub(crate) fn register_extension_provider(
        &self,
        name: &str,
        config: Value,
        streams: bool,
    ) -> Result<(), SessionCommandError> {
        self.inner.registry.register(name, config, streams).map_err(SessionCommandError::Invalid)?;
        self.refresh_model(name);
        Ok(())
    }

    /// `pi.unregisterProvider(name)`.
    pub(crate) fn unregister_extension_provider(&self, name: &str) {
        if self.inner.registry.unregister(name) {
            self.refresh_model(name);
        }
    }

    /// `pi.registerVirtualModel(definition)`: the model is listed and can be chosen; each
    /// request made with it is routed to a physical model first.
    pub(crate) fn register_virtual_model(&self, model: Model) -> Result<(), SessionCommandError> {
        let provider = model.provider.clone();
        self.inner.registry.register_virtual(model).map_err(SessionCommandError::Invalid)?;
        self.refresh_model(&provider);
        Ok(())
    }

    /// `pi.unregisterVirtualModel(provider, id)`.
    pub(crate) fn unregister_virtual_model(&self, provider: &str, id: &str) {
        self.inner.registry.unregister_virtual(provider, id);
    }

    /// The extensions are loaded again: the providers they registered go (they register them
    /// again as they load).
    pub(crate) fn clear_extension_providers(&self) {
        self.inner.registry.clear();
    }

    /// The current model of `provider` as the registry now defines it (when it still does).
    fn refresh_model(&self, provider: &str) {
        let current: Model = self.inner.agent.model();
        if current.provider != provider {
            return;
        }
        if let Some(model) = self.registry().find(&current.provider, &current.id).filter(|m| **m != current) {
            let level = model.clamp_thinking(self.inner.agent.thinking_level());
            self.inner.agent.set_model(model.clone(), level);
        }
    }
}
