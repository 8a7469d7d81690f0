/** The console's warning before an action a device will refuse (issue 10), one row per rule. */
import { describe, expect, it } from "vitest";
import { agentRefusal } from "./action-capability";

const caps = { kinds: ["exec", "noop", "reboot", "sleep"], exec: { allow: ["uptime", "systemctl"] } };

describe("agentRefusal", () => {
  it.each([
    ["unknown capabilities (an older agent): no warning", null, "exec", { command: "rm" }, null],
    ["a kind the agent runs", caps, "noop", {}, null],
    ["a kind it does not run, with what it runs", caps, "k0supdate", {}, /does not run "k0supdate" actions \(it runs exec, noop, reboot, sleep\)/],
    ["exec of an allowed command", caps, "exec", { command: "uptime" }, null],
    ["exec off the allow-list, naming it and the list", caps, "exec", { command: "rm", args: ["-rf", "/"] }, /command "rm" is not in its agent's allow-list \(--allow-exec: uptime, systemctl\)/],
    ["exact match only: a path to an allowed name is refused", caps, "exec", { command: "/usr/bin/uptime" }, /"\/usr\/bin\/uptime" is not in/],
    ["an empty allow-list", { kinds: ["exec"], exec: { allow: [] } }, "exec", { command: "uptime" }, /empty, exec runs nothing/],
    ["no exec list reported: exec runs any command (the simulator)", { kinds: ["exec"] }, "exec", { command: "rm" }, null],
    ["exec without a command: the agent's own args check answers", caps, "exec", {}, null],
  ] as const)("%s", (_rule, c, kind, args, expected) => {
    const r = agentRefusal(c, kind, args);
    if (expected === null) expect(r).toBeNull();
    else expect(r).toMatch(expected);
  });
});
