import { pino } from "pino";

/** Structured JSON logs, one line per event. */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === "test" ? "silent" : "info"),
  base: { service: "drover" },
  timestamp: pino.stdTimeFunctions.isoTime,
});
export type Logger = typeof logger;
