import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { configPath, normalizeServer, readLogin, resolveServer, resolveToken, writeLogin, type StoredLogin } from "./config";
import { CliError } from "./http";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-config-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const login = (over: Partial<StoredLogin> = {}): StoredLogin => ({
  server: "http://drover.lab:3000",
  token: "drvo_stored",
  username: "admin",
  role: "admin",
  expiresAt: "2999-01-01T00:00:00.000Z",
  ...over,
});

function exitCodeOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof CliError) return error.exitCode;
    throw error;
  }
  return undefined;
}

describe("where the login lives", () => {
  it("DROVER_CONFIG, else XDG_CONFIG_HOME, else ~/.config", () => {
    expect(configPath({ DROVER_CONFIG: "/x/y.json" })).toBe("/x/y.json");
    expect(configPath({ XDG_CONFIG_HOME: "/xdg" })).toBe("/xdg/drover/config.json");
    expect(configPath({})).toBe(path.join(os.homedir(), ".config", "drover", "config.json"));
  });

  it("writes atomically with mode 0600, creating the folder, and reads it back", () => {
    const file = path.join(dir, "a", "b", "config.json");
    writeLogin(file, login());
    writeLogin(file, login({ token: "drvo_second" }));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(file))).toEqual(["config.json"]);
    expect(readLogin(file)).toEqual(login({ token: "drvo_second" }));
  });

  it("a missing file is no login; a broken one is exit 3", () => {
    expect(readLogin(path.join(dir, "missing.json"))).toBeNull();
    const broken = path.join(dir, "broken.json");
    fs.writeFileSync(broken, "{not json");
    expect(exitCodeOf(() => readLogin(broken))).toBe(3);
  });
});

describe("which server", () => {
  it("--server, then DROVER_SERVER, then the login's, then localhost:3000", () => {
    expect(resolveServer("http://flag:1", { DROVER_SERVER: "http://env:2" }, login())).toBe("http://flag:1");
    expect(resolveServer(undefined, { DROVER_SERVER: "http://env:2" }, login())).toBe("http://env:2");
    expect(resolveServer(undefined, {}, login())).toBe("http://drover.lab:3000");
    expect(resolveServer(undefined, {}, null)).toBe("http://localhost:3000");
  });

  it("normalizes; anything but an http(s) URL is a usage error", () => {
    expect(normalizeServer("https://drover.example.com/")).toBe("https://drover.example.com");
    expect(normalizeServer("http://h:1/prefix/")).toBe("http://h:1/prefix");
    expect(exitCodeOf(() => normalizeServer("drover.example.com"))).toBe(2);
    expect(exitCodeOf(() => normalizeServer("ftp://drover"))).toBe(2);
  });
});

describe("which token", () => {
  const server = "http://drover.lab:3000";
  it("DROVER_TOKEN wins over the stored login", () => {
    expect(resolveToken(server, { DROVER_TOKEN: "drvo_env" }, login())).toBe("drvo_env");
    expect(resolveToken(server, { DROVER_TOKEN: "drvo_env" }, null)).toBe("drvo_env");
  });

  it("the stored token for the same server", () => {
    expect(resolveToken(server, {}, login())).toBe("drvo_stored");
  });

  it("exit 3: no login, a login for another server, an expired login", () => {
    expect(exitCodeOf(() => resolveToken(server, {}, null))).toBe(3);
    expect(exitCodeOf(() => resolveToken("http://other:3000", {}, login()))).toBe(3);
    expect(exitCodeOf(() => resolveToken(server, {}, login({ expiresAt: "2000-01-01T00:00:00Z" })))).toBe(3);
  });
});
