/**
 * The run view with big workflows (issue 9), measured in Chromium with Playwright against a real
 * server: step 0 of `npm run bench` (before the agents, on a quiet machine), or alone with
 * `npx tsx bench/workflow-graph.ts` (its own server, JSON on stdout).
 *
 * Workflows are created through the REST API and kept steady: their first step's action waits
 * for an operator's approval on an enrolled device that never polls, so the run stays Running,
 * that step Running and every other step Pending (the other steps name a device that does not
 * exist: they never start). The shapes have no fan-out to collapse (each step depends on the
 * one before it in its lane and often on a neighbour lane's): the worst case for drawing.
 *
 *   - 2,000 steps (40 lanes of 50): time from navigation start to every visible node drawn,
 *     the layout alone (in the worker), the getWorkflow answer, and a "fit view" of all 2,000.
 *   - 10,000 steps (100 lanes of 100): time to first draw; navigability: frame times (p95 and
 *     max, from requestAnimationFrame) while panning by drag and zooming by pinch (ctrl+wheel);
 *     a click on a step opens its panel.
 *
 * Options (env): BENCH_GRAPH_STEPS (2000), BENCH_GRAPH_BIG_STEPS (10000), CHROMIUM_PATH.
 */
import { randomBytes } from "node:crypto";
import type { Page } from "playwright";
import { launchChromium, signedInPage } from "./browser";
import { client, logger, percentile, runScope, sleep, startServerProcess } from "./lib";

const DEVICE = "bench-graph-device";

/** `total` steps in `lanes` lanes (names `s<lane>-<col>`, short to fit the 1 MiB body): lane l, column c depends on (l, c-1) and, for two in three, on a neighbour lane's (l±1, c-1). The first step `a` is the one that runs. */
export function laneSpec(total: number, lanes: number, device: string) {
  let seed = 42;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const steps: Record<string, unknown> = {
    a: { jobTemplate: { kind: "noop", targets: { devices: [device] }, requireApproval: true } },
  };
  // Steps that never start: a device that does not exist (they would fail if they did).
  const never = { kind: "noop", targets: { devices: ["x"] } };
  let count = 1;
  for (let c = 0; count < total; c++) {
    for (let l = 0; l < lanes && count < total; l++, count++) {
      const deps = c === 0 ? ["a"] : [`s${l}-${c - 1}`];
      if (c > 0 && rnd() < 2 / 3) {
        const n = Math.min(lanes - 1, Math.max(0, l + (rnd() < 0.5 ? -1 : 1)));
        if (n !== l) deps.push(`s${n}-${c - 1}`);
      }
      steps[`s${l}-${c}`] = { dependencies: deps, jobTemplate: never };
    }
  }
  return { metadata: { name: `graph-${total}` }, spec: { steps } };
}

interface Frames { frames: number; p50: number; p95: number; max: number }

/** Collects requestAnimationFrame intervals while `work` runs. */
async function frameTimes(page: Page, work: () => Promise<void>): Promise<Frames> {
  // A string, not a function: tsx would wrap the inner arrow functions in a helper the page lacks.
  await page.evaluate(`(() => {
    window.__frames = [];
    window.__framesOn = true;
    let last = 0;
    const tick = (t) => {
      window.__frames.push(t - last);
      last = t;
      if (window.__framesOn) requestAnimationFrame(tick);
    };
    requestAnimationFrame((t) => {
      last = t;
      requestAnimationFrame(tick);
    });
  })()`);
  await work();
  const frames = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __framesOn: boolean };
    w.__framesOn = false;
    return w.__frames;
  });
  const sorted = [...frames].sort((a, b) => a - b);
  return { frames: frames.length, p50: round(percentile(sorted, 50)), p95: round(percentile(sorted, 95)), max: round(sorted.at(-1) ?? NaN) };
}

const round = (n: number) => Math.round(n * 10) / 10;

