-- Issue 21: a plan's approval keeps the approver's reason.
-- AlterTable
ALTER TABLE "Plan" ADD COLUMN "approvalReason" TEXT;
