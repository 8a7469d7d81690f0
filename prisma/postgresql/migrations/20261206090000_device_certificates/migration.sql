-- Issue 23: devices identified by client certificates the server's CA signs.
-- AlterTable
ALTER TABLE "Device" ADD COLUMN     "certFingerprint" TEXT,
ADD COLUMN     "certNotAfter" TIMESTAMP(3),
ADD COLUMN     "certPreviousFingerprint" TEXT,
ADD COLUMN     "certSerial" TEXT;

-- AlterTable
ALTER TABLE "EnrollmentRequest" ADD COLUMN     "csr" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "Device_certFingerprint_key" ON "Device"("certFingerprint");

-- CreateIndex
CREATE UNIQUE INDEX "Device_certPreviousFingerprint_key" ON "Device"("certPreviousFingerprint");
