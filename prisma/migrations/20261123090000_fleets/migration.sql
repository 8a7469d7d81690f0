-- CreateTable
CREATE TABLE "Fleet" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "labels" TEXT NOT NULL DEFAULT '{}',
    "selector" TEXT NOT NULL,
    "rolloutPolicy" TEXT,
    "templateVersion" TEXT NOT NULL,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "status" TEXT NOT NULL DEFAULT '{}',
    "createdBy" TEXT NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "TemplateVersion" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "fleetId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "spec" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "diff" TEXT NOT NULL DEFAULT '',
    "outcome" TEXT NOT NULL DEFAULT 'Pending',
    "outcomeMessage" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "TemplateVersion_fleetId_fkey" FOREIGN KEY ("fleetId") REFERENCES "Fleet" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Rollout" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "fleetId" TEXT NOT NULL,
    "templateVersion" TEXT NOT NULL,
    "previousVersion" TEXT,
    "phase" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT '{}',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "endedAt" DATETIME,
    CONSTRAINT "Rollout_fleetId_fkey" FOREIGN KEY ("fleetId") REFERENCES "Fleet" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "RolloutRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "fleetId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "reason" TEXT,
    "actor" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "handledAt" DATETIME,
    "outcome" TEXT,
    "message" TEXT,
    CONSTRAINT "RolloutRequest_fleetId_fkey" FOREIGN KEY ("fleetId") REFERENCES "Fleet" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Device" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "agentVersion" TEXT NOT NULL,
    "enrollmentId" TEXT,
    "tokenHash" TEXT,
    "credentialRevokedAt" DATETIME,
    "owner" TEXT,
    "multipleOwners" TEXT,
    "renderedVersion" INTEGER NOT NULL DEFAULT 0,
    "templateVersion" TEXT,
    "renderedSpecId" TEXT,
    "spec" TEXT,
    "renderedAt" DATETIME,
    "decommissionRequestedAt" DATETIME,
    "decommissionRequestedBy" TEXT,
    "conflictPaused" BOOLEAN NOT NULL DEFAULT false,
    "lastSeen" DATETIME,
    "reported" TEXT,
    "summary" TEXT NOT NULL DEFAULT 'Offline',
    "updatedStatus" TEXT NOT NULL DEFAULT 'Unknown',
    "updatingReason" TEXT,
    "applicationSummary" TEXT NOT NULL DEFAULT 'Unknown',
    "lifecycle" TEXT NOT NULL DEFAULT 'Enrolled',
    "decommissioning" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Device_enrollmentId_fkey" FOREIGN KEY ("enrollmentId") REFERENCES "EnrollmentRequest" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "Device_owner_fkey" FOREIGN KEY ("owner") REFERENCES "Fleet" ("name") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "Device_renderedSpecId_fkey" FOREIGN KEY ("renderedSpecId") REFERENCES "TemplateVersion" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_Device" ("agentVersion", "applicationSummary", "conflictPaused", "createdAt", "credentialRevokedAt", "decommissionRequestedAt", "decommissionRequestedBy", "decommissioning", "enrollmentId", "id", "lastSeen", "lifecycle", "name", "owner", "platform", "renderedVersion", "reported", "role", "spec", "summary", "templateVersion", "tokenHash", "updatedAt", "updatedStatus", "updatingReason") SELECT "agentVersion", "applicationSummary", "conflictPaused", "createdAt", "credentialRevokedAt", "decommissionRequestedAt", "decommissionRequestedBy", "decommissioning", "enrollmentId", "id", "lastSeen", "lifecycle", "name", "owner", "platform", "renderedVersion", "reported", "role", "spec", "summary", "templateVersion", "tokenHash", "updatedAt", "updatedStatus", "updatingReason" FROM "Device";
DROP TABLE "Device";
ALTER TABLE "new_Device" RENAME TO "Device";
CREATE UNIQUE INDEX "Device_name_key" ON "Device"("name");
CREATE UNIQUE INDEX "Device_enrollmentId_key" ON "Device"("enrollmentId");
CREATE UNIQUE INDEX "Device_tokenHash_key" ON "Device"("tokenHash");
CREATE INDEX "Device_summary_idx" ON "Device"("summary");
CREATE INDEX "Device_updatedStatus_idx" ON "Device"("updatedStatus");
CREATE INDEX "Device_owner_updatedStatus_idx" ON "Device"("owner", "updatedStatus");
CREATE INDEX "Device_renderedSpecId_idx" ON "Device"("renderedSpecId");
CREATE INDEX "Device_applicationSummary_idx" ON "Device"("applicationSummary");
CREATE INDEX "Device_lifecycle_idx" ON "Device"("lifecycle");
CREATE INDEX "Device_lastSeen_idx" ON "Device"("lastSeen");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "Fleet_name_key" ON "Fleet"("name");

-- CreateIndex
CREATE UNIQUE INDEX "TemplateVersion_fleetId_version_key" ON "TemplateVersion"("fleetId", "version");

-- CreateIndex
CREATE INDEX "Rollout_fleetId_createdAt_idx" ON "Rollout"("fleetId", "createdAt");

-- CreateIndex
CREATE INDEX "RolloutRequest_fleetId_handledAt_idx" ON "RolloutRequest"("fleetId", "handledAt");

