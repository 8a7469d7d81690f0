-- Issue 22: the password-guessing counts live in the database, shared by every server.
-- CreateTable
CREATE TABLE "LoginThrottleEntry" (
    "kind" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "lastFailure" DATETIME NOT NULL,
    "lockedUntil" DATETIME NOT NULL,
    "pending" INTEGER NOT NULL DEFAULT 0,
    "pendingSince" DATETIME NOT NULL,
    "quietFrom" DATETIME NOT NULL,
    "touchedAt" DATETIME NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("kind", "key")
);

-- CreateIndex
CREATE INDEX "LoginThrottleEntry_kind_touchedAt_idx" ON "LoginThrottleEntry"("kind", "touchedAt");
