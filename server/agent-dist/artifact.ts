/**
 * The agent as the server hands it out (issue 12): the file `npm run build:agent` makes, its
 * manifest (version, sha256, size), and the install script with this server's URL in it.
 *
 * The artifact lives in DROVER_AGENT_DIST (default dist/agent), which `npm run build` (and
 * `npm start`'s prestart) fills. Only when the default folder has no build and esbuild is
 * installed (a clone with its dev dependencies, running from the sources) does the first request
 * build it (well under a second); a production install (`npm prune --omit=dev`) has no esbuild
 * and answers 404 naming `npm run build:agent`. A folder given explicitly is never built into:
 * it is what an operator (or a test) chose to serve.
 *
 * Several versions side by side (agent upgrades): the folder's own manifest.json and files are
 * the CURRENT build (what /download and install.sh hand out); older (or other) builds are kept
 * whole under `versions/<version>/` (manifest.json and files), which `npm run build:agent --
 * --keep` fills by moving the current build there before writing the new one. A fleet template
 * or an `agentupgrade` action names any of them; `/download?version=X` serves it.
 */
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { createReadStream, readFileSync } from "node:fs";
import fs from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import { z } from "zod";
import { AGENT_MALLOC_ENV, AGENT_NODE_FLAGS, AgentVersion, compareAgentVersions } from "../../lib/agent-version";
import { AppError, notFound } from "../errors";
import { ROOT } from "../paths";
import { certificateFingerprint } from "../tls/certificates";

export const DEFAULT_AGENT_DIST = path.join(ROOT, "dist", "agent");

export const AgentManifest = z.object({
  name: z.literal("drover-agent"),
  version: z.string().min(1).max(64),
  file: z.string().regex(/^[A-Za-z0-9._-]+$/),
  size: z.number().int().positive(),
  sha256: z.string().regex(/^[a-f0-9]{64}$/),
  node: z.string().optional(),
  /** Single executables that need no Node (npm run build:agent -- --sea), one per platform. */
  binaries: z
    .array(z.object({ platform: z.string().regex(/^[a-z0-9]+-[a-z0-9]+$/), file: z.string().regex(/^[A-Za-z0-9._-]+$/), size: z.number().int().positive(), sha256: z.string().regex(/^[a-f0-9]{64}$/) }))
    .default([]),
});
export type AgentManifest = z.infer<typeof AgentManifest>;

/** One file to serve: the Node script, or a platform's single executable. */
export interface AgentArtifact {
  version: string;
  file: string;
  size: number;
  sha256: string;
  /** Absent: the script for Node 20+. */
  platform?: string;
  path: string;
  /** Asked for by version (`?version=`): its download URL names it. */
  pinned?: boolean;
}

export interface AgentDist {
  /**
   * The artifact to serve: the Node script, or with `platform` (linux-amd64…) that platform's
   * single executable; 404 when there is none and none can be built.
   */
  current(platform?: string): Promise<AgentArtifact>;
  /**
   * The build of `version` (the current one or one kept under versions/), the script or with
   * `platform` its single executable; 404 naming the versions held when there is none.
   */
  version(version: string, platform?: string): Promise<AgentArtifact>;
  /** The versions held: the current one first, then the kept ones, newest first. */
  versions(): Promise<{ current: string | null; kept: string[] }>;
}

export function agentDist(dir: string | undefined): AgentDist {
  const folder = path.resolve(dir ?? DEFAULT_AGENT_DIST);
  const buildable = dir === undefined || folder === DEFAULT_AGENT_DIST;
  let building: Promise<void> | null = null;

  async function read(where: string): Promise<AgentManifest | null> {
    let text: string;
    try {
      text = await fs.readFile(path.join(where, "manifest.json"), "utf8");
    } catch {
      return null;
    }
    return AgentManifest.parse(JSON.parse(text));
  }

  async function readCurrent(): Promise<AgentManifest | null> {
    let manifest = await read(folder);
    if (!manifest && buildable && esbuildInstalled()) {
      building ??= promisify(execFile)(process.execPath, [path.join(ROOT, "scripts", "build-agent.mjs"), "--out", folder, "--quiet"], { cwd: ROOT })
        .then(() => undefined)
        .finally(() => (building = null));
      await building;
      manifest = await read(folder);
    }
    return manifest;
  }

  async function kept(): Promise<string[]> {
    let entries: string[];
    try {
      entries = await fs.readdir(path.join(folder, VERSIONS_DIR));
    } catch {
      return [];
    }
    const held: string[] = [];
    for (const entry of entries) {
      if (!AgentVersion.safeParse(entry).success) continue;
      const m = await read(path.join(folder, VERSIONS_DIR, entry)).catch(() => null);
      if (m?.version === entry) held.push(entry);
    }
    return held.sort((a, b) => compareAgentVersions(b, a));
  }

  function pick(manifest: AgentManifest, where: string, platform: string | undefined): AgentArtifact {
    if (platform === undefined) return { version: manifest.version, file: manifest.file, size: manifest.size, sha256: manifest.sha256, path: path.join(where, manifest.file) };
    const binary = manifest.binaries.find((b) => b.platform === platform);
    if (!binary) {
      const have = manifest.binaries.map((b) => b.platform).join(", ") || "none (npm run build:agent -- --sea)";
      throw notFound(`a single-executable agent ${manifest.version} for ${platform} (built: ${have})`);
    }
    return { version: manifest.version, ...binary, path: path.join(where, binary.file) };
  }

  const dist: AgentDist = {
    async current(platform) {
      const manifest = await readCurrent();
      if (!manifest) throw notFound(`an agent build: none in ${folder} (npm run build:agent)`);
      return pick(manifest, folder, platform);
    },
    async version(version, platform) {
      const current = await readCurrent();
      if (current?.version === version) return { ...pick(current, folder, platform), pinned: true };
      const where = path.join(folder, VERSIONS_DIR, version);
      const manifest = AgentVersion.safeParse(version).success ? await read(where).catch(() => null) : null;
      if (manifest?.version === version) return { ...pick(manifest, where, platform), pinned: true };
      throw new AppError("NOT_FOUND", `no agent version ${JSON.stringify(version)} on this server (${describeHeld(await dist.versions())})`);
    },
    async versions() {
      const manifest = await readCurrent();
      const others = (await kept()).filter((v) => v !== manifest?.version);
      return { current: manifest?.version ?? null, kept: others };
    },
  };
  return dist;
}

