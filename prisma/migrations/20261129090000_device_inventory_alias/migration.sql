-- AlterTable
ALTER TABLE "Device" ADD COLUMN "alias" TEXT;

-- CreateTable
CREATE TABLE "DeviceInventory" (
    "deviceId" TEXT NOT NULL PRIMARY KEY,
    "system" TEXT,
    "systemAt" DATETIME,
    "samples" TEXT NOT NULL DEFAULT '[]',
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "DeviceInventory_deviceId_fkey" FOREIGN KEY ("deviceId") REFERENCES "Device" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
