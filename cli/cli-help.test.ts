/**
 * The `drover` CLI (run in this process, as cli-suite.ts does): --help on every command, needing
 * no login or server.
 */
import { beforeAll, describe, expect, it } from "vitest";
import path from "node:path";
import { cliSuite } from "./cli-suite";

const suite = cliSuite({ login: false });
const { drover } = suite;

let dir: string;
beforeAll(() => void ({ dir } = suite.state));

describe("--help", () => {
  const commands = [
    [],
    ["login"],
    ["get"],
    ["get", "devices"],
    ["get", "fleets"],
    ["apply"],
    ["get", "actions"],
    ["get", "enrollments"],
    ["get", "tokens"],
    ["get", "requests"],
    ["approve"],
    ["approve", "action"],
    ["approve", "enrollment"],
    ["approve", "request"],
    ["reject"],
    ["reject", "action"],
    ["reject", "request"],
    ["deny"],
    ["deny", "enrollment"],
    ["reopen"],
    ["reopen", "enrollment"],
    ["create"],
    ["create", "action"],
    ["cancel"],
    ["cancel", "action"],
    ["decommission"],
    ["nudge"],
    ["nudge", "device"],
    ["nudge", "action"],
    ["events"],
    ["revoke"],
    ["revoke", "token"],
    ["revoke", "device"],
    ["rollout"],
    ["rollout", "pause"],
    ["rollout", "resume"],
    ["rollout", "promote"],
    ["rollout", "abort"],
    ["rollout", "status"],
    ["get", "plans"],
    ["describe"],
    ["describe", "plan"],
    ["plan"],
    ["plan", "approve"],
    ["plan", "cancel"],
    ["plan", "retry"],
    ["plan", "skip-node"],
    ["plan", "watch"],
    ["nudge", "plan"],
    ["get", "workflows"],
    ["describe", "workflow"],
    ["workflow"],
    ["workflow", "start"],
    ["workflow", "rerun"],
    ["workflow", "cancel"],
    ["workflow", "delete"],
    ["workflow", "retry-target"],
    ["workflow", "skip-target"],
    ["create", "enrollment-token"],
    ["get", "enrollment-tokens"],
    ["revoke", "enrollment-token"],
    ["rerun"],
    ["rerun", "action"],
  ];

  it("every command has --help, exit 0, needing no login or server; the list above is all of them", { timeout: 300_000 }, async () => {
    const env = { DROVER_CONFIG: path.join(dir, "nobody.json"), DROVER_SERVER: "http://127.0.0.1:1" };
    const seen: string[] = [];
    // Walks the tree of commands through their own help: the "Commands:" section names the subcommands.
    const walk = async (args: string[]): Promise<void> => {
      const name = args.join(" ");
      const r = await drover([...args, "--help"], { env });
      expect(r.code, `drover ${name} --help: ${r.stderr}`).toBe(0);
      expect(r.stdout, name).toMatch(new RegExp(`^Usage: drover${name ? " " + args.join("[|\\w]* ") : ""}`));
      seen.push(name);
      const section = r.stdout.split("Commands:\n")[1]?.split("\n\n")[0] ?? "";
      const subs = [...section.matchAll(/^ {2}([\w-]+)/gm)].map((m) => m[1]!).filter((n) => n !== "help");
      await Promise.all(subs.map((sub) => walk([...args, sub])));
    };
    await walk([]);
    expect(seen.sort()).toEqual(commands.map((c) => c.join(" ")).sort());
  });
});
