import { afterAll, expect } from 'vitest';
import { capturedLogs } from './public-api.ts';

const SECRET = /svc_api_[0-9A-Za-z]{6,}|svc_cal_[0-9A-Za-z]{6,}|svc_int_[0-9A-Za-z]{6,}|svc_p[ls]_[0-9A-Za-z]{6,}|whsec_[A-Za-z0-9+/]{6,}/;

// Runs after every test file: no log line written during the suite holds a key, token or secret.
afterAll(() => {
  const leaking = capturedLogs.filter((line) => SECRET.test(line));
  expect(leaking.slice(0, 5)).toEqual([]);
});
