import type { Command } from "commander";
import { apiFor, write } from "../context";
import { CliError, EXIT } from "../http";
import { stdinIsTty, withPrompter } from "../prompt";

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
