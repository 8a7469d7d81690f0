/**
 * How much of a group's shared output and error the outputs queries return
 * (server/actions/output-groups.ts); the console says when it was cut. Pure: both sides import it.
 */

/** An output longer than this is shown as its first and last halves (the stored one is up to 64 KiB). */
export const GROUP_OUTPUT_SHOWN = 8 * 1024;
/** An error longer than this is cut the same way. */
export const GROUP_ERROR_SHOWN = 2 * 1024;
