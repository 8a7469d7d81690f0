/**
 * A Drover server without the console: the agent API, the operator REST API, tRPC, /metrics
 * (no Next.js, no build needed). For tests that start servers as processes
 * (tests/scale-out.test.ts) and `scripts/cluster.mjs --no-console`. Configured by the
 * environment like `npm start`; prints `{"ready": URL}` once listening.
 */
import { startServer, tuneServerHeap } from "../server/main";

// The same heap settings as `npm start`'s server (server/heap.ts).
tuneServerHeap.before();
const running = await startServer({ console: false });
tuneServerHeap.running(running);
process.stdout.write(`${JSON.stringify({ ready: running.url })}\n`);
const stop = () => void running.close().then(() => process.exit(0), () => process.exit(1));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
