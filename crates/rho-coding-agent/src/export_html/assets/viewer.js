// rho session export viewer: builds the sidebar tree from the embedded data, shows the branch
// of the clicked entry, toggles thinking (Ctrl+T) and tool output (Ctrl+O), offers the JSONL.
// Session text is only ever set with textContent.
(function () {
  "use strict";
  var dataEl = document.getElementById("session-data");
  var data;
  try {
    data = JSON.parse(dataEl.textContent);
  } catch (e) {
    return;
  }
  document.documentElement.classList.remove("no-js");

  var messages = document.getElementById("messages");
  var store = document.getElementById("entry-store");
  var treeEl = document.getElementById("tree");
  var nodes = data.tree || [];
  var META = new Set(["model-change", "thinking-level", "extension-state", "label", "session-info", "other", "leaf-marker"]);
  var KIND_NAMES = {
    user: "user", developer: "dev", assistant: "assistant", "tool-result": "tool", bash: "shell",
    custom: "custom", compaction: "compaction", "branch-summary": "summary", "model-change": "model",
    "thinking-level": "thinking", "extension-state": "state", label: "label", "session-info": "name", other: "entry"
  };

  var byId = new Map();
  var children = new Map();
  nodes.forEach(function (n) {
    byId.set(n.id, n);
    if (n.parentId != null) {
      if (!children.has(n.parentId)) children.set(n.parentId, []);
      children.get(n.parentId).push(n.id);
    }
  });

  var elements = new Map();
  document.querySelectorAll("article.entry[data-id]").forEach(function (el) {
    elements.set(el.dataset.id, el);
  });
  var shown = Array.prototype.slice.call(messages.querySelectorAll("article.entry[data-id]"));

  // Sidebar rows, in the depth-first order the data comes in.
  var rows = new Map();
  var fragment = document.createDocumentFragment();
  nodes.forEach(function (n) {
    var row = document.createElement("div");
    row.className = "node " + n.kind + (META.has(n.kind) ? " meta" : "");
    row.dataset.id = n.id;
    row.setAttribute("role", "treeitem");
    row.style.paddingLeft = 4 + Math.min(n.depth, 24) * 12 + "px";
    row.title = n.text;
    var kind = document.createElement("span");
    kind.className = "kind";
    kind.textContent = KIND_NAMES[n.kind] || n.kind;
    row.appendChild(kind);
    if (n.label) {
      var label = document.createElement("span");
      label.className = "node-label";
      label.textContent = n.label;
      row.appendChild(label);
    }
    row.appendChild(document.createTextNode(n.text));
    fragment.appendChild(row);
    rows.set(n.id, row);
  });
  treeEl.appendChild(fragment);
  if (rows.has(data.leafId)) rows.get(data.leafId).classList.add("leaf");

  function pathTo(id) {
    var path = [];
    var seen = new Set();
    while (id != null && byId.has(id) && !seen.has(id)) {
      seen.add(id);
      path.push(id);
      id = byId.get(id).parentId;
    }
    return path.reverse();
  }

  var sessionPath = new Set(pathTo(data.leafId));

  // The branch to show for a clicked entry: the current leaf's when the entry is on it,
  // otherwise the newest continuation below the entry.
  function leafUnder(id) {
    if (sessionPath.has(id)) return data.leafId;
    var seen = new Set();
    while (children.has(id) && !seen.has(id)) {
      seen.add(id);
      var next = children.get(id).filter(function (k) {
        return byId.get(k).kind !== "leaf-marker";
      });
      if (!next.length) break;
      id = next[next.length - 1];
    }
    return id;
  }

  var pathRows = [];
  var targetMarks = [];

  function showPath(leafId, targetId, scroll) {
    var path = pathTo(leafId);
    shown.forEach(function (el) {
      store.appendChild(el);
    });
    shown = [];
    var moved = document.createDocumentFragment();
    path.forEach(function (id) {
      var el = elements.get(id);
      if (el) {
        moved.appendChild(el);
        shown.push(el);
      }
    });
    messages.appendChild(moved);

    pathRows.forEach(function (r) {
      r.classList.remove("on-path");
    });
    pathRows = path.map(function (id) {
      return rows.get(id);
    }).filter(Boolean);
    pathRows.forEach(function (r) {
      r.classList.add("on-path");
    });
    targetMarks.forEach(function (el) {
      el.classList.remove("target");
    });
    targetMarks = [];
    if (targetId != null) {
      [rows.get(targetId), elements.get(targetId)].forEach(function (el) {
        if (el) {
          el.classList.add("target");
          targetMarks.push(el);
        }
      });
    }
    if (scroll && targetId != null) {
      var index = path.indexOf(targetId);
      for (var i = index; i >= 0; i--) {
        var el = elements.get(path[i]);
        if (el) {
          el.scrollIntoView({ block: "start" });
          break;
        }
      }
      var row = rows.get(targetId);
      if (row) row.scrollIntoView({ block: "nearest" });
    }
  }

  function updateUrl(leafId, targetId) {
    try {
      var url = new URL(window.location.href);
      url.searchParams.set("leafId", leafId);
      url.searchParams.set("targetId", targetId);
      window.history.replaceState(null, "", url);
    } catch (e) {
      // file: URLs may refuse; the view works without the deep link
    }
  }

  treeEl.addEventListener("click", function (event) {
    var row = event.target.closest(".node");
    if (!row) return;
    var id = row.dataset.id;
    var leaf = leafUnder(id);
    showPath(leaf, id, true);
    updateUrl(leaf, id);
  });

  // Filters: bookkeeping entries (except the leaf) only with "all entries"; search over the previews.
  var search = document.getElementById("search");
  var showAll = document.getElementById("show-all");
  function applyFilter() {
    var query = search.value.trim().toLowerCase();
    nodes.forEach(function (n) {
      var meta = META.has(n.kind) && n.id !== data.leafId;
      var hidden = (meta && !showAll.checked) || (query && n.text.toLowerCase().indexOf(query) < 0);
      rows.get(n.id).classList.toggle("filtered-out", Boolean(hidden));
    });
  }
  search.addEventListener("input", applyFilter);
  showAll.addEventListener("change", applyFilter);
  applyFilter();

  var thinkingButton = document.getElementById("toggle-thinking");
  function toggleThinking() {
    var hidden = document.body.classList.toggle("hide-thinking");
    thinkingButton.textContent = hidden ? "Show thinking" : "Hide thinking";
  }
  var outputButton = document.getElementById("toggle-output");
  var outputOpen = false;
  function toggleOutput() {
    outputOpen = !outputOpen;
    document.querySelectorAll(".entry details.collapsible").forEach(function (d) {
      d.open = outputOpen;
    });
    outputButton.textContent = outputOpen ? "Collapse tool output" : "Expand tool output";
  }
  thinkingButton.addEventListener("click", toggleThinking);
  outputButton.addEventListener("click", toggleOutput);
  document.addEventListener("keydown", function (event) {
    if (!event.ctrlKey || event.altKey || event.shiftKey || event.metaKey) return;
    var key = event.key.toLowerCase();
    if (key === "t") {
      event.preventDefault();
      toggleThinking();
    } else if (key === "o") {
      event.preventDefault();
      toggleOutput();
    }
  });

  document.getElementById("download").addEventListener("click", function () {
    var lines = [JSON.stringify(data.header)];
    (data.entries || []).forEach(function (entry) {
      lines.push(JSON.stringify(entry));
    });
    var blob = new Blob([lines.join("\n") + "\n"], { type: "application/x-ndjson" });
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = data.fileName || "session.jsonl";
    document.body.appendChild(link);
    link.click();
    setTimeout(function () {
      URL.revokeObjectURL(link.href);
      link.remove();
    }, 0);
  });

  // Deep links: ?leafId=…&targetId=… open that branch at that entry.
  var params = new URLSearchParams(window.location.search);
  var linkedLeaf = params.get("leafId");
  var linkedTarget = params.get("targetId");
  if (linkedLeaf != null && byId.has(linkedLeaf)) {
    showPath(linkedLeaf, byId.has(linkedTarget) ? linkedTarget : linkedLeaf, true);
  } else {
    showPath(data.leafId, null, false);
  }
})();