/** The run view drawn: its layout ready, its first view set, and every rendered node measured (React Flow hides a node until it is). Returns the page's clock (ms since navigation start). */
async function drawn(page: Page, timeout: number): Promise<{ at: number; nodes: number }> {
  const h = await page.waitForFunction(
    () => {
      const box = document.querySelector<HTMLElement>('[data-testid="run-view"]');
      if (!box || box.dataset.layout !== "ready" || box.dataset.view !== "ready") return false;
      const nodes = box.querySelectorAll<HTMLElement>(".react-flow__node");
      if (nodes.length === 0) return false;
      for (const n of nodes) if (n.style.visibility === "hidden") return false;
      return { at: performance.now(), nodes: nodes.length };
    },
    undefined,
    { polling: "raf", timeout },
  );
  return (await h.jsonValue()) as { at: number; nodes: number };
}

async function layoutMeasure(page: Page): Promise<{ totalMs: number; workerMs: number; nodes: number } | null> {
  return page.evaluate(() => {
    const m = performance.getEntriesByName("drover:layout").at(-1) as PerformanceMeasure | undefined;
    if (!m) return null;
    const d = m.detail as { nodes: number; layoutMs: number };
    return { totalMs: Math.round(m.duration), workerMs: Math.round(d.layoutMs), nodes: d.nodes };
  });
}

export interface GraphBenchReport {
  steps2000: Record<string, unknown>;
  steps10000: Record<string, unknown>;
}

/**
 * Runs the measurements against the server at `url` (DROVER_AUTO_APPROVE must cover the label
 * bench=true, as in run.ts) as `admin` / `adminPassword`.
 */
