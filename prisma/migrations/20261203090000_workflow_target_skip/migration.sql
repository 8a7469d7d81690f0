-- Issue 21: an operator skips a workflow step's target (who, when, why).
-- AlterTable
ALTER TABLE "WorkflowStepAction" ADD COLUMN "skippedAt" DATETIME;
ALTER TABLE "WorkflowStepAction" ADD COLUMN "skippedBy" TEXT;
ALTER TABLE "WorkflowStepAction" ADD COLUMN "skipReason" TEXT;
