import { afterAll, expect } from 'vitest';
import { deliveryChecks, deliveryProblems } from './webhook-problems.ts';

// Runs after every test file: every delivery a test receiver got, whatever the test looked at, has
// the headers and the body the OpenAPI document describes for the webhook of its type.
afterAll(async () => {
  await Promise.all(deliveryChecks.splice(0));
  expect(deliveryProblems.splice(0).slice(0, 5)).toEqual([]);
});
