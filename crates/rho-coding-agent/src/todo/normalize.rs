//! `set_todos` input normalization (docs/decisions.md D8).
//!
//! Well-formed phases come out exactly as the reference stores them: per phase `id, name,
//! tasks`, per task only `id, content, status, notes` (`details` and unknown keys dropped).
//! Missing pieces are filled in the way xcsh's Python client fills them before sending: a
//! phase without an id gets `phase-<position>`, a task without one `task-<n>` with `n` counting
//! tasks across the whole call, a missing status is `pending`, and a flat list of items (or
//! plain strings) becomes one phase `{id: "phase-1", name: "Todos"}`. JSON `null` counts as
//! absent. Anything else malformed is refused with a message naming the offending field by its
//! path (`phases[0].tasks[2].status ...`); the caller turns it into the command's error and
//! leaves the list unchanged.

use rho_rpc::{TodoItem, TodoPhase, TodoStatus};
use serde_json::{Map, Value};

/// The phase a flat list of items becomes.
pub const FLAT_PHASE_NAME: &str = "Todos";

/// Normalizes the `phases` value of a `set_todos` command. `[]` clears the list.
pub fn normalize_set_todos(value: &Value) -> Result<Vec<TodoPhase>, String> {
    let Value::Array(items) = value else {
        return Err("phases must be an array".to_owned());
    };
    let mut kind = None;
    for (i, item) in items.iter().enumerate() {
        let this = classify(item, i)?;
        match kind {
            None => kind = Some(this),
            Some(k) if k != this => return Err(format!("phases[{i}]: cannot mix flat todo items and phases")),
            Some(_) => {}
        }
    }
    let mut counter = 0;
    match kind {
        None => Ok(Vec::new()),
        Some(Kind::Flat) => {
            let tasks = items
                .iter()
                .enumerate()
                .map(|(i, item)| task(item, &format!("phases[{i}]"), &mut counter))
                .collect::<Result<_, _>>()?;
            Ok(vec![TodoPhase { id: "phase-1".to_owned(), name: FLAT_PHASE_NAME.to_owned(), tasks }])
        }
        Some(Kind::Phase) => items.iter().enumerate().map(|(i, item)| phase(item, i, &mut counter)).collect(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Phase,
    Flat,
}

/// A phase has `tasks` or a `name` (and no `content`); an item is a string or has `content`.
fn classify(item: &Value, i: usize) -> Result<Kind, String> {
    match item {
        Value::String(_) => Ok(Kind::Flat),
        Value::Object(m) if m.contains_key("tasks") => Ok(Kind::Phase),
        Value::Object(m) if m.contains_key("content") => Ok(Kind::Flat),
        Value::Object(m) if m.contains_key("name") => Ok(Kind::Phase),
        Value::Object(_) => Err(format!("phases[{i}] must be a phase ({{name, tasks}}) or a todo item ({{content}})")),
        _ => Err(format!("phases[{i}] must be an object")),
    }
}

fn phase(item: &Value, i: usize, counter: &mut u64) -> Result<TodoPhase, String> {
    let path = format!("phases[{i}]");
    let Value::Object(m) = item else {
        return Err(format!("{path} must be an object"));
    };
    let id = opt_string(m, "id", &path)?.unwrap_or_else(|| format!("phase-{}", i + 1));
    let name = match m.get("name") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(format!("{path}.name must be a string")),
    };
    let tasks = match m.get("tasks") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(tasks)) => tasks
            .iter()
            .enumerate()
            .map(|(j, t)| task(t, &format!("{path}.tasks[{j}]"), counter))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{path}.tasks must be an array")),
    };
    Ok(TodoPhase { id, name, tasks })
}

fn task(item: &Value, path: &str, counter: &mut u64) -> Result<TodoItem, String> {
    *counter += 1;
    let generated = || format!("task-{counter}");
    match item {
        Value::String(content) => {
            Ok(TodoItem { id: generated(), content: content.clone(), status: TodoStatus::Pending, notes: None })
        }
        Value::Object(m) => {
            let id = opt_string(m, "id", path)?.unwrap_or_else(generated);
            let content = match m.get("content") {
                Some(Value::String(s)) => s.clone(),
                _ => return Err(format!("{path}.content must be a string")),
            };
            let status = match m.get("status") {
                None | Some(Value::Null) => TodoStatus::Pending,
                Some(Value::String(s)) => parse_status(s).ok_or_else(|| bad_status(path))?,
                Some(_) => return Err(bad_status(path)),
            };
            let notes = opt_string(m, "notes", path)?;
            Ok(TodoItem { id, content, status, notes })
        }
        _ => Err(format!("{path} must be an object")),
    }
}

/// A status by its wire name.
pub fn parse_status(s: &str) -> Option<TodoStatus> {
    match s {
        "pending" => Some(TodoStatus::Pending),
        "in_progress" => Some(TodoStatus::InProgress),
        "completed" => Some(TodoStatus::Completed),
        "abandoned" => Some(TodoStatus::Abandoned),
        _ => None,
    }
}

