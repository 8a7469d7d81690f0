-- AlterTable
ALTER TABLE "ApiToken" ADD COLUMN "name" TEXT;
ALTER TABLE "ApiToken" ADD COLUMN "revokedAt" DATETIME;
ALTER TABLE "ApiToken" ADD COLUMN "revokedBy" TEXT;

-- AlterTable
ALTER TABLE "EnrollmentRequest" ADD COLUMN "clientAddress" TEXT;

-- CreateIndex
CREATE INDEX "ApiToken_userId_createdAt_idx" ON "ApiToken"("userId", "createdAt");

-- CreateIndex
CREATE INDEX "EnrollmentRequest_status_clientAddress_idx" ON "EnrollmentRequest"("status", "clientAddress");

