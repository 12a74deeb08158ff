// The channel to rho: newline-delimited JSON over the Unix socket rho named in
// RHO_EXTENSION_SOCKET. Never stdout: that belongs to the extensions (rho sends it to its stderr
// or a log file). Requests this side makes carry an id; rho answers them with a `response`.

import net from "node:net";

/** The longest line this side writes (rho reads a little more, then closes the channel). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/** The real `process.exit`, which the host turns into an error while extensions load. */
const exit = process.exit.bind(process);

export class Channel {
  constructor(socketPath, onMessage) {
    this.onMessage = onMessage;
    this.nextId = 1;
    this.pending = new Map();
    this.closed = false;
    this.socket = net.connect(socketPath);
    this.socket.setEncoding("utf8");
    let buffer = "";
    this.socket.on("data", (chunk) => {
      buffer += chunk;
      let newline = buffer.indexOf("\n");
      while (newline !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.length > 0) this.receive(line);
        newline = buffer.indexOf("\n");
      }
    });
    // rho went away: nothing is left to serve.
    const gone = () => {
      this.closed = true;
      exit(0);
    };
    this.socket.on("end", gone);
    this.socket.on("close", gone);
    this.socket.on("error", gone);
  }

  receive(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch (err) {
      process.stderr.write(`rho extension host: unreadable message from rho: ${err}\n`);
      return;
    }
    if (message.type === "response" && this.pending.has(message.id)) {
      const { resolve, reject } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.value);
      return;
    }
    this.onMessage(message);
  }

  /** Writes `message`; false when it is larger than a line may be (an answer to rho then says
   *  so instead, so rho is not left waiting). */
  send(message) {
    if (this.closed) return false;
    const line = JSON.stringify(message, replacer);
    const bytes = Buffer.byteLength(line);
    if (bytes > MAX_LINE_BYTES) {
      const error = `the message is too large for rho's channel (${bytes} bytes, at most ${MAX_LINE_BYTES})`;
      if (message.type === "result") this.send({ type: "result", id: message.id, error });
      else process.stderr.write(`rho extension host: ${message.type} not sent: ${error}\n`);
      return false;
    }
    this.socket.write(`${line}\n`);
    return true;
  }

  /** Sends a request; the promise resolves with rho's answer and carries the request's `id`. */
  request(message) {
    const id = `h${this.nextId++}`;
    const answer = new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (!this.send({ ...message, id })) {
        this.pending.delete(id);
        reject(new Error("the request is too large for rho's channel"));
      }
    });
    answer.id = id;
    return answer;
  }
}

// Values JSON cannot hold (functions, symbols, bigints) are left out or written as text, so a
// schema or a message carrying one never breaks the channel.
function replacer(_key, value) {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "function" || typeof value === "symbol") return undefined;
  return value;
}
