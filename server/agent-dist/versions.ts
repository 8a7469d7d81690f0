/**
 * Naming an agent version (issue 12): a fleet template's `agent.version`, an `agentupgrade`
 * action's `version`. The server refuses (400) one it does not hold, when the template is
 * applied or the action (or the plan command that makes them) is created: a device told to
 * fetch a build that is not there would only fail later, one by one. The builds it holds are
 * DROVER_AGENT_DIST's (artifact.ts: the current one and those kept under versions/).
 *
 * And the oldest agent it supports (DROVER_MIN_AGENT_VERSION, lib/agent-version.ts), which the
 * console compares each device's agent version with.
 */
import { AGENT_UPGRADE_KIND, AgentUpgradeArgs, DEFAULT_MIN_AGENT_VERSION } from "../../lib/agent-version";
import { describeZodError } from "../../lib/protocol";
import type { ServerContext } from "../context";
import { AppError, invalid } from "../errors";
import { agentDistFor, describeHeld } from "./artifact";

/** 400 unless this server holds a build of `version`; `where` names the field for the message. */
export async function assertAgentVersionHeld(ctx: ServerContext, version: string, where: string): Promise<void> {
  const dist = agentDistFor(ctx.env.DROVER_AGENT_DIST);
  try {
    await dist.version(version);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== "NOT_FOUND") throw error;
    throw invalid(`${where}: agent version ${JSON.stringify(version)} is not on this server (${describeHeld(await dist.versions())}; npm run build:agent -- --version ${version} --keep)`);
  }
}

/** An `agentupgrade` action's args checked (shape, a held version) before it is created; other kinds pass. */
export async function checkAgentUpgradeArgs(ctx: ServerContext, kind: string, args: Record<string, unknown>, where = "args"): Promise<void> {
  if (kind !== AGENT_UPGRADE_KIND) return;
  const parsed = AgentUpgradeArgs.safeParse(args);
  if (!parsed.success) throw invalid(`${where}: ${AGENT_UPGRADE_KIND} takes {version}: ${describeZodError(parsed.error)}`);
  await assertAgentVersionHeld(ctx, parsed.data.version, `${where}.version`);
}

/** What the console needs to say "older than this server supports" (and which builds exist). */
export async function agentVersionsInfo(ctx: ServerContext): Promise<{ minimum: string; current: string | null; kept: string[] }> {
  const held = await agentDistFor(ctx.env.DROVER_AGENT_DIST)
    .versions()
    .catch(() => ({ current: null, kept: [] as string[] }));
  return { minimum: minAgentVersion(ctx), ...held };
}

export function minAgentVersion(ctx: ServerContext): string {
  return ctx.env.DROVER_MIN_AGENT_VERSION ?? DEFAULT_MIN_AGENT_VERSION;
}
