/**
 * A `fetch` over node:http / node:https with a keep-alive Agent, for the simulator.
 *
 * Why: the simulator runs thousands of agents in one process, and on this hardware a
 * request through Node 20's global fetch (undici) costs about 4× the CPU of the same
 * request through node:http (≈0.6 ms against ≈0.15 ms, measured on loopback). At 10,000
 * agents that is the difference between the simulator or the server being what a
 * benchmark measures. It implements only what ProtocolClient uses: method, headers,
 * string body and signal in; status, ok, statusText, headers.get, text and json out (not a
 * real Response). The real agent uses it too, for memory: undici's WebAssembly parser costs
 * about 10 MB of an idle agent's RSS.
 *
 * Sockets: unlimited per origin (every agent holds a long-poll), keep-alive, at most
 * `maxFreeSockets` idle ones kept for reuse.
 */
import http from "node:http";
import { Readable } from "node:stream";
import type { ServerTrust } from "./server-trust";

/** node:https (and TLS) is loaded on the first https request: it is ≈1 MB of an idle agent's RSS on plain http. */
let httpsModule: Promise<{ https: typeof import("node:https"); tls: typeof import("node:tls") }> | undefined;
const loadHttps = () => (httpsModule ??= Promise.all([import("node:https"), import("node:tls")]).then(([https, tls]) => ({ https: https.default, tls: tls.default })));

/** Errors of TLS itself (OpenSSL's ERR_SSL_*, Node's ERR_TLS_*, certificate verification), not of the connection. */
const TLS_FAILURE = /^ERR_SSL_|^ERR_TLS_|CERT|SELF_SIGNED|UNABLE_TO_|_SIGNATURE/;

/**
 * An https.Agent that resumes TLS sessions after its server restarted (issue 23). Node's own
 * agent keeps each origin's last session but forgets it when a connection closes with an error,
 * a refused connect included: a device retrying through a restart has forgotten it by the time
 * the server is back, and does a full handshake even where the server would resume (its ticket
 * keys outlive the process: server/tls/session-tickets.ts). This one forgets a session only
 * when TLS itself fails (a protocol or certificate error), not when the connection is refused or
 * reset, mid-handshake included: in a storm a busy server drops handshakes, and the simulator's
 * agents share one session, which one reset would take from all. A server that does not take the
 * ticket just does a full handshake and issues a new one.
 *
 * `maxConnecting` bounds the handshakes in progress; past it a new connection waits for one to
 * finish. For the simulator (thousands of agents on one thread): after a server restart all of
 * them reconnect within a second or two, and opening every connection at once left the thread
 * seconds behind, so that a connection's ClientHello went out after the server's handshake
 * deadline (10 s from the connect) had closed it; every retry made more of them (issue 23's
 * storm: 5,000 agents never back). A real agent opens two connections: it never waits.
 */

function resumingAgent(
  https: typeof import("node:https"),
  tls: typeof import("node:tls"),
  options: import("node:https").AgentOptions,
  maxConnecting: number,
): import("node:https").Agent {
  const agent = new https.Agent(options);
  // One context for every connection: given ca, cert and key instead, tls.connect builds a new one
  // each time (parsing the PEMs: 1.2 ms of a connect's 1.4 ms).
  const secureContext = tls.createSecureContext({ ca: options.ca, cert: options.cert, key: options.key });
  const sessions = new Map<string, Buffer>();
  let connecting = 0;
  const waiting: (() => void)[] = [];
  const open = (connect: import("node:tls").ConnectionOptions): import("node:tls").TLSSocket => {
    const key = `${connect.host}:${connect.port}:${connect.servername ?? ""}`;
    const session = sessions.get(key);
    const socket = tls.connect({ ...connect, secureContext, ...(session ? { session } : {}) });
    socket.on("session", (next: Buffer) => sessions.set(key, next));
    socket.once("error", (error: NodeJS.ErrnoException) => {
      if (TLS_FAILURE.test(error.code ?? "")) sessions.delete(key);
    });
    connecting++;
    let done = false;
    const handshakeOver = () => {
      if (done) return;
      done = true;
      connecting--;
      waiting.shift()?.();
    };
    socket.once("secureConnect", handshakeOver);
    socket.once("close", handshakeOver);
    return socket;
  };
  // Node's Agent takes the socket returned, or one given later to the callback.
  agent.createConnection = ((connect: import("node:tls").ConnectionOptions, created: (error: Error | null, socket?: import("node:net").Socket) => void) => {
    if (connecting < maxConnecting) return open(connect);
    waiting.push(() => {
      try {
        created(null, open(connect));
      } catch (error) {
        created(error as Error);
      }
    });
    return undefined;
  }) as unknown as typeof agent.createConnection;
  return agent;
}

export interface NodeHttpTransport {
  fetch: typeof fetch;
  /** The same requests with the answer's body as a stream (`body`), for downloads (runtime/artifact.ts downloadFile). */
  streamingFetch: typeof fetch;
  /** Closes idle sockets; requests in flight finish. */
  close(): void;
  /**
   * The device's client certificate and key (issue 23), presented on https connections opened
   * from now on; those open keep theirs until they close (a held poll is not cut).
   */
  setClientCertificate(credential: { cert: string; key: string }): void;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** An abort as fetch reports it: the signal's reason, or an AbortError. */
function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException("This operation was aborted", "AbortError");
}

/**
 * The parts of a Response that ProtocolClient reads (status, ok, statusText, headers.get,
 * text, json), without building WHATWG Headers and a body stream for every answer: that was
 * ≈7% of the simulator's CPU at 1,000 agents running actions.
 */
