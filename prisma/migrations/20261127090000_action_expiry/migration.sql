-- Issue 10: an action may carry an expiry; not started by then, it is cancelled.
-- AlterTable
ALTER TABLE "Action" ADD COLUMN "expiresAt" DATETIME;

-- CreateIndex
CREATE INDEX "Action_expiresAt_idx" ON "Action"("expiresAt");
