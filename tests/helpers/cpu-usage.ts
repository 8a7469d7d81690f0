/**
 * Per-file CPU, for measuring the suite (issue 20): with DROVER_TEST_CPU=FILE, vitest.config.ts runs
 * this before every test file, and it appends one line per file to FILE: project, file, the worker's
 * CPU-s (user + system), its reaped children's CPU-s (agents, CLI and server processes) and wall
 * seconds, from before the file's import to after its last afterAll (hooks run in reverse order of
 * registration, so this one is last). Files run one after another in a worker, so the deltas are
 * the file's alone; a worker's own start and the pool's are not counted. Each test gets a line of
 * its own too (its name after the file's; its beforeEach and afterEach included, not its beforeAll).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeEach } from "vitest";

/** CPU-s of the reaped children of this process (/proc/self/stat's cutime + cstime, in clock ticks). */
function childrenCpu(): number {
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const out = process.env.DROVER_TEST_CPU;
if (out) {
  const cpu = process.cpuUsage();
  const children = childrenCpu();
  const wall = performance.now();
  let test = { cpu, children, wall };
  beforeEach(() => void (test = { cpu: process.cpuUsage(), children: childrenCpu(), wall: performance.now() }));
  afterEach((context) => {
    const used = process.cpuUsage(test.cpu);
    const file = path.relative(process.cwd(), context.task.file.filepath);
    const project = process.env.DROVER_TEST_DATABASE ?? (file.startsWith("tests/") ? "sqlite" : "unit");
    const line = [project, `${file} > ${context.task.name}`, ((used.user + used.system) / 1e6).toFixed(2), (childrenCpu() - test.children).toFixed(2), ((performance.now() - test.wall) / 1000).toFixed(1)];
    fs.appendFileSync(`${out}.tests`, `${line.join("\t")}\n`);
  });
  // vitest reads the hook's first parameter: it must be a destructuring pattern.
  // eslint-disable-next-line no-empty-pattern
  afterAll(({}, suite) => {
    const used = process.cpuUsage(cpu);
    const file = "filepath" in suite && typeof suite.filepath === "string" ? path.relative(process.cwd(), suite.filepath) : suite.name;
    const project = process.env.DROVER_TEST_DATABASE ?? (file.startsWith("tests/") ? "sqlite" : "unit");
    const line = [project, file, ((used.user + used.system) / 1e6).toFixed(2), (childrenCpu() - children).toFixed(2), ((performance.now() - wall) / 1000).toFixed(1)];
    fs.appendFileSync(out, `${line.join("\t")}\n`);
  });
}
