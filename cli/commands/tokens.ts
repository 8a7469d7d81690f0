import type { Command } from "commander";
import { apiFor, note, write } from "../context";
import { revokeGroup } from "./devices";

export function registerTokens(program: Command): void {
  const revoke = revokeGroup(program);
  revoke
    .command("token")
    .alias("tokens")
    .description("revoke API tokens (your own, or anyone's as an admin): the next request with one is refused. Already revoked: no change")
    .argument("<ids...>", "token ids (drover get tokens)")
    .addHelpText("after", "\nExamples:\n  drover get tokens\n  drover revoke token 3f2c9a4e-…")
    .action(async (ids: string[], _opts: unknown, cmd: Command) => {
      const api = apiFor(cmd);
      let order = [...new Set(ids)];
      if (order.length > 1) {
        // The token this CLI runs with goes last: revoked first, it would refuse the rest.
        const current = (await api.call("get", "/tokens", { query: { limit: 1000 } })).items.find((t) => t.current)?.id;
        order = [...order.filter((id) => id !== current), ...order.filter((id) => id === current)];
      }
      let revokedOwn = false;
      // One at a time: each is its own decision, like kubectl delete.
      for (const id of order) {
        const t = await api.call("post", "/tokens/{id}/revoke", { path: { id } });
        write(`token/${t.id} revoked (${t.name ?? "unnamed"}, user ${t.username})\n`);
        revokedOwn ||= t.current;
      }
      if (revokedOwn) note('That was the token this CLI is logged in with: run "drover login" to sign in again.');
    });
}
