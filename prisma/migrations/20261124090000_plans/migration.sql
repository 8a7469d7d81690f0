-- CreateTable
CREATE TABLE "Plan" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT,
    "specId" TEXT,
    "apiVersion" TEXT NOT NULL,
    "spec" TEXT NOT NULL,
    "requireApproval" BOOLEAN NOT NULL DEFAULT false,
    "approvedBy" TEXT,
    "approvedAt" DATETIME,
    "deadline" TEXT,
    "deadlineAt" DATETIME,
    "retryOf" TEXT,
    "cancelRequestedBy" TEXT,
    "cancelRequestedAt" DATETIME,
    "cancelReason" TEXT,
    "createdBy" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "activeCommand" INTEGER,
    "startedAt" DATETIME,
    "endedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "PlanCommandStatus" (
    "planId" TEXT NOT NULL,
    "index" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "startedAt" DATETIME,
    "endedAt" DATETIME,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("planId", "index"),
    CONSTRAINT "PlanCommandStatus_planId_fkey" FOREIGN KEY ("planId") REFERENCES "Plan" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "PlanNode" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "planId" TEXT NOT NULL,
    "commandIndex" INTEGER NOT NULL,
    "group" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "deviceId" TEXT,
    "role" TEXT,
    "platform" TEXT,
    "state" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "actionId" TEXT,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "PlanNode_planId_fkey" FOREIGN KEY ("planId") REFERENCES "Plan" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Plan_createdAt_idx" ON "Plan"("createdAt");

-- CreateIndex
CREATE INDEX "Plan_state_idx" ON "Plan"("state");

-- CreateIndex
CREATE INDEX "Plan_retryOf_idx" ON "Plan"("retryOf");

-- CreateIndex
CREATE UNIQUE INDEX "PlanNode_actionId_key" ON "PlanNode"("actionId");

-- CreateIndex
CREATE INDEX "PlanNode_planId_commandIndex_group_position_idx" ON "PlanNode"("planId", "commandIndex", "group", "position");

-- CreateIndex
CREATE INDEX "PlanNode_planId_state_idx" ON "PlanNode"("planId", "state");

-- CreateIndex
CREATE INDEX "PlanNode_deviceId_state_idx" ON "PlanNode"("deviceId", "state");
