import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { TargetRefusedError, guardedLookup } from '../../src/webhooks/target-guard.ts';

describe('a socket whose lookup is guarded', () => {
  it('makes a socket fail with TargetRefusedError before it connects to a name that resolves to loopback', async () => {
    const socket = connect({ host: 'localhost', port: 9, lookup: guardedLookup(false) });
    const outcome = await new Promise<{ error: Error; connected: boolean }>((resolve) => {
      let connected = false;
      socket.on('connect', () => (connected = true));
      socket.on('error', (error) => resolve({ error, connected }));
    });
    socket.destroy();
    expect(outcome.error).toBeInstanceOf(TargetRefusedError);
    expect(outcome.connected).toBe(false);
  });
});
