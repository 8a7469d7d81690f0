-- Issue 21: an operator skips a workflow step's target (who, when, why).
-- AlterTable
ALTER TABLE "WorkflowStepAction" ADD COLUMN     "skippedAt" TIMESTAMP(3),
ADD COLUMN     "skippedBy" TEXT,
ADD COLUMN     "skipReason" TEXT;
