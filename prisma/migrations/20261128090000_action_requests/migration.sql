-- Issue 10: an operator's request over many devices is one object, approved or rejected as a unit.
-- AlterTable
ALTER TABLE "Action" ADD COLUMN "requestId" TEXT;

-- CreateTable
CREATE TABLE "ActionRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "kind" TEXT NOT NULL,
    "args" TEXT NOT NULL DEFAULT '{}',
    "origin" TEXT NOT NULL,
    "ref" TEXT,
    "targetKind" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "requireApproval" BOOLEAN NOT NULL DEFAULT false,
    "decision" TEXT,
    "decidedBy" TEXT,
    "decidedAt" DATETIME,
    "decisionReason" TEXT
);

-- CreateIndex
CREATE INDEX "ActionRequest_createdAt_idx" ON "ActionRequest"("createdAt");

-- CreateIndex
CREATE INDEX "ActionRequest_ref_idx" ON "ActionRequest"("ref");

-- CreateIndex
CREATE INDEX "Action_requestId_state_idx" ON "Action"("requestId", "state");

