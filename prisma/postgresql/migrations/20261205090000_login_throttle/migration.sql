-- Issue 22: the password-guessing counts live in the database, shared by every server.
-- CreateTable
CREATE TABLE "LoginThrottleEntry" (
    "kind" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "lastFailure" TIMESTAMP(3) NOT NULL,
    "lockedUntil" TIMESTAMP(3) NOT NULL,
    "pending" INTEGER NOT NULL DEFAULT 0,
    "pendingSince" TIMESTAMP(3) NOT NULL,
    "quietFrom" TIMESTAMP(3) NOT NULL,
    "touchedAt" TIMESTAMP(3) NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "LoginThrottleEntry_pkey" PRIMARY KEY ("kind","key")
);

-- CreateIndex
CREATE INDEX "LoginThrottleEntry_kind_touchedAt_idx" ON "LoginThrottleEntry"("kind", "touchedAt");
