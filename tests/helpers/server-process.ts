/**
 * A Drover server as its own process, API surfaces only (no console, no build needed), for
 * tests that need several servers on one PostgreSQL or must kill one (tests/scale-out.test.ts).
 * Configured by the environment like `npm start`; prints `{"ready": URL}` once listening.
 */
import { startServer } from "../../server/main";

const running = await startServer({ console: false });
process.stdout.write(`${JSON.stringify({ ready: running.url })}\n`);
const stop = () => void running.close().then(() => process.exit(0), () => process.exit(1));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
