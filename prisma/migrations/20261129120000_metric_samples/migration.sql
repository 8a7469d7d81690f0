-- Issue 10: the overview's charts, one row of fleet metrics per sample (a minute by default).
-- CreateTable
CREATE TABLE "MetricSample" (
    "at" DATETIME NOT NULL PRIMARY KEY,
    "seconds" REAL NOT NULL,
    "values" TEXT NOT NULL
);
