-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Action" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "deviceId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "args" TEXT NOT NULL DEFAULT '{}',
    "origin" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "requireApproval" BOOLEAN NOT NULL DEFAULT false,
    "createdBy" TEXT,
    "decision" TEXT,
    "decidedBy" TEXT,
    "decidedAt" DATETIME,
    "decisionReason" TEXT,
    "offeredAt" DATETIME,
    "cancelRequestedAt" DATETIME,
    "cancelRequestedBy" TEXT,
    "startedAt" DATETIME,
    "finishedAt" DATETIME,
    "output" TEXT,
    "error" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Action_deviceId_fkey" FOREIGN KEY ("deviceId") REFERENCES "Device" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Action" ("args", "createdAt", "createdBy", "deviceId", "error", "id", "kind", "origin", "output", "state", "updatedAt") SELECT "args", "createdAt", "createdBy", "deviceId", "error", "id", "kind", "origin", "output", "state", "updatedAt" FROM "Action";
DROP TABLE "Action";
ALTER TABLE "new_Action" RENAME TO "Action";
CREATE INDEX "Action_deviceId_state_createdAt_idx" ON "Action"("deviceId", "state", "createdAt");
CREATE INDEX "Action_state_createdAt_idx" ON "Action"("state", "createdAt");
CREATE INDEX "Action_createdAt_idx" ON "Action"("createdAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

