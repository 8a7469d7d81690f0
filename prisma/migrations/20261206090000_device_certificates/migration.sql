-- Issue 23: devices identified by client certificates the server's CA signs.
-- AlterTable
ALTER TABLE "Device" ADD COLUMN "certFingerprint" TEXT;
ALTER TABLE "Device" ADD COLUMN "certNotAfter" DATETIME;
ALTER TABLE "Device" ADD COLUMN "certPreviousFingerprint" TEXT;
ALTER TABLE "Device" ADD COLUMN "certSerial" TEXT;

-- AlterTable
ALTER TABLE "EnrollmentRequest" ADD COLUMN "csr" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "Device_certFingerprint_key" ON "Device"("certFingerprint");

-- CreateIndex
CREATE UNIQUE INDEX "Device_certPreviousFingerprint_key" ON "Device"("certPreviousFingerprint");