/** Whether `npm run build:agent` can run here: esbuild is a dev dependency, absent from a production install. */
function esbuildInstalled(): boolean {
  try {
    createRequire(path.join(ROOT, "package.json")).resolve("esbuild");
    return true;
  } catch {
    return false;
  }
}

/** Kept builds live in `<DROVER_AGENT_DIST>/versions/<version>/`. */
export const VERSIONS_DIR = "versions";

/** "held: 1.1.0 (current), 1.0.0" for messages. */
export function describeHeld(held: { current: string | null; kept: string[] }): string {
  const all = [...(held.current ? [`${held.current} (current)`] : []), ...held.kept];
  return all.length ? `held: ${all.join(", ")}` : "none held: npm run build:agent";
}

const cache = new Map<string, AgentDist>();
/** One AgentDist per folder, for the checks at apply time (fleets, actions, plans). */
export function agentDistFor(dir: string | undefined): AgentDist {
  const key = path.resolve(dir ?? DEFAULT_AGENT_DIST);
  let dist = cache.get(key);
  if (!dist) cache.set(key, (dist = agentDist(dir)));
  return dist;
}

/** The manifest as served: where to download, what to check. */
export function manifestBody(artifact: AgentArtifact, downloadPath: string) {
  const { version, file, size, sha256, platform, pinned } = artifact;
  const query = new URLSearchParams({ ...(pinned ? { version } : {}), ...(platform ? { platform } : {}) }).toString();
  return { name: "drover-agent", version, file, size, sha256, ...(platform ? { platform } : { node: ">=20" }), url: query ? `${downloadPath}?${query}` : downloadPath };
}

/** Sends the agent file, with its version and sha256 in headers; 304 when the client has it. */
export function sendArtifact(req: IncomingMessage, res: ServerResponse, artifact: AgentArtifact): number {
  const etag = `"${artifact.sha256}"`;
  const headers = {
    etag,
    "x-drover-agent-version": artifact.version,
    "x-drover-agent-sha256": artifact.sha256,
    "cache-control": "no-cache",
  };
  if (req.headers["if-none-match"] === etag) {
    res.writeHead(304, headers);
    res.end();
    return 304;
  }
  res.writeHead(200, {
    ...headers,
    "content-type": artifact.platform ? "application/octet-stream" : "text/javascript; charset=utf-8",
    "content-length": artifact.size,
    "content-disposition": `attachment; filename="drover-agent-${artifact.version}${artifact.platform ? `-${artifact.platform}` : ".mjs"}"`,
  });
  if (req.method === "HEAD") {
    res.end();
    return 200;
  }
  createReadStream(artifact.path)
    .on("error", () => res.destroy())
    .pipe(res);
  return 200;
}

// Read from the sources, bundled or not (the server bundle needs the package's prisma/ and .next
// beside it anyway): one copy of the script, never a stale one next to the bundle.
const INSTALL_TEMPLATE = readFileSync(path.join(ROOT, "server", "agent-dist", "install.sh"), "utf8");

/**
 * The install script with `server` (this server's public URL), the CA its devices pin (`caPem`,
 * issue 23; null: plain HTTP or a public CA) and how the agent runs (AGENT_NODE_FLAGS,
 * AGENT_MALLOC_ENV) filled in.
 */
export function installScript(server: string, caPem: string | null = null): string {
  return INSTALL_TEMPLATE.replaceAll("__DROVER_SERVER__", server.replace(/\/+$/, ""))
    .replaceAll("__DROVER_CA_FINGERPRINT__", caPem ? certificateFingerprint(caPem) : "")
    .replaceAll("__DROVER_CA_PEM__", caPem ? new X509Certificate(caPem).toString().trim() : "")
    .replaceAll("__DROVER_NODE_FLAGS__", AGENT_NODE_FLAGS.join(" "))
    .replaceAll("__DROVER_MALLOC_ENV__", Object.entries(AGENT_MALLOC_ENV).map(([k, v]) => `${k}=${v}`).join(" "));
}
