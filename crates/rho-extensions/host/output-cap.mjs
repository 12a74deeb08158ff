// What an extension tool returns reaches the model as the built-in tools' output does: at most
// 2000 lines and 50 KiB of text. Past that, the text is cut after the last whole line that fits,
// all of it goes to a spill file (`<tmp>/rho-ext-<hex>.log`, readable by the user alone, removed
// when the host exits) and a notice names the file, so the model can read the rest.

import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const MAX_LINES = 2000;
export const MAX_BYTES = 50 * 1024;

const spillFiles = new Set();
process.on("exit", removeSpillFiles);

/** Removes the spill files this host wrote (as rho shuts it down, and when it exits). */
export function removeSpillFiles() {
  for (const file of spillFiles) {
    try {
      fs.unlinkSync(file);
    } catch {
      // Already gone.
    }
  }
  spillFiles.clear();
}

/** The tool's content, its text parts capped together; `spillOver` false for a partial result
 *  (which the final one replaces): cut, with no file. */
export function capContent(content, spillOver = true) {
  if (!Array.isArray(content)) return content;
  const texts = content.filter((part) => part?.type === "text" && typeof part.text === "string");
  const text = texts.map((part) => part.text).join("\n");
  const bytes = Buffer.byteLength(text);
  const lines = text.split("\n");
  if (bytes <= MAX_BYTES && lines.length <= MAX_LINES) return content;

  const kept = [];
  let keptBytes = 0;
  for (const line of lines) {
    const size = Buffer.byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (kept.length >= MAX_LINES || keptBytes + size > MAX_BYTES) break;
    kept.push(line);
    keptBytes += size;
  }
  const file = spillOver ? spill(text) : undefined;
  const where = file ? ` Full output: ${file}` : spillOver ? " The full output could not be saved." : "";
  const notice =
    `[Output truncated: showing ${kept.length} of ${lines.length} lines ` +
    `(${size(keptBytes)} of ${size(bytes)}).${where}]`;
  const shown = kept.length > 0 ? `${kept.join("\n")}\n\n${notice}` : notice;
  const others = content.filter((part) => !texts.includes(part));
  return [{ type: "text", text: shown }, ...others];
}

function spill(text) {
  const file = path.join(os.tmpdir(), `rho-ext-${crypto.randomBytes(8).toString("hex")}.log`);
  try {
    fs.writeFileSync(file, text, { flag: "wx", mode: 0o600 });
    spillFiles.add(file);
    return file;
  } catch {
    return undefined;
  }
}

function size(bytes) {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}
