/**
 * The agent as the server hands it out (issue 12): the file `npm run build:agent` makes, its
 * manifest (version, sha256, size), and the install script with this server's URL in it.
 *
 * The artifact lives in DROVER_AGENT_DIST (default dist/agent). When the default folder has
 * no build, the first request builds it (esbuild, well under a second), so `npm start` on a
 * fresh clone serves an agent without a separate step. A folder given explicitly is never
 * built into: it is what an operator (or a test) chose to serve.
 */
import { execFile } from "node:child_process";
import { createReadStream, readFileSync } from "node:fs";
import fs from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { promisify } from "node:util";
import { z } from "zod";
import { notFound } from "../errors";

const ROOT = path.resolve(import.meta.dirname, "../..");
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
}

export interface AgentDist {
  /**
   * The artifact to serve: the Node script, or with `platform` (linux-amd64…) that platform's
   * single executable; 404 when there is none and none can be built.
   */
  current(platform?: string): Promise<AgentArtifact>;
}

export function agentDist(dir: string | undefined): AgentDist {
  const folder = path.resolve(dir ?? DEFAULT_AGENT_DIST);
  const buildable = dir === undefined || folder === DEFAULT_AGENT_DIST;
  let building: Promise<void> | null = null;

  async function read(): Promise<AgentManifest | null> {
    let text: string;
    try {
      text = await fs.readFile(path.join(folder, "manifest.json"), "utf8");
    } catch {
      return null;
    }
    return AgentManifest.parse(JSON.parse(text));
  }

  return {
    async current(platform) {
      let manifest = await read();
      if (!manifest && buildable) {
        building ??= promisify(execFile)(process.execPath, [path.join(ROOT, "scripts", "build-agent.mjs"), "--out", folder, "--quiet"], { cwd: ROOT })
          .then(() => undefined)
          .finally(() => (building = null));
        await building;
        manifest = await read();
      }
      if (!manifest) throw notFound(`an agent build: none in ${folder} (npm run build:agent)`);
      if (platform === undefined) return { version: manifest.version, file: manifest.file, size: manifest.size, sha256: manifest.sha256, path: path.join(folder, manifest.file) };
      const binary = manifest.binaries.find((b) => b.platform === platform);
      if (!binary) {
        const have = manifest.binaries.map((b) => b.platform).join(", ") || "none (npm run build:agent -- --sea)";
        throw notFound(`a single-executable agent for ${platform} (built: ${have})`);
      }
      return { version: manifest.version, ...binary, path: path.join(folder, binary.file) };
    },
  };
}

/** The manifest as served: where to download, what to check. */
export function manifestBody(artifact: AgentArtifact, downloadPath: string) {
  const { version, file, size, sha256, platform } = artifact;
  return { name: "drover-agent", version, file, size, sha256, ...(platform ? { platform } : { node: ">=20" }), url: platform ? `${downloadPath}?platform=${platform}` : downloadPath };
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

const INSTALL_TEMPLATE = readFileSync(path.join(import.meta.dirname, "install.sh"), "utf8");

/** The install script with `server` (this server's public URL) filled in. */
export function installScript(server: string): string {
  return INSTALL_TEMPLATE.replaceAll("__DROVER_SERVER__", server.replace(/\/+$/, ""));
}
