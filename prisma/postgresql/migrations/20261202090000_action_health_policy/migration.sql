-- Issue 21: the least healthy device summary an action is offered to (Online, Degraded, Error).
-- AlterTable
ALTER TABLE "Action" ADD COLUMN "healthPolicy" TEXT NOT NULL DEFAULT 'Degraded';
