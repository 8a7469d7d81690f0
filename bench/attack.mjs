// Hostile load for bench/soak.ts: what one unauthenticated outsider can do on the server's own
// port, kept up until SIGTERM, then a JSON report on stdout.
//   - CONNS sockets held open at all times, reopened as the server closes them: bodies that
//     never finish, headers that never finish, unparseable URLs, malformed %-escapes, bodies
//     declared far over the limit, text/plain bodies;
//   - a password-guessing loop on POST /api/v1/auth/token and the console sign-in, with a
//     new X-Forwarded-For on every try;
//   - a flood of enrollment requests under fresh names.
// Input: a JSON file {url, conns, guessers}.
import net from "node:net";
import http from "node:http";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { setTimeout } from "node:timers";
import { Buffer } from "node:buffer";

const { url, conns, guessers } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const base = new URL(url);
let stopped = false;

const stats = {
  opened: 0,
  openNow: 0,
  peakOpen: 0,
  /** Closed by the server after an answer, by status. */
  answered: {},
  /** Closed by the server with no answer (e.g. the header deadline). */
  closedSilently: 0,
  /** Refused or reset before anything was sent or answered. */
  refused: 0,
  guesses: 0,
  guessStatus: {},
  enrollments: 0,
  enrollmentStatus: {},
};

const KINDS = [
  // A body that never finishes.
  () => `POST /api/v1/auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
  () => `POST /api/trpc/auth.createToken HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":`,
  // Headers that never finish.
  () => `GET /api/v1/devices HTTP/1.1\r\nHost: x\r\nX-Slow: `,
  // Unparseable URL; malformed escape; a body far over the limit; a text/plain body.
  () => `GET http://[::1/ HTTP/1.1\r\nHost: x\r\n\r\n`,
  () => `PUT /api/agent/v1/actions/%E0%A4%A HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`,
  () => `POST /api/trpc/auth.createToken HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 209715200\r\n\r\n`,
  () => `POST /api/v1/auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}`,
];
// Mostly the slow kinds: they are what holds sockets.
const WEIGHTS = [30, 15, 25, 5, 5, 10, 10];
const pick = () => {
  let r = Math.random() * WEIGHTS.reduce((a, b) => a + b, 0);
  for (let i = 0; i < WEIGHTS.length; i++) if ((r -= WEIGHTS[i]) < 0) return KINDS[i];
  return KINDS[0];
};

function hold() {
  if (stopped) return;
  const socket = net.connect(Number(base.port), base.hostname);
  let text = "";
  let connected = false;
  stats.opened++;
  socket.setNoDelay(true);
  socket.on("connect", () => {
    connected = true;
    stats.openNow++;
    stats.peakOpen = Math.max(stats.peakOpen, stats.openNow);
    socket.write(pick()());
  });
  socket.on("data", (c) => (text += c.toString("latin1")));
  socket.on("error", () => undefined);
  socket.on("close", () => {
    if (connected) stats.openNow--;
    const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
    if (status) stats.answered[status] = (stats.answered[status] ?? 0) + 1;
    else if (connected) stats.closedSilently++;
    else stats.refused++;
    // Reopen right away (a short pause, so that this is a socket-holding attack and not a
    // connect-rate one on the same two cores).
    if (!stopped) setTimeout(hold, connected ? 100 : 200);
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function post(path, body, headers = {}) {
  return new Promise((resolve) => {
    const payload = JSON.stringify(body);
    const req = http.request(
      { host: base.hostname, port: base.port, path, method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...headers } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", () => resolve(0));
    req.end(payload);
  });
}

const fakeAddress = () => `${10 + Math.floor(Math.random() * 200)}.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}`;

async function guess(i) {
  const users = ["admin", "root", "operator", `user${i}`];
  while (!stopped) {
    const username = users[stats.guesses % users.length];
    const path = stats.guesses % 2 === 0 ? "/api/v1/auth/token" : "/api/auth/sign-in/username";
    const status = await post(path, { username, password: randomBytes(6).toString("hex") }, { "x-forwarded-for": fakeAddress() });
    stats.guesses++;
    stats.guessStatus[status] = (stats.guessStatus[status] ?? 0) + 1;
    // A throttled guesser does not wait for Retry-After: it keeps knocking.
    if (status === 0) await sleep(50);
  }
}

async function enrollFlood() {
  while (!stopped) {
    const status = await post("/api/agent/v1/enrollments", {
      deviceName: `flood-${randomBytes(5).toString("hex")}`,
      labels: {},
      platform: "linux-amd64",
      role: "worker",
      agentVersion: "0",
      secret: randomBytes(32).toString("base64url"),
    }, { "x-forwarded-for": fakeAddress() });
    stats.enrollments++;
    stats.enrollmentStatus[status] = (stats.enrollmentStatus[status] ?? 0) + 1;
    await sleep(20);
  }
}

process.on("SIGTERM", () => {
  stopped = true;
  process.stdout.write(JSON.stringify(stats));
  process.exit(0);
});

// Open the sockets in waves, so the connect storm itself is not the whole test.
for (let i = 0; i < conns; i++) {
  hold();
  if (i % 500 === 499) await sleep(100);
}
for (let i = 0; i < guessers; i++) void guess(i);
void enrollFlood();
