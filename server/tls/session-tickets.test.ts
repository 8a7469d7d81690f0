/**
 * Session tickets that outlive the process (issue 23, item 5; session-tickets.ts): the keys as a
 * pure function of the key and the day, and on real TLS: two servers holding the same key (a
 * restarted server, or another of the cluster) resume each other's sessions, one with another
 * key does not, and the agent's node:http transport resumes after a restart although its
 * connects were refused in between. Each handshake is counted new or resumed (the metric's hook).
 */
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../tests/helpers/devices";
import { issueTestServerCertificate, makeTestCa, type TestCa } from "../../tests/helpers/tls";
import { createNodeHttpTransport } from "../../agent/http-transport";
import { ServerTrust } from "../../agent/server-trust";
import { readTlsFiles, type TlsMaterial } from "./certificates";
import { createTlsFront, type TlsFront } from "./front";
import { nextTicketRotation, sessionTicketKeys, ticketWindow } from "./session-tickets";

let dir: string;
let ca: TestCa;
let material: TlsMaterial;
let otherKey: TlsMaterial;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-tickets-"));
  ca = makeTestCa(dir, "ca");
  const one = issueTestServerCertificate(ca, dir, "one");
  const two = issueTestServerCertificate(ca, dir, "two");
  material = readTlsFiles({ cert: one.certFile, key: one.keyFile, ca: ca.caFile });
  otherKey = readTlsFiles({ cert: two.certFile, key: two.keyFile, ca: ca.caFile });
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("session ticket keys", () => {
  const day = new Date("2026-11-28T17:00:00Z");
  it.each([
    ["the same key, the same day: the same ticket keys", "k", day, "k", new Date("2026-11-28T23:59:59Z"), true],
    ["the same key, the next day (rotated at midnight UTC): others", "k", day, "k", new Date("2026-11-29T00:00:00Z"), false],
    ["another key, the same day: others", "k", day, "k2", day, false],
  ])("%s", (_, secretA, atA, secretB, atB, same) => {
    const a = sessionTicketKeys(secretA, atA);
    expect(a).toHaveLength(48);
    expect(a.equals(sessionTicketKeys(secretB, atB))).toBe(same);
  });

  it("rotates at the next midnight UTC", () => {
    expect(nextTicketRotation(day).toISOString()).toBe("2026-11-29T00:00:00.000Z");
    expect(ticketWindow(nextTicketRotation(day))).toBe(ticketWindow(day) + 1);
  });
});

interface Front {
  front: TlsFront;
  port: number;
  handshakes: { new: number; resumed: number };
  /** Requests to /hold: never answered, as a held long-poll. */
  holding: http.ServerResponse[];
}

async function startFront(tlsMaterial: TlsMaterial, port = 0): Promise<Front> {
  const handshakes = { new: 0, resumed: 0 };
  const started: Front = { front: undefined as unknown as TlsFront, port: 0, handshakes, holding: [] };
  const front = createTlsFront((req, res) => (req.url === "/hold" ? started.holding.push(res) : res.end("ok")), tlsMaterial, {
    firstByteTimeoutMs: 5_000,
    connectionsCheckingInterval: 1_000,
    publicUrl: undefined,
    onHandshake: (resumed) => handshakes[resumed ? "resumed" : "new"]++,
  });
  await new Promise<void>((resolve) => front.listener.listen(port, "127.0.0.1", resolve));
  return Object.assign(started, { front, port: (front.listener.address() as AddressInfo).port });
}

/** One HTTP/1.1 request on a new TLS connection offering `session`: whether it was resumed, and the session to offer next. */
function connect(port: number, session?: Buffer): Promise<{ reused: boolean; session: Buffer | undefined }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, ca: ca.caPem, ...(session ? { session } : {}) });
    let next: Buffer | undefined;
    let reused = false;
    socket.on("session", (s: Buffer) => (next = s));
    socket.once("secureConnect", () => {
      reused = socket.isSessionReused();
      socket.write("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    });
    socket.on("data", () => {});
    socket.on("error", reject);
    socket.on("close", () => resolve({ reused, session: next }));
  });
}

describe("sessions resumed across servers holding the same key", () => {
  it("a session from one server resumes on another with the same key, not on one with another key", async () => {
    const [a, b, other] = await Promise.all([startFront(material), startFront(material), startFront(otherKey)]);
    try {
      const first = await connect(a.port);
      expect(first.reused).toBe(false);
      expect(first.session).toBeDefined();
      expect(a.handshakes).toEqual({ new: 1, resumed: 0 });

      const onB = await connect(b.port, first.session);
      expect(onB.reused).toBe(true);
      expect(b.handshakes).toEqual({ new: 0, resumed: 1 });

      const onOther = await connect(other.port, first.session);
      expect(onOther.reused).toBe(false);
      expect(other.handshakes).toEqual({ new: 1, resumed: 0 });
    } finally {
      await Promise.all([a, b, other].map((f) => f.front.close()));
    }
  });

  it("a certificate renewed in place (setMaterial) keeps resuming the sessions of the same key", async () => {
    const a = await startFront(material);
    try {
      const first = await connect(a.port);
      a.front.setMaterial(material);
      expect((await connect(a.port, first.session)).reused).toBe(true);
    } finally {
      await a.front.close();
    }
  });

  it("the agent's transport resumes after its server restarted: its held request cut, its connects refused while it was down", async () => {
    const before = await startFront(material);
    const port = before.port;
    const transport = createNodeHttpTransport({ trust: new ServerTrust({ caFile: ca.caFile }) });
    try {
      // A held long-poll, cut when the server goes (Node's own agent forgets the session here).
      const held = transport.fetch(`https://127.0.0.1:${port}/hold`);
      await eventually(async () => (before.holding.length === 1 ? true : undefined));
      expect(before.handshakes).toEqual({ new: 1, resumed: 0 });
      // Gone as a killed process goes: its sockets reset.
      for (const res of before.holding) res.socket?.destroy();
      await before.front.close();
      await expect(held).rejects.toMatchObject({ code: "ECONNRESET" });
      // Down: its connects are refused, a device retrying as it backs off.
      for (let attempt = 0; attempt < 3; attempt++) {
        await expect(transport.fetch(`https://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: "ECONNREFUSED" });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const after = await startFront(material, port);
      try {
        expect(await (await transport.fetch(`https://127.0.0.1:${port}/`)).text()).toBe("ok");
        expect(after.handshakes).toEqual({ new: 0, resumed: 1 });
      } finally {
        await after.front.close();
      }
    } finally {
      transport.close();
    }
  });
});

