-- CreateTable
CREATE TABLE "Workflow" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "spec" TEXT NOT NULL,
    "labels" TEXT,
    "failFast" BOOLEAN NOT NULL DEFAULT true,
    "activeDeadlineSeconds" INTEGER,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "phase" TEXT NOT NULL,
    "reason" TEXT,
    "message" TEXT NOT NULL DEFAULT '',
    "run" INTEGER NOT NULL DEFAULT 1,
    "startTime" DATETIME,
    "completionTime" DATETIME,
    "cancelRequestedBy" TEXT,
    "cancelRequestedAt" DATETIME,
    "cancelReason" TEXT,
    "createdBy" TEXT NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "WorkflowRun" (
    "workflowName" TEXT NOT NULL,
    "run" INTEGER NOT NULL,
    "startedBy" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "reason" TEXT,
    "message" TEXT NOT NULL DEFAULT '',
    "startTime" DATETIME NOT NULL,
    "completionTime" DATETIME,

    PRIMARY KEY ("workflowName", "run"),
    CONSTRAINT "WorkflowRun_workflowName_fkey" FOREIGN KEY ("workflowName") REFERENCES "Workflow" ("name") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "WorkflowStepStatus" (
    "workflowName" TEXT NOT NULL,
    "step" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "firstStartedAt" DATETIME,
    "nextAttemptAt" DATETIME,
    "startedAt" DATETIME,
    "finishedAt" DATETIME,
    "refWorkflow" TEXT,
    "refRun" INTEGER,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("workflowName", "step"),
    CONSTRAINT "WorkflowStepStatus_workflowName_fkey" FOREIGN KEY ("workflowName") REFERENCES "Workflow" ("name") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "WorkflowStepAction" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "workflowName" TEXT NOT NULL,
    "run" INTEGER NOT NULL,
    "step" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "target" TEXT NOT NULL,
    "deviceId" TEXT,
    "actionId" TEXT,
    "error" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "WorkflowStepAction_workflowName_fkey" FOREIGN KEY ("workflowName") REFERENCES "Workflow" ("name") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Workflow_phase_idx" ON "Workflow"("phase");

-- CreateIndex
CREATE INDEX "WorkflowStepStatus_refWorkflow_phase_idx" ON "WorkflowStepStatus"("refWorkflow", "phase");

-- CreateIndex
CREATE UNIQUE INDEX "WorkflowStepAction_actionId_key" ON "WorkflowStepAction"("actionId");

-- CreateIndex
CREATE INDEX "WorkflowStepAction_workflowName_run_step_attempt_idx" ON "WorkflowStepAction"("workflowName", "run", "step", "attempt");

