-- Issue 22: the credential an enrollment gave out, sealed under its secret, given again until first use.
-- AlterTable
ALTER TABLE "EnrollmentRequest" ADD COLUMN     "credentialSealed" TEXT;
