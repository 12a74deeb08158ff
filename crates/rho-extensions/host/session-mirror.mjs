// ctx.sessionManager: pi's own SessionManager, in memory, kept in step with the session file rho
// writes. rho sends the entries appended since the last message before every event it hands
// over, so a handler reads the session as it is (pi's format is rho's). Nothing here writes a
// file: the mirror never persists.

export function createSessionMirror(SessionManager, cwd) {
  const manager = SessionManager.inMemory(cwd);
  return {
    manager,
    /** Applies `{reset?, entries, leafId}` from rho. */
    apply(sync) {
      if (sync.reset) {
        const { header, file, dir } = sync.reset;
        manager.fileEntries = [header];
        manager.sessionId = header.id;
        manager.sessionFile = file ?? undefined;
        manager.sessionDir = dir ?? "";
        manager.cwd = header.cwd ?? cwd;
        manager._buildIndex();
      }
      for (const entry of sync.entries ?? []) {
        manager.fileEntries.push(entry);
        manager.byId.set(entry.id, entry);
        if (entry.type === "label") {
          if (entry.label) {
            manager.labelsById.set(entry.targetId, entry.label);
            manager.labelTimestampsById.set(entry.targetId, entry.timestamp);
          } else {
            manager.labelsById.delete(entry.targetId);
            manager.labelTimestampsById.delete(entry.targetId);
          }
        }
      }
      if (sync.leafId !== undefined) manager.leafId = sync.leafId;
    },
  };
}
