-- AlterTable
ALTER TABLE "EnrollmentRequest" ADD COLUMN "approvedLabels" TEXT;
ALTER TABLE "EnrollmentRequest" ADD COLUMN "firstSeenAt" DATETIME;
ALTER TABLE "EnrollmentRequest" ADD COLUMN "lastSeenAddress" TEXT;
ALTER TABLE "EnrollmentRequest" ADD COLUMN "lastSeenAt" DATETIME;
ALTER TABLE "EnrollmentRequest" ADD COLUMN "system" TEXT;

-- Requests from before: first and last seen when and where they were made.
UPDATE "EnrollmentRequest" SET "firstSeenAt" = "createdAt", "lastSeenAt" = "createdAt", "lastSeenAddress" = "clientAddress";
