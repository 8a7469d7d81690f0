-- AlterTable
ALTER TABLE "EnrollmentRequest" ADD COLUMN "tokenId" TEXT;

-- CreateTable
CREATE TABLE "EnrollmentToken" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "labels" TEXT NOT NULL DEFAULT '{}',
    "expiresAt" DATETIME,
    "maxUses" INTEGER,
    "uses" INTEGER NOT NULL DEFAULT 0,
    "autoApprove" BOOLEAN NOT NULL DEFAULT false,
    "createdBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" DATETIME,
    "revokedBy" TEXT
);

-- CreateIndex
CREATE UNIQUE INDEX "EnrollmentToken_hash_key" ON "EnrollmentToken"("hash");

-- CreateIndex
CREATE INDEX "EnrollmentToken_createdAt_idx" ON "EnrollmentToken"("createdAt");

-- CreateIndex
CREATE INDEX "EnrollmentRequest_tokenId_idx" ON "EnrollmentRequest"("tokenId");

