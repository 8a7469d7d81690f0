-- AlterTable
ALTER TABLE "Workflow" ADD COLUMN "lastScheduleTime" DATETIME;
ALTER TABLE "Workflow" ADD COLUMN "nextScheduleTime" DATETIME;

-- CreateIndex
CREATE INDEX "Workflow_nextScheduleTime_idx" ON "Workflow"("nextScheduleTime");