fn bad_status(path: &str) -> String {
    format!("{path}.status must be one of \"pending\", \"in_progress\", \"completed\", \"abandoned\"")
}

fn opt_string(m: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{path}.{key} must be a string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn norm(v: Value) -> Value {
        serde_json::to_value(normalize_set_todos(&v).unwrap()).unwrap()
    }

    fn err(v: Value) -> String {
        normalize_set_todos(&v).unwrap_err()
    }

    #[test]
    fn well_formed_input_comes_out_as_the_reference_stores_it() {
        let input = json!([{"id":"phase-1","name":"Evaluation","tasks":[
            {"id":"task-1","content":"Map the read tool surface","status":"in_progress","details":"secret","extra":1},
            {"status":"pending","content":"Exercise edit operations","id":"task-2","notes":"n"}
        ],"color":"red"}]);
        assert_eq!(
            serde_json::to_string(&normalize_set_todos(&input).unwrap()).unwrap(),
            r#"[{"id":"phase-1","name":"Evaluation","tasks":[{"id":"task-1","content":"Map the read tool surface","status":"in_progress"},{"id":"task-2","content":"Exercise edit operations","status":"pending","notes":"n"}]}]"#
        );
    }

    #[test]
    fn empty_list_clears() {
        assert_eq!(normalize_set_todos(&json!([])).unwrap(), Vec::new());
    }

    #[test]
    fn missing_ids_and_status_are_filled_with_tasks_numbered_across_the_call() {
        let out = norm(json!([
            {"name":"A","tasks":[{"content":"a1"},{"content":"a2","id":"mine"}]},
            {"name":"B","tasks":[{"content":"b1","status":null}]},
            {"name":"C"}
        ]));
        assert_eq!(
            out,
            json!([
                {"id":"phase-1","name":"A","tasks":[
                    {"id":"task-1","content":"a1","status":"pending"},
                    {"id":"mine","content":"a2","status":"pending"}]},
                {"id":"phase-2","name":"B","tasks":[{"id":"task-3","content":"b1","status":"pending"}]},
                {"id":"phase-3","name":"C","tasks":[]}
            ])
        );
    }

    #[test]
    fn a_flat_list_becomes_one_todos_phase() {
        let out = norm(json!(["first", {"content":"second","status":"completed","id":"x"}]));
        assert_eq!(
            out,
            json!([{"id":"phase-1","name":"Todos","tasks":[
                {"id":"task-1","content":"first","status":"pending"},
                {"id":"x","content":"second","status":"completed"}]}])
        );
    }

    #[test]
    fn malformed_input_names_the_field() {
        assert_eq!(err(json!({"name":"x"})), "phases must be an array");
        assert_eq!(err(json!(null)), "phases must be an array");
        assert_eq!(err(json!([{"name":3,"tasks":[]}])), "phases[0].name must be a string");
        assert_eq!(err(json!([{"tasks":[]}])), "phases[0].name must be a string");
        assert_eq!(err(json!([{"name":"a","tasks":{}}])), "phases[0].tasks must be an array");
        assert_eq!(
            err(json!([{"name":"a","tasks":[]},{"name":"b","tasks":[{"status":"pending"}]}])),
            "phases[1].tasks[0].content must be a string"
        );
        assert_eq!(
            err(json!([{"name":"a","tasks":[{"content":"c","status":"done"}]}])),
            "phases[0].tasks[0].status must be one of \"pending\", \"in_progress\", \"completed\", \"abandoned\""
        );
        assert_eq!(
            err(json!([{"name":"a","tasks":[{"content":"c","id":7}]}])),
            "phases[0].tasks[0].id must be a string"
        );
        assert_eq!(
            err(json!([{"name":"a","tasks":[{"content":"c","notes":[]}]}])),
            "phases[0].tasks[0].notes must be a string"
        );
        assert_eq!(err(json!([{"name":"a","id":1}])), "phases[0].id must be a string");
        assert_eq!(err(json!([{"name":"a","tasks":[5]}])), "phases[0].tasks[0] must be an object");
        assert_eq!(err(json!([1])), "phases[0] must be an object");
        assert_eq!(err(json!([{"other":1}])), "phases[0] must be a phase ({name, tasks}) or a todo item ({content})");
        assert_eq!(
            err(json!([{"content":"c","status":"x"}])),
            "phases[0].status must be one of \"pending\", \"in_progress\", \"completed\", \"abandoned\""
        );
    }

    #[test]
    fn mixing_flat_items_and_phases_is_refused() {
        assert_eq!(err(json!(["a", {"name":"P","tasks":[]}])), "phases[1]: cannot mix flat todo items and phases");
        assert_eq!(
            err(json!([{"name":"P","tasks":[]}, {"content":"c"}])),
            "phases[1]: cannot mix flat todo items and phases"
        );
    }
}