export async function benchWorkflowGraph(opts: { url: string; adminPassword: string; steps?: number; bigSteps?: number; deadline: number; log: (m: string) => void }): Promise<GraphBenchReport> {
  const { json } = client(opts.url);
  const log = opts.log;
  const remaining = () => Math.max(5_000, opts.deadline - Date.now());
  const token = (await json<{ token: string }>("POST", "/api/v1/auth/token", { username: "admin", password: opts.adminPassword })).body.token;
  const op = { authorization: `Bearer ${token}` };

  // The device the first step's action waits on: enrolled (auto-approved), never polling.
  const secret = randomBytes(32).toString("base64url");
  const e = await json<{ enrollmentId: string }>("POST", "/api/agent/v1/enrollments", { deviceName: DEVICE, labels: { bench: "true" }, platform: "linux-amd64", role: "worker", agentVersion: "bench", secret });
  if (e.status !== 201) throw new Error(`enroll ${DEVICE}: ${e.status} ${JSON.stringify(e.body)}`);
  const d = await json<{ token?: string }>("GET", `/api/agent/v1/enrollments/${e.body.enrollmentId}?wait=10`, undefined, { "x-enrollment-secret": secret });
  if (!d.body.token) throw new Error(`no token for ${DEVICE}: ${JSON.stringify(d.body)}`);

  const shape = (steps: number) => laneSpec(steps, steps >= 10_000 ? 100 : 40, DEVICE);
  const create = async (steps: number) => {
    const wf = shape(steps);
    const body = JSON.stringify(wf);
    const t0 = performance.now();
    const res = await json<{ status?: { phase: string } }>("POST", "/api/v1/workflows", wf, op);
    const createMs = performance.now() - t0;
    if (res.status !== 201) throw new Error(`create ${wf.metadata.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    const t1 = performance.now();
    const got = await json<{ status: { phase: string; statuses: Record<string, { phase: string }> } }>("GET", `/api/v1/workflows/${wf.metadata.name}`, undefined, op);
    const getMs = performance.now() - t1;
    const running = Object.values(got.body.status.statuses).filter((s) => s.phase === "Running").length;
    log(`${wf.metadata.name}: ${Object.keys(wf.spec.steps).length} steps, body ${(body.length / 1024).toFixed(0)} KiB, create ${Math.round(createMs)} ms, GET ${Math.round(getMs)} ms, ${got.body.status.phase}, ${running} running`);
    return { name: wf.metadata.name, steps: Object.keys(wf.spec.steps).length, bodyKiB: Math.round(body.length / 1024), createMs: Math.round(createMs), getMs: Math.round(getMs) };
  };
  const small = await create(opts.steps ?? 2000);
  const big = await create(opts.bigSteps ?? 10_000);

  const browser = await launchChromium();
  try {
    const page = await signedInPage(browser, opts.url, opts.adminPassword, Math.min(120_000, remaining()));

    // One warm-up load (the console's chunks into the browser's cache, the worker compiled once
    // by the server's first answer), then the measured loads, each a fresh navigation.
    await page.goto(`${opts.url}/workflows/${small.name}`);
    await drawn(page, remaining());

    const loads: { drawnMs: number; nodes: number; layout: Awaited<ReturnType<typeof layoutMeasure>> }[] = [];
    for (let i = 0; i < 3; i++) {
      // From a blank page: navigation start would otherwise include tearing the last one down.
      await page.goto("about:blank");
      await page.goto(`${opts.url}/workflows/${small.name}`);
      const r = await drawn(page, remaining());
      loads.push({ drawnMs: Math.round(r.at), nodes: r.nodes, layout: await layoutMeasure(page) });
    }
    // Every step at once: the Controls' fit view, time until they are all drawn.
    const fitAll = await page.evaluate(async (expect: number) => {
      const t0 = performance.now();
      document.querySelector<HTMLButtonElement>(".react-flow__controls-fitview")!.click();
      for (;;) {
        await new Promise((r) => requestAnimationFrame(r));
        // Drawn as elements, or far out painted on the run view's canvas (far-layer.tsx).
        const nodes = document.querySelectorAll<HTMLElement>('[data-testid="run-view"] .react-flow__node');
        const painted = Number(document.querySelector<HTMLElement>('[data-testid="run-view-far"]')?.dataset.drawn ?? 0);
        if (painted >= expect) return { ms: performance.now() - t0, nodes: painted };
        if (nodes.length >= expect && [...nodes].every((n) => n.style.visibility !== "hidden")) return { ms: performance.now() - t0, nodes: nodes.length };
        if (performance.now() - t0 > 30_000) return { ms: NaN, nodes: nodes.length };
      }
    }, Math.floor(small.steps * 0.75));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const steps2000 = {
      ...small,
      navigationToDrawnMs: loads.map((l) => l.drawnMs),
      navigationToDrawnMedianMs: median(loads.map((l) => l.drawnMs)),
      nodesDrawn: loads[0]!.nodes,
      layoutMs: loads.map((l) => l.layout?.totalMs ?? null),
      layoutInWorkerMs: loads.map((l) => l.layout?.workerMs ?? null),
      fitAllMs: Math.round(fitAll.ms),
      fitAllNodes: fitAll.nodes,
      targetMsUnder: 1000,
    };
    log(`${small.steps} steps: drawn ${steps2000.navigationToDrawnMs.join(", ")} ms after navigation (layout ${steps2000.layoutMs.join(", ")} ms, in the worker ${steps2000.layoutInWorkerMs.join(", ")}), fit all ${steps2000.fitAllMs} ms`);

    // 10,000 steps.
    await page.goto("about:blank");
    await page.goto(`${opts.url}/workflows/${big.name}`);
    const first = await drawn(page, remaining());
    const bigLayout = await layoutMeasure(page);
    const pane = page.getByTestId("run-view").locator(".react-flow__pane");
    const box = (await pane.boundingBox())!;
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const pan = await frameTimes(page, async () => {
      for (let round = 0; round < 2; round++) {
        await page.mouse.move(cx + 300, cy + 150);
        await page.mouse.down();
        for (let i = 1; i <= 60; i++) await page.mouse.move(cx + 300 - i * 12, cy + 150 - i * 5);
        await page.mouse.up();
      }
    });
    const zoom = await frameTimes(page, async () => {
      await page.mouse.move(cx, cy);
      await page.keyboard.down("Control");
      for (let i = 0; i < 30; i++) await page.mouse.wheel(0, 40); // out
      for (let i = 0; i < 30; i++) await page.mouse.wheel(0, -40); // back in
      await page.keyboard.up("Control");
    });
    // A click on a step opens its panel: the step nearest the middle of the pane (one at its
    // edge may be clipped by it).
    const target = (await page.evaluate(`(() => {
      const pane = document.querySelector('[data-testid="run-view"] .react-flow__renderer').getBoundingClientRect();
      const mx = pane.left + pane.width / 2, my = pane.top + pane.height / 2;
      let best = null;
      for (const n of document.querySelectorAll('[data-testid="run-view"] .react-flow__node-step')) {
        const r = n.getBoundingClientRect();
        const x = r.left + r.width / 2, y = r.top + r.height / 2;
        const d = Math.hypot(x - mx, y - my);
        if (r.left > pane.left && r.right < pane.right && r.top > pane.top && r.bottom < pane.bottom && (!best || d < best.d)) best = { id: n.dataset.id, x, y, d };
      }
      return best;
    })()`)) as { id: string; x: number; y: number } | null;
    if (!target) throw new Error("no step on screen to click");
    const stepId = target.id;
    const t0 = Date.now();
    await page.mouse.click(target.x, target.y);
    await page.getByTestId("step-details").and(page.locator(`[data-step="${stepId}"]`)).waitFor();
    const clickToPanelMs = Date.now() - t0;
    const steps10000 = {
      ...big,
      navigationToFirstDrawMs: Math.round(first.at),
      nodesDrawn: first.nodes,
      layoutMs: bigLayout?.totalMs ?? null,
      layoutInWorkerMs: bigLayout?.workerMs ?? null,
      panFrameMs: pan,
      zoomFrameMs: zoom,
      clickedStep: stepId,
      clickToPanelMs,
    };
    log(`${big.steps} steps: first draw ${steps10000.navigationToFirstDrawMs} ms (layout ${steps10000.layoutMs} ms), pan p95 ${pan.p95} ms, zoom p95 ${zoom.p95} ms, click → panel ${clickToPanelMs} ms`);
    return { steps2000, steps10000 };
  } finally {
    await browser.close();
    // A Running workflow is passed on every controller tick: gone, so the later bench steps measure what they mean to.
    for (const name of [small.name, big.name]) await json("DELETE", `/api/v1/workflows/${name}`, undefined, op);
  }
}

// Alone: its own server on a fresh database.
if (import.meta.url === `file://${process.argv[1]}`) {
  const log = logger("bench-graph");
  const port = Number(process.env.BENCH_PORT ?? 3292);
  const { deadline, children, dir } = runScope("bench-graph", Number(process.env.BENCH_DEADLINE_SECONDS ?? 600));
  const adminPassword = "bench-admin-password";
  void (async () => {
    const { execFileSync } = await import("node:child_process");
    const path = await import("node:path");
    const { root } = await import("./lib");
    execFileSync(process.execPath, [path.join(root, "scripts", "ensure-build.mjs")], { stdio: "inherit" });
    const server = await startServerProcess({ port, dir, adminPassword, env: { DROVER_AUTO_APPROVE: "bench=true" }, deadline });
    children.push(server);
    await sleep(1000);
    const report = await benchWorkflowGraph({
      url: `http://127.0.0.1:${port}`, adminPassword, deadline, log,
      steps: Number(process.env.BENCH_GRAPH_STEPS ?? 2000), bigSteps: Number(process.env.BENCH_GRAPH_BIG_STEPS ?? 10_000),
    });
    process.stdout.write(JSON.stringify({ workflowGraph: report }, null, 2) + "\n");
  })().then(
    () => process.exit(0),
    (err: unknown) => {
      log(`failed: ${err instanceof Error ? err.stack : String(err)}`);
      process.exit(1);
    },
  );
}
