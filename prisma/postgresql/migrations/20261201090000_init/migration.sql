-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "user" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "emailVerified" BOOLEAN NOT NULL DEFAULT false,
    "image" TEXT,
    "username" TEXT,
    "displayUsername" TEXT,
    "role" TEXT NOT NULL DEFAULT 'viewer',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "session" (
    "id" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "token" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "ipAddress" TEXT,
    "userAgent" TEXT,
    "userId" TEXT NOT NULL,

    CONSTRAINT "session_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "account" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "providerId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "accessToken" TEXT,
    "refreshToken" TEXT,
    "idToken" TEXT,
    "accessTokenExpiresAt" TIMESTAMP(3),
    "refreshTokenExpiresAt" TIMESTAMP(3),
    "scope" TEXT,
    "password" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "account_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "verification" (
    "id" TEXT NOT NULL,
    "identifier" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "verification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiToken" (
    "id" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "name" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    "revokedBy" TEXT,

    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "EnrollmentRequest" (
    "id" TEXT NOT NULL,
    "deviceName" TEXT NOT NULL,
    "labels" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "agentVersion" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'Pending',
    "decidedBy" TEXT,
    "decidedAt" TIMESTAMP(3),
    "reason" TEXT,
    "tokenIssuedAt" TIMESTAMP(3),
    "clientAddress" TEXT,
    "firstSeenAt" TIMESTAMP(3),
    "lastSeenAt" TIMESTAMP(3),
    "lastSeenAddress" TEXT,
    "system" TEXT,
    "approvedLabels" TEXT,
    "tokenId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "EnrollmentRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Device" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "agentVersion" TEXT NOT NULL,
    "enrollmentId" TEXT,
    "tokenHash" TEXT,
    "credentialRevokedAt" TIMESTAMP(3),
    "owner" TEXT,
    "multipleOwners" TEXT,
    "renderedVersion" INTEGER NOT NULL DEFAULT 0,
    "templateVersion" TEXT,
    "renderedSpecId" TEXT,
    "spec" TEXT,
    "renderedAt" TIMESTAMP(3),
    "decommissionRequestedAt" TIMESTAMP(3),
    "decommissionRequestedBy" TEXT,
    "conflictPaused" BOOLEAN NOT NULL DEFAULT false,
    "lastSeen" TIMESTAMP(3),
    "reported" TEXT,
    "summary" TEXT NOT NULL DEFAULT 'Offline',
    "updatedStatus" TEXT NOT NULL DEFAULT 'Unknown',
    "updatingReason" TEXT,
    "applicationSummary" TEXT NOT NULL DEFAULT 'Unknown',
    "lifecycle" TEXT NOT NULL DEFAULT 'Enrolled',
    "decommissioning" TEXT,
    "alias" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Device_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DeviceInventory" (
    "deviceId" TEXT NOT NULL,
    "system" TEXT,
    "systemAt" TIMESTAMP(3),
    "samples" TEXT NOT NULL DEFAULT '[]',
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DeviceInventory_pkey" PRIMARY KEY ("deviceId")
);

-- CreateTable
CREATE TABLE "DeviceLabel" (
    "deviceId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "DeviceLabel_pkey" PRIMARY KEY ("deviceId","key")
);

-- CreateTable
CREATE TABLE "Fleet" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "labels" TEXT NOT NULL DEFAULT '{}',
    "selector" TEXT NOT NULL,
    "rolloutPolicy" TEXT,
    "templateVersion" TEXT NOT NULL,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "status" TEXT NOT NULL DEFAULT '{}',
    "createdBy" TEXT NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Fleet_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TemplateVersion" (
    "id" TEXT NOT NULL,
    "fleetId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "spec" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "diff" TEXT NOT NULL DEFAULT '',
    "outcome" TEXT NOT NULL DEFAULT 'Pending',
    "outcomeMessage" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TemplateVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Rollout" (
    "id" TEXT NOT NULL,
    "fleetId" TEXT NOT NULL,
    "templateVersion" TEXT NOT NULL,
    "previousVersion" TEXT,
    "phase" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),

    CONSTRAINT "Rollout_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RolloutRequest" (
    "id" TEXT NOT NULL,
    "fleetId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "reason" TEXT,
    "actor" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "handledAt" TIMESTAMP(3),
    "outcome" TEXT,
    "message" TEXT,

    CONSTRAINT "RolloutRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Action" (
    "id" TEXT NOT NULL,
    "deviceId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "args" TEXT NOT NULL DEFAULT '{}',
    "origin" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "requireApproval" BOOLEAN NOT NULL DEFAULT false,
    "createdBy" TEXT,
    "decision" TEXT,
    "decidedBy" TEXT,
    "decidedAt" TIMESTAMP(3),
    "decisionReason" TEXT,
    "offeredAt" TIMESTAMP(3),
    "cancelRequestedAt" TIMESTAMP(3),
    "cancelRequestedBy" TEXT,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),
    "output" TEXT,
    "error" TEXT,
    "expiresAt" TIMESTAMP(3),
    "requestId" TEXT,
    "rerunOf" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Action_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ActionRequest" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "args" TEXT NOT NULL DEFAULT '{}',
    "origin" TEXT NOT NULL,
    "ref" TEXT,
    "targetKind" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "requireApproval" BOOLEAN NOT NULL DEFAULT false,
    "decision" TEXT,
    "decidedBy" TEXT,
    "decidedAt" TIMESTAMP(3),
    "decisionReason" TEXT,

    CONSTRAINT "ActionRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Event" (
    "id" SERIAL NOT NULL,
    "time" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "objectKind" TEXT NOT NULL,
    "objectName" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "actor" TEXT NOT NULL,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ServerState" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "ServerState_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "Plan" (
    "id" TEXT NOT NULL,
    "name" TEXT,
    "specId" TEXT,
    "apiVersion" TEXT NOT NULL,
    "spec" TEXT NOT NULL,
    "requireApproval" BOOLEAN NOT NULL DEFAULT false,
    "approvedBy" TEXT,
    "approvedAt" TIMESTAMP(3),
    "deadline" TEXT,
    "deadlineAt" TIMESTAMP(3),
    "retryOf" TEXT,
    "cancelRequestedBy" TEXT,
    "cancelRequestedAt" TIMESTAMP(3),
    "cancelReason" TEXT,
    "createdBy" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "activeCommand" INTEGER,
    "startedAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Plan_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PlanCommandStatus" (
    "planId" TEXT NOT NULL,
    "index" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "startedAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PlanCommandStatus_pkey" PRIMARY KEY ("planId","index")
);

-- CreateTable
CREATE TABLE "PlanNode" (
    "id" TEXT NOT NULL,
    "planId" TEXT NOT NULL,
    "commandIndex" INTEGER NOT NULL,
    "group" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "deviceId" TEXT,
    "role" TEXT,
    "platform" TEXT,
    "state" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "actionId" TEXT,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PlanNode_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Workflow" (
    "name" TEXT NOT NULL,
    "spec" TEXT NOT NULL,
    "labels" TEXT,
    "failFast" BOOLEAN NOT NULL DEFAULT true,
    "activeDeadlineSeconds" INTEGER,
    "generation" INTEGER NOT NULL DEFAULT 1,
    "phase" TEXT NOT NULL,
    "reason" TEXT,
    "message" TEXT NOT NULL DEFAULT '',
    "run" INTEGER NOT NULL DEFAULT 1,
    "startTime" TIMESTAMP(3),
    "completionTime" TIMESTAMP(3),
    "cancelRequestedBy" TEXT,
    "cancelRequestedAt" TIMESTAMP(3),
    "cancelReason" TEXT,
    "nextScheduleTime" TIMESTAMP(3),
    "lastScheduleTime" TIMESTAMP(3),
    "createdBy" TEXT NOT NULL,
    "updatedBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Workflow_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "WorkflowRun" (
    "workflowName" TEXT NOT NULL,
    "run" INTEGER NOT NULL,
    "startedBy" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "reason" TEXT,
    "message" TEXT NOT NULL DEFAULT '',
    "startTime" TIMESTAMP(3) NOT NULL,
    "completionTime" TIMESTAMP(3),

    CONSTRAINT "WorkflowRun_pkey" PRIMARY KEY ("workflowName","run")
);

-- CreateTable
CREATE TABLE "WorkflowStepStatus" (
    "workflowName" TEXT NOT NULL,
    "step" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "message" TEXT NOT NULL DEFAULT '',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "firstStartedAt" TIMESTAMP(3),
    "nextAttemptAt" TIMESTAMP(3),
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),
    "refWorkflow" TEXT,
    "refRun" INTEGER,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "WorkflowStepStatus_pkey" PRIMARY KEY ("workflowName","step")
);

-- CreateTable
CREATE TABLE "WorkflowStepAction" (
    "id" SERIAL NOT NULL,
    "workflowName" TEXT NOT NULL,
    "run" INTEGER NOT NULL,
    "step" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "target" TEXT NOT NULL,
    "deviceId" TEXT,
    "actionId" TEXT,
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WorkflowStepAction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MetricSample" (
    "at" TIMESTAMP(3) NOT NULL,
    "seconds" DOUBLE PRECISION NOT NULL,
    "values" TEXT NOT NULL,

    CONSTRAINT "MetricSample_pkey" PRIMARY KEY ("at")
);

-- CreateTable
CREATE TABLE "EnrollmentToken" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "labels" TEXT NOT NULL DEFAULT '{}',
    "expiresAt" TIMESTAMP(3),
    "maxUses" INTEGER,
    "uses" INTEGER NOT NULL DEFAULT 0,
    "autoApprove" BOOLEAN NOT NULL DEFAULT false,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMP(3),
    "revokedBy" TEXT,

    CONSTRAINT "EnrollmentToken_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "user_email_key" ON "user"("email");

-- CreateIndex
CREATE UNIQUE INDEX "user_username_key" ON "user"("username");

-- CreateIndex
CREATE UNIQUE INDEX "session_token_key" ON "session"("token");

-- CreateIndex
CREATE INDEX "session_userId_idx" ON "session"("userId");

-- CreateIndex
CREATE INDEX "account_userId_idx" ON "account"("userId");

-- CreateIndex
CREATE INDEX "verification_identifier_idx" ON "verification"("identifier");

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_tokenHash_key" ON "ApiToken"("tokenHash");

-- CreateIndex
CREATE INDEX "ApiToken_userId_createdAt_idx" ON "ApiToken"("userId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "EnrollmentRequest_deviceName_key" ON "EnrollmentRequest"("deviceName");

-- CreateIndex
CREATE INDEX "EnrollmentRequest_status_createdAt_idx" ON "EnrollmentRequest"("status", "createdAt");

-- CreateIndex
CREATE INDEX "EnrollmentRequest_status_clientAddress_idx" ON "EnrollmentRequest"("status", "clientAddress");

-- CreateIndex
CREATE INDEX "EnrollmentRequest_tokenId_idx" ON "EnrollmentRequest"("tokenId");

-- CreateIndex
CREATE UNIQUE INDEX "Device_name_key" ON "Device"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Device_enrollmentId_key" ON "Device"("enrollmentId");

-- CreateIndex
CREATE UNIQUE INDEX "Device_tokenHash_key" ON "Device"("tokenHash");

-- CreateIndex
CREATE INDEX "Device_summary_idx" ON "Device"("summary");

-- CreateIndex
CREATE INDEX "Device_updatedStatus_idx" ON "Device"("updatedStatus");

-- CreateIndex
CREATE INDEX "Device_owner_updatedStatus_idx" ON "Device"("owner", "updatedStatus");

-- CreateIndex
CREATE INDEX "Device_renderedSpecId_idx" ON "Device"("renderedSpecId");

-- CreateIndex
CREATE INDEX "Device_applicationSummary_idx" ON "Device"("applicationSummary");

-- CreateIndex
CREATE INDEX "Device_lifecycle_idx" ON "Device"("lifecycle");

-- CreateIndex
CREATE INDEX "Device_lastSeen_idx" ON "Device"("lastSeen");

-- CreateIndex
CREATE INDEX "DeviceLabel_key_value_idx" ON "DeviceLabel"("key", "value");

-- CreateIndex
CREATE UNIQUE INDEX "Fleet_name_key" ON "Fleet"("name");

-- CreateIndex
CREATE UNIQUE INDEX "TemplateVersion_fleetId_version_key" ON "TemplateVersion"("fleetId", "version");

-- CreateIndex
CREATE INDEX "Rollout_fleetId_createdAt_idx" ON "Rollout"("fleetId", "createdAt");

-- CreateIndex
CREATE INDEX "RolloutRequest_fleetId_handledAt_idx" ON "RolloutRequest"("fleetId", "handledAt");

-- CreateIndex
CREATE INDEX "Action_deviceId_state_createdAt_idx" ON "Action"("deviceId", "state", "createdAt");

-- CreateIndex
CREATE INDEX "Action_state_createdAt_idx" ON "Action"("state", "createdAt");

-- CreateIndex
CREATE INDEX "Action_createdAt_idx" ON "Action"("createdAt");

-- CreateIndex
CREATE INDEX "Action_expiresAt_idx" ON "Action"("expiresAt");

-- CreateIndex
CREATE INDEX "Action_requestId_state_idx" ON "Action"("requestId", "state");

-- CreateIndex
CREATE INDEX "Action_rerunOf_idx" ON "Action"("rerunOf");

-- CreateIndex
CREATE INDEX "ActionRequest_createdAt_idx" ON "ActionRequest"("createdAt");

-- CreateIndex
CREATE INDEX "ActionRequest_ref_idx" ON "ActionRequest"("ref");

-- CreateIndex
CREATE INDEX "Event_objectKind_objectName_id_idx" ON "Event"("objectKind", "objectName", "id");

-- CreateIndex
CREATE INDEX "Event_time_idx" ON "Event"("time");

-- CreateIndex
CREATE INDEX "Plan_createdAt_idx" ON "Plan"("createdAt");

-- CreateIndex
CREATE INDEX "Plan_state_idx" ON "Plan"("state");

-- CreateIndex
CREATE INDEX "Plan_retryOf_idx" ON "Plan"("retryOf");

-- CreateIndex
CREATE UNIQUE INDEX "PlanNode_actionId_key" ON "PlanNode"("actionId");

-- CreateIndex
CREATE INDEX "PlanNode_planId_commandIndex_group_position_idx" ON "PlanNode"("planId", "commandIndex", "group", "position");

-- CreateIndex
CREATE INDEX "PlanNode_planId_state_idx" ON "PlanNode"("planId", "state");

-- CreateIndex
CREATE INDEX "PlanNode_deviceId_state_idx" ON "PlanNode"("deviceId", "state");

-- CreateIndex
CREATE INDEX "Workflow_phase_idx" ON "Workflow"("phase");

-- CreateIndex
CREATE INDEX "Workflow_nextScheduleTime_idx" ON "Workflow"("nextScheduleTime");

-- CreateIndex
CREATE INDEX "WorkflowStepStatus_refWorkflow_phase_idx" ON "WorkflowStepStatus"("refWorkflow", "phase");

-- CreateIndex
CREATE UNIQUE INDEX "WorkflowStepAction_actionId_key" ON "WorkflowStepAction"("actionId");

-- CreateIndex
CREATE INDEX "WorkflowStepAction_workflowName_run_step_attempt_idx" ON "WorkflowStepAction"("workflowName", "run", "step", "attempt");

-- CreateIndex
CREATE UNIQUE INDEX "EnrollmentToken_hash_key" ON "EnrollmentToken"("hash");

-- CreateIndex
CREATE INDEX "EnrollmentToken_createdAt_idx" ON "EnrollmentToken"("createdAt");

-- AddForeignKey
ALTER TABLE "session" ADD CONSTRAINT "session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "account" ADD CONSTRAINT "account_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiToken" ADD CONSTRAINT "ApiToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Device" ADD CONSTRAINT "Device_enrollmentId_fkey" FOREIGN KEY ("enrollmentId") REFERENCES "EnrollmentRequest"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Device" ADD CONSTRAINT "Device_owner_fkey" FOREIGN KEY ("owner") REFERENCES "Fleet"("name") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Device" ADD CONSTRAINT "Device_renderedSpecId_fkey" FOREIGN KEY ("renderedSpecId") REFERENCES "TemplateVersion"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DeviceInventory" ADD CONSTRAINT "DeviceInventory_deviceId_fkey" FOREIGN KEY ("deviceId") REFERENCES "Device"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DeviceLabel" ADD CONSTRAINT "DeviceLabel_deviceId_fkey" FOREIGN KEY ("deviceId") REFERENCES "Device"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TemplateVersion" ADD CONSTRAINT "TemplateVersion_fleetId_fkey" FOREIGN KEY ("fleetId") REFERENCES "Fleet"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Rollout" ADD CONSTRAINT "Rollout_fleetId_fkey" FOREIGN KEY ("fleetId") REFERENCES "Fleet"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RolloutRequest" ADD CONSTRAINT "RolloutRequest_fleetId_fkey" FOREIGN KEY ("fleetId") REFERENCES "Fleet"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Action" ADD CONSTRAINT "Action_deviceId_fkey" FOREIGN KEY ("deviceId") REFERENCES "Device"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PlanCommandStatus" ADD CONSTRAINT "PlanCommandStatus_planId_fkey" FOREIGN KEY ("planId") REFERENCES "Plan"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PlanNode" ADD CONSTRAINT "PlanNode_planId_fkey" FOREIGN KEY ("planId") REFERENCES "Plan"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WorkflowRun" ADD CONSTRAINT "WorkflowRun_workflowName_fkey" FOREIGN KEY ("workflowName") REFERENCES "Workflow"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WorkflowStepStatus" ADD CONSTRAINT "WorkflowStepStatus_workflowName_fkey" FOREIGN KEY ("workflowName") REFERENCES "Workflow"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WorkflowStepAction" ADD CONSTRAINT "WorkflowStepAction_workflowName_fkey" FOREIGN KEY ("workflowName") REFERENCES "Workflow"("name") ON DELETE CASCADE ON UPDATE CASCADE;

