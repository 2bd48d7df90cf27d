/**
 * What the test receivers (test/support/webhook-receiver.ts) found wrong with deliveries, across
 * the test file: checked after every file by test/support/webhook-deliveries-match-the-document.ts.
 */
export const deliveryProblems: string[] = [];
/** Checks still running (validation against the OpenAPI document is asynchronous). */
export const deliveryChecks: Array<Promise<void>> = [];
