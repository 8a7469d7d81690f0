-- Issue 10: a rerun of an ended action records the action it runs again.
-- AlterTable
ALTER TABLE "Action" ADD COLUMN "rerunOf" TEXT;

-- CreateIndex
CREATE INDEX "Action_rerunOf_idx" ON "Action"("rerunOf");
