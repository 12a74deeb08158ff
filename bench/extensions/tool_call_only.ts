// An extension that listens to tool_call only: with it, a streamed reply should cost what it
// costs without (nothing of the stream crosses to the extension host).
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("tool_call", async () => undefined);
}