function liteResponse(response: http.IncomingMessage, text: string): Response {
  const status = response.statusCode ?? 0;
  const lite = {
    status,
    ok: status >= 200 && status < 300,
    statusText: response.statusMessage ?? "",
    headers: {
      get(name: string): string | null {
        const value = response.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    },
    text: () => Promise.resolve(text),
    json: () => Promise.resolve(JSON.parse(text) as unknown),
  };
  return lite as unknown as Response;
}

/** HeadersInit as a plain record, lower-cased, without `new Headers()` (the global loads undici). */
function headerRecord(init: HeadersInit | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!init) return headers;
  const entries: Iterable<[string, string]> | [string, string][] =
    Symbol.iterator in init ? (init as Iterable<[string, string]>) : Object.entries(init as Record<string, string>);
  for (const [key, value] of entries) headers[key.toLowerCase()] = value;
  return headers;
}

/** An answer whose body is read as it arrives: `body` a web stream, or text/json once. */
function streamedResponse(response: http.IncomingMessage): Response {
  const status = response.statusCode ?? 0;
  const text = async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  };
  const streamed = {
    status,
    ok: status >= 200 && status < 300,
    statusText: response.statusMessage ?? "",
    headers: liteResponse(response, "").headers,
    body: NULL_BODY_STATUSES.has(status) ? null : Readable.toWeb(response),
    text,
    json: async () => JSON.parse(await text()) as unknown,
  };
  return streamed as unknown as Response;
}

/**
 * `trust` (issue 23): how https servers are checked (server-trust.ts): a pinned CA alone, found
 * before the first request; default Node's trust store.
 */
export function createNodeHttpTransport(options: { maxFreeSockets?: number; maxConnecting?: number; trust?: ServerTrust } = {}): NodeHttpTransport {
  const agentOptions = { keepAlive: true, maxSockets: Infinity, maxFreeSockets: options.maxFreeSockets ?? 256, scheduling: "lifo" as const };
  const httpAgent = new http.Agent(agentOptions);
  let httpsAgent: http.Agent | undefined;
  let clientCertificate: { cert: string; key: string } | null = null;
  const trust = options.trust;
  const explain = (error: unknown) => (trust ? trust.explain(error) : error);

  const nodeFetch = (input: string | URL | Request, init: RequestInit = {}, streaming = false): Promise<Response> =>
    new Promise((resolve, reject) => {
      // Not `instanceof Request`: touching the global loads undici, which this transport avoids.
      const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
      const secure = url.protocol === "https:";
      const headers = headerRecord(init.headers);
      const body = init.body;
      if (body !== undefined && body !== null && typeof body !== "string") {
        reject(new TypeError("node-http transport: only string bodies are supported"));
        return;
      }
      if (typeof body === "string") headers["content-length"] = String(Buffer.byteLength(body));
      const signal = init.signal ?? undefined;
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      const send = (request: http.ClientRequest) => sendRequest(request, body, signal, streaming, resolve, (error) => reject(explain(error)));
      if (!secure) send(http.request(url, { method: init.method ?? "GET", headers, agent: httpAgent }));
      else
        Promise.all([loadHttps(), trust?.caFor(url)]).then(([{ https, tls }, ca]) => {
          httpsAgent ??= resumingAgent(https, tls, { ...agentOptions, ...(ca ? { ca } : {}), ...(clientCertificate ?? {}) }, options.maxConnecting ?? Infinity);
          if (signal?.aborted) reject(abortError(signal));
          else send(https.request(url, { method: init.method ?? "GET", headers, agent: httpsAgent }));
        }, reject);
    });

  /** Runs one request to its end (to its answer's headers when `streaming`), settling the fetch. */
  function sendRequest(
    request: http.ClientRequest,
    body: string | null | undefined,
    signal: AbortSignal | undefined,
    streaming: boolean,
    resolve: (r: Response) => void,
    reject: (e: unknown) => void,
  ): void {
      // The caller's signal by hand: node:http's own `signal` option costs an end-of-stream
      // watcher and an abort listener per request.
      const onAbort = () => request.destroy(abortError(signal!));
      signal?.addEventListener("abort", onAbort, { once: true });
      const settle = () => signal?.removeEventListener("abort", onAbort);
      request.on("error", (error) => {
        settle();
        reject(error);
      });
      request.on("response", (response) => {
        if (streaming) {
          response.once("close", settle);
          return resolve(streamedResponse(response));
        }
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", (error) => {
          settle();
          reject(error);
        });
        response.on("end", () => {
          settle();
          resolve(liteResponse(response, NULL_BODY_STATUSES.has(response.statusCode ?? 0) ? "" : Buffer.concat(chunks).toString("utf8")));
        });
      });
      request.end(body ?? undefined);
  }

  return {
    fetch: ((input: string | URL | Request, init?: RequestInit) => nodeFetch(input, init)) as typeof fetch,
    streamingFetch: ((input: string | URL | Request, init?: RequestInit) => nodeFetch(input, init, true)) as typeof fetch,
    close() {
      httpAgent.destroy();
      httpsAgent?.destroy();
    },
    setClientCertificate(credential) {
      clientCertificate = credential;
      // A new agent, and so no TLS session kept: a resumed session would stand for the old certificate.
      const old = httpsAgent;
      httpsAgent = undefined;
      // Its idle sockets now, those in use (a held poll, at most a minute) once they are done.
      if (old) {
        for (const list of Object.values(old.freeSockets)) for (const socket of list ?? []) socket.destroy();
        old.maxFreeSockets = 0;
        setTimeout(() => old.destroy(), 90_000).unref();
      }
    },
  };
}
