import type { Command } from "commander";
import { apiFor, write } from "../context";
import { CliError, EXIT } from "../http";
import { stdinIsTty, withPrompter } from "../prompt";

/** `drover revoke …`: API tokens, enrollment tokens and device credentials, one group whichever registers first. */
export function revokeGroup(program: Command): Command {
  return program.commands.find((c) => c.name() === "revoke") ?? program.command("revoke").description("revoke API tokens, enrollment tokens and device credentials");
}

export function registerDevices(program: Command): void {
  program
    .command("decommission")
    .description("request a device's decommissioning: its agent is told in its long-poll")
    .argument("<device>", "the device name")
    .option("-y, --yes", "do not ask for confirmation (needed when stdin is not a terminal)")
    .action(async (name: string, opts: { yes?: boolean }, cmd: Command) => {
      const api = apiFor(cmd);
      if (!opts.yes) {
        if (!stdinIsTty()) cmd.error("error: not a terminal: pass --yes to decommission without confirmation", { exitCode: EXIT.USAGE });
        const typed = await withPrompter((p) => p.ask(`Decommissioning ${name} cannot be undone; type the device name to confirm: `));
        if (typed.trim() !== name) throw new CliError("the name did not match: nothing was done", EXIT.REFUSED);
      }
      const device = await api.call("post", "/devices/{name}/decommission", { path: { name } });
      write(`device/${device.name}: decommissioning requested (now ${device.lifecycle})\n`);
    });

  // Issue 23: `revoke device NAME`, beside `revoke token` and `revoke enrollment-token` (a bare
  // `revoke NAME` would collide with them for a device named "token").
  revokeGroup(program)
    .command("device")
    .description(
      "revoke a device's credential (a key or token thought stolen): its agent is refused from now on and its held poll ends; it stays listed. Already revoked: no change",
    )
    .argument("<device>", "the device name")
    .requiredOption("--reason <text>", "why (shown with the device and in its events)")
    .option("-y, --yes", "do not ask for confirmation (needed when stdin is not a terminal)")
    .addHelpText("after", '\nExample:\n  drover revoke device rack4-node2 --reason "key found on a lost laptop"')
    .action(async (name: string, opts: { reason: string; yes?: boolean }, cmd: Command) => {
      const api = apiFor(cmd);
      if (!opts.yes) {
        if (!stdinIsTty()) cmd.error("error: not a terminal: pass --yes to revoke without confirmation", { exitCode: EXIT.USAGE });
        const typed = await withPrompter((p) => p.ask(`Revoking ${name}'s credential cannot be undone (it must enroll again); type the device name to confirm: `));
        if (typed.trim() !== name) throw new CliError("the name did not match: nothing was done", EXIT.REFUSED);
      }
      const device = await api.call("post", "/devices/{name}/revoke", { path: { name }, body: { reason: opts.reason } });
      write(`device/${device.name}: credential revoked at ${device.credentialRevokedAt ?? "?"}\n`);
    });

  const nudge = program.command("nudge").description("reconcile one device, action or plan now");
  for (const kind of ["Device", "Action", "Plan"] as const) {
    const noun = kind.toLowerCase();
    nudge
      .command(noun)
      .description(`reconcile one ${noun} now`)
      .argument(kind === "Device" ? "<name>" : "<id>", `the ${noun}`)
      .action(async (name: string, _opts: unknown, cmd: Command) => {
        const answer = await apiFor(cmd).post<{ nudged: string }>("/nudge", { kind, name });
        write(`${answer.nudged} nudged\n`);
      });
  }
}
