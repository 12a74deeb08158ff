//! Virtual models (pi 1.6's `registerVirtualModel`, docs/virtual-models.md): the catalogue entry
//! a definition stands for, and the host's `route` asked where one request goes. What rho does
//! with the answer (checking the target, storing the router's state) is the session's
//! (`agent_session/virtual_models.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use rho_extensions::{HostError, RouteRequest, ToHost, VirtualModelDefinition};
use rho_types::model::ModelCost;
use rho_types::model::api;
use rho_types::{InputKind, Model, ThinkingLevel};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Extensions;

/// The model a definition lists: `thinkingLevels` (`off` when not given) become its thinking
/// map, no price, and limits left at 0 (unknown) when not given.
pub(crate) fn virtual_model(definition: &VirtualModelDefinition) -> Result<Model, String> {
    if definition.provider.trim().is_empty() || definition.id.trim().is_empty() {
        return Err("Virtual model provider and id must not be empty.".into());
    }
    let levels: Vec<ThinkingLevel> = match &definition.thinking_levels {
        None => vec![ThinkingLevel::Off],
        Some(names) => names
            .iter()
            .map(|name| ThinkingLevel::parse(name).ok_or_else(|| format!("unknown thinking level \"{name}\"")))
            .collect::<Result<_, _>>()?,
    };
    let input = match &definition.input {
        None => vec![InputKind::Text, InputKind::Image],
        Some(kinds) => kinds
            .iter()
            .map(|kind| match kind.as_str() {
                "text" => Ok(InputKind::Text),
                "image" => Ok(InputKind::Image),
                other => Err(format!("unknown input type \"{other}\"")),
            })
            .collect::<Result<_, _>>()?,
    };
    let thinking_level_map: BTreeMap<ThinkingLevel, Option<String>> = ThinkingLevel::ALL
        .into_iter()
        .map(|level| (level, levels.contains(&level).then(|| level.as_str().to_owned())))
        .collect();
    Ok(Model {
        id: definition.id.clone(),
        name: definition.name.clone().unwrap_or_else(|| definition.id.clone()),
        api: api::VIRTUAL.to_owned(),
        provider: definition.provider.clone(),
        base_url: String::new(),
        reasoning: levels.iter().any(|level| *level != ThinkingLevel::Off),
        input,
        cost: ModelCost::default(),
        context_window: definition.context_window.unwrap_or(0),
        max_tokens: definition.max_tokens.unwrap_or(0),
        headers: BTreeMap::new(),
        compat: None,
        thinking_level_map: Some(thinking_level_map),
        prompt_cache: None,
        input_limits: None,
        sampling: None,
    })
}

impl Extensions {
    /// Asks the virtual model's router where `request` goes: `{provider, id, thinkingLevel}`,
    /// and `state` when it returned new state. Not bounded by the hook timeout (a router may ask
    /// a classifier model first); `cancel` withdraws the question.
    pub(crate) async fn route(
        self: &Arc<Self>,
        request: RouteRequest,
        cancel: &CancellationToken,
    ) -> Result<Value, HostError> {
        let host = self.host().await?;
        if let Some(session) = self.session() {
            self.sync_to(&host, &session, true);
        }
        let (id, answer) = host.request(&ToHost::Route(Box::new(request)));
        tokio::select! {
            answer = answer => answer.map_err(|_| HostError::Exited("it closed the channel".into()))?,
            () = cancel.cancelled() => {
                host.send(&ToHost::Cancel { target: id });
                Err(HostError::Failed("the request was aborted".into()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition(levels: Option<Vec<&str>>) -> VirtualModelDefinition {
        VirtualModelDefinition {
            provider: "router".into(),
            id: "auto".into(),
            name: None,
            thinking_levels: levels.map(|l| l.into_iter().map(str::to_owned).collect()),
            context_window: Some(50_000),
            max_tokens: None,
            input: None,
        }
    }

    #[test]
    fn a_definition_lists_its_levels_and_leaves_the_rest_unknown() {
        let model = virtual_model(&definition(Some(vec!["low", "high"]))).unwrap();
        assert!(model.is_virtual() && model.reasoning);
        assert_eq!(model.thinking_levels(), [ThinkingLevel::Low, ThinkingLevel::High]);
        assert_eq!((model.name.as_str(), model.context_window, model.max_tokens), ("auto", 50_000, 0));
        assert_eq!(model.input, [InputKind::Text, InputKind::Image]);
        // Without levels: off only, no reasoning.
        let plain = virtual_model(&definition(None)).unwrap();
        assert!(!plain.reasoning);
        assert_eq!(plain.thinking_levels(), [ThinkingLevel::Off]);
        assert_eq!(virtual_model(&definition(Some(vec!["loud"]))).unwrap_err(), "unknown thinking level \"loud\"");
        let unnamed = VirtualModelDefinition { id: " ".into(), ..definition(None) };
        assert!(virtual_model(&unnamed).is_err());
    }
}
